"""Per-op indexing maps of HLO instructions, both directions.

:func:`output_to_input` gives, for one output of an instruction, one map per
operand: from an index of that output to the indices of the operand it reads.
:func:`input_to_output` gives, for one operand, one map per output (one for an
array-shaped result, one per element of a tuple-shaped result): from an index of
the operand to the output indices that read it. The maps are exactly the ones
``spec/xla-indexing-analysis.md`` defines, in its form (the per-op examples of
the spec are tests).

Promises:

* every map is exact (the set of elements read is exactly the map's image over
  its domain) except three documented over-approximations that the spec itself
  makes: the ``src`` operand of dynamic-update-slice (the identity, although the
  updated window is not read from ``src``), the padding value of pad, and the
  ``update`` operand of dynamic-update-slice, whose output-to-input map also
  yields indices outside the update for outputs outside the window (only the
  in-bounds ones are reads);
* runtime variables (``rt``) stand for offsets *after* HLO's clamping; their
  bounds are the clamping range. Each carries a :class:`RuntimeOrigin` in
  :attr:`Variable.origin` naming the operand that holds the value and the map
  from the holding map's variables to the element of that operand;
* an offset of dynamic-slice / dynamic-update-slice that is a scalar integer
  ``constant`` is folded to its clamped value (no runtime variable);
* ops beyond the spec, each checked against the numpy oracle in both directions:
  every gather form (collapsed and batching dims, any ``index_vector_dim``),
  ``bitcast-convert`` across widths, grouped convolution (``feature_group_count``);
* an instruction touching a dynamic shape (``f32[<=4]``, ``f32[?]``) and a bitcast
  between tiled layouts are unsupported (a map would hold for the bound, or for the
  wrong physical order);
* an op without a model raises :class:`~verified_indexing.errors.UnsupportedError`
  naming the opcode and the reason (:data:`UNSUPPORTED_OPCODES` for the known
  ones); malformed instructions (attributes that do not fit the shapes) raise a
  positioned :class:`~verified_indexing.errors.ParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verified_indexing.errors import MapError, ParseError, UnsupportedError
from verified_indexing.expr import AffineExpr, Const, Dim, RtSym, Sym
from verified_indexing.hlo.bitcast import ELEMENT_BITS, bitcast_exprs
from verified_indexing.hlo.ir import Computation, Instruction, Shape, WindowDim
from verified_indexing.hlo.reshape import reshape_exprs
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval, range_of

__all__ = [
    "ASYNC_DONE_ELEMENT",
    "dus_exact_o2i",
    "pad_value_exact_o2i",
    "ELEMENTWISE_OPCODES",
    "WHOLE_OPERAND_CUSTOM_CALLS",
    "whole_operand_custom_call",
    "ELEMENT_BITS",
    "NULLARY_OPCODES",
    "UNSUPPORTED_OPCODES",
    "KNOWN_CUSTOM_CALLS",
    "PASS_THROUGH_CUSTOM_CALLS",
    "RuntimeOrigin",
    "custom_call_target",
    "from_scalar_map",
    "over_approximation",
    "input_to_output",
    "output_to_input",
    "supported_opcodes",
    "to_scalar_map",
]

#: Opcodes whose output element ``i`` reads element ``i`` of every operand
#: (a rank-0 operand is read by every output element).
ELEMENTWISE_OPCODES: frozenset[str] = frozenset(
    {
        "abs", "acos", "acosh", "add", "and", "asin", "asinh", "atan2", "atanh", "cbrt", "ceil", "clamp", "clz",
        "compare", "complex", "convert", "copy", "cosh", "cosine", "count-leading-zeros", "divide", "erf",
        "exponential", "exponential-minus-one",
        "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "map", "maximum", "minimum",
        "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce-precision", "remainder",
        "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
        "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sinh", "sqrt", "stochastic-convert",
        "subtract", "tan", "tanh", "xor", "rng", "domain",
    }
)

#: Opcodes without operands: their output reads no tensor (no maps).
NULLARY_OPCODES: frozenset[str] = frozenset(
    {"constant", "iota", "parameter", "partition-id", "replica-id", "rng-get-and-update-state"}
)

_COLLECTIVE = "a collective whose chunks have data-dependent sizes, which a per-device map cannot state"
_ASYNC = "an asynchronous wrapper: its elements are produced by the wrapped operation, analyze that one"
_IO = "communication with the host or another device: no element of an operand is read by index"
_DYNAMIC = "dynamic shapes: the sizes are known only when the program runs"

#: Opcodes that stay without an indexing model, with the reason the analysis reports.
UNSUPPORTED_OPCODES: dict[str, str] = {
    "while": "a loop: the body runs a data-dependent number of times (the fusion walk, given the module, "
    "passes the loop-invariant elements of the state through and follows an affine counter per iteration)",
    "conditional": "the branch is chosen when the program runs (the fusion walk, given the module, reads "
    "through every branch and marks the maps as over-approximations)",
    "call": "a call: analyze its computation (the fusion walk goes through calls)",
    "fusion": "a fusion: analyze its computation (the fusion walk goes through fusions)",
    "ragged-all-to-all": _COLLECTIVE,
    "async-start": _ASYNC + " (the fusion walk, given the module, goes through the wrapped computation)",
    "async-update": _ASYNC + " (the fusion walk passes its tuple through)",
    "call-start": _ASYNC + " (an asynchronous call: the fusion walk, given the module, goes through to_apply)",
    "call-update": _ASYNC + " (the fusion walk passes its tuple through)",
    "send": _IO, "send-done": _IO, "recv": _IO, "recv-done": _IO, "infeed": _IO, "outfeed": _IO,
    "dynamic-reshape": _DYNAMIC, "set-dimension-size": _DYNAMIC, "get-dimension-size": _DYNAMIC,
    "after-all": "a token join: tokens hold no elements",
}



@dataclass(frozen=True)
class RuntimeOrigin:
    """Where a runtime variable's value comes from.

    ``operand_index``/``operand_name``: the operand of the instruction holding the
    value. ``map``: from the variables of the map that owns the runtime variable
    (its dims, then its range variables, same bounds) to the index of the element
    of that operand holding the value (``(d0, d1) -> ()`` for a scalar offset of
    dynamic-slice, ``(d0, d1, d2, d3) -> (d0, 1)`` for the second start index of a
    gather). The variable's value is that element clamped to the variable's bounds.

    In a fusion's composed maps the origin is traced back through instructions
    that move values unchanged (bitcast, reshape, slice, transpose, ...): then
    ``operand_name`` is the instruction the chain reaches (typically a fusion
    parameter), ``map`` gives the element of it holding the value, ``via`` lists
    the instructions traced through, and ``operand_index`` still numbers the
    operand of the consuming instruction (the dynamic-slice, the gather).
    """

    operand_index: int
    operand_name: str
    map: IndexingMap
    via: tuple[str, ...] = ()


# ---------------------------------------------------------------------------
# Small builders
# ---------------------------------------------------------------------------


def _box(dims: Sequence[int]) -> list[Variable]:
    return [Variable(Interval(0, n - 1)) for n in dims]


def _identity(dims: Sequence[int]) -> IndexingMap:
    return IndexingMap(_box(dims), [Dim(i) for i in range(len(dims))])


def to_scalar_map(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ..., dn-1) -> ()`` on the box of ``dims``: every element reads the
    one element of a rank-0 tensor (a scalar operand, an init value, an offset)."""
    return IndexingMap(_box(dims), [])


def from_scalar_map(dims: Sequence[int]) -> IndexingMap:
    """``()[s0, ..., sn-1] -> (s0, ..., sn-1)``: the one element of a rank-0 tensor
    goes to every element of a tensor of shape ``dims``."""
    return IndexingMap([], [Sym(i) for i in range(len(dims))], range_vars=_box(dims))


class _Builder:
    """Collects the parts of one map; constraints already implied by the variable
    bounds (interval evaluation) are not added."""

    def __init__(self, dims: Sequence[Interval]) -> None:
        self.dims = list(dims)
        self.syms: list[Interval] = []
        self.rts: list[tuple[Interval, RuntimeOrigin | None]] = []
        self.constraints: list[tuple[AffineExpr, Interval]] = []

    def sym(self, bounds: Interval) -> AffineExpr:
        self.syms.append(bounds)
        return Sym(len(self.syms) - 1)

    def rt(self, bounds: Interval, origin: RuntimeOrigin | None = None) -> AffineExpr:
        self.rts.append((bounds, origin))
        return RtSym(len(self.rts) - 1)

    def constrain(self, expr: AffineExpr, interval: Interval) -> None:
        r = range_of(expr, self.dims, self.syms, [b for b, _ in self.rts])
        if not interval.contains_interval(r):
            self.constraints.append((expr, interval))

    def origin_map(self, results: Sequence[AffineExpr]) -> IndexingMap:
        """A map from this map's dims and (so far declared) range vars."""
        return IndexingMap([Variable(b) for b in self.dims], results, [Variable(b) for b in self.syms])

    def build(self, results: Sequence[AffineExpr]) -> IndexingMap:
        return IndexingMap(
            [Variable(b) for b in self.dims],
            results,
            [Variable(b) for b in self.syms],
            [Variable(b, None, o) for b, o in self.rts],
            self.constraints,
        )


def _boxes(dims: Sequence[int]) -> list[Interval]:
    return [Interval(0, n - 1) for n in dims]


def _bad(inst: Instruction, message: str) -> ParseError:
    return inst.error(message)


def _unsupported(inst: Instruction, reason: str) -> UnsupportedError:
    return UnsupportedError(f"unknown indexing for {inst.opcode} ({inst.name}): {reason}")


def _no_model(inst: Instruction) -> UnsupportedError:
    reason = UNSUPPORTED_OPCODES.get(inst.opcode, "no indexing model for this opcode")
    return _unsupported(inst, reason)


def _check_static(inst: Instruction, comp: Computation) -> None:
    """Dynamic shapes are not modeled: a map over the bound would claim reads of
    elements past the runtime size."""
    shapes = [inst.shape] + [comp.by_name[n].shape for n in inst.operands if n in comp.by_name]
    if any(s.is_dynamic for s in shapes):
        raise _unsupported(inst, "a dynamic shape (bounded <=N or unbounded ?): maps would hold for the bound only")


def _array(shape: Shape, inst: Instruction, what: str) -> tuple[int, ...]:
    if shape.is_tuple:
        raise _unsupported(inst, f"{what} has the tuple shape {shape} (nested tuples are not modeled)")
    return shape.dims


def _operand_shape(inst: Instruction, comp: Computation, k: int) -> Shape:
    if k >= len(inst.operands):
        raise _bad(inst, f"has {len(inst.operands)} operand(s), no operand {k}")
    try:
        return comp.operand(inst, k).shape
    except KeyError:
        raise _bad(inst, f"operand {inst.operands[k]!r} is not defined in {comp.name}") from None


def _operand_dims(inst: Instruction, comp: Computation, k: int) -> tuple[int, ...]:
    return _array(_operand_shape(inst, comp, k), inst, f"operand {k}")


def _output_shapes(inst: Instruction) -> list[Shape]:
    return list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]


def _output_dims(inst: Instruction, output_index: int) -> tuple[int, ...]:
    shapes = _output_shapes(inst)
    if not 0 <= output_index < len(shapes):
        raise _bad(inst, f"has {len(shapes)} output(s), no output {output_index}")
    return _array(shapes[output_index], inst, f"output {output_index}")


def _check_perm(inst: Instruction, perm: Sequence[int], rank: int, what: str = "dimensions") -> None:
    if sorted(perm) != list(range(rank)):
        raise _bad(inst, f"{what}={{{','.join(map(str, perm))}}} is not a permutation of 0..{rank - 1}")


def _distinct_dims(inst: Instruction, rank: int) -> tuple[int, ...]:
    """``dimensions={...}`` as a set of distinct dimensions of a rank-``rank`` shape
    (XLA's verifier rejects repeats and out-of-range entries; so do we)."""
    dims = inst.dimensions()
    if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
        raise _bad(inst, f"dimensions={{{','.join(map(str, dims))}}} must be distinct dimensions in 0..{rank - 1}")
    return dims


def _known_empty_if_no_elements(*shapes: Sequence[int]) -> bool:
    return any(0 in s for s in shapes)


# ---------------------------------------------------------------------------
# Op families: each returns (output->input maps for output k, input->output maps for operand k)
# ---------------------------------------------------------------------------

_O2I = Callable[[Instruction, Computation, int], list[IndexingMap]]
_I2O = Callable[[Instruction, Computation, int], list[IndexingMap]]


def _elementwise_o2i(inst: Instruction, comp: Computation, out: int) -> list[IndexingMap]:
    dims = _output_dims(inst, out)
    maps = []
    for k in range(len(inst.operands)):
        od = _operand_dims(inst, comp, k)
        if od == dims:
            maps.append(_identity(dims))
        elif od == ():
            maps.append(to_scalar_map(dims))
        else:
            raise _elementwise_mismatch(inst, k, od, dims)
    return maps


def _elementwise_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims = _output_dims(inst, 0)
    od = _operand_dims(inst, comp, k)
    if od == dims:
        return [_identity(dims)]
    if od == ():
        return [from_scalar_map(dims)]
    raise _elementwise_mismatch(inst, k, od, dims)


def _elementwise_mismatch(inst: Instruction, k: int, od: tuple[int, ...], dims: tuple[int, ...]) -> Exception:
    return _bad(inst, f"operand {k} has shape {list(od)}, the output {list(dims)}")


def _bitcast_convert_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, int]:
    """(operand dims, output dims, ratio): ratio 1 for equal widths, > 1 when the
    output is narrower (it has an extra minor dimension of that size), < -1 when it
    is wider (the operand has the extra dimension)."""
    src_shape = _operand_shape(inst, comp, 0)
    src = _array(src_shape, inst, "operand 0")
    out = _output_dims(inst, 0)
    if len(inst.operands) != 1:
        raise _bad(inst, "bitcast-convert takes one operand")
    wi, wo = ELEMENT_BITS.get(src_shape.element_type), ELEMENT_BITS.get(inst.shape.element_type)
    if wi is None or wo is None:
        raise _unsupported(inst, f"unknown width of {src_shape.element_type} or {inst.shape.element_type}")
    if wi == wo:
        if src != out:
            raise _bad(inst, f"operand {list(src)} and output {list(out)} differ for types of equal width")
        return src, out, 1
    if wi > wo:
        if wi % wo or out != (*src, wi // wo):
            raise _bad(inst, f"output {list(out)} is not the operand {list(src)} with a minor dimension {wi // wo}")
        return src, out, wi // wo
    if wo % wi or src != (*out, wo // wi):
        raise _bad(inst, f"operand {list(src)} is not the output {list(out)} with a minor dimension {wo // wi}")
    return src, out, -(wo // wi)


def _bitcast_convert_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    src, out, ratio = _bitcast_convert_parts(inst, comp)
    if ratio == 1:
        return [_identity(out)]
    b = _Builder(_boxes(out))
    if ratio > 1:  # narrower output: element (x, j) holds part j of operand element x
        return [b.build([Dim(i) for i in range(len(src))])]
    return [b.build([*(Dim(i) for i in range(len(out))), b.sym(Interval(0, -ratio - 1))])]


def _bitcast_convert_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src, out, ratio = _bitcast_convert_parts(inst, comp)
    if ratio == 1:
        return [_identity(src)]
    b = _Builder(_boxes(src))
    if ratio > 1:
        return [b.build([*(Dim(i) for i in range(len(src))), b.sym(Interval(0, ratio - 1))])]
    return [b.build([Dim(i) for i in range(len(out))])]


def _broadcast_check(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    bdims = inst.dimensions()
    if len(bdims) != len(src) or len(set(bdims)) != len(bdims) or any(not 0 <= d < len(out) for d in bdims):
        raise _bad(inst, f"dimensions={list(bdims)} does not fit operand {list(src)} and output {list(out)}")
    if any(src[i] != out[d] for i, d in enumerate(bdims)):
        raise _bad(inst, f"operand {list(src)} does not match output {list(out)} at dimensions={list(bdims)}")
    return out, src, bdims


def _broadcast_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, _src, bdims = _broadcast_check(inst, comp)
    return [IndexingMap(_box(out), [Dim(d) for d in bdims])]


def _broadcast_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, src, bdims = _broadcast_check(inst, comp)
    b = _Builder(_boxes(src))
    results: list[AffineExpr] = []
    for j, n in enumerate(out):
        results.append(Dim(bdims.index(j)) if j in bdims else b.sym(Interval(0, n - 1)))
    return [b.build(results)]


def _transpose_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    perm = inst.dimensions()
    _check_perm(inst, perm, len(src))
    if any(out[i] != src[p] for i, p in enumerate(perm)):
        raise _bad(inst, f"output {list(out)} is not operand {list(src)} permuted by {list(perm)}")
    results: list[AffineExpr] = [Const(0)] * len(src)
    for i, p in enumerate(perm):
        results[p] = Dim(i)
    return [IndexingMap(_box(out), results)]


def _transpose_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    _transpose_o2i(inst, comp, 0)  # validation
    src = _operand_dims(inst, comp, 0)
    return [IndexingMap(_box(src), [Dim(p) for p in inst.dimensions()])]


def _reverse_map(inst: Instruction, comp: Computation) -> IndexingMap:
    out = _output_dims(inst, 0)
    if _operand_dims(inst, comp, 0) != out:
        raise _bad(inst, "operand and output shapes differ")
    rdims = set(_distinct_dims(inst, len(out)))
    return IndexingMap(_box(out), [(-Dim(i) + (n - 1)) if i in rdims else Dim(i) for i, n in enumerate(out)])


def _reverse_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    return [_reverse_map(inst, comp)]


def _reverse_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    return [_reverse_map(inst, comp)]


_Dims = tuple[int, ...]


def _slice_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, list[tuple[int, int]]]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    sds = inst.slice_dims()
    if len(sds) != len(src):
        raise _bad(inst, f"slice has {len(sds)} entries for an operand of rank {len(src)}")
    parts = []
    for i, sd in enumerate(sds):
        if sd.stride <= 0 or not 0 <= sd.start <= sd.limit <= src[i]:
            raise _bad(inst, f"slice entry [{sd.start}:{sd.limit}:{sd.stride}] does not fit dimension {src[i]}")
        size = -(-(sd.limit - sd.start) // sd.stride)  # ceil: [3:32:2] takes 3, 5, ..., 31 (15 elements)
        if out[i] != size:
            raise _bad(inst, f"output dimension {i} is {out[i]}, the slice gives {size}")
        parts.append((sd.start, sd.stride))
    return out, src, parts


def _slice_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, _src, parts = _slice_parts(inst, comp)
    return [IndexingMap(_box(out), [Dim(i) * st + lo for i, (lo, st) in enumerate(parts)])]


def _slice_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, _src, parts = _slice_parts(inst, comp)
    dims = [Interval(lo, lo + (n - 1) * st) for (lo, st), n in zip(parts, out)]
    b = _Builder(dims)
    results: list[AffineExpr] = []
    for i, (lo, st) in enumerate(parts):
        e = Dim(i) - lo
        if st == 1:
            results.append(e)
        else:
            results.append(e.floordiv(st))
            b.constraints.append((e.mod(st), Interval(0, 0)))
    return [b.build(results)]


def _reshape_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    return [_reshape_map(inst, src, out)]


def _reshape_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    return [_reshape_map(inst, out, src)]


def _reshape_map(inst: Instruction, target: Sequence[int], origin: Sequence[int]) -> IndexingMap:
    """From an index of ``origin`` to the index of ``target`` (row-major)."""
    n_t = n_o = 1
    for n in target:
        n_t *= n
    for n in origin:
        n_o *= n
    if n_t != n_o:
        raise _bad(inst, f"reshape {list(origin)} <-> {list(target)}: element counts differ")
    if n_t == 0:
        return IndexingMap.known_empty()
    return IndexingMap(_box(origin), reshape_exprs(target, origin))


def _bitcast_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    src = _operand_shape(inst, comp, 0)
    return [_bitcast_map(inst, src, inst.shape)]


def _bitcast_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src = _operand_shape(inst, comp, 0)
    return [_bitcast_map(inst, inst.shape, src)]


def _bitcast_map(inst: Instruction, target: Shape, origin: Shape) -> IndexingMap:
    try:
        if target.num_elements() == 0 and origin.num_elements() == 0 and not target.is_tuple:
            return IndexingMap.known_empty()
        return IndexingMap(_box(origin.dims), bitcast_exprs(target, origin))
    except UnsupportedError as exc:
        raise _unsupported(inst, str(exc)) from None


def _concat_parts(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], int, list[int]]:
    out = _output_dims(inst, 0)
    cd = inst.dimensions()
    if len(cd) != 1 or not 0 <= cd[0] < len(out):
        raise _bad(inst, f"dimensions={list(cd)}: expected one dimension of the output")
    axis = cd[0]
    offsets = []
    off = 0
    for k in range(len(inst.operands)):
        od = _operand_dims(inst, comp, k)
        if len(od) != len(out) or any(a != b for i, (a, b) in enumerate(zip(od, out)) if i != axis):
            raise _bad(inst, f"operand {k} {list(od)} does not fit the output {list(out)}")
        offsets.append(off)
        off += od[axis]
    if off != out[axis]:
        raise _bad(inst, f"operands give {off} along dimension {axis}, the output has {out[axis]}")
    return out, axis, offsets


def _concat_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, axis, offsets = _concat_parts(inst, comp)
    maps = []
    for k, off in enumerate(offsets):
        n = _operand_dims(inst, comp, k)[axis]
        dims = _box(out)
        dims[axis] = Variable(Interval(off, off + n - 1))
        maps.append(IndexingMap(dims, [Dim(i) - off if i == axis else Dim(i) for i in range(len(out))]))
    return maps


def _concat_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    _out, axis, offsets = _concat_parts(inst, comp)
    od = _operand_dims(inst, comp, k)
    return [IndexingMap(_box(od), [Dim(i) + offsets[k] if i == axis else Dim(i) for i in range(len(od))])]


def _reduce_parts(inst: Instruction, comp: Computation) -> tuple[int, tuple[int, ...], list[int]]:
    n = len(inst.operands) // 2
    if n == 0 or len(inst.operands) != 2 * n:
        raise _bad(inst, "expected N inputs followed by N init values")
    src = _operand_dims(inst, comp, 0)
    rdims = sorted(_distinct_dims(inst, len(src)))
    kept = [d for d in range(len(src)) if d not in rdims]
    for k in range(n):
        if _operand_dims(inst, comp, k) != src:
            raise _bad(inst, f"input {k} has shape {list(_operand_dims(inst, comp, k))}, input 0 {list(src)}")
        if _operand_dims(inst, comp, n + k) != ():
            raise _bad(inst, f"init value {k} is not a scalar")
    for j, s in enumerate(_output_shapes(inst)):
        if _array(s, inst, f"output {j}") != tuple(src[d] for d in kept):
            raise _bad(inst, f"output {j} {s} is not the input {list(src)} without dimensions {rdims}")
    if len(_output_shapes(inst)) != n:
        raise _bad(inst, f"{n} inputs but {len(_output_shapes(inst))} outputs")
    return n, src, rdims


def _reduce_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    n, src, rdims = _reduce_parts(inst, comp)
    out = _output_dims(inst, out_k)
    b = _Builder(_boxes(out))
    results: list[AffineExpr] = []
    next_dim = 0
    for d in range(len(src)):
        if d in rdims:
            results.append(b.sym(Interval(0, src[d] - 1)))
        else:
            results.append(Dim(next_dim))
            next_dim += 1
    m = b.build(results)
    return [m] * n + [to_scalar_map(out)] * n


def _reduce_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    n, src, rdims = _reduce_parts(inst, comp)
    outs = [_output_dims(inst, j) for j in range(n)]
    if k < n:
        m = IndexingMap(_box(src), [Dim(d) for d in range(len(src)) if d not in rdims])
        return [m] * n
    return [from_scalar_map(o) for o in outs]


def _dot_parts(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], tuple[int, ...], list[int], list[int]]:
    lhs, rhs = _operand_dims(inst, comp, 0), _operand_dims(inst, comp, 1)
    dd = inst.dot_dims()
    if len(dd.lhs_batch) != len(dd.rhs_batch) or len(dd.lhs_contracting) != len(dd.rhs_contracting):
        raise _bad(inst, "batch or contracting dimension lists of lhs and rhs differ in length")
    sides = ((dd.lhs_batch + dd.lhs_contracting, lhs, "lhs"), (dd.rhs_batch + dd.rhs_contracting, rhs, "rhs"))
    for dims, shape, side in sides:
        if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
            raise _bad(inst, f"{side} batch/contracting dimensions {list(dims)} do not fit rank {len(shape)}")
    for a, b_ in zip(dd.lhs_batch + dd.lhs_contracting, dd.rhs_batch + dd.rhs_contracting):
        if lhs[a] != rhs[b_]:
            raise _bad(inst, f"lhs dimension {a} ({lhs[a]}) and rhs dimension {b_} ({rhs[b_]}) differ")
    lfree = [d for d in range(len(lhs)) if d not in dd.lhs_batch and d not in dd.lhs_contracting]
    rfree = [d for d in range(len(rhs)) if d not in dd.rhs_batch and d not in dd.rhs_contracting]
    out = _output_dims(inst, 0)
    expect = tuple(lhs[d] for d in dd.lhs_batch) + tuple(lhs[d] for d in lfree) + tuple(rhs[d] for d in rfree)
    if out != expect:
        raise _bad(inst, f"output {list(out)} is not batch + lhs free + rhs free = {list(expect)}")
    return lhs, rhs, lfree, rfree


def _dot_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    lhs, rhs, lfree, rfree = _dot_parts(inst, comp)
    dd = inst.dot_dims()
    out = _output_dims(inst, 0)
    nb = len(dd.lhs_batch)
    maps = []
    for shape, batch, contracting, free, first_free in (
        (lhs, dd.lhs_batch, dd.lhs_contracting, lfree, nb),
        (rhs, dd.rhs_batch, dd.rhs_contracting, rfree, nb + len(lfree)),
    ):
        b = _Builder(_boxes(out))
        results: list[AffineExpr] = [Const(0)] * len(shape)
        for i, d in enumerate(batch):
            results[d] = Dim(i)
        for i, d in enumerate(free):
            results[d] = Dim(first_free + i)
        for d in contracting:
            results[d] = b.sym(Interval(0, shape[d] - 1))
        maps.append(b.build(results))
    return maps


def _dot_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    lhs, rhs, lfree, rfree = _dot_parts(inst, comp)
    dd = inst.dot_dims()
    if k == 0:
        shape, batch, mine, other = lhs, dd.lhs_batch, lfree, [rhs[d] for d in rfree]
    elif k == 1:
        shape, batch, mine, other = rhs, dd.rhs_batch, rfree, [lhs[d] for d in lfree]
    else:
        raise _bad(inst, f"dot has 2 operands, no operand {k}")
    b = _Builder(_boxes(shape))
    results: list[AffineExpr] = [Dim(d) for d in batch]
    own: list[AffineExpr] = [Dim(d) for d in mine]
    others = [b.sym(Interval(0, n - 1)) for n in other]
    results += own + others if k == 0 else others + own
    return [b.build(results)]


def _pad_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, list[tuple[int, int, int]]]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    if _operand_dims(inst, comp, 1) != ():
        raise _bad(inst, "the padding value is not a scalar")
    pads = inst.padding()
    if len(pads) != len(src):
        raise _bad(inst, f"padding has {len(pads)} entries for an operand of rank {len(src)}")
    parts = []
    for i, p in enumerate(pads):
        if p.interior < 0:
            raise _bad(inst, f"negative interior padding {p.interior}")
        expect = p.low + p.high + src[i] + max(0, src[i] - 1) * p.interior
        if out[i] != expect:
            raise _bad(inst, f"output dimension {i} is {out[i]}, the padding gives {expect}")
        parts.append((p.low, p.high, p.interior))
    return out, src, parts


def _pad_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, src, parts = _pad_parts(inst, comp)
    if _known_empty_if_no_elements(src):
        return [IndexingMap.known_empty(), to_scalar_map(out)]
    dims = []
    results: list[AffineExpr] = []
    constraints: list[tuple[AffineExpr, Interval]] = []
    for i, ((low, high, interior), n) in enumerate(zip(parts, out)):
        dims.append(Interval(max(0, low), min(n - 1, n - 1 - high)))
        e = Dim(i) - low
        if interior == 0:
            results.append(e)
        else:
            results.append(e.floordiv(interior + 1))
            constraints.append((e.mod(interior + 1), Interval(0, 0)))
    b = _Builder(dims)
    b.constraints = constraints
    return [b.build(results), to_scalar_map(out)]


def pad_value_exact_o2i(inst: Instruction, comp: Computation) -> list[IndexingMap]:
    """The exact reads of a ``pad``'s padding value (where the spec's map, every
    output reading it, over-approximates): the outputs that are not an operand
    element -- before the first or after the last one along a dimension, or
    between two (interior padding) -- as a union of maps (``[]``: none)."""
    out, src, parts = _pad_parts(inst, comp)
    if _known_empty_if_no_elements(src):
        return [to_scalar_map(out)]
    pieces = []
    for i, ((low, _high, interior), n) in enumerate(zip(parts, src)):
        e = Dim(i) - low
        last = (n - 1) * (interior + 1)
        sides = [[(e, Interval(-out[i], -1))], [(e, Interval(last + 1, out[i]))]]
        if interior:
            sides.append([(e, Interval(0, last)), (e.mod(interior + 1), Interval(1, interior))])
        for cons in sides:
            m = IndexingMap([Variable(b) for b in _boxes(out)], [], constraints=cons)
            if not m.is_known_empty:
                pieces.append(m)
    return pieces


def _pad_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, src, parts = _pad_parts(inst, comp)
    if k == 1:
        return [from_scalar_map(out)]
    dims = []
    results: list[AffineExpr] = []
    for i, ((low, _high, interior), n, m) in enumerate(zip(parts, src, out)):
        step = interior + 1
        # Input elements that land inside the output (negative padding crops).
        lo = max(0, -(low // step)) if low < 0 else 0
        hi = min(n - 1, (m - 1 - low) // step)
        dims.append(Interval(lo, hi))
        results.append(Dim(i) * step + low)
    return [IndexingMap([Variable(d) for d in dims], results)]


_INT_TYPES = frozenset({"s2", "s4", "s8", "s16", "s32", "s64", "u2", "u4", "u8", "u16", "u32", "u64"})


def constant_scalar(inst: Instruction | None) -> int | None:
    """The value of a scalar integer ``constant`` instruction (None otherwise)."""
    if inst is None or inst.opcode != "constant" or inst.shape.is_tuple or inst.shape.dims:
        return None
    if inst.shape.element_type not in _INT_TYPES or inst.literal is None:
        return None
    text = inst.literal.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def _offset(b: _Builder, inst: Instruction, comp: Computation, k: int, bounds: Interval) -> AffineExpr:
    """The start offset held by scalar operand ``k``, clamped to ``bounds`` as HLO
    clamps it: a constant when the operand is an integer constant, else a runtime
    variable bound to that operand."""
    value = constant_scalar(comp.by_name.get(inst.operands[k]))
    if value is not None:
        return Const(max(bounds.lo, min(value, bounds.hi)))
    return b.rt(bounds, RuntimeOrigin(k, inst.operands[k], b.origin_map([])))


def _dynamic_slice_parts(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    if len(inst.operands) != 1 + len(src):
        raise _bad(inst, f"expected {len(src)} scalar offsets after the operand, got {len(inst.operands) - 1}")
    for k in range(1, len(inst.operands)):
        if _operand_dims(inst, comp, k) != ():
            raise _bad(inst, f"offset operand {k} is not a scalar")
    sizes = inst.ints("dynamic_slice_sizes", out)
    if tuple(sizes) != out or len(out) != len(src) or any(a > b for a, b in zip(out, src)):
        raise _bad(inst, f"slice sizes {list(sizes)} do not fit operand {list(src)} and output {list(out)}")
    return out, src


def _dynamic_slice_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, src = _dynamic_slice_parts(inst, comp)
    b = _Builder(_boxes(out))
    results: list[AffineExpr] = []
    for i in range(len(src)):
        results.append(Dim(i) + _offset(b, inst, comp, 1 + i, Interval(0, src[i] - out[i])))
    return [b.build(results)] + [to_scalar_map(out)] * len(src)


def _dynamic_slice_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, src = _dynamic_slice_parts(inst, comp)
    if k > 0:
        return [from_scalar_map(out)]
    b = _Builder(_boxes(src))
    results: list[AffineExpr] = []
    for i in range(len(src)):
        e = Dim(i) - _offset(b, inst, comp, 1 + i, Interval(0, src[i] - out[i]))
        b.constrain(e, Interval(0, out[i] - 1))
        results.append(e)
    return [b.build(results)]


def _dus_parts(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    out = _output_dims(inst, 0)
    if _operand_dims(inst, comp, 0) != out:
        raise _bad(inst, "operand 0 and the output shapes differ")
    upd = _operand_dims(inst, comp, 1)
    if len(inst.operands) != 2 + len(out):
        raise _bad(inst, f"expected {len(out)} scalar offsets after the update, got {len(inst.operands) - 2}")
    for k in range(2, len(inst.operands)):
        if _operand_dims(inst, comp, k) != ():
            raise _bad(inst, f"offset operand {k} is not a scalar")
    if len(upd) != len(out) or any(a > b for a, b in zip(upd, out)):
        raise _bad(inst, f"update {list(upd)} does not fit the operand {list(out)}")
    return out, upd


def _dus_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, upd = _dus_parts(inst, comp)
    b = _Builder(_boxes(out))
    results: list[AffineExpr] = []
    for i in range(len(out)):
        results.append(Dim(i) - _offset(b, inst, comp, 2 + i, Interval(0, out[i] - upd[i])))
    return [_identity(out), b.build(results)] + [to_scalar_map(out)] * len(out)


def dus_exact_o2i(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    """The exact reads of a ``dynamic-update-slice``'s operand ``k`` (0: src, 1: the
    update), as a union of maps where the spec's maps over-approximate: src is read
    outside the window only (one piece per dimension and side: the offset's runtime
    variables in every piece), the update inside it (its map with the window's
    constraints). ``[]``: never read."""
    out, upd = _dus_parts(inst, comp)
    if k not in (0, 1):
        raise _bad(inst, f"the exact reads are given for the src and the update, not operand {k}")

    def builder() -> tuple[_Builder, list[AffineExpr]]:
        b = _Builder(_boxes(out))
        return b, [_offset(b, inst, comp, 2 + i, Interval(0, out[i] - upd[i])) for i in range(len(out))]

    if k == 1:
        b, offs = builder()
        results = [Dim(i) - offs[i] for i in range(len(out))]
        b.constraints += [(r, Interval(0, upd[i] - 1)) for i, r in enumerate(results)]
        return [m for m in [b.build(results)] if not m.is_known_empty]
    pieces = []
    for i in range(len(out)):
        for side in (Interval(-out[i], -1), Interval(upd[i], out[i])):
            b, offs = builder()
            b.constraints.append((Dim(i) - offs[i], side))
            m = b.build([Dim(j) for j in range(len(out))])
            if not m.is_known_empty:
                pieces.append(m)
    return pieces


def _dus_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, upd = _dus_parts(inst, comp)
    if k == 0:
        return [_identity(out)]
    if k >= 2:
        return [from_scalar_map(out)]
    b = _Builder(_boxes(upd))
    results: list[AffineExpr] = []
    for i in range(len(out)):
        results.append(Dim(i) + _offset(b, inst, comp, 2 + i, Interval(0, out[i] - upd[i])))
    return [b.build(results)]


def _gather_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, _Dims, int]:
    """Checks the simplified form; returns (operand, indices, output dims, batch dim of the output)."""
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    idx = _operand_dims(inst, comp, 1)
    g = inst.gather_dims()
    if g.operand_batching_dims or g.start_indices_batching_dims:
        raise _unsupported(inst, "gather with batching dimensions (only the simplified gather is modeled)")
    if g.collapsed_slice_dims:
        raise _unsupported(inst, "gather with collapsed_slice_dims (only the simplified gather is modeled)")
    if len(idx) != 2 or g.index_vector_dim != 1:
        raise _unsupported(inst, "gather whose indices are not rank 2 with index_vector_dim=1 (not simplified)")
    if len(g.slice_sizes) != len(src) or any(not 0 <= s <= n for s, n in zip(g.slice_sizes, src)):
        raise _bad(inst, f"slice_sizes={list(g.slice_sizes)} do not fit operand {list(src)}")
    sim = g.start_index_map
    if len(sim) != idx[1] or len(set(sim)) != len(sim) or any(not 0 <= d < len(src) for d in sim):
        raise _bad(inst, f"start_index_map={list(sim)} does not fit operand {list(src)} and indices {list(idx)}")
    if len(out) != len(src) + 1 or len(g.offset_dims) != len(src) or list(g.offset_dims) != sorted(set(g.offset_dims)):
        raise _bad(inst, f"offset_dims={list(g.offset_dims)} does not fit output {list(out)}")
    batch = [d for d in range(len(out)) if d not in g.offset_dims]
    if len(batch) != 1 or out[batch[0]] != idx[0]:
        raise _bad(inst, f"output {list(out)} has no batch dimension matching indices {list(idx)}")
    if any(out[od] != s for od, s in zip(g.offset_dims, g.slice_sizes)):
        raise _bad(inst, f"output {list(out)} does not hold slices of size {list(g.slice_sizes)}")
    return src, idx, out, batch[0]


@dataclass(frozen=True)
class _Gather:
    """A gather without batching dimensions, checked against its shapes."""

    src: _Dims
    idx: _Dims
    out: _Dims
    ivd: int  # index_vector_dim (== rank of the indices: an implicit trailing 1)
    idx_batch: tuple[int, ...]  # dims of the indices other than ivd, in order
    out_batch: tuple[int, ...]  # output dims not in offset_dims (same order)
    kept: tuple[int, ...]  # operand dims not collapsed (in order of offset_dims)
    offset_dims: tuple[int, ...]
    collapsed: frozenset[int]
    start_index_map: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    batching: dict[int, int]  # operand batching dim -> its position among the batch dims


def _is_simplified_gather(inst: Instruction, comp: Computation) -> bool:
    g = inst.gather_dims()
    if g.operand_batching_dims or g.start_indices_batching_dims or g.collapsed_slice_dims:
        return False
    return g.index_vector_dim == 1 and len(_operand_dims(inst, comp, 1)) == 2


def _general_gather(inst: Instruction, comp: Computation) -> _Gather:
    """Checks any gather (XLA's operation semantics): collapsed slice dims,
    batching dims, indices of any rank, an implicit index vector."""
    out = _output_dims(inst, 0)
    src = _operand_dims(inst, comp, 0)
    idx = _operand_dims(inst, comp, 1)
    g = inst.gather_dims()
    ivd = g.index_vector_dim
    if not 0 <= ivd <= len(idx):
        raise _bad(inst, f"index_vector_dim={ivd} out of range for indices of rank {len(idx)}")
    nvec = idx[ivd] if ivd < len(idx) else 1
    sim = g.start_index_map
    if len(sim) != nvec or len(set(sim)) != len(sim) or any(not 0 <= d < len(src) for d in sim):
        raise _bad(inst, f"start_index_map={list(sim)} does not fit operand {list(src)} and indices {list(idx)}")
    if len(g.slice_sizes) != len(src) or any(not 0 <= s <= n for s, n in zip(g.slice_sizes, src)):
        raise _bad(inst, f"slice_sizes={list(g.slice_sizes)} do not fit operand {list(src)}")
    collapsed = g.collapsed_slice_dims
    if len(set(collapsed)) != len(collapsed) or any(not 0 <= d < len(src) or g.slice_sizes[d] != 1 for d in collapsed):
        raise _bad(inst, f"collapsed_slice_dims={list(collapsed)} must name operand dims of slice size 1")
    obd, sibd = g.operand_batching_dims, g.start_indices_batching_dims
    idx_batch = tuple(d for d in range(len(idx)) if d != ivd)
    if (
        len(obd) != len(sibd)
        or len(set(obd)) != len(obd)
        or len(set(sibd)) != len(sibd)
        or any(not 0 <= d < len(src) or d in collapsed or d in sim or g.slice_sizes[d] != 1 for d in obd)
        or any(d not in idx_batch for d in sibd)
        or any(src[a] != idx[b] for a, b in zip(obd, sibd))
    ):
        raise _bad(
            inst,
            f"operand_batching_dims={list(obd)} and start_indices_batching_dims={list(sibd)} do not fit "
            f"operand {list(src)} and indices {list(idx)}",
        )
    kept = tuple(d for d in range(len(src)) if d not in collapsed and d not in obd)
    od = g.offset_dims
    if list(od) != sorted(set(od)) or len(od) != len(kept) or len(out) != len(od) + len(idx_batch):
        raise _bad(inst, f"offset_dims={list(od)} does not fit output {list(out)}")
    if any(not 0 <= d < len(out) for d in od):
        raise _bad(inst, f"offset_dims={list(od)} out of range for output {list(out)}")
    out_batch = tuple(d for d in range(len(out)) if d not in od)
    if any(out[o] != idx[i] for o, i in zip(out_batch, idx_batch)):
        raise _bad(inst, f"output {list(out)} batch dimensions do not match indices {list(idx)}")
    if any(out[o] != g.slice_sizes[d] for o, d in zip(od, kept)):
        raise _bad(inst, f"output {list(out)} does not hold slices of size {list(g.slice_sizes)}")
    batching = {d: idx_batch.index(i) for d, i in zip(obd, sibd)}
    return _Gather(
        src, idx, out, ivd, idx_batch, out_batch, kept, od, frozenset(collapsed), sim, g.slice_sizes, batching
    )


def _gather_index(p: _Gather, batch: Sequence[AffineExpr], j: int) -> list[AffineExpr]:
    """The index of the indices element holding component ``j`` of the start
    vector of the batch position ``batch``."""
    res = list(batch)
    if p.ivd < len(p.idx):
        res.insert(p.ivd, Const(j))
    return res


def _general_gather_o2i(inst: Instruction, comp: Computation) -> list[IndexingMap]:
    p = _general_gather(inst, comp)
    if _known_empty_if_no_elements(p.out):
        return [IndexingMap.known_empty(), IndexingMap.known_empty()]
    b = _Builder(_boxes(p.out))
    results: list[AffineExpr] = [Const(0)] * len(p.src)
    for o, d in zip(p.offset_dims, p.kept):
        results[d] = Dim(o)
    batch: list[AffineExpr] = [Dim(o) for o in p.out_batch]
    for d, pos in p.batching.items():
        results[d] = batch[pos]
    for j, d in enumerate(p.start_index_map):
        origin = RuntimeOrigin(1, inst.operands[1], b.origin_map(_gather_index(p, batch, j)))
        results[d] = results[d] + b.rt(Interval(0, p.src[d] - p.slice_sizes[d]), origin)
    ib = _Builder(_boxes(p.out))
    iresults: list[AffineExpr] = list(batch)
    if p.ivd < len(p.idx):
        iresults.insert(p.ivd, ib.sym(Interval(0, p.idx[p.ivd] - 1)))
    return [b.build(results), ib.build(iresults)]


def _general_gather_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    p = _general_gather(inst, comp)
    if _known_empty_if_no_elements(p.out):
        return [IndexingMap.known_empty()]
    results: list[AffineExpr] = [Const(0)] * len(p.out)
    if k == 1:
        b = _Builder(_boxes(p.idx))
        for o, i in zip(p.out_batch, p.idx_batch):
            results[o] = Dim(i)
        for o, d in zip(p.offset_dims, p.kept):
            results[o] = b.sym(Interval(0, p.slice_sizes[d] - 1))
        return [b.build(results)]
    # Operand element x is read at offset x - start when 0 <= x - start < slice size
    # (a collapsed dim: x == start).
    b = _Builder(
        [
            Interval(0, n - 1) if d in p.start_index_map or d in p.batching else Interval(0, min(n, s) - 1)
            for d, (n, s) in enumerate(zip(p.src, p.slice_sizes))
        ]
    )
    # A batching dim of the operand is the batch index itself; the other batch dims are free.
    by_pos = {pos: d for d, pos in p.batching.items()}
    rows = [Dim(by_pos[k]) if k in by_pos else b.sym(Interval(0, p.idx[i] - 1)) for k, i in enumerate(p.idx_batch)]
    for o, r in zip(p.out_batch, rows):
        results[o] = r
    offset_of = dict(zip(p.kept, p.offset_dims))
    for d in range(len(p.src)):
        e: AffineExpr = Dim(d)
        if d in p.start_index_map:
            j = p.start_index_map.index(d)
            origin = RuntimeOrigin(1, inst.operands[1], b.origin_map(_gather_index(p, rows, j)))
            e = e - b.rt(Interval(0, p.src[d] - p.slice_sizes[d]), origin)
            if d in p.collapsed:
                b.constraints.append((e, Interval(0, 0)))
            else:
                b.constrain(e, Interval(0, p.slice_sizes[d] - 1))
        if d in offset_of:
            results[offset_of[d]] = e
    return [b.build(results)]


def _gather_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    if not _is_simplified_gather(inst, comp):
        return _general_gather_o2i(inst, comp)
    src, idx, out, bd = _gather_parts(inst, comp)
    g = inst.gather_dims()
    b = _Builder(_boxes(out))
    results: list[AffineExpr] = [Dim(od) for od in g.offset_dims]
    for j, d in enumerate(g.start_index_map):
        origin = RuntimeOrigin(1, inst.operands[1], b.origin_map([Dim(bd), Const(j)]))
        results[d] = results[d] + b.rt(Interval(0, src[d] - g.slice_sizes[d]), origin)
    operand_map = b.build(results)
    ib = _Builder(_boxes(out))
    indices_map = ib.build([Dim(bd), ib.sym(Interval(0, idx[1] - 1))])
    return [operand_map, indices_map]


def _gather_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    if not _is_simplified_gather(inst, comp):
        return _general_gather_i2o(inst, comp, k)
    src, idx, out, bd = _gather_parts(inst, comp)
    g = inst.gather_dims()
    results: list[AffineExpr] = [Const(0)] * len(out)
    if k == 1:
        b = _Builder(_boxes(idx))
        results[bd] = Dim(0)
        for od, s in zip(g.offset_dims, g.slice_sizes):
            results[od] = b.sym(Interval(0, s - 1))
        return [b.build(results)]
    # Operand element x is read at offset x - start when 0 <= x - start < slice size.
    b = _Builder([Interval(0, n - 1) if d in g.start_index_map else Interval(0, min(n, s) - 1)
                  for d, (n, s) in enumerate(zip(src, g.slice_sizes))])
    row = b.sym(Interval(0, idx[0] - 1))
    results[bd] = row
    for d, od in enumerate(g.offset_dims):
        e: AffineExpr = Dim(d)
        if d in g.start_index_map:
            j = g.start_index_map.index(d)
            origin = RuntimeOrigin(1, inst.operands[1], b.origin_map([row, Const(j)]))
            e = e - b.rt(Interval(0, src[d] - g.slice_sizes[d]), origin)
            b.constrain(e, Interval(0, g.slice_sizes[d] - 1))
        results[od] = e
    return [b.build(results)]


def _window_parts(
    inst: Instruction, src: Sequence[int], out: Sequence[int], spatial: Sequence[int] | None = None
) -> list[WindowDim]:
    """The window, checked against the input dims ``src`` and output dims ``out``
    (restricted to ``spatial`` dims for convolution)."""
    win = inst.window() if inst.attr("window") is not None or spatial is None else []
    ids = list(range(len(src))) if spatial is None else list(spatial)
    if len(win) != len(ids):
        raise _bad(inst, f"window has {len(win)} dimensions, expected {len(ids)}")
    for w, i, o in zip(win, ids, out):
        # Window reversal only reorders the window's positions: the set of positions (and
        # so the elements read) is the same; in a convolution it pairs each position with
        # the mirrored kernel element (see _conv_o2i).
        if w.size < 1 or w.stride < 1 or w.base_dilation < 1 or w.window_dilation < 1:
            raise _bad(inst, "window sizes, strides and dilations must be positive")
        padded = w.pad_low + w.pad_high + (src[i] - 1) * w.base_dilation + 1 if src[i] > 0 else 0
        span = (w.size - 1) * w.window_dilation + 1
        expect = (padded - span) // w.stride + 1 if padded >= span else 0
        if o != expect:
            raise _bad(inst, f"input dimension {i}: the window gives {expect} outputs, the output has {o}")
    return win


def _window_read(b: _Builder, d: AffineExpr, w: WindowDim, n: int) -> AffineExpr:
    """The input index read by output index ``d`` of a window dimension (adding the
    window's range variable and the padding/dilation constraints to ``b``)."""
    pos = d * w.stride
    if w.size > 1:
        pos = pos + b.sym(Interval(0, w.size - 1)) * w.window_dilation
    e = pos - w.pad_low
    b.constrain(e, Interval(0, (n - 1) * w.base_dilation))
    if w.base_dilation == 1:
        return e
    b.constrain(e.mod(w.base_dilation), Interval(0, 0))
    return e.floordiv(w.base_dilation)


def _window_written(b: _Builder, x: AffineExpr, w: WindowDim, m: int, k: AffineExpr | None = None) -> AffineExpr:
    """The output index that reads input index ``x`` of a window dimension (with
    output size ``m``); ``k`` is the window position (a new range variable if None)."""
    pos = x * w.base_dilation + w.pad_low
    if w.size > 1:
        pos = pos - (k if k is not None else b.sym(Interval(0, w.size - 1))) * w.window_dilation
    b.constrain(pos, Interval(0, (m - 1) * w.stride))
    if w.stride == 1:
        return pos
    b.constrain(pos.mod(w.stride), Interval(0, 0))
    return pos.floordiv(w.stride)


def _reduce_window_parts(inst: Instruction, comp: Computation) -> tuple[int, _Dims, _Dims, list[WindowDim]]:
    n = len(inst.operands) // 2
    if n == 0 or len(inst.operands) != 2 * n:
        raise _bad(inst, "expected N inputs followed by N init values")
    src = _operand_dims(inst, comp, 0)
    out = _output_dims(inst, 0)
    for k in range(n):
        if _operand_dims(inst, comp, k) != src or _operand_dims(inst, comp, n + k) != ():
            raise _bad(inst, "inputs must share one shape and init values must be scalars")
    if len(_output_shapes(inst)) != n or any(_output_dims(inst, j) != out for j in range(n)):
        raise _bad(inst, f"expected {n} outputs of one shape")
    return n, src, out, _window_parts(inst, src, out)


def _reduce_window_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    n, src, out, win = _reduce_window_parts(inst, comp)
    if _known_empty_if_no_elements(src, out):
        return [IndexingMap.known_empty()] * n + [to_scalar_map(out)] * n
    b = _Builder(_boxes(out))
    results = [_window_read(b, Dim(i), w, src[i]) for i, w in enumerate(win)]
    return [b.build(results)] * n + [to_scalar_map(out)] * n


def _reduce_window_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    n, src, out, win = _reduce_window_parts(inst, comp)
    if k >= n:
        return [from_scalar_map(out)] * n
    if _known_empty_if_no_elements(src, out):
        return [IndexingMap.known_empty()] * n
    b = _Builder(_boxes(src))
    results = [_window_written(b, Dim(i), w, out[i]) for i, w in enumerate(win)]
    return [b.build(results)] * n


def _select_and_scatter_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, list[WindowDim]]:
    if len(inst.operands) != 3:
        raise _bad(inst, "select-and-scatter takes the operand, the source and the init value")
    src = _operand_dims(inst, comp, 0)
    source = _operand_dims(inst, comp, 1)
    if _operand_dims(inst, comp, 2) != ():
        raise _bad(inst, "the init value must be a scalar")
    if inst.shape.is_tuple or inst.shape.dims != src:
        raise _bad(inst, f"the result must have the operand's shape {list(src)}")
    if len(source) != len(src):
        raise _bad(inst, f"the source {list(source)} must have the operand's rank {len(src)}")
    return src, source, _window_parts(inst, src, source)


def _windows_around(b: _Builder, win: list[WindowDim], src: _Dims, source: _Dims) -> list[AffineExpr]:
    """Operand positions that share a window with position ``(d0, ...)``: every window
    that contains it (one range variable per dimension), every position of that window."""
    return [_window_read(b, _window_written(b, Dim(i), w, source[i]), w, src[i]) for i, w in enumerate(win)]


def _select_and_scatter_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    # Result element p is init combined with the source element of every window whose select
    # chose p; which windows those are depends on the operand's values in every window holding p.
    src, source, win = _select_and_scatter_parts(inst, comp)
    if _known_empty_if_no_elements(src, source):
        return [IndexingMap.known_empty()] * 2 + [to_scalar_map(src)]
    b = _Builder(_boxes(src))
    operand = b.build(_windows_around(b, win, src, source))
    b = _Builder(_boxes(src))
    windows = b.build([_window_written(b, Dim(i), w, source[i]) for i, w in enumerate(win)])
    return [operand, windows, to_scalar_map(src)]


def _select_and_scatter_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src, source, win = _select_and_scatter_parts(inst, comp)
    if k == 2:
        return [from_scalar_map(src)]
    if _known_empty_if_no_elements(src, source):
        return [IndexingMap.known_empty()]
    if k == 0:
        b = _Builder(_boxes(src))
        return [b.build(_windows_around(b, win, src, source))]
    b = _Builder(_boxes(source))
    return [b.build([_window_read(b, Dim(i), w, src[i]) for i, w in enumerate(win)])]


def _conv_labels(inst: Instruction) -> tuple[str, str, str]:
    raw = inst.attr("dim_labels")
    if raw is None:
        raise _bad(inst, "missing attribute dim_labels=")
    try:
        lhs_rhs, outl = raw.split("->")
        lhs, rhs = lhs_rhs.split("_")
    except ValueError:
        raise _bad(inst, f"malformed dim_labels={raw}") from None
    return lhs.strip(), rhs.strip(), outl.strip()


@dataclass(frozen=True)
class _Conv:
    lhs_l: str
    rhs_l: str
    out_l: str
    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    out: tuple[int, ...]
    lsp: list[int]
    rsp: list[int]
    osp: list[int]
    win: list[WindowDim]
    groups: int = 1  # feature_group_count: output feature o reads input features of group o // (cout / groups)
    # batch_group_count: output (b, f) reads lhs batch (f // (cout / G)) * (B / G) + b (every input feature)
    batch_groups: int = 1


def _group_count(inst: Instruction, key: str) -> int:
    raw = inst.ints(key, (1,))
    if len(raw) != 1 or raw[0] < 1:
        raise _bad(inst, f"{key}={inst.attr(key)} is not a positive integer")
    return raw[0]


def _conv_parts(inst: Instruction, comp: Computation) -> _Conv:
    groups = _group_count(inst, "feature_group_count")
    batch_groups = _group_count(inst, "batch_group_count")
    if groups > 1 and batch_groups > 1:
        raise _bad(inst, "feature_group_count and batch_group_count cannot both be above 1")
    lhs_l, rhs_l, out_l = _conv_labels(inst)
    lhs, rhs = _operand_dims(inst, comp, 0), _operand_dims(inst, comp, 1)
    out = _output_dims(inst, 0)
    nsp = len(lhs_l) - 2
    spatial = [str(i) for i in range(nsp)]
    if (
        sorted(lhs_l) != sorted(["b", "f", *spatial])
        or sorted(rhs_l) != sorted(["i", "o", *spatial])
        or sorted(out_l) != sorted(["b", "f", *spatial])
        or (len(lhs), len(rhs), len(out)) != (len(lhs_l), len(rhs_l), len(out_l))
    ):
        raise _bad(inst, f"dim_labels={inst.attr('dim_labels')} do not fit the shapes")
    lsp = [lhs_l.index(c) for c in spatial]
    rsp = [rhs_l.index(c) for c in spatial]
    osp = [out_l.index(c) for c in spatial]
    cin, cout = lhs[lhs_l.index("f")], out[out_l.index("f")]
    if cin != rhs[rhs_l.index("i")] * groups or cout != rhs[rhs_l.index("o")] or cout % groups:
        raise _bad(inst, f"feature dimensions of lhs, rhs and output do not match (feature_group_count={groups})")
    batch = lhs[lhs_l.index("b")]
    if batch % batch_groups or cout % batch_groups or out[out_l.index("b")] != batch // batch_groups:
        raise _bad(inst, f"batch dimensions of lhs and output do not match (batch_group_count={batch_groups})")
    win = _window_parts(inst, lhs, [out[i] for i in osp], lsp)
    if any(w.size != rhs[r] for w, r in zip(win, rsp)):
        raise _bad(inst, "window sizes do not match the kernel's spatial dimensions")
    return _Conv(lhs_l, rhs_l, out_l, lhs, rhs, out, lsp, rsp, osp, win, groups, batch_groups)


def _conv_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    p = _conv_parts(inst, comp)
    lhs_l, rhs_l, out_l, lhs, rhs, out = p.lhs_l, p.rhs_l, p.out_l, p.lhs, p.rhs, p.out
    lsp, rsp, osp, win = p.lsp, p.rsp, p.osp, p.win
    per_group = lhs[lhs_l.index("f")] // p.groups  # input features per group (the kernel's i dim)
    out_per_group = out[out_l.index("f")] // p.groups
    features = Interval(0, per_group - 1)
    # lhs: the window positions that fall on real (not padding) input elements.
    b = _Builder(_boxes(out))
    lres: list[AffineExpr] = [Const(0)] * len(lhs)
    for i, w in enumerate(win):
        lres[lsp[i]] = _window_read(b, Dim(osp[i]), w, lhs[lsp[i]])
    lres[lhs_l.index("b")] = Dim(out_l.index("b"))
    if p.batch_groups > 1:  # the lhs batch of the output feature's batch group
        bgroup = Dim(out_l.index("f")).floordiv(out[out_l.index("f")] // p.batch_groups)
        lres[lhs_l.index("b")] = bgroup * (lhs[lhs_l.index("b")] // p.batch_groups) + Dim(out_l.index("b"))
    if p.groups == 1:
        lres[lhs_l.index("f")] = b.sym(features)
    else:  # the input features of the output feature's group
        group = Dim(out_l.index("f")).floordiv(out_per_group)
        lres[lhs_l.index("f")] = group * per_group + b.sym(features)
    # rhs: the kernel is read at every window position (padding included).
    rb = _Builder(_boxes(out))
    rres: list[AffineExpr] = [Const(0)] * len(rhs)
    for i, w in enumerate(win):
        if w.size > 1:
            k = rb.sym(Interval(0, w.size - 1))
            rres[rsp[i]] = (-k + (w.size - 1)) if w.reversal else k
    rres[rhs_l.index("i")] = rb.sym(features)
    rres[rhs_l.index("o")] = Dim(out_l.index("f"))
    return [b.build(lres), rb.build(rres)]


def _conv_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    p = _conv_parts(inst, comp)
    lhs_l, rhs_l, out_l, lhs, rhs, out = p.lhs_l, p.rhs_l, p.out_l, p.lhs, p.rhs, p.out
    lsp, osp, win = p.lsp, p.osp, p.win
    results: list[AffineExpr] = [Const(0)] * len(out)
    if k == 0:
        b = _Builder(_boxes(lhs))
        for i, w in enumerate(win):
            results[osp[i]] = _window_written(b, Dim(lsp[i]), w, out[osp[i]])
        results[out_l.index("b")] = Dim(lhs_l.index("b"))
        if p.batch_groups > 1:  # lhs batch x is output batch x mod (B/G) for the features of group x // (B/G)
            per_batch = lhs[lhs_l.index("b")] // p.batch_groups
            out_per_group = out[out_l.index("f")] // p.batch_groups
            results[out_l.index("b")] = Dim(lhs_l.index("b")) % per_batch
            group = Dim(lhs_l.index("b")).floordiv(per_batch)
            results[out_l.index("f")] = group * out_per_group + b.sym(Interval(0, out_per_group - 1))
        elif p.groups == 1:
            results[out_l.index("f")] = b.sym(Interval(0, out[out_l.index("f")] - 1))
        else:  # the output features of the input feature's group
            per_group = lhs[lhs_l.index("f")] // p.groups
            out_per_group = out[out_l.index("f")] // p.groups
            group = Dim(lhs_l.index("f")).floordiv(per_group)
            results[out_l.index("f")] = group * out_per_group + b.sym(Interval(0, out_per_group - 1))
        return [b.build(results)]
    if k != 1:
        raise _bad(inst, f"convolution has 2 operands, no operand {k}")
    b = _Builder(_boxes(rhs))
    results[out_l.index("b")] = b.sym(Interval(0, out[out_l.index("b")] - 1))
    for i in range(len(win)):
        results[osp[i]] = b.sym(Interval(0, out[osp[i]] - 1))
    results[out_l.index("f")] = Dim(rhs_l.index("o"))
    return [b.build(results)]


def _gte_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    return [_identity(_gte_dims(inst, comp))]


def _gte_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    return [_identity(_gte_dims(inst, comp))]


def _gte_dims(inst: Instruction, comp: Computation) -> tuple[int, ...]:
    src = _operand_shape(inst, comp, 0)
    idx = inst.tuple_index
    if idx is None:
        idx = int(inst.attr("index") or -1)
    if not src.is_tuple or not 0 <= idx < len(src.tuple_shapes):
        raise _bad(inst, f"index {idx} does not select an element of {src}")
    dims = _array(src.tuple_shapes[idx], inst, "the selected element")
    if dims != _output_dims(inst, 0):
        raise _bad(inst, f"output {inst.shape} is not element {idx} of {src}")
    return dims


def _tuple_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    dims = _output_dims(inst, out_k)
    if _operand_dims(inst, comp, out_k) != dims:
        raise _bad(inst, f"operand {out_k} does not have the shape of tuple element {out_k}")
    return [_identity(dims) if k == out_k else IndexingMap.known_empty() for k in range(len(inst.operands))]


def _tuple_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims = _operand_dims(inst, comp, k)
    n = len(_output_shapes(inst))
    if n != len(inst.operands):
        raise _bad(inst, f"{len(inst.operands)} operands for a tuple of {n} elements")
    return [_identity(dims) if j == k else IndexingMap.known_empty() for j in range(n)]


def _add_dependency_parts(inst: Instruction, comp: Computation) -> _Dims:
    out = _output_dims(inst, 0)
    if len(inst.operands) != 2:
        raise _bad(inst, "add-dependency takes a data operand and a token")
    if _operand_dims(inst, comp, 0) != out or _operand_shape(inst, comp, 1).element_type != "token":
        raise _bad(inst, "expected the output's shape as operand 0 and a token as operand 1")
    return out


def _add_dependency_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    """The data operand passes through; the token holds no element."""
    return [_identity(_add_dependency_parts(inst, comp)), IndexingMap.known_empty()]


def _add_dependency_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out = _add_dependency_parts(inst, comp)
    return [_identity(out) if k == 0 else IndexingMap.known_empty()]


# -- pass-through custom-calls ---------------------------------------------------------------------

#: ``custom_call_target`` values of custom-calls that move no element: annotations whose
#: output element ``i`` is the operand's element ``i`` (same shape). A target ending in ``*``
#: is a prefix. Any other target stays opaque (``UnsupportedError``).
PASS_THROUGH_CUSTOM_CALLS: dict[str, str] = {
    "Sharding": "a sharding annotation (GSPMD): the value passes through",
    "annotate_device_placement": "a memory-space annotation: the value passes through",
    "MoveToHost": "a host-offloading annotation: the value passes through",
    "MoveToDevice": "a host-offloading annotation: the value passes through",
    "xla.sdy.*": "a Shardy annotation (xla.sdy.*) of the same shape: the value passes through",
}


def custom_call_target(inst: Instruction) -> str:
    return (inst.attr("custom_call_target") or "").strip().strip('"')


def _pass_through_reason(inst: Instruction) -> str | None:
    target = custom_call_target(inst)
    for key, reason in PASS_THROUGH_CUSTOM_CALLS.items():
        if target == key or (key.endswith("*") and target.startswith(key[:-1])):
            return reason
    return None


def _custom_call_parts(inst: Instruction, comp: Computation) -> tuple[int, ...]:
    if _pass_through_reason(inst) is None:
        target = custom_call_target(inst) or "?"
        raise _unsupported(
            inst, f"an opaque target {target!r}: its semantics are not known (pass-through targets: "
            + ", ".join(PASS_THROUGH_CUSTOM_CALLS) + "; modelled targets: " + ", ".join(KNOWN_CUSTOM_CALLS)
            + "; whole-operand targets: " + ", ".join(WHOLE_OPERAND_CUSTOM_CALLS) + ")"
        )
    if len(inst.operands) != 1 or inst.shape.is_tuple:
        raise _unsupported(inst, f"pass-through custom-call {custom_call_target(inst)!r} with "
                           f"{len(inst.operands)} operands or a tuple result (only one array operand is modeled)")
    if any(k in inst.attributes for k in ("called_computations", "to_apply", "calls")):
        raise _unsupported(inst, f"custom-call {custom_call_target(inst)!r} calls a computation: not a pass-through")
    dims = _operand_dims(inst, comp, 0)
    if _operand_shape(inst, comp, 0).element_type != inst.shape.element_type:
        raise _unsupported(inst, f"custom-call {custom_call_target(inst)!r} changes the element type")
    if dims != inst.shape.dims:
        raise _unsupported(
            inst, f"custom-call {custom_call_target(inst)!r} changes the shape {list(dims)} -> "
            f"{list(inst.shape.dims)} (a per-device reshard, not an element-wise pass-through)"
        )
    return dims


def _custom_call_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    known = KNOWN_CUSTOM_CALLS.get(custom_call_target(inst))
    if known is not None:
        return known[0](inst, comp, out_k)
    if whole_operand_custom_call(inst) is not None:
        return _opaque_o2i(inst, comp, out_k)
    return [_identity(_custom_call_parts(inst, comp))]


def _custom_call_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    known = KNOWN_CUSTOM_CALLS.get(custom_call_target(inst))
    if known is not None:
        return known[1](inst, comp, k)
    if whole_operand_custom_call(inst) is not None:
        return _opaque_i2o(inst, comp, k)
    return [_identity(_custom_call_parts(inst, comp))]


# -- sort --------------------------------------------------------------------------------------------


def _sort_parts(inst: Instruction, comp: Computation) -> tuple[int, tuple[int, ...], int]:
    n = len(inst.operands)
    if n == 0:
        raise _bad(inst, "sort needs at least one operand")
    dims = _operand_dims(inst, comp, 0)
    if any(_operand_dims(inst, comp, k) != dims for k in range(n)):
        raise _bad(inst, "sort operands must share one shape")
    outs = _output_shapes(inst)
    if len(outs) != n or any(_array(o, inst, "output") != dims for o in outs):
        raise _bad(inst, f"expected {n} output(s) of shape {list(dims)}")
    sd = inst.dimensions()
    if len(sd) != 1 or not 0 <= sd[0] < len(dims):
        raise _bad(inst, f"dimensions={inst.attr('dimensions')} must name one dimension of {list(dims)}")
    return n, dims, sd[0]


def _sort_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    # Output element (i..., j, ...) is placed by comparing the whole row (i..., :, ...) of the
    # keys: every operand is read along the sorted dimension.
    n, dims, d = _sort_parts(inst, comp)
    if _known_empty_if_no_elements(dims):
        return [IndexingMap.known_empty()] * n
    b = _Builder(_boxes(dims))
    results: list[AffineExpr] = [Dim(i) for i in range(len(dims))]
    results[d] = b.sym(Interval(0, dims[d] - 1))
    return [b.build(results)] * n


def _sort_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    n, dims, d = _sort_parts(inst, comp)
    if _known_empty_if_no_elements(dims):
        return [IndexingMap.known_empty()] * n
    b = _Builder(_boxes(dims))
    results: list[AffineExpr] = [Dim(i) for i in range(len(dims))]
    results[d] = b.sym(Interval(0, dims[d] - 1))
    return [b.build(results)] * n


# -- top-k -------------------------------------------------------------------------------------------


def _topk_parts(inst: Instruction, comp: Computation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if len(inst.operands) != 1:
        raise _bad(inst, "topk takes one operand")
    dims = _operand_dims(inst, comp, 0)
    outs = _output_shapes(inst)
    if not dims or len(outs) != 2 or any(len(_array(o, inst, "output")) != len(dims) for o in outs):
        raise _bad(inst, "expected (values, indices) outputs of the operand's rank")
    out = outs[0].dims
    if outs[1].dims != out or out[:-1] != dims[:-1] or out[-1] > dims[-1]:
        raise _bad(inst, f"outputs {list(out)} do not fit the operand {list(dims)}")
    return dims, out


def _topk_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    # Both outputs (the k largest values and their indices) are chosen by comparing the
    # whole last dimension: every element of the row is read.
    dims, out = _topk_parts(inst, comp)
    if _known_empty_if_no_elements(dims, out):
        return [IndexingMap.known_empty()]
    b = _Builder(_boxes(out))
    return [b.build([*(Dim(i) for i in range(len(out) - 1)), b.sym(Interval(0, dims[-1] - 1))])]


def _topk_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims, out = _topk_parts(inst, comp)
    if _known_empty_if_no_elements(dims, out):
        return [IndexingMap.known_empty()] * 2
    b = _Builder(_boxes(dims))
    return [b.build([*(Dim(i) for i in range(len(dims) - 1)), b.sym(Interval(0, out[-1] - 1))])] * 2


#: ``custom_call_target`` values whose semantics are an HLO op's: the op's maps. XLA's CPU and
#: GPU backends lower ``lax.top_k`` to the ``TopK`` custom-call (one operand, a comparator
#: computation, outputs ``(values, indices)`` along the last dimension), as the ``topk`` op.
KNOWN_CUSTOM_CALLS = {
    "TopK": (_topk_o2i, _topk_i2o),
}


# -- collectives (per-device maps), async pairs, whole-operand ops ----------------------------------
#
# A per-device map relates an element of this device's output to the *index* of the operand
# element it is computed from; which replica holds that element is not part of the map (an
# all-gather's replica is a range variable tied to the output index). A device's own position
# in its group is a runtime value no operand holds: where it picks the element, the map takes
# every position and is marked an over-approximation.

def _same_dims_ops(inst: Instruction, comp: Computation) -> list[tuple[int, ...]]:
    """Each operand's dims, each equal to the matching output's (all-reduce, collective-permute, ...)."""
    outs = _output_shapes(inst)
    if len(outs) != len(inst.operands):  # e.g. the in-place collective-permute (buffers and start indices)
        raise _unsupported(inst, f"{len(inst.operands)} operand(s) for {len(outs)} output(s): only the form whose "
                           "output k has operand k's shape is modeled")
    dims = []
    for k, o in enumerate(outs):
        d = _operand_dims(inst, comp, k)
        if _array(o, inst, f"output {k}") != d:
            raise _bad(inst, f"output {k} {list(o.dims)} does not have the shape of operand {k} {list(d)}")
        dims.append(d)
    return dims


def _one_to_one_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    dims = _same_dims_ops(inst, comp)
    return [_identity(d) if k == out_k else IndexingMap.known_empty() for k, d in enumerate(dims)]


def _one_to_one_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims = _same_dims_ops(inst, comp)
    _check_operand(inst, k, len(dims))
    return [_identity(dims[k]) if j == k else IndexingMap.known_empty() for j in range(len(dims))]


def _check_operand(inst: Instruction, k: int, n: int) -> None:
    """A :class:`ParseError` unless ``k`` names one of the ``n`` operands."""
    if not 0 <= k < n:
        raise _bad(inst, f"has {n} operand(s), no operand {k}")


def _operand_output_pairs(inst: Instruction, comp: Computation, outs: list[Shape]) -> list[tuple[_Dims, _Dims]]:
    """(operand k's dims, output k's dims) for each operand k, ``outs`` the outputs (one per operand)."""
    if len(outs) != len(inst.operands):
        raise _bad(inst, f"{len(inst.operands)} operand(s) for {len(outs)} output(s)")
    return [(_operand_dims(inst, comp, k), _array(o, inst, f"output {k}")) for k, o in enumerate(outs)]


def _only_pair(pairs: list[tuple[_Dims, _Dims]], k: int, build: Callable[[_Dims, _Dims], IndexingMap]
               ) -> list[IndexingMap]:
    """``build(operand dims, output dims)`` of pair ``k``; every other pair's map known empty (nothing read)."""
    return [build(src, out) if j == k else IndexingMap.known_empty() for j, (src, out) in enumerate(pairs)]


def _gathered_dim(inst: Instruction, comp: Computation, src: _Dims, out: _Dims) -> tuple[int, int]:
    """(the gathered/scattered dimension, the group size) of an all-gather (out bigger)
    or a reduce-scatter (src bigger)."""
    dims = inst.dimensions()
    if len(dims) != 1 or not 0 <= dims[0] < len(src) or len(src) != len(out):
        raise _bad(inst, f"dimensions={inst.attr('dimensions')} must name one dimension of {list(src)}")
    g = dims[0]
    small, big = (src[g], out[g]) if out[g] >= src[g] else (out[g], src[g])
    if small == 0 or big % small or any(a != b for i, (a, b) in enumerate(zip(src, out)) if i != g):
        raise _bad(inst, f"operand {list(src)} and output {list(out)} do not differ by a group along dimension {g}")
    return g, big // small


def _all_gather_pairs(inst: Instruction, comp: Computation) -> tuple[list[tuple[_Dims, _Dims]], bool]:
    """(operand dims, gathered dims) per operand; True for ``all-gather-start`` (output
    ``(operand, gathered)``, one operand)."""
    start = inst.opcode == "all-gather-start"
    outs = _output_shapes(inst)
    if start:
        if len(inst.operands) != 1 or len(outs) != 2:
            raise _unsupported(inst, "an all-gather-start of several operands (nested tuples are not modeled)")
        outs = outs[1:]
    return _operand_output_pairs(inst, comp, outs), start


def _all_gather_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    pairs, start = _all_gather_pairs(inst, comp)
    if start and out_k == 0:
        return [_identity(pairs[0][0])]

    def shard(src: _Dims, out: _Dims) -> IndexingMap:
        g, groups = _gathered_dim(inst, comp, src, out)
        b = _Builder(_boxes(out))
        replica = b.sym(Interval(0, groups - 1))  # the replica whose shard holds the element
        local = Dim(g) - replica * src[g]
        b.constraints.append((local, Interval(0, src[g] - 1)))
        return b.build([local if i == g else Dim(i) for i in range(len(out))])

    return _only_pair(pairs, out_k - 1 if start else out_k, shard)


def _all_gather_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    pairs, start = _all_gather_pairs(inst, comp)
    _check_operand(inst, k, len(pairs))

    def places(src: _Dims, dims: _Dims) -> IndexingMap:
        g, groups = _gathered_dim(inst, comp, src, dims)
        b = _Builder(_boxes(src))
        replica = b.sym(Interval(0, groups - 1))  # every replica's output holds this shard at its place
        return b.build([Dim(i) + replica * src[g] if i == g else Dim(i) for i in range(len(src))])

    out: list[IndexingMap] = [_identity(pairs[0][0])] if start else []
    return out + _only_pair(pairs, k, places)


def _reduce_scatter_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    pairs = _operand_output_pairs(inst, comp, _output_shapes(inst))

    def block(src: _Dims, out: _Dims) -> IndexingMap:
        g, groups = _gathered_dim(inst, comp, src, out)
        b = _Builder(_boxes(out))
        position = b.sym(Interval(0, groups - 1))  # this device's block: taken as any (marked)
        return b.build([Dim(i) + position * out[g] if i == g else Dim(i) for i in range(len(out))])

    return _only_pair(pairs, out_k, block)


def _reduce_scatter_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    pairs = _operand_output_pairs(inst, comp, _output_shapes(inst))
    _check_operand(inst, k, len(pairs))

    def within_block(src: _Dims, out: _Dims) -> IndexingMap:
        g, _ = _gathered_dim(inst, comp, src, out)
        b = _Builder(_boxes(src))
        return b.build([Dim(i) % out[g] if i == g else Dim(i) for i in range(len(src))])

    return _only_pair(pairs, k, within_block)


def _all_to_all_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, int | None, int]:
    """(dims, the split dimension or None for the tuple form, the group size)."""
    dims_attr = inst.dimensions()
    if not dims_attr:  # the tuple form: output k on device r is operand r of replica k
        outs = _same_dims_ops(inst, comp)
        if len(set(outs)) != 1:
            raise _bad(inst, "the operands of a tuple all-to-all must share one shape")
        return outs[0], None, len(outs)
    if len(inst.operands) != 1 or inst.shape.is_tuple:
        raise _unsupported(inst, "an array all-to-all over several operands")
    src = _operand_dims(inst, comp, 0)
    if len(dims_attr) != 1 or not 0 <= dims_attr[0] < len(src) or _output_dims(inst, 0) != src:
        raise _bad(inst, f"dimensions={inst.attr('dimensions')} must name one dimension and keep the shape")
    groups = _group_size(inst)
    if groups is None or groups < 1 or src[dims_attr[0]] % groups:
        raise _unsupported(inst, "the group size (replica_groups) does not divide the split dimension")
    return src, dims_attr[0], groups


def _group_size(inst: Instruction) -> int | None:
    """The size of each replica group: ``{{0,1},{2,3}}`` or ``[G,S]<=[N]`` (None when not given or uneven)."""
    raw = (inst.attr("replica_groups") or "").strip()
    if m := re.match(r"\[\s*\d+\s*,\s*(\d+)\s*\]\s*<=", raw):
        return int(m.group(1))
    groups = re.findall(r"\{([^{}]*)\}", raw)
    sizes = {len([x for x in g.split(",") if x.strip()]) for g in groups}
    return sizes.pop() if len(sizes) == 1 and 0 not in sizes else None


def _all_to_all_chunks(dims: _Dims, split: int, groups: int) -> IndexingMap:
    """The array all-to-all's map, the same both ways: along ``split``, the element's
    place in its chunk, in the chunk of a position taken as any (marked): output to
    operand, this device's chunk of each sender; operand to output, the receiver's
    slot of this sender."""
    m = dims[split] // groups
    b = _Builder(_boxes(dims))
    position = b.sym(Interval(0, groups - 1))
    return b.build([position * m + Dim(i) % m if i == split else Dim(i) for i in range(len(dims))])


def _all_to_all_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    dims, split, groups = _all_to_all_parts(inst, comp)
    if split is None:  # output k reads, on replica k, the operand of this device's position: any (marked)
        return [_identity(dims) for _ in inst.operands]
    return [_all_to_all_chunks(dims, split, groups)]


def _all_to_all_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims, split, groups = _all_to_all_parts(inst, comp)
    if split is None:
        return [_identity(dims) for _ in _output_shapes(inst)]
    return [_all_to_all_chunks(dims, split, groups)]


def _start_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, int]:
    """A ``collective-permute-start`` / ``copy-start``: one array operand; output
    ``(operand-shaped, operand-shaped, contexts...)``."""
    outs = _output_shapes(inst)
    if len(inst.operands) != 1 or len(outs) < 2:
        raise _unsupported(inst, f"a {inst.opcode} of {len(inst.operands)} operands (one array operand is modeled)")
    dims = _operand_dims(inst, comp, 0)
    if any(_array(o, inst, "output") != dims for o in outs[:2]):
        raise _bad(inst, f"the first two outputs must have the operand's shape {list(dims)}")
    return dims, len(outs)


def _start_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    dims, _ = _start_parts(inst, comp)
    if out_k >= 2:  # a context scalar: reads no element
        return [IndexingMap.known_empty()]
    return [_identity(dims)]


def _start_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dims, n = _start_parts(inst, comp)
    return [_identity(dims), _identity(dims)] + [IndexingMap.known_empty()] * (n - 2)


#: The asynchronous ``-done`` ops: the element of their ``-start`` operand's tuple that
#: holds the result (the fusion walk follows it like a get-tuple-element).
ASYNC_DONE_ELEMENT: dict[str, int] = {
    "async-done": 1,
    "call-done": 1,  # the async call (call-start / call-done, XLA's sugar for an async-start wrapping a call)
    "all-gather-done": 1,
    "collective-permute-done": 1,
    "copy-done": 0,
}


def _done_dims(inst: Instruction, comp: Computation) -> tuple[_Dims, int | None]:
    src = _operand_shape(inst, comp, 0) if len(inst.operands) == 1 else None
    if src is None:
        raise _bad(inst, "expected one operand (the -start)")
    element = ASYNC_DONE_ELEMENT.get(inst.opcode)
    if inst.opcode == "all-reduce-done" and not src.is_tuple:
        dims = _operand_dims(inst, comp, 0)
        if dims != _output_dims(inst, 0):
            raise _bad(inst, "the output must have the shape of its all-reduce-start")
        return dims, None
    if element is None or not src.is_tuple or element >= len(src.tuple_shapes):
        raise _unsupported(inst, f"{inst.opcode} of {src}: not the tuple of its -start")
    dims = _array(src.tuple_shapes[element], inst, f"element {element} of the start")
    if dims != _output_dims(inst, 0):
        raise _bad(inst, f"output {inst.shape} is not element {element} of {src}")
    return dims, element


def _done_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    return [_identity(_done_dims(inst, comp)[0])]


def _done_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    return [_identity(_done_dims(inst, comp)[0])]


def _whole_batched(src: _Dims, out: _Dims, batch: int = 0) -> IndexingMap:
    """Every output index reads the whole operand (its first ``batch`` dims tied to the output's)."""
    b = _Builder(_boxes(out))
    results: list[AffineExpr] = [Dim(i) for i in range(batch)]
    results += [b.sym(Interval(0, n - 1)) for n in src[batch:]]
    return b.build(results)


def _batch_of_matrices(inst: Instruction, comp: Computation) -> int:
    """The number of leading batch dims shared by every operand and the output of a
    cholesky or triangular-solve (all but the last two)."""
    out = _output_dims(inst, 0)
    if len(out) < 2:
        raise _bad(inst, f"expects matrices (rank >= 2), got {list(out)}")
    batch = len(out) - 2
    for k in range(len(inst.operands)):
        d = _operand_dims(inst, comp, k)
        if len(d) != len(out) or d[:batch] != out[:batch]:
            raise _bad(inst, f"operand {k} {list(d)} does not share the batch dims of {list(out)}")
    return batch


def _matrices_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out, batch = _output_dims(inst, 0), _batch_of_matrices(inst, comp)
    return [_whole_batched(_operand_dims(inst, comp, k), out, batch) for k in range(len(inst.operands))]


def _matrices_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    out, batch = _output_dims(inst, 0), _batch_of_matrices(inst, comp)
    return [_whole_batched(out, _operand_dims(inst, comp, k), batch)]


def _opaque_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    out = _output_dims(inst, out_k)
    return [_whole_batched(_operand_dims(inst, comp, k), out) for k in range(len(inst.operands))]


def _opaque_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src = _operand_dims(inst, comp, k)
    return [_whole_batched(_array(o, inst, f"output {j}"), src) for j, o in enumerate(_output_shapes(inst))]


#: Custom-call targets of known libraries (LAPACK, cuSOLVER, cuBLAS, ...) whose reads are not
#: modeled element by element: every output element is taken to read every element of every
#: operand (a marked over-approximation). A key ending in ``*`` is a prefix.
WHOLE_OPERAND_CUSTOM_CALLS: dict[str, str] = {
    "lapack_*": "a LAPACK routine (factorization, solve, eigen/singular values)",
    "cusolver_*": "a cuSOLVER routine", "hipsolver_*": "a hipSOLVER routine",
    "__cublas$*": "a cuBLAS call (matrix products)", "__cublasLt$*": "a cuBLASLt call (matrix products)",
    "cublas_*": "a cuBLAS routine", "hipblas_*": "a hipBLAS routine",
    "__cudnn$*": "a cuDNN call (convolutions, attention)", "Qr": "a QR decomposition", "Eigh": "an eigendecomposition",
    "ProductOfElementaryHouseholderReflectors": "a product of Householder reflectors",
    "cu_threefry2x32*": "a random-bit generator", "__xla_cpu_runtime_*": "an XLA:CPU runtime routine",
}


def whole_operand_custom_call(inst: Instruction) -> str | None:
    """Why a custom-call's maps are whole operands (None: not such a target)."""
    target = custom_call_target(inst)
    for key, reason in WHOLE_OPERAND_CUSTOM_CALLS.items():
        if target == key or (key.endswith("*") and target.startswith(key[:-1])):
            return reason
    return None


# -- fft, batch normalization, ragged-dot ------------------------------------------------------------


def _fft_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, _Dims, int]:
    """(operand dims, output dims, the number of transformed trailing dims)."""
    src, out = _operand_dims(inst, comp, 0), _output_dims(inst, 0)
    if len(inst.operands) != 1:
        raise _bad(inst, "fft takes one operand")
    lengths = inst.ints("fft_length")
    kind = (inst.attr("fft_type") or "FFT").strip().upper()
    n = len(lengths)
    if not 1 <= n <= len(src) or len(out) != len(src) or src[:-n] != out[:-n]:
        raise _bad(inst, f"fft_length={inst.attr('fft_length')} does not fit {list(src)} -> {list(out)}")
    expect_in, expect_out = list(lengths), list(lengths)
    if kind == "RFFT":
        expect_out[-1] = lengths[-1] // 2 + 1
    elif kind == "IRFFT":
        expect_in[-1] = lengths[-1] // 2 + 1
    elif kind not in ("FFT", "IFFT"):
        raise _bad(inst, f"unknown fft_type={kind}")
    if list(src[-n:]) != expect_in or list(out[-n:]) != expect_out:
        raise _bad(inst, f"{kind} of length {list(lengths)} does not fit {list(src)} -> {list(out)}")
    return src, out, n


def _fft_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    src, out, n = _fft_parts(inst, comp)
    return [_whole_batched(src, out, len(src) - n)]  # every element of the transformed dims (a DFT)


def _fft_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src, out, n = _fft_parts(inst, comp)
    return [_whole_batched(out, src, len(src) - n)]


def _bn_parts(inst: Instruction, comp: Computation) -> tuple[_Dims, int]:
    """(the operand's dims, the feature dimension); every other operand is the
    feature vector except ``batch-norm-grad``'s grad_output (operand 4, operand-shaped)."""
    src = _operand_dims(inst, comp, 0)
    raw = inst.attr("feature_index")
    if raw is None or not raw.strip().lstrip("-").isdigit() or not 0 <= int(raw) < len(src):
        raise _bad(inst, f"feature_index={raw} does not name a dimension of {list(src)}")
    f = int(raw)
    for k in range(1, len(inst.operands)):
        want = src if (inst.opcode == "batch-norm-grad" and k == 4) else (src[f],)
        if _operand_dims(inst, comp, k) != want:
            raise _bad(inst, f"operand {k} must have the shape {list(want)}")
    return src, f


def _feature(out: _Dims, f: int, src: _Dims) -> IndexingMap:
    """From ``out`` (the operand's shape or the feature vector) to element ``f`` of a feature vector."""
    b = _Builder(_boxes(out))
    return b.build([Dim(f) if len(out) == len(src) else Dim(0)])


def _same_feature(out: _Dims, f: int, src: _Dims) -> IndexingMap:
    """From ``out`` to every element of the operand with the same feature."""
    b = _Builder(_boxes(out))
    feat = Dim(f) if len(out) == len(src) else Dim(0)
    return b.build([feat if i == f else b.sym(Interval(0, n - 1)) for i, n in enumerate(src)])


def _bn_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    src, f = _bn_parts(inst, comp)
    out = _output_dims(inst, out_k)
    if out not in (src, (src[f],)):
        raise _bad(inst, f"output {out_k} is neither the operand's shape nor the feature vector")
    n = len(inst.operands)
    if inst.opcode == "batch-norm-inference":  # y = (x - mean) / sqrt(var + eps) * scale + offset
        return [_identity(src)] + [_feature(out, f, src)] * (n - 1)
    if inst.opcode == "batch-norm-training":  # y uses the batch statistics of its feature
        if out_k == 0:
            return [_same_feature(out, f, src), _feature(out, f, src), _feature(out, f, src)]
        return [_same_feature(out, f, src), IndexingMap.known_empty(), IndexingMap.known_empty()]
    # batch-norm-grad (operand, scale, mean, variance, grad_output): taken to read every element of the
    # feature (a marked over-approximation)
    return [_same_feature(out, f, src)] + [_feature(out, f, src)] * 3 + [_same_feature(out, f, src)]


def _bn_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    src, f = _bn_parts(inst, comp)
    maps = []
    for j, o in enumerate(_output_shapes(inst)):
        out = _array(o, inst, f"output {j}")
        o2i = _bn_o2i(inst, comp, j)[k]
        if o2i.is_known_empty:
            maps.append(o2i)
            continue
        mine = src if (k == 0 or (inst.opcode == "batch-norm-grad" and k == 4)) else (src[f],)
        full = len(out) == len(src)
        b = _Builder(_boxes(mine))
        feat = Dim(f) if len(mine) == len(src) else Dim(0)
        exact_elementwise = inst.opcode == "batch-norm-inference" and k == 0
        if full:
            results = [Dim(i) if exact_elementwise else (feat if i == f else b.sym(Interval(0, m - 1)))
                       for i, m in enumerate(out)]
        else:
            results = [feat]
        maps.append(b.build(results))
    return maps


def _ragged_dot_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    return _opaque_o2i(inst, comp, out_k)


def _ragged_dot_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    return _opaque_i2o(inst, comp, k)


# -- scaled-dot ----------------------------------------------------------------------------------------


def _scaled_dot_parts(inst: Instruction, comp: Computation) -> tuple[Instruction, list[int], list[list[int]]]:
    """A plain ``dot`` of the data operands, the operand numbers of (lhs, rhs, lhs scale,
    rhs scale), and the block size of each scale dimension. XLA's operand order is
    (lhs, rhs, lhs_scale, rhs_scale); the shapes must fit the dot and divide."""
    if len(inst.operands) != 4:
        raise _bad(inst, f"scaled-dot takes lhs, rhs and their two scales, got {len(inst.operands)} operands")
    order = [0, 1, 2, 3]
    dot = Instruction(inst.name, "dot", inst.shape, [inst.operands[0], inst.operands[1]], inst.attributes,
                      offset=inst.offset, source_text=inst.source_text, source_name=inst.source_name)
    _dot_parts(dot, comp)
    blocks = []
    for data, scale in ((order[0], order[2]), (order[1], order[3])):
        d, s = _operand_dims(inst, comp, data), _operand_dims(inst, comp, scale)
        if len(d) != len(s) or any(y == 0 or x % y for x, y in zip(d, s)):
            raise _bad(inst, f"scale operand {scale} {list(s)} does not divide operand {data} {list(d)} into blocks")
        blocks.append([x // y for x, y in zip(d, s)])
    return dot, order, blocks


def _scaled_dot_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    dot, _, blocks = _scaled_dot_parts(inst, comp)
    lhs, rhs = _dot_o2i(dot, comp, 0)
    scales = [m.replace(results=[r.floordiv(bk) if bk > 1 else r for r, bk in zip(m.results, blk)])
              for m, blk in ((lhs, blocks[0]), (rhs, blocks[1]))]
    return [lhs, rhs, *scales]


def _scaled_dot_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    dot, _, blocks = _scaled_dot_parts(inst, comp)
    if k < 2:
        return _dot_i2o(dot, comp, k)
    if k > 3:
        raise _bad(inst, f"scaled-dot has 4 operands, no operand {k}")
    from verified_indexing.indexing_map import compose

    data = k - 2
    d = _operand_dims(inst, comp, data)
    s = _operand_dims(inst, comp, k)
    b = _Builder(_boxes(s))
    spread = [Dim(i) * bk + b.sym(Interval(0, bk - 1)) if bk > 1 else Dim(i) for i, bk in enumerate(blocks[data])]
    expand = b.build(spread)
    assert len(d) == len(spread)
    return [compose(expand, m) for m in _dot_i2o(dot, comp, data)]


# -- scatter -------------------------------------------------------------------------------------------


def _scatter_parts(inst: Instruction, comp: Computation) -> tuple[int, _Dims, _Dims, _Dims]:
    if len(inst.operands) < 3 or len(inst.operands) % 2 == 0:
        raise _bad(inst, "scatter takes N operands, the indices and N updates")
    n = (len(inst.operands) - 1) // 2
    dims = _operand_dims(inst, comp, 0)
    idx = _operand_dims(inst, comp, n)
    upd = _operand_dims(inst, comp, n + 1)
    if any(_operand_dims(inst, comp, k) != dims for k in range(n)):
        raise _bad(inst, "scatter operands must share one shape")
    if any(_operand_dims(inst, comp, n + 1 + k) != upd for k in range(n)):
        raise _bad(inst, "scatter updates must share one shape")
    outs = _output_shapes(inst)
    if len(outs) != n or any(_array(o, inst, "output") != dims for o in outs):
        raise _bad(inst, f"expected {n} output(s) of the operands' shape {list(dims)}")
    return n, dims, idx, upd


def _whole(out_dims: Sequence[int], of: Sequence[int]) -> IndexingMap:
    """From a box ``out_dims`` to every element of ``of`` (one range variable per dim)."""
    if _known_empty_if_no_elements(out_dims, of):
        return IndexingMap.known_empty()
    b = _Builder(_boxes(out_dims))
    return b.build([b.sym(Interval(0, m - 1)) for m in of])


def _scatter_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    # Output element o combines operand[o] with the updates that land at o; which ones land
    # there is data-dependent (and out-of-bounds windows are skipped, not clamped): every
    # update and every index is taken as read -- an over-approximation (see over_approximation).
    n, dims, idx, upd = _scatter_parts(inst, comp)
    ident = IndexingMap.known_empty() if _known_empty_if_no_elements(dims) else _identity(dims)
    return [ident] * n + [_whole(dims, idx)] + [_whole(dims, upd)] * n


def _scatter_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    n, dims, idx, upd = _scatter_parts(inst, comp)
    if k < n:
        ident = IndexingMap.known_empty() if _known_empty_if_no_elements(dims) else _identity(dims)
        return [ident] * n
    src = idx if k == n else upd
    return [_whole(src, dims)] * n


# -- exactness -------------------------------------------------------------------------------------------


def _parameters_used(called: Computation) -> set[int]:
    """The parameter numbers a computation's root depends on."""
    used: set[int] = set()
    seen: set[str] = set()
    stack = [called.root.name]
    while stack:
        name = stack.pop()
        if name in seen or name not in called.by_name:
            continue
        seen.add(name)
        inst = called.by_name[name]
        if inst.opcode == "parameter" and inst.parameter_number is not None:
            used.add(inst.parameter_number)
        stack.extend(inst.operands)
    return used


#: Ops whose maps are marked over-approximations, and why.
_WHOLE_REASONS: dict[str, str] = {
    "reduce-scatter": "this device's block is chosen by its position in the replica group (a runtime value no "
    "operand holds): every block is taken",
    "all-to-all": "this device's chunk of each sender is chosen by its position in the replica group (a runtime "
    "value no operand holds): every position is taken",
    "collective-permute": "a device that is no pair's target receives zeros and reads nothing",
    "collective-permute-start": "a device that is no pair's target receives zeros and reads nothing",
    "cholesky": "each output element reads a triangle of its matrix: the whole matrix of its batch is taken",
    "triangular-solve": "each output element reads part of its matrices: the whole matrices of its batch are taken",
    "rng-bit-generator": "every output element is taken to read the whole random state",
    "ragged-dot": "the groups of rows have data-dependent sizes: every output element is taken to read every "
    "element of every operand",
    "batch-norm-grad": "every gradient element is taken to read every element of its feature",
}


def over_approximation(
    inst: Instruction, comp: Computation, operand_index: int, called: Computation | None = None
) -> str | None:
    """Why the maps between ``inst`` and its operand ``operand_index`` (both
    directions) may claim reads that do not happen, or None when they are exact.
    ``called`` is the computation of ``to_apply=`` (sort's comparator, scatter's
    combiner) when known: it makes some maps exact."""
    op, k = inst.opcode, operand_index
    if op in _WHOLE_REASONS:
        return _WHOLE_REASONS[op]
    if op == "custom-call" and (why := whole_operand_custom_call(inst)) is not None:
        return f"{why} ({custom_call_target(inst)}): every output element is taken to read the whole operand"
    if op == "dynamic-update-slice" and k in (0, 1):
        return (
            "src is mapped by the identity although the elements inside the updated "
            "window are not read" if k == 0 else
            "outside the window the update map leaves the update's bounds (only "
            "in-bounds images are reads)"
        )
    if op == "pad" and k == 1:
        return "the padding value is mapped to every output, only padded positions read it"
    if op == "sort" and len(inst.operands) > 1:
        if called is None:
            return "the comparator is not known, every operand is taken as a key read along the sorted dimension"
        if not {2 * k, 2 * k + 1} & _parameters_used(called):
            return (
                f"operand {k} is not compared (a payload): each output element reads one data-dependent "
                "element of its row, not the whole row (and another output's payload reads none)"
            )
        return None
    if op == "select-and-scatter" and k == 1:
        return (
            "each source element lands at one position of its window, chosen by the select computation "
            "from the operand's values: the maps name every position of the window"
        )
    if op == "scatter":
        n = (len(inst.operands) - 1) // 2
        if k >= n:
            return (
                "the updates and indices that land at an output element are data-dependent "
                "(out-of-bounds windows are skipped): every update and index is taken as read"
            )
        if n > 1:
            return "with several operands each output is taken to read every operand at its index"
        if called is not None and 0 not in _parameters_used(called):
            return "the combiner ignores the operand, so updated elements do not read it"
        if called is None:
            return "the combiner is not known (an overwriting combiner does not read updated elements)"
        return None
    return None


def _opt_barrier_dims(inst: Instruction, comp: Computation) -> tuple[int, ...]:
    if len(inst.operands) != 1:
        raise _bad(inst, "expected one operand")
    if inst.shape.is_tuple:
        raise _unsupported(inst, "a barrier over a tuple: the fusion walk follows it element by element")
    dims = _operand_dims(inst, comp, 0)
    if dims != inst.shape.dims:
        raise _bad(inst, f"the operand has shape {list(dims)}, the barrier {list(inst.shape.dims)}")
    return dims


def _opt_barrier_o2i(inst: Instruction, comp: Computation, out_k: int) -> list[IndexingMap]:
    return [_identity(_opt_barrier_dims(inst, comp))]


def _opt_barrier_i2o(inst: Instruction, comp: Computation, k: int) -> list[IndexingMap]:
    return [_identity(_opt_barrier_dims(inst, comp))]


_OPS: dict[str, tuple[_O2I, _I2O]] = {
    "opt-barrier": (_opt_barrier_o2i, _opt_barrier_i2o),
    "custom-call": (_custom_call_o2i, _custom_call_i2o),
    "sort": (_sort_o2i, _sort_i2o),
    "topk": (_topk_o2i, _topk_i2o),
    "top-k": (_topk_o2i, _topk_i2o),
    "scatter": (_scatter_o2i, _scatter_i2o),
    "broadcast": (_broadcast_o2i, _broadcast_i2o),
    "transpose": (_transpose_o2i, _transpose_i2o),
    "reverse": (_reverse_o2i, _reverse_i2o),
    "slice": (_slice_o2i, _slice_i2o),
    "reshape": (_reshape_o2i, _reshape_i2o),
    "bitcast": (_bitcast_o2i, _bitcast_i2o),
    "concatenate": (_concat_o2i, _concat_i2o),
    "reduce": (_reduce_o2i, _reduce_i2o),
    "dot": (_dot_o2i, _dot_i2o),
    "pad": (_pad_o2i, _pad_i2o),
    "dynamic-slice": (_dynamic_slice_o2i, _dynamic_slice_i2o),
    "dynamic-update-slice": (_dus_o2i, _dus_i2o),
    "gather": (_gather_o2i, _gather_i2o),
    "reduce-window": (_reduce_window_o2i, _reduce_window_i2o),
    "select-and-scatter": (_select_and_scatter_o2i, _select_and_scatter_i2o),
    "bitcast-convert": (_bitcast_convert_o2i, _bitcast_convert_i2o),
    "add-dependency": (_add_dependency_o2i, _add_dependency_i2o),
    "convolution": (_conv_o2i, _conv_i2o),
    "get-tuple-element": (_gte_o2i, _gte_i2o),
    "tuple": (_tuple_o2i, _tuple_i2o),
    "all-reduce": (_one_to_one_o2i, _one_to_one_i2o),
    "all-reduce-start": (_one_to_one_o2i, _one_to_one_i2o),
    "all-reduce-done": (_done_o2i, _done_i2o),
    "collective-broadcast": (_one_to_one_o2i, _one_to_one_i2o),
    "collective-permute": (_one_to_one_o2i, _one_to_one_i2o),
    "collective-permute-start": (_start_o2i, _start_i2o),
    "collective-permute-done": (_done_o2i, _done_i2o),
    "copy-start": (_start_o2i, _start_i2o),
    "copy-done": (_done_o2i, _done_i2o),
    "all-gather": (_all_gather_o2i, _all_gather_i2o),
    "all-gather-start": (_all_gather_o2i, _all_gather_i2o),
    "all-gather-done": (_done_o2i, _done_i2o),
    "async-done": (_done_o2i, _done_i2o),
    "call-done": (_done_o2i, _done_i2o),
    "reduce-scatter": (_reduce_scatter_o2i, _reduce_scatter_i2o),
    "all-to-all": (_all_to_all_o2i, _all_to_all_i2o),
    "cholesky": (_matrices_o2i, _matrices_i2o),
    "triangular-solve": (_matrices_o2i, _matrices_i2o),
    "rng-bit-generator": (_opaque_o2i, _opaque_i2o),
    "scaled-dot": (_scaled_dot_o2i, _scaled_dot_i2o),
    "fft": (_fft_o2i, _fft_i2o),
    "batch-norm-inference": (_bn_o2i, _bn_i2o),
    "batch-norm-training": (_bn_o2i, _bn_i2o),
    "batch-norm-grad": (_bn_o2i, _bn_i2o),
    "ragged-dot": (_ragged_dot_o2i, _ragged_dot_i2o),
}


def supported_opcodes() -> frozenset[str]:
    """Every opcode with an indexing model (both directions)."""
    return frozenset(_OPS) | ELEMENTWISE_OPCODES | NULLARY_OPCODES


def _lookup(inst: Instruction) -> tuple[_O2I, _I2O] | None:
    if inst.opcode in _OPS:
        return _OPS[inst.opcode]
    if inst.opcode in ELEMENTWISE_OPCODES:
        return (_elementwise_o2i, _elementwise_i2o)
    return None


def output_to_input(inst: Instruction, comp: Computation, output_index: int = 0) -> list[IndexingMap]:
    """One map per operand of ``inst``: from an index of output ``output_index``
    (the element of a tuple-shaped result; 0 for an array result) to the indices
    of that operand it reads.

    Ops without operands (parameter, constant, iota, ...) give ``[]``. Raises
    :class:`UnsupportedError` for an op without a model (never a guess) and a
    positioned :class:`ParseError` when the attributes do not fit the shapes.
    """
    if inst.opcode in NULLARY_OPCODES:
        return []
    fns = _lookup(inst)
    if fns is None:
        raise _no_model(inst)
    _check_static(inst, comp)
    _output_dims(inst, output_index)
    try:
        return fns[0](inst, comp, output_index)
    except MapError as exc:  # an inconsistent instruction that slipped through the checks
        raise _bad(inst, str(exc)) from None


def input_to_output(inst: Instruction, comp: Computation, operand_index: int) -> list[IndexingMap]:
    """From an index of operand ``operand_index`` to the output indices that read
    it: one map for an array-shaped result, one per element of a tuple result.

    Raises :class:`UnsupportedError` for an op without a model and a positioned
    :class:`ParseError` for a malformed instruction or a missing operand.
    """
    fns = _lookup(inst)
    if fns is None:
        if inst.opcode in NULLARY_OPCODES:
            raise _bad(inst, "has no operands")
        raise _no_model(inst)
    _check_static(inst, comp)
    _operand_shape(inst, comp, operand_index)
    try:
        return fns[1](inst, comp, operand_index)
    except MapError as exc:
        raise _bad(inst, str(exc)) from None
