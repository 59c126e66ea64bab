"""A plain interpreter of ``linalg.generic`` at concrete sizes: the second,
independent check of every ``legal`` Linalg fusion (issue 26 item 12), and the
oracle of the Linalg tests.

The loop sizes come from the operands' array shapes (an operand dim whose map
result is exactly ``d_k`` gives loop ``k``'s size); iterations run in
lexicographic order; each output starts as a copy of its init; the payload is
evaluated statement by statement (the ``arith``/``math`` operations below,
``linalg.index``, ``affine.apply``, the casts, rounding to ``f16``/``f32`` as
``arith.truncf`` does; integer operations, signed and unsigned, with MLIR's
two's-complement semantics at the width of their type, :func:`int_binary`,
:func:`int_compare`, :func:`int_cast`; what MLIR leaves undefined, such as a
division by zero, gives no value: ``NotImplementedError``); a read or write outside an operand raises
``IndexError``; an operation it does not know raises ``NotImplementedError``.
Values are float64 (the check feeds small integers, so sums and products are
exact). It shares no code with the payload model of the whole-op proof (z3 over
uninterpreted functions, :mod:`verified_indexing.legality.linalg_semantics`),
only the affine map reader for ``affine.apply``.

numpy is optional (the core install has none): :data:`HAVE_NUMPY` says whether
it is there, and :func:`cross_check` reports that it did not run without it.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from verified_indexing.engines import Verdict
from verified_indexing.expr import Dim
from verified_indexing.legality._proofs import now as _now
from verified_indexing.legality.linalg_ir import GenericOp, parse_linalg
from verified_indexing.syntax import parse_affine_map

if TYPE_CHECKING:
    from verified_indexing.legality.linalg import FusionReport

__all__ = ["HAVE_NUMPY", "run_generic", "run_ops", "eval_payload", "loop_sizes", "cross_check", "Disagreement",
           "ITERATION_BUDGET", "random_operands", "int_binary", "int_compare", "int_cast"]

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None

#: Most loop iterations (pair and fused op, every size) one cross-check interprets.
ITERATION_BUDGET = 60_000


class Disagreement(RuntimeError):
    """The interpreter and the whole-op proof disagree on a ``legal`` fused op: an
    internal error of the project (the command line exits 4), never a pass."""


_BIN: dict[str, Callable[[Any, Any], Any]] = {
    "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b, "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: (a / b if b != 0 else (math.nan if a == 0 or a != a else
                                                       math.copysign(math.inf, a) * math.copysign(1.0, b))),
    # maximumf/minimumf propagate NaN (IEEE 754-2019 maximum/minimum)
    "arith.maximumf": lambda a, b: math.nan if a != a or b != b else max(a, b),
    "arith.minimumf": lambda a, b: math.nan if a != a or b != b else min(a, b),
    "arith.maxnumf": max, "arith.minnumf": min,
}
_UN: dict[str, Callable[[Any], Any]] = {
    "arith.negf": lambda a: -a, "math.exp": lambda a: math.exp(min(a, 50.0)), "math.absf": abs,
    "math.tanh": math.tanh,
}
_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "olt": lambda a, b: a < b, "ogt": lambda a, b: a > b, "oeq": lambda a, b: a == b, "ole": lambda a, b: a <= b,
    "oge": lambda a, b: a >= b, "one": lambda a, b: a == a and b == b and a != b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
}
_CASTS = ("arith.extf", "arith.truncf")


# ---------------------------------------------------------------------------
# Integers: MLIR's two's-complement semantics at the operand type's width
# ---------------------------------------------------------------------------
# An integer value of type iN is kept as a Python int in its signed reading (i1: 0 or 1); the operands
# are read modulo 2**N (an array may hold a u8 200 or its signed -56: the same bits). Signed operations
# read the bits as two's complement, unsigned ones as 0..2**N - 1, and the result is wrapped to N bits.
# What MLIR leaves undefined (poison or immediate UB: division by zero, signed division overflow, a shift
# by N or more, fptosi/fptoui out of range) raises NotImplementedError: the interpreter gives no value.


def _width(ty: str) -> int:
    """The bit width of an integer type (``index``: 64); a non-integer type is not interpreted here."""
    if ty == "index":
        return 64
    m = re.fullmatch(r"i(\d+)", ty)
    if m is None:
        raise NotImplementedError(f"interpreter: integer operation on {ty!r}")
    return int(m.group(1))


def _int(x: Any) -> int:
    if isinstance(x, float) and not x.is_integer():
        raise NotImplementedError(f"interpreter: integer operation on the non-integer {x}")
    return int(x)


def _uv(x: Any, w: int) -> int:
    """The unsigned reading of ``x``'s ``w`` low bits."""
    return _int(x) % (1 << w)


def _sv(x: Any, w: int) -> int:
    """The two's-complement (signed) reading of ``x``'s ``w`` low bits (i1: 1 is -1)."""
    u = _uv(x, w)
    return u - (1 << w) if u >= 1 << (w - 1) else u


def _canon(x: int, w: int) -> int:
    """The value kept for ``w`` bits: the signed reading, 0 or 1 for ``i1``."""
    return _uv(x, 1) if w == 1 else _sv(x, w)


def _ub(what: str) -> NotImplementedError:
    return NotImplementedError(f"interpreter: {what} (undefined in MLIR: no value)")


def _tdiv(a: int, b: int) -> int:
    """Division rounding toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _signed_div(kind: str, a: int, b: int, w: int) -> int:
    if b == 0:
        raise _ub(f"arith.{kind} by zero")
    if a == -(1 << (w - 1)) and b == -1:
        raise _ub(f"arith.{kind} overflow ({a} / -1)")
    if kind == "divsi":
        return _tdiv(a, b)
    if kind == "remsi":
        return a - b * _tdiv(a, b)
    if kind == "floordivsi":
        return a // b
    return -((-a) // b)  # ceildivsi


def _unsigned_div(kind: str, a: int, b: int) -> int:
    if b == 0:
        raise _ub(f"arith.{kind} by zero")
    return {"divui": a // b, "remui": a % b, "ceildivui": -((-a) // b)}[kind]


def _shift(kind: str, a: Any, b: Any, w: int) -> int:
    sh = _uv(b, w)
    if sh >= w:
        raise _ub(f"arith.{kind} by {sh} bits of an i{w}")
    if kind == "shli":
        return _uv(a, w) << sh
    return (_uv(a, w) if kind == "shrui" else _sv(a, w)) >> sh


_INT_BIN = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
            "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi", "arith.maxsi", "arith.minsi", "arith.maxui",
            "arith.minui", "arith.andi", "arith.ori", "arith.xori", "arith.shli", "arith.shrsi", "arith.shrui"}
_INT_CASTS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui",
              "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui"}
_UNSIGNED_CMP: dict[str, Callable[[int, int], bool]] = {
    "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b, "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b}


def int_binary(name: str, a: Any, b: Any, ty: str) -> int:
    """``arith.<name>`` on integers of type ``ty`` (``arith.addi``, ``divui``, ``maxsi``,
    ``shrui``...), MLIR's semantics at the type's width; the result's signed reading
    (``i1``: 0 or 1). Undefined cases raise ``NotImplementedError``."""
    w = _width(ty)
    kind = name.split(".", 1)[1]
    sa, sb, ua, ub = _sv(a, w), _sv(b, w), _uv(a, w), _uv(b, w)
    r: int
    if kind in ("addi", "subi", "muli"):
        r = {"addi": ua + ub, "subi": ua - ub, "muli": ua * ub}[kind]
    elif kind in ("divsi", "remsi", "floordivsi", "ceildivsi"):
        r = _signed_div(kind, sa, sb, w)
    elif kind in ("divui", "remui", "ceildivui"):
        r = _unsigned_div(kind, ua, ub)
    elif kind in ("maxsi", "minsi"):
        r = max(sa, sb) if kind == "maxsi" else min(sa, sb)
    elif kind in ("maxui", "minui"):
        r = max(ua, ub) if kind == "maxui" else min(ua, ub)
    elif kind in ("andi", "ori", "xori"):
        r = {"andi": ua & ub, "ori": ua | ub, "xori": ua ^ ub}[kind]
    elif kind in ("shli", "shrsi", "shrui"):
        r = _shift(kind, a, b, w)
    else:
        raise NotImplementedError(f"interpreter: {name}")
    return _canon(r, w)


def int_compare(pred: str, a: Any, b: Any, ty: str) -> bool:
    """``arith.cmpi <pred>`` on integers of type ``ty``: ``eq``/``ne`` on the bits,
    ``slt``... on the signed readings, ``ult``... on the unsigned ones."""
    w = _width(ty)
    if pred in _UNSIGNED_CMP:
        return _UNSIGNED_CMP[pred](_uv(a, w), _uv(b, w))
    if pred in ("eq", "ne"):
        return (_uv(a, w) == _uv(b, w)) == (pred == "eq")
    if pred in _CMP:
        return _CMP[pred](_sv(a, w), _sv(b, w))
    raise NotImplementedError(f"interpreter: the predicate {pred}")


def int_cast(name: str, x: Any, src: str, dst: str) -> Any:
    """``arith.extsi``/``extui``/``trunci``/``index_cast``/``index_castui``/``sitofp``/
    ``uitofp``/``fptosi``/``fptoui`` from type ``src`` to ``dst``, as MLIR defines them
    (a truncation keeps the low bits; an extension or a width check MLIR's verifier
    would reject raises ``NotImplementedError``)."""
    kind = name.split(".", 1)[1]
    if kind in ("sitofp", "uitofp"):
        w = _width(src)
        n = _sv(x, w) if kind == "sitofp" else _uv(x, w)
        bits = _MANTISSA.get(dst)
        if bits is not None and abs(n).bit_length() > bits:  # rounded once, to the type's precision (half to even):
            shift = abs(n).bit_length() - bits  # through a double first, a 64-bit integer would be rounded twice
            q, r = divmod(abs(n), 1 << shift)
            if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
                q += 1
            n = (q << shift) * (1 if n >= 0 else -1)
        return _round(dst)(float(n))
    if kind in ("fptosi", "fptoui"):
        w = _width(dst)
        v = float(x)
        if v != v or math.isinf(v):
            raise _ub(f"arith.{kind} of {v}")
        t = math.trunc(v)
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if kind == "fptosi" else (0, (1 << w) - 1)
        if not lo <= t <= hi:
            raise _ub(f"arith.{kind} of {v} out of the range of i{w}")
        return _canon(t, w)
    ws, wd = _width(src), _width(dst)
    if kind in ("extsi", "extui") and not wd > ws:
        raise NotImplementedError(f"interpreter: arith.{kind} from i{ws} to i{wd} (MLIR requires a wider result)")
    if kind == "trunci" and not wd < ws:
        raise NotImplementedError(f"interpreter: arith.trunci from i{ws} to i{wd} (MLIR requires a narrower result)")
    if kind in ("extsi", "index_cast"):  # index_cast sign-extends or truncates
        return _canon(_sv(x, ws), wd)
    if kind in ("extui", "index_castui"):
        return _canon(_uv(x, ws), wd)
    return _canon(_int(x), wd)  # trunci: the low bits


_MANTISSA = {"f16": 11, "f32": 24}
"""The significand's bits of the float types an integer is converted to (f64: Python's int-to-float conversion
rounds once, correctly)."""


def _round(to: str) -> Callable[[Any], Any]:
    import numpy as np

    table: dict[str, Callable[[Any], Any]] = {
        "f16": lambda a: float(np.float16(a)), "f32": lambda a: float(np.float32(a)), "f64": float,
        "i32": lambda a: float(int(a)), "i64": lambda a: float(int(a)), "index": lambda a: int(a),
    }
    if to not in table:
        raise NotImplementedError(f"interpreter: a conversion to {to}")
    return table[to]


_SSA = re.compile(r"%[\w.$-]+(?:#\d+)?")
_OPNAME = re.compile(r'"?([A-Za-z_][\w.]*)"?')
_HEADER = re.compile(r"\^[\w.$-]+\s*\(([^)]*)\)\s*:")


def loop_sizes(op: GenericOp, env: Mapping[str, Any]) -> list[int]:
    """The loop sizes of ``op`` from the shapes of its operands in ``env``."""
    import numpy as np

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
    import numpy as np

    a = np.asarray(arr)
    if a.ndim == 0:
        return float(a)
    if len(idx) != a.ndim or any(not 0 <= i < n for i, n in zip(idx, a.shape)):
        raise IndexError(f"read {idx} outside shape {a.shape}")
    return float(a[idx])


def _body(op: GenericOp) -> tuple[list[str], list[str]]:
    header = _HEADER.search(op.payload)
    if header is None:
        raise NotImplementedError(f"interpreter: {op.name} has no block header")
    args = [a.split(":")[0].strip() for a in header.group(1).split(",") if a.strip()]
    lines: list[str] = []
    pending = ""
    for ln in op.payload[header.end():].splitlines():
        pending = f"{pending} {ln.strip()}".strip()
        if pending and pending.count("(") == pending.count(")") and pending.count("<") <= pending.count(">"):
            lines.append(pending)
            pending = ""
    if pending:
        lines.append(pending)
    return args, lines


_LOC = re.compile(r"\s*loc\(.*\)\s*$")


def _strip_loc(t: str) -> str:
    return _LOC.sub("", t).strip()


def _type_of(rhs: str) -> str:
    """The type an operation is written with: ``: i32`` (pretty form) or the result of
    ``: (i32, i32) -> i32`` (generic form); a comparison's pretty form gives the operands'."""
    t = _strip_loc(rhs.rsplit(":", 1)[1]) if ":" in rhs else ""
    if "->" in t:
        t = t.rsplit("->", 1)[1].strip()
    return t


def _cast_types(rhs: str) -> tuple[str, str]:
    """A cast's source and result types: ``: A to B``, or the generic form's ``: (A) -> B``."""
    t = _strip_loc(rhs.rsplit(":", 1)[1]) if ":" in rhs else ""
    if " to " in t:
        a, b = t.split(" to ", 1)
        return a.strip(), b.strip()
    if "->" in t:
        a, b = t.split("->", 1)
        return a.strip().strip("()").strip(), b.strip()
    raise NotImplementedError(f"interpreter: the types of {rhs!r}")


def eval_payload(op: GenericOp, args: list[float], it: tuple[int, ...], env_outer: Mapping[str, Any]) -> list[float]:
    """The values the payload of ``op`` yields for block arguments ``args`` at
    iteration ``it`` (``env_outer``: values of the enclosing function)."""
    import numpy as np

    names, lines = _body(op)
    v: dict[str, Any] = dict(zip(names, args))

    def get(x: str) -> Any:
        if x in v:
            return v[x]
        if x not in env_outer:
            raise NotImplementedError(f"interpreter: no value for {x}")
        return float(np.asarray(env_outer[x]))  # a value of the enclosing function (a scalar)

    for ln in lines:
        if ln.startswith(("linalg.yield", '"linalg.yield"')):  # the pretty and the generic form
            head = ln.split(":")[0]
            return [get(x) for x in _SSA.findall(head)]
        if "=" not in ln:
            raise NotImplementedError(f"interpreter: {ln!r}")
        res, rhs = (s.strip() for s in ln.split("=", 1))
        om = _OPNAME.match(rhs)
        if om is None:
            raise NotImplementedError(f"interpreter: {ln!r}")
        opname = om.group(1)
        if rhs.startswith('"') and opname not in _BIN and opname not in _UN and opname not in _CASTS \
                and opname not in _INT_BIN and opname not in _INT_CASTS:
            raise NotImplementedError(f"interpreter: the generic form of {opname}")
        operands = _SSA.findall(rhs)
        out: Any
        if opname == "arith.constant":
            lit = rhs.split()[1]
            if lit in ("true", "false"):
                out = lit == "true"
            else:
                try:
                    out = float(lit)
                except ValueError:
                    raise NotImplementedError(f"interpreter: the constant {lit!r}") from None
        elif opname == "linalg.index":
            out = it[int(rhs.split()[1])]
        elif opname == "affine.apply":
            m = re.search(r"affine_map<.*?>(?=\()", rhs)
            if m is None:
                raise NotImplementedError(f"interpreter: {rhs!r}")
            amap = parse_affine_map(m.group())
            out = amap.results[0].evaluate([int(get(x)) for x in operands])
        elif opname == "arith.cmpi":
            out = int_compare(rhs.split()[1].rstrip(","), get(operands[0]), get(operands[1]), _type_of(rhs))
        elif opname == "arith.cmpf":
            pred = rhs.split()[1].rstrip(",")
            if pred not in _CMP or pred in ("eq", "ne", "slt", "sle", "sgt", "sge"):
                raise NotImplementedError(f"interpreter: the predicate {pred}")
            out = _CMP[pred](get(operands[0]), get(operands[1]))
        elif opname == "arith.select":
            out = get(operands[1]) if get(operands[0]) else get(operands[2])
        elif opname in _CASTS:  # "op %x : A to B", or the generic form's "(A) -> B"
            to = rhs.rsplit(" to ", 1)[1] if " to " in rhs else rhs.rsplit("->", 1)[1]
            out = _round(_strip_loc(to))(get(operands[0]))
        elif opname in _INT_CASTS:
            src, dst = _cast_types(rhs)
            out = int_cast(opname, get(operands[0]), src, dst)
        elif opname in _INT_BIN:
            out = int_binary(opname, get(operands[0]), get(operands[1]), _type_of(rhs))
        elif opname in _BIN:
            out = _BIN[opname](get(operands[0]), get(operands[1]))
        elif opname in _UN:
            out = _UN[opname](get(operands[0]))
        else:
            raise NotImplementedError(f"interpreter: {opname}")
        v[res.split(":")[0]] = out
    raise NotImplementedError(f"interpreter: {op.name}'s payload has no linalg.yield")


def run_generic(op: GenericOp, env: Mapping[str, Any]) -> list[Any]:
    """The op's results (one float64 array per output) for operand values ``env``."""
    import numpy as np

    sizes = loop_sizes(op, env)
    outs = [np.array(env[o.value], dtype=np.float64, copy=True) for o in op.outputs]
    for it in itertools.product(*(range(s) for s in sizes)):
        args = [_read(env[o.value], o.map.evaluate(it)) for o in op.inputs]
        args += [_read(out, o.map.evaluate(it)) for out, o in zip(outs, op.outputs)]
        ys = eval_payload(op, args, it, env)
        if len(ys) != len(outs):
            raise ValueError(f"{op.name} yields {len(ys)} values for {len(outs)} outputs")
        for out, o, y in zip(outs, op.outputs, ys):
            idx = o.map.evaluate(it)
            _read(out, idx)  # bounds check
            if isinstance(y, int) and abs(y) > 1 << 53:
                raise NotImplementedError(f"interpreter: the integer {y} is not exact in a float64 array")
            out[idx] = y
    return outs


def run_ops(ops: Sequence[GenericOp], env: dict[str, Any]) -> dict[str, Any]:
    """Run ``ops`` in order, binding their results into ``env`` (returned)."""
    for op in ops:
        outs = run_generic(op, env)
        for name, arr in zip(op.results, outs):
            env[name] = arr
    return env


# ---------------------------------------------------------------------------
# The second check of a legal fusion
# ---------------------------------------------------------------------------

QUESTION = "the fused op, run by the Linalg interpreter, computes what the pair computes (several sizes)"


def _size_points(rep: FusionReport, count: int) -> list[dict[str, int]]:
    """Up to ``count`` size points, small and varied, where the report holds."""
    assert rep.sizes is not None
    names = rep.sizes.names
    if not names:
        return [{}]
    cands = [dict.fromkeys(names, 2), dict.fromkeys(names, 1), dict.fromkeys(names, 3)]
    cands += [dict(zip(names, p)) for p in itertools.product(range(1, 5), repeat=min(len(names), 3))]
    out: list[dict[str, int]] = []
    for c in cands:
        pt = {n: c.get(n, 2) for n in names}
        vals = [pt[n] for n in names]
        doms = (rep.sizes.producer_domain, rep.sizes.consumer_domain)
        # the condition's constraints, and the sizes' own (loops of size >= 0): a point of some iteration
        if pt not in out and rep.holds_at(vals) and all(_sizes_ok(d, vals) for d in doms):
            out.append(pt)
        if len(out) >= count:
            break
    return out


def _sizes_ok(dom: Any, vals: list[int]) -> bool:
    k = len(vals)
    return all(e.evaluate(vals + [0] * (dom.num_dims - k)) in iv for e, iv in dom.constraints
               if not any(e.uses("d", i) for i in range(k, dom.num_dims)))


def random_operands(rep: FusionReport, sizes: dict[str, int], rng: Any, free: int | None = None
                    ) -> dict[str, Any] | None:
    """Small-integer arrays (from -3 to 3, float64; a scalar for rank 0) drawn from
    the numpy generator ``rng`` for every operand the pair ``rep`` does not produce,
    in operand order, at the loop sizes ``sizes``. A dim tied to no loop and not
    static has extent ``free``; ``None`` when ``free`` is ``None`` and there is one."""
    import numpy as np

    assert rep.sizes is not None
    produced = set(rep.producer.results) | set(rep.consumer.results)
    env: dict[str, Any] = {}
    for o in (*rep.producer.operands, *rep.consumer.operands):
        if o.value in produced or o.value in env:
            continue
        shape = []
        for i in range(o.type.rank):
            e = rep.sizes.extent(o.value, i)
            if e is None:
                if free is None:
                    return None
                e = free
            shape.append(e if isinstance(e, int) else sizes[e])
        env[o.value] = rng.integers(-3, 4, size=shape).astype(np.float64) if shape else float(rng.integers(-3, 4))
    return env


def _environment(rep: FusionReport, sizes: dict[str, int], seed: int) -> dict[str, Any] | None:
    """Small-integer arrays for every operand the pair does not produce, and a
    scalar for every value of the enclosing function the payloads use; ``None``
    when an operand's shape is not known (a dim tied to no loop and not static)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    env = random_operands(rep, sizes, rng)
    if env is None:
        return None
    for op in (rep.producer, rep.consumer):
        args, lines = _body(op)
        defined = set(args) | {ln.split("=", 1)[0].strip().split(":")[0] for ln in lines if "=" in ln.split()[:2]}
        for ln in lines:
            for name in _SSA.findall(ln):
                if name not in env and name.split("#")[0] not in defined:
                    env[name] = float(rng.integers(1, 4))  # a scalar of the enclosing function
    return env


def _iterations(ops: Sequence[GenericOp], env: Mapping[str, Any]) -> int:
    """The loop iterations of running ``ops`` in order (a result has its init's shape)."""
    shapes = dict(env)
    total = 0
    for op in ops:
        try:
            total += math.prod(loop_sizes(op, shapes))
        except (KeyError, ValueError):
            continue  # the run reports it
        for res, o in zip(op.results, op.outputs):
            if o.value in shapes:
                shapes[res] = shapes[o.value]
    return total


def cross_check(rep: FusionReport, fused_text: str, *, points: int = 3, seeds: int = 2,
                timeout: float = math.inf) -> Verdict:
    """Run the pair and the fused op ``fused_text`` with the interpreter at up to
    ``points`` sizes where ``rep`` holds, on ``seeds`` random small-integer inputs
    each, and compare every result the fused op returns (NaN equal to NaN).

    ``proved`` (engine ``interpreter``) when they agree everywhere they ran;
    ``unknown`` when the check did not run (numpy absent, an operation the
    interpreter does not evaluate, sizes over :data:`ITERATION_BUDGET`, no size
    point, ``timeout`` seconds spent before a first run): the reason says so (after a
    first run, the time left only limits the number of runs). Raises :class:`Disagreement` when they differ
    (an element, or one of them leaving its tensors or failing where the other
    does not): the proof and the interpreter cannot both be right.
    """
    t0 = _now()

    def verdict(status: str, reason: str) -> Verdict:
        return Verdict(status, "interpreter", _now() - t0, QUESTION, reason)  # type: ignore[arg-type]

    if not HAVE_NUMPY:
        return verdict("unknown", "numpy is not installed: the second check (the Linalg interpreter) did not run")
    import numpy as np

    (fused,) = parse_linalg(fused_text)
    assert rep.sizes is not None
    want_names = [*rep.consumer.results, *(rep.producer.results[rk] for rk, _ in rep.kept)]
    if len(want_names) != len(fused.results):
        raise Disagreement(f"the fused op returns {len(fused.results)} values, the pair {len(want_names)}")
    ran: list[str] = []
    budget = ITERATION_BUDGET
    for pt in _size_points(rep, points):
        at = ", ".join(f"{n} = {v}" for n, v in pt.items())
        for seed in range(seeds):
            env = _environment(rep, pt, seed)
            if env is None:
                return verdict("unknown", "an operand has a dim of unknown size: the interpreter did not run")
            if _now() - t0 > timeout:
                if ran:
                    break
                return verdict("unknown", f"the time limit ({timeout} s) ran out: the second check did not run")
            cost = _iterations([rep.producer, rep.consumer], env) * 2
            if cost > budget:
                if ran:
                    break
                return verdict("unknown", f"{cost} loop iterations at {at or 'the static sizes'}, over the "
                               f"interpreter's budget ({ITERATION_BUDGET}): the second check did not run")
            budget -= cost
            outcome: list[Any] = []
            for ops in ([rep.producer, rep.consumer], [fused]):
                inputs = dict(env)
                if ops[0] is fused and not isinstance(outcome[0], Exception):
                    # The fused op may still read a producer result through another operand
                    # (MLIR fuses one operand at a time): the producer stays for it.
                    inputs.update({r: outcome[0][r] for r in rep.producer.results})
                try:
                    outcome.append(run_ops(ops, inputs))
                except (NotImplementedError, KeyError) as exc:
                    return verdict("unknown", f"{exc}: the second check did not run")
                except (IndexError, ValueError, ArithmeticError) as exc:
                    outcome.append(exc)
            pair, got = outcome
            if isinstance(pair, Exception) and isinstance(got, Exception):
                continue  # neither runs at these sizes (the pair reads out of bounds: undefined there)
            where = f"at {at or 'the static sizes'}, input seed {seed}"
            if isinstance(pair, Exception) or isinstance(got, Exception):
                bad = "the pair" if isinstance(pair, Exception) else "the fused op"
                raise Disagreement(f"{where}: {bad} fails under the interpreter ({pair if bad == 'the pair' else got}) "
                                   "and the other does not, yet the whole-op proof says they are equal")
            for w, f in zip(want_names, fused.results):
                a, b = np.asarray(pair[w]), np.asarray(got[f])
                if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                    idx: tuple[int, ...] | None = None
                    if a.shape == b.shape:
                        differ = np.argwhere(~((a == b) | ((a != a) & (b != b))))
                        idx = tuple(int(x) for x in differ[0]) if len(differ) else None
                    detail = (f"element {list(idx)}: the pair computes {a[idx]}, the fused op {b[idx]}"
                              if idx is not None else f"shapes {a.shape} and {b.shape}")
                    raise Disagreement(f"{where}: {w} differs from the fused op's {f}, {detail}; the whole-op "
                                       "proof says they are equal (internal error: please report it)")
            ran.append(where)
    if not ran:
        return verdict("unknown", "no size point where the pair runs: the second check did not run")
    sizes_txt = sorted({r.split(", input seed")[0] for r in ran})
    return verdict("proved", f"equal results {'; '.join(sizes_txt)} ({len(ran)} runs)")
