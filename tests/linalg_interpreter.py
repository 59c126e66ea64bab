"""A plain numpy interpreter of ``linalg.generic`` at concrete sizes: the
independent oracle of the Linalg fusion tests.

The loop sizes come from the operands' array shapes (an operand dim whose map
result is exactly ``d_k`` gives loop ``k``'s size); iterations run in
lexicographic order; each output starts as a copy of its init; the payload is
evaluated statement by statement (the arith/math ops below, ``linalg.index``,
``affine.apply``); a read outside an operand's bounds raises ``IndexError``.
Values are float64 (tests use small integers, so sums and products are exact).
It shares no code with the payload model of the proofs (only the affine map
reader, for ``affine.apply``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from verified_indexing.expr import Dim
from verified_indexing.legality.linalg_ir import GenericOp
from verified_indexing.syntax import parse_affine_map

_BIN = {
    "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b, "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: a / b if b != 0 else math.inf,
    # maximumf/minimumf propagate NaN (IEEE 754-2019 maximum/minimum)
    "arith.maximumf": lambda a, b: math.nan if a != a or b != b else max(a, b),
    "arith.minimumf": lambda a, b: math.nan if a != a or b != b else min(a, b),
    "arith.maxnumf": max, "arith.minnumf": min,
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
}
_UN = {
    "arith.negf": lambda a: -a, "math.exp": lambda a: math.exp(min(a, 50.0)), "math.absf": abs,
    "arith.index_cast": lambda a: a, "arith.sitofp": float, "arith.fptosi": int, "math.tanh": math.tanh,
}
_CMP = {"olt": lambda a, b: a < b, "ogt": lambda a, b: a > b, "oeq": lambda a, b: a == b, "eq": lambda a, b: a == b,
        "slt": lambda a, b: a < b, "sgt": lambda a, b: a > b, "ne": lambda a, b: a != b, "oge": lambda a, b: a >= b}
_SSA = re.compile(r"%[\w.$-]+")
# Conversions: the value rounded to the target type (numpy's float16/float32 round to nearest even, as
# arith.truncf does by default); integers truncate toward zero as fptosi does.
_CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi", "arith.trunci")
_ROUND = {"f16": lambda a: float(np.float16(a)), "f32": lambda a: float(np.float32(a)), "f64": float,
          "i32": lambda a: float(int(a)), "i64": lambda a: float(int(a))}


def loop_sizes(op: GenericOp, env: Mapping[str, Any]) -> list[int]:
    sizes: list[int | None] = [None] * op.num_loops
    for o in op.operands:
        shape = np.shape(env[o.value])
        for r, s in zip(o.map.results, shape):
            if isinstance(r, Dim):
                if sizes[r.index] is not None and sizes[r.index] != s:
                    raise ValueError(f"loop d{r.index}: sizes {sizes[r.index]} and {s}")
                sizes[r.index] = int(s)
    if any(s is None for s in sizes):
        raise ValueError("a loop has no size")
    return [s for s in sizes if s is not None]


def _read(arr: Any, idx: tuple[int, ...]) -> float:
    a = np.asarray(arr)
    if a.ndim == 0:
        return float(a)
    if any(not 0 <= i < n for i, n in zip(idx, a.shape)):
        raise IndexError(f"read {idx} outside shape {a.shape}")
    return float(a[idx])


def _body(op: GenericOp) -> tuple[list[str], list[str]]:
    header = re.search(r"\^[\w.$-]+\s*\(([^)]*)\)\s*:", op.payload)
    assert header is not None
    args = [a.split(":")[0].strip() for a in header.group(1).split(",") if a.strip()]
    return args, [ln.strip() for ln in op.payload[header.end():].splitlines() if ln.strip()]


def eval_payload(op: GenericOp, args: list[float], it: tuple[int, ...], env_outer: Mapping[str, Any]) -> list[float]:
    names, lines = _body(op)
    v: dict[str, Any] = dict(zip(names, args))

    def get(x: str) -> Any:
        if x in v:
            return v[x]
        return float(np.asarray(env_outer[x]))  # a value of the enclosing function (a scalar)

    for ln in lines:
        if ln.startswith("linalg.yield"):
            head = ln[len("linalg.yield"):].split(":")[0]
            return [get(x) for x in _SSA.findall(head)]
        res, rhs = (s.strip() for s in ln.split("=", 1))
        opname = rhs.split()[0]
        operands = _SSA.findall(rhs)
        if opname == "arith.constant":
            lit = rhs.split()[1]
            out: Any = float(lit) if ":" not in lit else 0.0
            if lit in ("true", "false"):
                out = lit == "true"
        elif opname == "linalg.index":
            out = it[int(rhs.split()[1])]
        elif opname == "affine.apply":
            m = re.search(r"affine_map<.*?>(?=\()", rhs)
            assert m is not None
            amap = parse_affine_map(m.group())
            out = amap.results[0].evaluate([int(get(x)) for x in operands])
        elif opname in ("arith.cmpf", "arith.cmpi"):
            pred = rhs.split()[1].rstrip(",")
            out = _CMP[pred](get(operands[0]), get(operands[1]))
        elif opname == "arith.select":
            out = get(operands[1]) if get(operands[0]) else get(operands[2])
        elif opname in _CASTS:
            to = rhs.rsplit(" to ", 1)[1].strip()
            if to not in _ROUND:
                raise NotImplementedError(f"interpreter: {opname} to {to}")
            out = _ROUND[to](get(operands[0]))
        elif opname in _BIN:
            out = _BIN[opname](get(operands[0]), get(operands[1]))
        elif opname in _UN:
            out = _UN[opname](get(operands[0]))
        else:
            raise NotImplementedError(f"interpreter: {opname}")
        v[res] = out
    raise ValueError("no linalg.yield")


def run_generic(op: GenericOp, env: Mapping[str, Any]) -> list[np.ndarray]:
    """The op's results (one array per output) for operand values ``env``."""
    sizes = loop_sizes(op, env)
    outs = [np.array(env[o.value], dtype=np.float64, copy=True) for o in op.outputs]
    for it in itertools.product(*(range(s) for s in sizes)):
        args = [_read(env[o.value], o.map.evaluate(it)) for o in op.inputs]
        args += [_read(out, o.map.evaluate(it)) for out, o in zip(outs, op.outputs)]
        ys = eval_payload(op, args, it, env)
        for out, o, y in zip(outs, op.outputs, ys):
            idx = o.map.evaluate(it)
            _read(out, idx)  # bounds check
            out[idx] = y
    return outs


def run_ops(ops: list[GenericOp], env: dict[str, Any]) -> dict[str, Any]:
    """Run ``ops`` in order, binding their results into ``env`` (returned)."""
    for op in ops:
        outs = run_generic(op, env)
        for name, arr in zip(op.results, outs):
            env[name] = arr
    return env
