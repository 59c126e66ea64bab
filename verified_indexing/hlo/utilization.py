"""Exact operand utilization and tile propagation, from the proven maps.

XLA estimates how much of each fusion operand is read (a floating-point
heuristic, or a box count that ignores constraints). With the proven
output-to-input maps the numbers are exact: the elements of an operand read to
compute the whole output are the image of the output's domain under the
operand's maps, a Presburger set whose points isl counts.

:func:`operand_utilization` gives, for every fusion (or a chosen computation)
and every operand:

* ``elements_read``: distinct elements of the operand read (the image of every
  map to it, over every output of the computation);
* ``operand_elements``: its size; ``bytes_read``: ``elements_read`` times the
  element width (rounded up to whole bytes);
* ``accesses``: ``(output element, operand element)`` pairs, i.e. reads with
  multiplicity (the relation of every map, counted per output);
* ``method``: how the count was made: ``barvinok`` (islpy built with
  barvinok's ``card``), ``isl-count`` (isl's point counting of a bounded set),
  ``enumeration`` (every domain point evaluated). When the domains are small
  (at most ``ENUMERATION_LIMIT`` points) the count is also made by enumeration;
  a disagreement makes the entry an ``error``, never a number.

Runtime variables (a dynamic-slice offset, a gather index) make the read set
depend on values only known at run time. Their joint values are enumerated (at
most ``RUNTIME_LIMIT`` assignments, each runtime variable of each map taken
independently, which over-approximates the combinations a program can
produce): ``elements_read`` is then the largest count over them (the worst
case), ``elements_read_min`` the smallest, and ``runtime`` says so; the true
count of any run lies between the two. With more assignments the worst case is
the count of the union over every runtime value (``exact`` false).

:func:`tile_reads` propagates a tile of the output (offsets, sizes, strides)
to every operand: the exact set read (an isl set), the smallest strided box
containing it, the containment proven (:func:`verified_indexing.engines.prove_subset`)
and whether the box is exact (no element of it unread).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import islpy as isl

from verified_indexing.engines import Verdict, prove_subset
from verified_indexing.engines.deadline import DeadlineExceeded, remaining, run_bounded
from verified_indexing.engines.isl import engine_context, pointwise_map, to_isl_map
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import Const, Dim
from verified_indexing.hlo.bitcast import ELEMENT_BITS
from verified_indexing.hlo.fusion import ComputationIndexing, analyze_module
from verified_indexing.hlo.ir import Module, Shape
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval

__all__ = [
    "ENUMERATION_LIMIT",
    "RUNTIME_LIMIT",
    "OperandUtilization",
    "TileRead",
    "count_points",
    "operand_utilization",
    "tile_reads",
]

ENUMERATION_LIMIT = 200_000
RUNTIME_LIMIT = 256
Method = Literal["barvinok", "isl-count", "enumeration"]
Status = Literal["ok", "unknown", "error"]


def _isl_count(s: Any) -> tuple[int, Method]:
    card = getattr(s, "card", None)
    if card is not None:  # islpy built with barvinok
        pw = card()
        val = pw.eval(isl.Point.zero(pw.get_domain_space())) if hasattr(pw, "eval") else None
        if val is not None:
            return int(val.to_python()), "barvinok"
    return int(s.count_val().to_python()), "isl-count"


def _count_text(text: str) -> tuple[int, Method]:
    """Count the set written ``text`` (in the worker process: a fresh isl context)."""
    return _isl_count(isl.Set(text))


def count_points(s: Any) -> tuple[int, Method]:
    """The number of integer points of a bounded isl set and the method used
    (barvinok's ``card`` when islpy has it, isl's counting otherwise). Under a
    command budget (``--timeout``) the count runs in the worker process and is
    stopped when the budget is spent (``DeadlineExceeded``, an
    ``IslLimitExceeded``): counting can take seconds on sets with large
    moduli."""
    if not s.is_bounded():
        raise VerifiedIndexingError("the set is unbounded: its points cannot be counted")
    if remaining() == math.inf:
        return _isl_count(s)
    return run_bounded(_count_text, True, math.inf, args=(s.to_str(),))


@dataclass
class OperandUtilization:
    """How much of one operand (a parameter of the computation) is read; see
    the module docstring for each number. ``status`` is ``ok`` when the numbers
    are there, ``unknown`` (``reason``) when an op without a model hides some of
    the operand's reads or a proof was not made, ``error`` when two counting
    methods disagree or a map's proof failed."""

    fusion: str | None
    computation: str
    operand: int
    name: str
    shape: Shape
    element: int | None
    status: Status
    elements_read: int | None = None
    elements_read_min: int | None = None
    accesses: int | None = None
    exact: bool = False
    method: Method | None = None
    cross_check: str | None = None
    runtime: str | None = None
    reason: str | None = None
    approximation: str | None = None

    @property
    def operand_elements(self) -> int:
        return self.shape.num_elements()

    @property
    def bytes_read(self) -> int | None:
        bits = ELEMENT_BITS.get(self.shape.element_type)
        if self.elements_read is None or bits is None:
            return None
        return (self.elements_read * bits + 7) // 8

    @property
    def ratio(self) -> float | None:
        if self.elements_read is None or self.operand_elements == 0:
            return None
        return self.elements_read / self.operand_elements

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def __str__(self) -> str:
        """The command line's text (:meth:`format`)."""
        return self.format()

    def to_json(self) -> dict[str, Any]:
        return {
            "fusion": self.fusion,
            "computation": self.computation,
            "operand": self.operand,
            "name": self.name,
            "element": self.element,
            "shape": str(self.shape),
            "status": self.status,
            "elements_read": self.elements_read,
            "elements_read_min": self.elements_read_min,
            "operand_elements": self.operand_elements,
            "accesses": self.accesses,
            "bytes_read": self.bytes_read,
            "ratio": self.ratio,
            "exact": self.exact,
            "method": self.method,
            "cross_check": self.cross_check,
            "runtime": self.runtime,
            "approximation": self.approximation,
            "reason": self.reason,
        }

    def format(self) -> str:
        where = f"fusion {self.fusion} ({self.computation})" if self.fusion else f"computation {self.computation}"
        elem = f"[{self.element}]" if self.element is not None else ""
        head = f"{where}: operand {self.operand}{elem} {self.name} {self.shape}"
        if self.status != "ok":
            return f"{head}: {self.status}: {self.reason}"
        assert self.elements_read is not None
        accesses = f"{self.accesses} accesses" if self.accesses is not None else "accesses not bounded"
        share = f"{100 * self.ratio:.1f}%" if self.ratio is not None else "an empty tensor"
        span = (
            f"{self.elements_read_min}..{self.elements_read}"
            if self.elements_read_min is not None and self.elements_read_min != self.elements_read
            else str(self.elements_read)
        )
        tags = ["exact" if self.exact else "upper bound", str(self.method)]
        if self.cross_check:
            tags.append(f"cross-checked by {self.cross_check}")
        text = (
            f"{head}: read {span} of {self.operand_elements} elements ({share}), "
            f"{self.bytes_read} bytes, {accesses} [{', '.join(tags)}]"
        )
        if self.runtime:
            text += f"\n  runtime values: {self.runtime}"
        if self.approximation:
            text += f"\n  upper bounds: a map over-approximates the reads ({self.approximation})"
        return text


# -- counting one operand ---------------------------------------------------------------------------------------


def _box_set(shape: Shape, ctx: Any) -> Any:
    """The operand's elements as an isl set (reads outside it are no element:
    e.g. XLA's dynamic-update-slice map to the update is not clipped)."""
    names = [f"x{i}" for i in range(shape.rank)]
    conds = " and ".join(f"0 <= {n} < {d}" for n, d in zip(names, shape.dims)) or "1 = 1"
    return isl.Set(f"{{ [{', '.join(names)}] : {conds} }}", context=ctx)


def _inside(shape: Shape, y: tuple[int, ...]) -> bool:
    return all(0 <= v < d for v, d in zip(y, shape.dims))


def _read_set(maps: Sequence[IndexingMap], ctx: Any, shape: Shape | None = None) -> Any:
    out = None
    for m in maps:
        if m.state != "ok":  # KNOWN EMPTY: reads nothing
            continue
        img = to_isl_map(m, ctx=ctx).range()
        out = img if out is None else out.union(img)
    if out is not None and shape is not None:
        out = out.intersect(_box_set(shape, ctx))
    return out


def _relation(m: IndexingMap, shape: Shape, ctx: Any) -> Any:
    """``{[d] -> [y]}`` of ``m`` clipped to the operand, runtime variables projected out."""
    r = to_isl_map(m, ctx=ctx)
    if m.num_rt_vars:
        r = r.project_out(isl.dim_type.in_, m.num_dims, m.num_rt_vars)
    return r.intersect_range(_box_set(shape, ctx))


def _pairs(per_output: Sequence[Sequence[IndexingMap]], shape: Shape, ctx: Any) -> int:
    """Distinct (output element, operand element) pairs, summed over outputs."""
    total = 0
    for maps in per_output:
        rel = None
        for m in maps:
            if m.state != "ok":
                continue
            r = _relation(m, shape, ctx)
            rel = r if rel is None else rel.union(r)
        if rel is not None:
            total += count_points(rel.wrap())[0]
    return total


def _enumerate(per_output: Sequence[Sequence[IndexingMap]], shape: Shape) -> tuple[int, int] | None:
    """(distinct elements read, distinct pairs) by evaluating every domain point,
    or None when the domains are too large."""
    if sum(m.box_size() for maps in per_output for m in maps) > ENUMERATION_LIMIT:
        return None
    elements: set[tuple[int, ...]] = set()
    pairs = 0
    for maps in per_output:
        seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
        for m in maps:
            for d, s, r in m.domain_points(limit=ENUMERATION_LIMIT):
                y = m.evaluate(d, s, r)
                if _inside(shape, y):
                    elements.add(y)
                    seen.add((d, y))
        pairs += len(seen)
    return len(elements), pairs


class _Disagreement(Exception):
    pass


def _count(per_output: Sequence[Sequence[IndexingMap]], shape: Shape) -> tuple[int, int, Method, str | None]:
    """(elements read, accesses, method, cross-check) with every runtime variable
    fixed; raises ``_Disagreement`` when enumeration disagrees."""
    ctx = engine_context()
    maps = [m for ms in per_output for m in ms]
    read = _read_set(maps, ctx, shape)
    n, method = (0, "isl-count") if read is None else count_points(read)
    method = cast(Method, method)
    pairs = _pairs(per_output, shape, ctx)
    check = _enumerate(per_output, shape)
    if check is not None and check != (n, pairs):
        raise _Disagreement(f"{method} counts {n} elements and {pairs} accesses, enumeration {check[0]} and {check[1]}")
    return n, pairs, method, "enumeration" if check is not None else None


def _origin_key(v: Any) -> tuple[str, tuple[int, ...]] | None:
    """The source element of a runtime variable that holds one value for the
    whole run: its origin reads one fixed element (no variable in its map's
    results); variables with one key hold that element's value, each clamped to
    its own bounds. None when the value may change with the output index (a
    gather's indices)."""
    origin = getattr(v, "origin", None)
    omap = getattr(origin, "map", None)
    if origin is None or not isinstance(omap, IndexingMap) or omap.state != "ok":
        return None
    if not all(isinstance(e, Const) for e in omap.results):
        return None
    return (str(origin.operand_name), tuple(e.value for e in omap.results if isinstance(e, Const)))


def _clamp(x: int, iv: Interval) -> int:
    return max(iv.lo, min(x, iv.hi))


def _upper_bounds(entry: OperandUtilization, per_output: list[list[IndexingMap]], why: str) -> None:
    """Sound upper bounds for runtime values that cannot be enumerated: elements
    read by some runtime value, and at most one element per output element and
    map when no map has range variables."""
    ctx = engine_context()
    flat = [m for ms in per_output for m in ms]
    read = _read_set(flat, ctx, entry.shape)
    n, method = count_points(read) if read is not None else (0, "isl-count")
    pairs = None
    if not any(m.num_range_vars for m in flat):
        pairs = sum(count_points(_relation(m, entry.shape, ctx).domain())[0] for m in flat)
        n = min(n, pairs)
    entry.elements_read, entry.accesses, entry.method, entry.exact = n, pairs, method, False
    entry.runtime = why + ": upper bounds"


Source = tuple[str, tuple[int, ...]]


def _sources(flat: Sequence[IndexingMap]) -> dict[Source, Interval]:
    """Every source element of the maps' runtime variables and the values of it
    that matter: from the smallest lower clamp to the largest upper one (a
    value beyond gives what the nearest end gives, every variable clamped)."""
    out: dict[Source, Interval] = {}
    for m in flat:
        for v in m.rt_vars:
            key = _origin_key(v)
            assert key is not None
            iv = out.get(key)
            out[key] = v.bounds if iv is None else Interval(min(iv.lo, v.bounds.lo), max(iv.hi, v.bounds.hi))
    return out


def _fixed(per_output: list[list[IndexingMap]], value: dict[Source, int]) -> list[list[IndexingMap]]:
    """The maps with every runtime variable fixed to its source's value, clamped."""
    return [[_fix_rts(m, [_clamp(value[k], v.bounds) for v in m.rt_vars for k in [_origin_key(v)]
                          if k is not None]) for m in ms] for ms in per_output]


def _utilization_of(entry: OperandUtilization, per_output: list[list[IndexingMap]]) -> None:
    flat = [m for ms in per_output for m in ms]
    if not any(m.num_rt_vars for m in flat):
        n0, pairs0, method0, check0 = _count(per_output, entry.shape)
        entry.elements_read, entry.accesses, entry.method, entry.cross_check = n0, pairs0, method0, check0
        entry.exact = True
        return
    if any(_origin_key(v) is None for m in flat for v in m.rt_vars):
        _upper_bounds(entry, per_output, "a runtime value changes with the output index (gather-like)")
        return
    # One value per source element; each variable reading it clamps it to its own bounds.
    ranges = _sources(flat)
    distinct = list(ranges)
    total = math.prod(ranges[k].size() for k in distinct)
    if total > RUNTIME_LIMIT:
        if _symbolic(entry, per_output, ranges):
            return
        _upper_bounds(entry, per_output, f"more than {RUNTIME_LIMIT} runtime-value combinations, not decided "
                      "symbolically")
        return
    counts: list[tuple[int, int]] = []
    method: Method = "isl-count"
    check: str | None = None
    for combo in itertools.product(*(list(ranges[k]) for k in distinct)):
        n, pairs, method, check = _count(_fixed(per_output, dict(zip(distinct, combo))), entry.shape)
        counts.append((n, pairs))
    entry.elements_read = max(c[0] for c in counts)
    entry.elements_read_min = min(c[0] for c in counts)
    entry.accesses = max(c[1] for c in counts)
    entry.method, entry.cross_check = method, check
    entry.exact = entry.elements_read == entry.elements_read_min and len({c[1] for c in counts}) == 1
    entry.runtime = (
        f"{len(counts)} runtime-value combinations enumerated: elements read "
        + (f"{entry.elements_read} in every run" if entry.exact else
           f"{entry.elements_read_min}..{entry.elements_read}; the worst case is reported")
    )


def _linked(m: IndexingMap, names: dict[Source, str], pdomain: str, box: Any, ctx: Any) -> Any:
    """``[x...] -> {[d..., s...] -> [y...]}``: ``m``'s reads inside the operand,
    each runtime variable replaced by its source element's value ``x`` clamped to
    the variable's bounds (a union of three pieces per variable)."""
    rel = pointwise_map(m, ctx=ctx).intersect_range(box)
    first = m.num_dims + m.num_range_vars
    rnames = [f"r{k}" for k in range(m.num_rt_vars)]
    rel = rel.move_dims(isl.dim_type.param, 0, isl.dim_type.in_, first, m.num_rt_vars)
    for k, name in enumerate(rnames):
        rel = rel.set_dim_name(isl.dim_type.param, k, name)
    links = []
    for name, v in zip(rnames, m.rt_vars):
        key = _origin_key(v)
        assert key is not None
        x, lo, hi = names[key], v.bounds.lo, v.bounds.hi
        links.append(f"(({lo} <= {x} <= {hi} and {name} = {x}) or ({x} < {lo} and {name} = {lo}) "
                     f"or ({x} > {hi} and {name} = {hi}))")
    params = isl.Set(f"[{', '.join([*rnames, *names.values()])}] -> {{ : {pdomain}"
                     f"{''.join(' and ' + c for c in links)} }}", context=ctx)
    rel = rel.align_params(params.space).intersect_params(params)
    return rel.project_out(isl.dim_type.param, 0, m.num_rt_vars)


def _padded(rel: Any, at: int, k: int, width: int) -> Any:
    """``rel`` with input ``k`` inserted at position ``at`` and zero inputs appended up to ``width``."""
    rel = rel.insert_dims(isl.dim_type.in_, at, 1).fix_val(isl.dim_type.in_, at, k)
    n = rel.dim(isl.dim_type.in_)
    if n < width:
        rel = rel.add_dims(isl.dim_type.in_, width - n)
        for p in range(n, width):
            rel = rel.fix_val(isl.dim_type.in_, p, 0)
    for p in range(width):  # one space for every map: no names
        rel = rel.set_dim_name(isl.dim_type.in_, p, f"a{p}")
    for p in range(rel.dim(isl.dim_type.out)):
        rel = rel.set_dim_name(isl.dim_type.out, p, f"b{p}")
    return rel.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)


def _constant_counts(texts: Sequence[str], pdom: str) -> list[int] | None:
    """For each parametric relation ``[x] -> {A -> B}`` (a function: one ``B`` per
    ``A``) written in ``texts``: ``|B(x)|`` when it is the same for every ``x`` in
    ``pdom``, else None (not decided). Each point of ``B(x)`` has one
    lexicographically least preimage, so ``|B(x)|`` is the number of those
    preimages; when that set of ``A`` points is the same for every ``x``, its
    count is ``|B(x)|`` for every ``x``. The greatest preimages are tried too
    (the first input numbers the maps: the other order of the maps). Run in
    the worker under a command budget (a fresh isl context)."""
    ctx = isl.Context()
    pset = isl.Set(pdom, context=ctx)
    out = []
    for text in texts:
        rel = isl.Map(text, context=ctx)
        rel = rel.intersect_params(pset.align_params(rel.space))
        for least in (True, False):  # the least preimages, else the greatest (the other map order)
            reps = (rel.reverse().lexmin() if least else rel.reverse().lexmax()).range()
            fixed = reps.project_out(isl.dim_type.param, 0, reps.dim(isl.dim_type.param))
            every = fixed.align_params(reps.space).intersect_params(pset.align_params(reps.space))
            if every.is_subset(reps) and reps.is_subset(every):
                out.append(_isl_count(fixed)[0])
                break
        else:
            return None
    return out


def _symbolic(entry: OperandUtilization, per_output: list[list[IndexingMap]],
              ranges: dict[Source, Interval]) -> bool:
    """Decide with isl, each source element's value ``x`` a parameter (every
    runtime variable tied to it by its clamp), whether every run reads the same
    number of elements and makes the same number of accesses. The elements read
    are the image of ``(map k, d, s) -> y`` and the accesses of each output the
    image of ``(d, map k, s) -> (d, y)``; each image is counted through its least
    preimages (:func:`_constant_counts`). When every count is the same for every
    value, it is re-counted with the values fixed at both ends of their ranges
    (a disagreement raises ``_Disagreement``) and the entry is exact; else False
    (nothing decided)."""
    ctx = engine_context()
    names = {k: f"x{i}" for i, k in enumerate(ranges)}
    pdomain = " and ".join(f"{ranges[k].lo} <= {names[k]} <= {ranges[k].hi}" for k in ranges)
    pdom = f"[{', '.join(names.values())}] -> {{ : {pdomain} }}"
    box = _box_set(entry.shape, ctx)
    groups = [[(m, _linked(m, names, pdomain, box, ctx)) for m in ms if m.state == "ok"] for ms in per_output]
    flat = [x for g in groups for x in g]
    if not flat:
        return False
    width = 1 + max(m.num_dims + m.num_range_vars for m, _ in flat)
    elements = _padded(flat[0][1], 0, 0, width)
    for k, (_, rel) in enumerate(flat[1:], 1):
        elements = elements.union(_padded(rel, 0, k, width))
    texts = [elements.to_str()]
    for g in groups:
        pairs = None
        for k, (m, rel) in enumerate(g):
            n = m.num_dims
            r = rel.insert_dims(isl.dim_type.out, 0, n)
            for i in range(n):
                r = r.equate(isl.dim_type.in_, i, isl.dim_type.out, i)
            r = _padded(r, n, k, width)
            pairs = r if pairs is None else pairs.union(r)
        if pairs is not None:
            texts.append(pairs.to_str())
    counts = run_bounded(_constant_counts, remaining() != math.inf, math.inf, args=(texts, pdom))
    if counts is None:
        return False
    total, accesses = counts[0], sum(counts[1:])
    method: Method = "isl-count"
    for end in ("lo", "hi"):  # the count with fixed values, made the other way
        value = {k: getattr(iv, end) for k, iv in ranges.items()}
        n, pairs_n, method, _ = _count(_fixed(per_output, value), entry.shape)
        if (n, pairs_n) != (total, accesses):
            raise _Disagreement(f"the symbolic count is {total} elements and {accesses} accesses, with every "
                                f"runtime value at its {end} end {n} and {pairs_n}")
    entry.elements_read = entry.elements_read_min = total
    entry.accesses = accesses
    entry.method, entry.cross_check, entry.exact = method, "isl-count with the runtime values fixed at both ends", True
    entry.runtime = (f"more than {RUNTIME_LIMIT} runtime-value combinations: decided symbolically (isl, the values "
                     f"as parameters): {total} elements read in every run")
    return True


def _fix_rts(m: IndexingMap, values: Sequence[int]) -> IndexingMap:
    """``m`` with its runtime variables fixed to ``values``."""
    if not m.num_rt_vars:
        return m
    rts = [v.with_bounds(Interval.point(x)) for v, x in zip(m.rt_vars, values)]
    return m.replace(rt_vars=rts)


def operand_utilization(
    module: Module, *, computation: str | None = None, verify: bool = True
) -> list[OperandUtilization]:
    """Utilization of every operand of every fusion of ``module`` (or of
    ``computation``; the entry computation when the module has no fusion)."""
    if computation is None and not module.fusions():
        computation = module.entry_name
    results = analyze_module(module, computation=computation, verify=verify)
    groups: dict[tuple[str | None, str], list[ComputationIndexing]] = {}
    for r in results:
        groups.setdefault((r.fusion, r.computation), []).append(r)
    out: list[OperandUtilization] = []
    for (fusion, comp_name), rs in groups.items():
        comp = module.computations[comp_name]
        for param in sorted(comp.parameters(), key=lambda p: p.parameter_number or 0):
            number = param.parameter_number or 0
            shapes = list(param.shape.tuple_shapes) if param.shape.is_tuple else [param.shape]
            for element, shape in enumerate(shapes):
                key_element = element if param.shape.is_tuple else None
                entry = OperandUtilization(fusion, comp_name, number, param.name, shape, key_element, "ok")
                per_output: list[list[IndexingMap]] = []
                problems: list[str] = []
                for r in rs:
                    hidden = [u for u in r.unsupported if param.name in u.hides]
                    problems += [f"unknown indexing through {u.instruction} ({u.opcode}): {u.reason}" for u in hidden]
                    for t in r.targets:
                        if t.index != number or t.element != key_element:
                            continue
                        problems += [f"unknown indexing through {name}" for name in t.unsupported]
                        for a in t.maps:
                            if verify and (a.verdict is None or not a.verdict.proved):
                                why = a.verdict.reason if a.verdict is not None else "no proof"
                                if a.verdict is not None and a.verdict.unknown:  # a time budget: not an error
                                    problems.append(f"a map's proof was not finished: {why}")
                                else:
                                    problems.append(f"a map is not proven: {why}")
                        per_output.append([a.map for a in t.maps])
                approx = [
                    why for r in rs for t in r.targets if t.index == number and t.element == key_element
                    for a in t.maps for why in a.over_approximation
                ]
                if problems:
                    entry.status = "error" if any(p.startswith("a map is not") for p in problems) else "unknown"
                    entry.reason = "; ".join(dict.fromkeys(problems))
                else:
                    try:
                        _utilization_of(entry, per_output)
                        if approx:  # the maps hold every real read and more: the counts are upper bounds
                            entry.exact = False
                            entry.approximation = "; ".join(dict.fromkeys(approx))
                    except _Disagreement as exc:
                        entry.status, entry.reason = "error", f"counting methods disagree: {exc}"
                    except (VerifiedIndexingError, isl.Error) as exc:
                        entry.status, entry.reason = "unknown", f"the count was not made: {exc}"
                out.append(entry)
    return out


# -- tiles ---------------------------------------------------------------------------------------------------


@dataclass
class TileRead:
    """What one operand reads for one output tile: ``read`` the exact set (isl),
    ``offsets``/``sizes``/``strides`` the smallest strided box containing it,
    ``containment`` the proof that every map's image lies in the box, ``exact``
    whether every element of the box is read."""

    operand: int
    name: str
    element: int | None
    read: Any
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    containment: list[Verdict] = field(default_factory=list)
    exact: bool = False
    reason: str | None = None
    approximation: str | None = None

    @property
    def proved(self) -> bool:
        return bool(self.containment) and all(v.proved for v in self.containment)

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def __str__(self) -> str:
        """The command line's text (:meth:`format`)."""
        return self.format()

    def to_json(self) -> dict[str, Any]:
        return {
            "operand": self.operand,
            "name": self.name,
            "element": self.element,
            "read": self.read.to_str() if self.read is not None else None,
            "offsets": list(self.offsets),
            "sizes": list(self.sizes),
            "strides": list(self.strides),
            "containment": [v.to_json() for v in self.containment],
            "exact": self.exact,
            "approximation": self.approximation,
            "reason": self.reason,
        }

    def format(self) -> str:
        elem = f"[{self.element}]" if self.element is not None else ""
        head = f"operand {self.operand}{elem} {self.name}"
        if self.reason:
            return f"{head}: {self.reason}"
        status = "proved" if self.proved else "not proved"
        return (
            f"{head}: tile offsets {list(self.offsets)} sizes {list(self.sizes)} strides {list(self.strides)} "
            f"[containment {status}; {'exact' if self.exact else 'not exact: some elements of the tile are unread'}]"
            + (f"\n  the box contains an over-approximation of the reads ({self.approximation})"
               if self.approximation else "")
        )


def tile_map(offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> IndexingMap:
    """``(t0, ...) -> (offset_i + stride_i * t_i)``, ``t_i in [0, size_i - 1]``:
    the output indices of a tile."""
    if not len(offsets) == len(sizes) == len(strides):
        raise VerifiedIndexingError("offsets, sizes and strides need one value per dimension")
    if any(s < 1 for s in sizes) or any(s < 1 for s in strides):
        raise VerifiedIndexingError("tile sizes and strides must be at least 1")
    return IndexingMap(
        [Interval(0, s - 1) for s in sizes], [Dim(i) * st + o for i, (o, st) in enumerate(zip(offsets, strides))]
    )


def _clip(m: IndexingMap, shape: Shape) -> IndexingMap:
    """``m`` restricted to the results inside the operand's shape."""
    if m.state != "ok":
        return m
    extra = [(e, Interval(0, d - 1)) for e, d in zip(m.results, shape.dims)]
    return m.replace(constraints=tuple(m.constraints) + tuple(extra))


def _stride(read: Any, i: int, lo: int) -> int:
    """The largest stride of dimension ``i`` that isl's per-piece strides show:
    every point of a piece is congruent to the piece's minimum modulo its stride,
    so the gcd of the strides and of the pieces' offsets from ``lo`` divides every
    ``x - lo`` (isl's stride of a union is 1 as soon as its pieces differ). The
    set is first projected onto dimension ``i``: isl's stride of a dimension is
    relative to an offset that may depend on the other dimensions
    (``(i0 + i1) mod 2 = 1`` gives ``i0`` a stride of 2 for each ``i1``)."""
    rank = read.dim(isl.dim_type.set)
    line = read.project_out(isl.dim_type.set, i + 1, rank - i - 1).project_out(isl.dim_type.set, 0, i).coalesce()
    g = 0
    for b in line.get_basic_sets():
        piece = isl.Set.from_basic_set(b)
        bmin = int(piece.dim_min_val(0).to_python())
        bmax = int(piece.dim_max_val(0).to_python())
        st = 0 if bmin == bmax else max(int(piece.get_stride_info(0).get_stride().to_python()), 1)
        g = math.gcd(g, st, bmin - lo)
    return max(g, 1)


_Found = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool]


def _tile_box_here(maps: Sequence[IndexingMap], shape: Shape, ctx: Any) -> tuple[Any, _Found | None]:
    """The read set of a tile's maps and, unless it is empty, its smallest strided box (offsets, sizes,
    strides) and whether every element of the box is read."""
    read = _read_set(maps, ctx, shape)
    if read is None or read.is_empty():
        return read, None
    offs, szs, sts = _box(read, read.dim(isl.dim_type.set))
    box_set = to_isl_map(tile_map(offs, szs, sts), ctx=ctx).range()
    return read, (offs, szs, sts, bool(box_set.is_subset(read)))


def _tile_box(maps: Sequence[IndexingMap], shape: Shape) -> tuple[str | None, _Found | None]:
    """:func:`_tile_box_here` in the worker process (under a command budget): the read set as isl's text."""
    read, found = _tile_box_here(maps, shape, engine_context())
    return (None if read is None else read.to_str()), found


class _IslText(str):
    """A read set computed in the worker, kept as isl's text (what :class:`TileRead` prints of it)."""

    def to_str(self) -> str:
        return str(self)


def _box(read: Any, rank: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    offsets, sizes, strides = [], [], []
    for i in range(rank):
        lo = int(read.dim_min_val(i).to_python())
        hi = int(read.dim_max_val(i).to_python())
        st = _stride(read, i, lo)
        offsets.append(lo)
        strides.append(st)
        sizes.append((hi - lo) // st + 1)
    return tuple(offsets), tuple(sizes), tuple(strides)


def tile_reads(
    module: Module,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
    *,
    computation: str | None = None,
    output_index: int = 0,
    timeout: float = 10.0,
) -> list[TileRead]:
    """For a tile of output ``output_index`` of ``computation`` (default: the
    module's only fusion, else its entry), what each operand reads."""
    if computation is None:
        fusions = module.fusions()
        if len(fusions) > 1:
            names = ", ".join(c.name for _, c in fusions)
            raise VerifiedIndexingError(f"the module has several fusions; name one with --computation ({names})")
        computation = fusions[0][1].name if fusions else module.entry_name
    strides = [1] * len(offsets) if strides is None else list(strides)
    tile = tile_map(offsets, sizes, strides)
    results = [r for r in analyze_module(module, computation=computation) if r.source == output_index]
    if not results:
        raise VerifiedIndexingError(f"computation {computation} has no output {output_index}")
    r = results[0]
    root_shape = module.computations[r.computation].root.shape
    out_shape = root_shape.tuple_shapes[output_index] if root_shape.is_tuple else root_shape
    if out_shape.rank != tile.num_results:
        raise VerifiedIndexingError(f"the output has rank {out_shape.rank}, the tile {tile.num_results}")
    for i, (n, e) in enumerate(zip(out_shape.dims, tile.results)):
        span = tile.range_of(e)
        if not Interval(0, n - 1).contains_interval(span):
            raise VerifiedIndexingError(f"tile dimension {i} spans {span}, outside the output's [0, {n - 1}]")
    ctx = engine_context()
    reads: list[TileRead] = []
    for t in r.targets:
        hidden = [u.instruction for u in r.unsupported if t.name in u.hides] + list(t.unsupported)
        if hidden:
            reads.append(TileRead(t.index, t.name, t.element, None, (), (), (),
                                  reason=f"unknown indexing through {', '.join(hidden)}"))
            continue
        maps = [compose(tile, a.map) for a in t.maps]
        if remaining() != math.inf:  # isl's work on the read set can run for minutes: the worker, killed in time
            try:
                read_text, found = run_bounded(_tile_box, True, math.inf, args=(maps, t.shape))
            except DeadlineExceeded as exc:
                reads.append(TileRead(t.index, t.name, t.element, None, (), (), (),
                                      reason=f"unknown: the time budget ran out ({exc})"))
                continue
            read = None if read_text is None else _IslText(read_text)
        else:
            read, found = _tile_box_here(maps, t.shape, ctx)
        if found is None:
            reads.append(TileRead(t.index, t.name, t.element, read, (), (), (), reason="the tile reads nothing"))
            continue
        offs, szs, sts, box_in_read = found
        box = tile_map(offs, szs, sts)
        # The read set is clipped to the operand (XLA's map to a dynamic-update-slice's
        # update is not): prove containment of the clipped maps.
        clipped = [_clip(m, t.shape) for m in maps]
        containment = [prove_subset(m, box, of="image", timeout=timeout) for m in clipped]
        approx = [why for a in t.maps for why in a.over_approximation]
        # Over-approximated maps hold every real read: the box still contains them, but may not be exact.
        # With runtime values (a gather's indices, a dynamic-slice offset) the read set
        # is the union over every value: one run reads less than the box.
        varying = any(not v.bounds.is_point() for m in maps if m.state == "ok" for v in m.rt_vars)
        exact = not approx and not varying and box_in_read
        reads.append(TileRead(t.index, t.name, t.element, read, offs, szs, sts, containment, exact,
                              approximation="; ".join(dict.fromkeys(approx)) or None))
    return reads
