"""A plain evaluator of the CINN loop-nest IR with exact arithmetic.

Used to re-check refutations of rewrites (epilogue fusion, reverse inlining):
both programs run on the same concrete inputs and the first output element whose
values differ is the witness. Arithmetic is exact (``fractions.Fraction``), so a
difference is not a rounding artefact; the inputs are small integers, so the
values are also exactly representable in float32 for small programs.

Input tensors read as :func:`input_value`, a documented formula (anyone can
recompute a witness), until the program writes the element (an input updated in
place: a parameter the program also stores). A read of an element of a computed tensor that no store
wrote raises :class:`Unwritten`. ``X__reduce_init`` stores into ``X`` (CINN's
convention for the init block of a reduction into ``X``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection
from fractions import Fraction

from verified_indexing.legality.cinn_ir import (
    Bind,
    BinOp,
    Call,
    For,
    Group,
    If,
    IndexValue,
    Load,
    Neg,
    Num,
    ScheduleBlock,
    Stmt,
    Store,
    Value,
)

__all__ = ["Unwritten", "input_value", "run_exact", "INPUT_RULE", "tensor_of"]

Tensors = dict[str, dict[tuple[int, ...], Fraction]]

#: How input elements are chosen, as printed in witnesses.
INPUT_RULE = "inputs X[idx] = crc32(f\"{X}{list(idx)}{seed}\") mod 7 - 3"

_FLOAT_MAX = Fraction(340282347) * 10**30


class Unwritten(Exception):
    """A computed tensor's element was read before any store wrote it."""


def input_value(name: str, idx: tuple[int, ...], seed: int = 0) -> Fraction:
    """The value of input element ``name[idx]``: an integer in [-3, 3]."""
    return Fraction(zlib.crc32(f"{name}{list(idx)}{seed}".encode()) % 7 - 3)


def tensor_of(store_name: str) -> str:
    """The tensor a store writes (``X__reduce_init`` writes ``X``)."""
    return store_name.removesuffix("__reduce_init")


def _num(text: str) -> Fraction:
    t = text.rstrip("f")
    if t in ("-3.40282347e+38", "3.40282347e+38"):
        return _FLOAT_MAX if not t.startswith("-") else -_FLOAT_MAX
    return Fraction(t)


def _truth(x: Fraction) -> bool:
    return x != 0


def value(v: Value, scope: list[int], t: Tensors, is_input: Callable[[str], bool], seed: int) -> Fraction:
    """The exact value of ``v`` at the scope point ``scope``."""
    if isinstance(v, Num):
        return _num(v.text)
    if isinstance(v, Load):
        idx = tuple(e.evaluate(scope) for e in v.indices)
        written = t.get(v.tensor, {})
        if idx in written:  # an input the program also writes (a parameter updated in place): its new value
            return written[idx]
        if is_input(v.tensor):
            return input_value(v.tensor, idx, seed)
        raise Unwritten(f"{v.tensor}{list(idx)} is read before it is written")
    if isinstance(v, BinOp):
        a = value(v.lhs, scope, t, is_input, seed)
        if v.op == "&&" and not _truth(a):
            return Fraction(0)
        if v.op == "||" and _truth(a):
            return Fraction(1)
        b = value(v.rhs, scope, t, is_input, seed)
        ops: dict[str, Callable[[], Fraction]] = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: a / b if b else Fraction(0),
            "%": lambda: a - b * int(a / b) if b else Fraction(0),
            "<": lambda: Fraction(a < b), "<=": lambda: Fraction(a <= b), ">": lambda: Fraction(a > b),
            ">=": lambda: Fraction(a >= b), "==": lambda: Fraction(a == b), "!=": lambda: Fraction(a != b),
            "&&": lambda: Fraction(_truth(b)), "||": lambda: Fraction(_truth(b)),
        }
        return ops[v.op]()
    if isinstance(v, Neg):
        return -value(v.operand, scope, t, is_input, seed)
    if isinstance(v, Call):
        if v.name == "select" and len(v.args) == 3:
            c = value(v.args[0], scope, t, is_input, seed)
            return value(v.args[1] if _truth(c) else v.args[2], scope, t, is_input, seed)
        if not v.args:  # a scalar parameter (``lo: T.float32``): an input element with no index
            return input_value(v.name, (), seed)
        args = [value(a, scope, t, is_input, seed) for a in v.args]
        if v.name == "max" and args:
            return max(args)
        if v.name == "min" and args:
            return min(args)
        if v.name == "!" and len(args) == 1:
            return Fraction(not _truth(args[0]))
        # Any other function: a deterministic, argument-sensitive integer (uninterpreted).
        return Fraction(zlib.crc32(f"{v.name}{[str(a) for a in args]}".encode()) % 11 - 5)
    assert isinstance(v, IndexValue)
    return Fraction(v.expr.evaluate(scope))


def _holds(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]


def run_exact(p: Stmt, inputs: Collection[str] | Callable[[str], bool], seed: int = 0) -> Tensors:
    """Every element the program stores, in exact arithmetic."""
    is_input: Callable[[str], bool] = inputs if callable(inputs) else inputs.__contains__
    t: Tensors = {}

    def go(s: Stmt, loops: list[int], iters: list[int]) -> list[int]:
        if isinstance(s, For):
            if s.kind == "size" and s.extent != 1:
                raise ValueError(f"size parameter {s.var}: run the program at concrete sizes (at_sizes)")
            extent = s.extent if s.bound is None else max(0, s.bound.evaluate(loops + iters))
            for x in range(s.start, s.start + extent):
                for c in s.body:  # inside a block, the block's iteration variables stay in scope after the loop's
                    go(c, [*loops, x], iters)
        elif isinstance(s, ScheduleBlock):
            its: list[int] = []
            for c in s.body:
                its = go(c, loops, its)
        elif isinstance(s, Group):
            for c in s.body:
                go(c, loops, iters)
        elif isinstance(s, If):
            if all(_holds(a.evaluate(loops + iters), op, b.evaluate(loops + iters)) for a, op, b in s.conds):
                for c in s.body:
                    go(c, loops, iters)
        elif isinstance(s, Bind):
            return [e.evaluate(loops) for e in s.values]
        elif isinstance(s, Store):
            scope = loops + iters
            idx = tuple(e.evaluate(scope) for e in s.indices)
            t.setdefault(tensor_of(s.tensor), {})[idx] = value(s.value, scope, t, is_input, seed)
        return iters

    go(p, [], [])
    return t
