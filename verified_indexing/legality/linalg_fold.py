"""What MLIR's folders do to a ``linalg.generic`` payload, as far as the pass's decision depends on it.

``linalg-fuse-elementwise-ops`` runs its patterns with the greedy driver, which also folds every op
(``Operation::fold``): inside a payload, ``arith.muli %a, %c0`` becomes the constant, ``arith.mulf %a,
%c1`` becomes ``%a``, ``arith.subi %a, %a`` becomes 0. After folding, a payload may no longer read an
input (the canonicalization ``DeduplicateAndRemoveDeadOperandsAndResults`` then drops it) or may only
yield its inputs (``EraseIdentityLinalgOp`` then erases the op and its uses read the input).

:func:`fold_payload` follows the values of a payload through the folds below, keeping for each value only
what the decision needs: which block arguments it depends on, whether it *is* a block argument or a
constant. Modelled folds (MLIR's ``arith`` folders; each checked against ``iree-opt`` in
``tests/test_linalg_fold.py``):

* every ``arith`` op whose operands are all constants folds to a constant;
* ``x + 0``, ``x - 0``, ``x * 1``, ``x / 1`` (``divsi``, ``divui``), ``x & -1``, ``x | 0``, ``x ^ 0``,
  shifts by 0, ``x +. -0.0``, ``x -. 0.0``, ``x *. 1.0``, ``x /. 1.0`` are ``x`` (either side for the
  commutative ops); ``x & x``, ``x | x``, ``max``/``min`` (signed, unsigned, ``maximumf``, ``minimumf``,
  ``maxnumf``, ``minnumf``) of ``x, x`` are ``x``; ``select c, x, x`` is ``x``, ``select true, x, y`` is
  ``x`` and ``select false, x, y`` is ``y``; ``negf (negf x)`` is ``x``;
* ``x * 0``, ``x & 0``, ``x | -1``, ``x - x``, ``x ^ x``, ``x rem 1`` (``remsi``, ``remui``), ``cmpi`` of
  ``x, x`` are constants.

What is not modelled makes the result :attr:`FoldedPayload.uncertain` (with the reason), never guessed: an
``arith`` op with an operand defined outside the payload (its value unknown here) or a constant whose value
is not read or is one where a fold may apply (0, 1, -1, the type's extreme values, +-inf, NaN)
and no rule above applied; an op reading one value twice that is not known not to fold (``addf``, ``mulf``,
``subf``, ``divf``, ``addi``, ``muli``, ``math.*`` are known); ``addi``/``subi`` of an ``addi``/``subi``,
``xori`` of an ``xori`` and a cast of a cast (folds such as ``(a - b) + b = a`` and ``trunci (extsi x) =
x``).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from verified_indexing.expr import Dim
from verified_indexing.legality.linalg_ir import _BLOCK_RE, GenericOp

__all__ = ["FoldedPayload", "fold_payload", "is_identity_copy", "scalar_constants"]

_SSA = re.compile(r"%[\w.$-]+(?:#\d+)?")
_DEF = re.compile(r"^(%[\w.$-]+)\s*=\s*([\w.]+)\s*(.*)$")
_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")

_COMMUTATIVE = {"arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.addf", "arith.mulf",
                "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.maximumf", "arith.minimumf",
                "arith.maxnumf", "arith.minnumf"}
_IDEMPOTENT = {"arith.andi", "arith.ori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
               "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"}
_SELF_CONST = {"arith.subi", "arith.xori"}
_REPEAT_SAFE = {"arith.addf", "arith.mulf", "arith.subf", "arith.divf", "arith.addi", "arith.muli", "arith.cmpf"}
_CASTS = {"arith.trunci", "arith.extsi", "arith.extui", "arith.truncf", "arith.extf", "arith.index_cast",
          "arith.index_castui", "arith.bitcast"}
# (op, side) -> the constant that makes ``x op c`` equal to ``x`` (side "r": only as the right operand)
_UNIT: dict[str, tuple[str, float | int]] = {
    "arith.addi": ("any", 0), "arith.subi": ("r", 0), "arith.muli": ("any", 1), "arith.divsi": ("r", 1),
    "arith.divui": ("r", 1), "arith.ori": ("any", 0), "arith.xori": ("any", 0), "arith.shli": ("r", 0),
    "arith.shrsi": ("r", 0), "arith.shrui": ("r", 0), "arith.subf": ("r", 0.0), "arith.mulf": ("any", 1.0),
    "arith.divf": ("r", 1.0),
}
_ZERO: dict[str, tuple[str, int]] = {"arith.muli": ("any", 0), "arith.andi": ("any", 0),
                                     "arith.remsi": ("r", 1), "arith.remui": ("r", 1)}


@dataclass(frozen=True)
class _Val:
    deps: frozenset[str]
    arg: str | None = None  # the value is this block argument
    const: bool = False
    value: float | int | bool | None = None  # the constant's value when read
    op: str = ""  # the op that computes it (after folding)
    key: str = ""  # the SSA name of the value it is (after folding)
    neg_of: _Val | None = None  # for a negf: its operand


@dataclass(frozen=True)
class FoldedPayload:
    """A payload after MLIR's folds (module docstring): ``live`` the block arguments the yielded values
    still depend on, ``yields`` for each yielded value the block argument it is (``None``: computed or a
    constant), ``uncertain`` why the folding is not modelled (``""`` when it is)."""

    live: frozenset[str]
    yields: tuple[str | None, ...]
    uncertain: str


def _constant(rest: str) -> tuple[float | int | bool | None, str]:
    """The value and type of ``arith.constant``'s text after the op name (``None``: not read)."""
    lit, _, ty = rest.partition(":")
    lit, ty = lit.strip(), ty.strip()
    if lit in ("true", "false"):
        return lit == "true", "i1"
    try:
        if ty.startswith("f") or ty in ("bf16",):
            if lit.lower().startswith("0x"):
                return None, ty
            return float(lit), ty
        return int(lit, 0), ty
    except ValueError:
        return None, ty


def _special(v: float | int | bool | None, ty: str) -> bool:
    """A constant where some ``arith`` fold may apply (module docstring), or one not read."""
    if v is None:
        return True
    if isinstance(v, float):  # the float identities (x + -0.0, x - 0.0, x * 1.0, x / 1.0) have their own rules
        return math.isinf(v) or math.isnan(v)
    w = 64 if ty == "index" else int(ty[1:]) if re.fullmatch(r"i\d+", ty) else 64
    v = int(v)
    return v in (0, 1, -1) or v % (1 << w) in (0, 1, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1)


def _eq(a: float | int | bool | None, b: float | int) -> bool:
    if a is None or isinstance(a, bool):
        return False
    if isinstance(b, float):
        return isinstance(a, float) and a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return not isinstance(a, float) and a == b


_CONST_LINE = re.compile(r"^[ \t]*(%[\w$.-]+)\s*=\s*arith\.constant\s+([^\n<>{}]*?:\s*\w+|true|false)\s*(?:loc\(.*)?$",
                         re.MULTILINE)


@functools.lru_cache(maxsize=8)
def scalar_constants(text: str) -> dict[str, str]:
    """The scalar ``arith.constant`` definitions of a module (name -> ``value : type``), for the payloads
    that read them from outside; a name defined twice with different values is left out (not read)."""
    seen: dict[str, set[str]] = {}
    for m in _CONST_LINE.finditer(text):
        seen.setdefault(m.group(1), set()).add(" ".join(m.group(2).split()))
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def fold_payload(op: GenericOp, constants: dict[str, str] | None = None) -> FoldedPayload | None:
    """The payload of ``op`` after MLIR's folds (module docstring); ``None`` when the payload is not one
    block of ops ending in ``linalg.yield`` (nested regions). ``constants``: the scalar constants defined
    outside the payload (:func:`scalar_constants`), read as constants where the payload uses them."""
    header = _BLOCK_RE.search(op.payload)
    body = op.payload[header.end():] if header is not None else op.payload
    body = _LOC.sub("", body)
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and ln.strip() != "}"]
    if not lines or not lines[-1].startswith("linalg.yield") or any("{" in ln or "}" in ln for ln in lines):
        return None
    env: dict[str, _Val] = {a: _Val(frozenset([a]), arg=a, key=a) for a in op.block_args}
    for name, lit in (constants or {}).items():
        if name not in op.block_args:
            env[name] = _Val(frozenset(), const=True, value=_constant(lit)[0], op="arith.constant", key=name)
    uncertain = ""
    for ln in lines[:-1]:
        m = _DEF.match(ln)
        if m is None:
            return None
        res, name, rest = m.group(1), m.group(2), m.group(3)
        if ":" in res:  # several results: opaque
            return None
        if name == "arith.constant":
            v, _ = _constant(rest)
            env[res] = _Val(frozenset(), const=True, value=v, op=name, key=res)
            continue
        ty = rest.rsplit(":", 1)[-1].strip().split(" to ")[0].strip() if ":" in rest else ""
        names = _SSA.findall(rest.split(":")[0] if ":" in rest else rest)
        vals = [env.get(n) for n in names]
        outside = [n for n, v in zip(names, vals) if v is None]
        deps = frozenset(d for v in vals if v is not None for d in v.deps)
        computed = _Val(deps, op=name, key=res)
        if not name.startswith(("arith.", "math.")):  # linalg.index and other ops: computed, nothing folded
            env[res] = computed
            continue
        if outside:
            uncertain = uncertain or f"{ln}: {outside[0]} is defined outside the payload (its value is not read)"
            env[res] = computed
            continue
        vs = [v for v in vals if v is not None]
        if name == "arith.cmpf" and rest.split(",")[0].strip() in ("true", "false"):
            folded: _Val | str | None = _Val(frozenset(), const=True, value=rest.startswith("true"), op=name)
        else:
            folded = _fold_one(name, vs, ty)
        if isinstance(folded, str):
            uncertain = uncertain or f"{ln}: {folded}"
            env[res] = computed
        elif folded is None:
            env[res] = _Val(deps, op=name, key=res, neg_of=vs[0] if name == "arith.negf" and vs else None)
        else:
            env[res] = folded if not folded.const or folded.key else _Val(
                folded.deps, const=True, value=folded.value, op=name, key=res)
    ynames = _SSA.findall(lines[-1].split(":")[0])
    yvals = [env.get(n) for n in ynames]
    live = frozenset(a for v in yvals if v is not None for a in v.deps)
    return FoldedPayload(live & frozenset(op.block_args), tuple(v.arg if v is not None else None for v in yvals),
                         uncertain)


def _evaluate(name: str, xs: list[float | int | bool | None], ty: str) -> float | int | None:
    """The value of an op on constants, for the few ops read here (``None``: not computed)."""
    if len(xs) != 2 or any(x is None or isinstance(x, bool) for x in xs):
        return None
    a, b = xs
    assert a is not None and b is not None
    floats = {"arith.addf": a + b, "arith.subf": a - b, "arith.mulf": a * b}
    if name in floats and isinstance(a, float) and isinstance(b, float):
        return floats[name]
    m = re.fullmatch(r"i(\d+)", ty)
    if m is None or isinstance(a, float) or isinstance(b, float):
        return None
    w = int(m.group(1))
    ints = {"arith.addi": a + b, "arith.subi": a - b, "arith.muli": a * b}
    if name not in ints:
        return None
    r = int(ints[name]) % (1 << w)
    return r - (1 << w) if r >= 1 << (w - 1) else r


def _fold_one(name: str, vs: list[_Val], ty: str) -> _Val | str | None:
    """The folded value of one op (``None``: computed, not folded; a string: why it is not modelled)."""
    if vs and all(v.const for v in vs):
        return _Val(frozenset(), const=True, value=_evaluate(name, [v.value for v in vs], ty), op=name)
    if name.startswith("math."):
        return None
    if name == "arith.negf" and vs and vs[0].neg_of is not None:
        return vs[0].neg_of
    if name == "arith.select" and len(vs) == 3:
        c, a, b = vs
        if c.const and isinstance(c.value, bool):
            return a if c.value else b
        if a.key == b.key:
            return a
        if c.const:
            return "the condition is a constant not read"
        if a.const and b.const:
            return "a select of two constants may fold to its condition"
        return None
    if name == "arith.cmpi" and len(vs) == 2 and vs[0].key == vs[1].key:
        return _Val(frozenset(), const=True, value=None, op=name)
    if name in _CASTS:
        if vs and vs[0].op in _CASTS:
            return f"a cast of a cast ({vs[0].op}) may fold"
        return None
    if name == "arith.negf":
        return None
    if len(vs) != 2:
        return None
    a, b = vs
    inner = {v.op for v in vs if not v.const}
    if name in ("arith.addi", "arith.subi") and inner & {"arith.addi", "arith.subi"}:
        return "addi/subi of an addi/subi may fold ((a - b) + b = a)"
    if name == "arith.xori" and "arith.xori" in inner:
        return "xori of an xori may fold"
    if a.key == b.key:
        if name in _IDEMPOTENT:
            return a
        if name in _SELF_CONST:
            return _Val(frozenset(), const=True, value=0, op=name)  # x - x, x ^ x
        if name in _REPEAT_SAFE:
            return None
        return f"{name} of one value twice may fold"
    for c, x, side in [(b, a, "r"), (a, b, "l")]:
        if not c.const:
            continue
        if side == "l" and name not in _COMMUTATIVE:
            if _special(c.value, ty) and name not in ("arith.subi", "arith.subf"):  # 0 - x, -0.0 - x: no fold
                return f"the constant {c.value} on the left may make {name} fold"
            continue
        if name == "arith.addf" and _eq(c.value, 0.0):  # x + 0.0 is not x (x = -0.0): no fold
            continue
        unit = _UNIT.get(name)
        if unit is not None and (unit[0] == "any" or side == "r") and _eq(c.value, unit[1]):
            return x
        if name == "arith.addf" and _eq(c.value, -0.0):
            return x
        zero = _ZERO.get(name)
        if zero is not None and (zero[0] == "any" or side == "r") and _eq(c.value, zero[1]):
            return _Val(frozenset(), const=True, value=0, op=name)  # x * 0, x & 0, x rem 1
        if name == "arith.andi" and isinstance(c.value, int) and not isinstance(c.value, bool) and c.value == -1:
            return x
        if name == "arith.ori" and isinstance(c.value, int) and not isinstance(c.value, bool) and c.value == -1:
            return _Val(frozenset(), const=True, value=-1, op=name)
        if _special(c.value, ty):
            return f"the constant {c.value} may make {name} fold"
    return None


def is_identity_copy(op: GenericOp, fp: FoldedPayload | None = None) -> bool:
    """Whether ``EraseIdentityLinalgOp`` erases ``op`` once its payload is folded and the canonicalization
    has dropped the inputs the folded payload does not read (while every loop keeps a size): a
    ``linalg.generic`` with pure tensor semantics whose remaining indexing maps are all the same and whose
    payload yields block arguments only, each of an operand of its result's type (the pattern adds a
    ``tensor.cast`` otherwise; not modelled: ``False``). An uncertain folding is not an identity here (the
    caller decides what that means)."""
    if op.kind != "linalg.generic" or not op.has_pure_tensor_semantics or not op.results:
        return False
    fp = fp if fp is not None else fold_payload(op)
    if fp is None or fp.uncertain or len(fp.yields) != len(op.results) or any(y is None for y in fp.yields):
        return False
    kept = [o for k, o in enumerate(op.operands)
            if k >= len(op.inputs) or k >= len(op.block_args) or op.block_args[k] in fp.live]
    if len({str(o.map) for o in kept}) != 1:
        return False
    sized = {e.index for o in kept for e in o.map.results if isinstance(e, Dim)}
    if len(sized) != op.num_loops:
        return False
    for y, rt in zip(fp.yields, op.result_types):
        k = op.block_args.index(y) if y in op.block_args else -1
        if k < 0 or str(op.operands[k].type) != str(rt):
            return False
    return True
