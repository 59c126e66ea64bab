"""A plain interpreter of the CINN loop-nest IR: the independent oracle of the ComputeInline tests.

Inputs read as deterministic, index-sensitive values; a read of an element no store wrote raises KeyError.
CINN's convention ``X__reduce_init`` (the init block of a reduction into ``X``) stores into ``X``.
"""

from __future__ import annotations

import math
import random
import struct
import zlib
from collections.abc import Callable, Collection

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

Tensors = dict[str, dict[tuple[int, ...], float]]


def input_value(name: str, idx: tuple[int, ...]) -> float:
    """A deterministic, index-sensitive value for every input element."""
    rng = random.Random(zlib.crc32(repr((name, idx)).encode()))
    return round(rng.uniform(-2, 2), 6)


def scalar_value(name: str) -> float:
    """The value of a scalar parameter in every run (shared with tests/tvmscript_interpreter.py)."""
    return float(zlib.crc32(name.encode()) % 5 - 2)


_INT_CASTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def int_input_value(name: str, idx: tuple[int, ...]) -> int:
    """A deterministic integer in [0, 3] for an element of an integer input (an index
    buffer: ``idx`` of ``A[idx[i], j]``); shared with tests/tvmscript_interpreter.py."""
    return zlib.crc32(repr((name, idx)).encode()) % 4


def _tensor(name: str) -> str:
    return name.removesuffix("__reduce_init")


def _value(v: Value, scope: list[int], t: Tensors, is_input: Callable[[str], bool]) -> float:
    if isinstance(v, Call) and v.name.endswith(".load"):  # a data-dependent read of an input tensor
        name = v.name.removesuffix(".load")
        at = tuple(int(_value(a, scope, t, is_input)) for a in v.args)
        return float(int_input_value(name, at)) if name in _INTS else input_value(name, at)
    if isinstance(v, Load) and v.tensor in _INTS and is_input(v.tensor):
        return float(int_input_value(v.tensor, tuple(e.evaluate(scope) for e in v.indices)))
    if isinstance(v, Num):
        return float(v.text.rstrip("f"))
    if isinstance(v, Load):
        idx = tuple(e.evaluate(scope) for e in v.indices)
        if is_input(v.tensor):
            return input_value(v.tensor, idx)
        return t[v.tensor][idx]  # KeyError: an element read before it is written
    if isinstance(v, BinOp):
        a, b = _value(v.lhs, scope, t, is_input), _value(v.rhs, scope, t, is_input)
        ops: dict[str, Callable[[], float]] = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b if b else 0.0,
            "%": lambda: math.fmod(a, b) if b else 0.0,
            ">": lambda: float(a > b), "<": lambda: float(a < b), "&&": lambda: float(bool(a) and bool(b)),
            ">=": lambda: float(a >= b), "<=": lambda: float(a <= b), "==": lambda: float(a == b),
            "!=": lambda: float(a != b), "||": lambda: float(bool(a) or bool(b)),
        }
        return ops[v.op]()
    if isinstance(v, Neg):
        return -_value(v.operand, scope, t, is_input)
    if isinstance(v, Call):
        if v.name == "select" and len(v.args) == 3:  # only the chosen branch is evaluated
            chosen = v.args[1] if _value(v.args[0], scope, t, is_input) else v.args[2]
            return _value(chosen, scope, t, is_input)
        args = [_value(a, scope, t, is_input) for a in v.args]
        if not args:  # a scalar parameter (TVMScript ``lo: T.float32``)
            return scalar_value(v.name)
        if v.name in _INT_CASTS:
            return float(math.trunc(args[0]))
        if v.name == "float16":  # rounded to half precision, as the source interpreter does
            return float(struct.unpack("e", struct.pack("e", args[0]))[0])
        if v.name in ("float32", "float64", "bfloat16"):  # as the source interpreter: a Python float
            return args[0]
        return {"exp": lambda: math.exp(args[0]), "max": lambda: max(args), "min": lambda: min(args)}[v.name]()
    assert isinstance(v, IndexValue)
    return float(v.expr.evaluate(scope))


def _holds(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]


_INTS: set[str] = set()  # the integer inputs of the current run


def run(p: Stmt, inputs: Collection[str] | Callable[[str], bool], int_inputs: Collection[str] = ()) -> Tensors:
    """Every tensor element the program stores. ``inputs``: the input tensors' names (or a
    predicate); ``int_inputs``: those holding integers (:func:`int_input_value`)."""
    _INTS.clear()
    _INTS.update(int_inputs)
    is_input: Callable[[str], bool] = inputs if callable(inputs) else inputs.__contains__
    t: Tensors = {}

    def go(s: Stmt, loops: list[int], iters: list[int]) -> list[int]:
        if isinstance(s, For):
            if s.kind == "size" and s.extent != 1:
                raise ValueError(f"size parameter {s.var}: run the program at concrete sizes (at_sizes)")
            extent = s.extent if s.bound is None else max(0, s.bound.evaluate(loops + iters))
            for x in range(s.start, s.start + extent):
                for c in s.body:
                    go(c, [*loops, x], iters)  # a loop inside a block: its names stay visible after the loop
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
            t.setdefault(_tensor(s.tensor), {})[idx] = _value(s.value, scope, t, is_input)
        return iters

    go(p, [], [])
    return t
