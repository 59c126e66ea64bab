"""Coalescing of a fusion's reads under XLA's loop emitter, proven or refuted.

The loop emitter gives each thread ``vector_size`` consecutive output elements
in the output's **physical** order (its layout): thread ``t`` (``t = block *
threads_per_block + lane-in-block``) computes the elements of linear physical
index ``t * vector_size + v``, ``v < vector_size``. A warp is 32 consecutive
threads. For every operand map (output index to operand index, proven by the
analysis) and the operand's physical layout, the address (in elements) that
thread ``t`` reads at vector slot ``v`` and loop iteration ``s`` (the map's
range variables: the loops of the generated code, the same for every lane) is a
quasi-affine expression of ``(t, v, s)``. Two obligations, each a question to
the engines over every thread of every warp:

1. **consecutive lanes read consecutive chunks**: where lanes ``t`` and
   ``t + 1`` of one warp both read the operand, ``addr(t + 1, v, s) =
   addr(t, v, s) + vector_size``; or the operand is **uniform** in the warp
   (``addr(t + 1) = addr(t)``, one broadcast transaction);
2. **the vector is contiguous**: ``addr(t, v + 1, s) = addr(t, v, s) + 1``.

A refutation names the warp, the lanes, their output elements and the
addresses each lane reads, evaluated by the plain evaluator on the maps.
Runtime variables that hold one value per run (a dynamic-slice offset) are
quantified like loop variables; reads whose address depends on data that
changes from lane to lane (a gather's indices) are ``unknown``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from verified_indexing.engines import Verdict, prove_expr_equal
from verified_indexing.errors import UnsupportedError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim
from verified_indexing.hlo.bitcast import physical_order
from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.ir import Module, Shape
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval

__all__ = ["WARP_SIZE", "CoalescingResult", "address_exprs", "coalescing", "thread_map", "tiles"]

WARP_SIZE = 32


_TILE = re.compile(r"T((?:\([^()]*\))+)")
_NEUTRAL = re.compile(r"S\(\d+\)|E\(\d+\)")


def tiles(shape: Shape) -> list[tuple[int, ...]]:
    """The tilings of ``shape``'s layout (``{1,0:T(8,128)(2,1)}`` gives
    ``[(8, 128), (2, 1)]``; none without ``T(...)``). Raises
    :class:`UnsupportedError` (with the reason) for a layout annotation the
    address arithmetic does not model: a tile dimension that is not a positive
    integer (XLA's ``*`` combines dimensions), or any annotation other than a
    tiling, a memory space ``S(n)`` or an element size ``E(n)`` (which do not
    move an element within the buffer)."""
    text = shape.layout_annotations
    found: list[tuple[int, ...]] = []
    rest = text
    m = _TILE.search(text)
    if m is not None:
        rest = text[: m.start()] + text[m.end():]
        for group in re.findall(r"\(([^()]*)\)", m.group(1)):
            parts = [p.strip() for p in group.split(",")]
            if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
                raise UnsupportedError(f"the tile ({group}) of {shape}: only positive integer tile sizes are modelled")
            found.append(tuple(int(p) for p in parts))
    leftover = _NEUTRAL.sub("", rest).strip()
    if leftover:
        raise UnsupportedError(f"the layout annotation {leftover!r} of {shape} is not modelled")
    return found


def address_exprs(shape: Shape) -> list[AffineExpr]:
    """The address (in elements, from the buffer's start) of the logical index
    ``d0, d1, ...`` of ``shape``: its dimensions in the layout's major-to-minor
    order, then every tiling applied in turn as XLA defines it
    (openxla.org/xla/tiled_layout): a tile ``(t_0, ..., t_{k-1})`` splits the
    ``k`` most minor dimensions (sizes ``n_i``, padded up to a multiple of
    ``t_i``; a tile of more dimensions than the shape is refused) into
    ``ceil(n_i / t_i)`` tiles and ``t_i`` elements, index ``x_i`` into
    ``x_i floordiv t_i`` and ``x_i mod t_i``, the tile indices major to the
    element indices; the next tiling applies to the dimensions this gives. The
    address is the row-major position in the final (padded) dimensions."""
    order = physical_order(shape)
    index: list[AffineExpr] = [Dim(d) for d in order]
    sizes = [shape.dims[d] for d in order]
    for tile in tiles(shape):
        k = len(tile)
        if k > len(sizes):  # how XLA lays out a shape of fewer dimensions than its tile is not modelled
            raise UnsupportedError(f"the tile ({','.join(map(str, tile))}) of {shape} has more dimensions than "
                                   "the shape")
        head, hsizes = index[: len(index) - k], sizes[: len(sizes) - k]
        minor, msizes = index[len(index) - k:], sizes[len(sizes) - k:]
        outer = [x.floordiv(t) if t > 1 else x for x, t in zip(minor, tile)]
        inner = [x % t if t > 1 else Const(0) for x, t in zip(minor, tile)]
        index = head + outer + inner
        sizes = hsizes + [-(-n // t) for n, t in zip(msizes, tile)] + list(tile)
    expr: AffineExpr = Const(0)
    for x, n in zip(index, sizes):
        expr = expr * n + x
    return [expr]


def thread_map(shape: Shape, vector_size: int) -> IndexingMap:
    """``(t, v) -> logical output index`` of XLA's loop emitter: element
    ``t * vector_size + v`` in the output's physical order."""
    n = shape.num_elements()
    threads = -(-n // vector_size)
    order = physical_order(shape)
    linear = Dim(0) * vector_size + Dim(1)
    index: list[AffineExpr] = [Const(0)] * shape.rank
    stride = 1
    for dim in reversed(order):
        size = shape.dims[dim]
        index[dim] = linear.floordiv(stride) % size if stride > 1 else linear % size
        stride *= size
    return IndexingMap(
        [Interval(0, max(threads - 1, 0)), Interval(0, vector_size - 1)],
        index,
        constraints=[(linear, Interval(0, n - 1))],
    )


@dataclass
class CoalescingResult:
    """One operand: ``lanes`` (consecutive lanes read consecutive chunks, or one
    address: ``uniform``) and ``vector`` (each thread's chunk is contiguous)
    with their verdicts; ``witness`` for a refutation: the warp, the lanes, their
    output elements and the addresses each lane reads."""

    operand: int
    name: str
    status: str  # coalesced | uniform | not read | not coalesced | unknown
    lanes: Verdict | None
    vector: Verdict | None
    witness: dict[str, Any] | None = None
    reason: str | None = None
    same_address: Verdict | None = None
    computation: str = ""
    """The fused computation (or computation) whose operand this is."""

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def __str__(self) -> str:
        """The command line's text (:meth:`format`)."""
        return self.format()

    def to_json(self) -> dict[str, Any]:
        return {
            "computation": self.computation,
            "operand": self.operand,
            "name": self.name,
            "status": self.status,
            "lanes": self.lanes.to_json() if self.lanes else None,
            "same_address": self.same_address.to_json() if self.same_address else None,
            "vector": self.vector.to_json() if self.vector else None,
            "witness": self.witness,
            "reason": self.reason,
        }

    def format(self) -> str:
        head = f"operand {self.operand} {self.name}: {self.status}"
        if self.reason:
            head += f" ({self.reason})"
        lines = [head]
        checks = (("consecutive lanes", self.lanes), ("one address per warp", self.same_address),
                  ("contiguous vector", self.vector))
        for label, v in checks:
            if v is not None:
                lines.append(f"  [{v.status}] {label} ({v.engine})")
        if self.witness:
            w = self.witness
            lines.append(f"  warp {w['warp']}: {w['note']}")
            for lane, elem, addr in w["lanes"]:
                lines.append(f"    lane {lane}: output {tuple(elem)} reads address {addr}")
        return "\n".join(lines)


def _as_dims(m: IndexingMap) -> tuple[IndexingMap, int]:
    """``m`` with its range and runtime variables turned into trailing dims
    (universally quantified, the same for both lanes), and their count."""
    nd, ns, nr = m.num_dims, m.num_range_vars, m.num_rt_vars
    dims = [Dim(nd + i) for i in range(ns)]
    rts = [Dim(nd + ns + i) for i in range(nr)]

    def sub(e: AffineExpr) -> AffineExpr:
        return e.substitute(syms=dims, rts=rts)

    bounds = [v.bounds for v in m.dims] + [v.bounds for v in m.range_vars] + [v.bounds for v in m.rt_vars]
    return IndexingMap(bounds, [sub(e) for e in m.results],
                       constraints=[(sub(e), iv) for e, iv in m.constraints]), ns + nr


RtKey = tuple[str, tuple[int, ...]]


@dataclass(frozen=True)
class _Access:
    """One map's address: ``a`` over ``(t, v, extras...)`` (the map's range
    variables, then its runtime variables, as dims); ``keys``: per extra, the
    source element of a runtime variable (None for a range variable), and the
    variable's clamp."""

    a: IndexingMap
    keys: tuple[tuple[RtKey, Interval] | None, ...]


def _rt_key(v: Any) -> tuple[RtKey, Interval]:
    origin = v.origin
    omap = origin.map
    return (str(origin.operand_name), tuple(e.value for e in omap.results)), v.bounds


@dataclass(frozen=True)
class _Question:
    """``addr_j(t + dt, v + dv) - addr_i(t, v) == step`` over the pair's domain
    (``i == j``: one map, its loop and runtime variables shared by both points;
    else each map's own, runtime variables reading one source element with one
    clamp equal)."""

    i: int
    j: int
    lane: bool  # shift the lane (True) or the vector slot (False)
    step: int
    domain: IndexingMap
    diff: AffineExpr
    keys: tuple[tuple[RtKey, Interval] | None, ...]
    offset_j: int  # where map j's extras start among the domain's dims
    far: int | None = None
    """With a distance: the domain's dim holding it (lanes ``t`` and ``t + k``,
    ``k >= 2``, in one warp, or slots ``v`` and ``v + k`` of one thread; the
    claim ``addr_j(t + k) - addr_i(t) == step * k``); None: the neighbouring
    lane or slot."""


def _question(x: _Access, y: _Access, i: int, j: int, lane: bool, step: int,
              extra: Sequence[tuple[AffineExpr, Interval]], far: int | None = None) -> _Question:
    """The question for the pair ``(i, j)``; ``far`` (a warp size, or a vector
    size for slots): lanes (slots) ``t`` and ``t + k``, ``2 <= k < far``, of one
    warp (thread), instead of ``t`` and ``t + 1``."""
    a, b = x.a, y.a
    ne = a.num_dims - 2
    shared = i == j
    off = 2 if shared else 2 + ne
    kdim = a.num_dims + (0 if shared else b.num_dims - 2)
    shift: AffineExpr = Dim(kdim) if far is not None else Const(1)
    subst: list[AffineExpr] = [Dim(0) + shift if lane else Dim(0), Dim(1) if lane else Dim(1) + shift]
    subst += [Dim(off + q) for q in range(b.num_dims - 2)]
    bounds = [v.bounds for v in a.dims] + ([] if shared else [v.bounds for v in b.dims[2:]])
    if far is not None:
        bounds.append(Interval(2, max(far - 1, 2)))
    cons = list(a.constraints)
    cons += [(e.substitute(dims=subst), iv) for e, iv in b.constraints]
    cons += [(subst[0], b.dims[0].bounds), (subst[1], b.dims[1].bounds)]
    cons += list(extra)
    if far is not None and lane:  # both lanes in one warp (both slots in one thread: the slot's bounds)
        cons.append((Dim(0) % far + Dim(kdim), Interval(0, far - 1)))
    keys = x.keys if shared else x.keys + y.keys
    for p in range(len(keys)):  # one source element, one clamp: one value
        for q in range(p):
            if keys[p] is not None and keys[p] == keys[q]:
                cons.append((Dim(2 + p) - Dim(2 + q), Interval(0, 0)))
    domain = IndexingMap(bounds, [], constraints=cons)
    diff = b.results[0].substitute(dims=subst) - a.results[0]
    if far is not None:
        diff = diff - Dim(kdim) * step
        return _Question(i, j, lane, step, domain, diff, keys, off, kdim)
    return _Question(i, j, lane, step, domain, diff, keys, off)


def _clamps_agree(keys: Sequence[tuple[RtKey, Interval] | None], values: Sequence[int]) -> bool:
    """True when runtime values read from one source element (each clamped to
    its own bounds) could come from one value of that element."""
    lo: dict[RtKey, float] = {}
    hi: dict[RtKey, float] = {}
    for key, x in zip(keys, values):
        if key is None:
            continue
        src, iv = key
        low, high = -math.inf, math.inf
        if iv.lo < x < iv.hi:
            low = high = x
        elif iv.lo == x and x < iv.hi:
            high = x
        elif iv.hi == x and iv.lo < x:
            low = x
        lo[src] = max(lo.get(src, -math.inf), low)
        hi[src] = min(hi.get(src, math.inf), high)
    return all(lo[s] <= hi[s] for s in lo)


def _ask(q: _Question, accesses: Sequence[_Access], timeout: float) -> Verdict:
    """The engines' answer, a refutation re-checked: its point lies in both
    maps' domains, the plain evaluator gives another step, and its runtime values
    can come from one run (else ``unknown``)."""
    v = prove_expr_equal(q.diff, Const(0 if q.far is not None else q.step), q.domain, timeout=timeout)
    if not v.refuted:
        return v
    pts = _points(q, accesses, v)
    if pts is None:
        return replace(v, status="unknown", counterexample=None,
                       reason="the engine's counterexample did not survive the plain evaluator")
    (pi, ai), (pj, aj) = pts
    if aj - ai == q.step * (pj[0] - pi[0] + pj[1] - pi[1] if q.far is not None else 1):
        return replace(v, status="unknown", counterexample=None,
                       reason="the engine's counterexample did not survive the plain evaluator")
    vals = [x for _, x in v.counterexample.values] if v.counterexample else []
    if not _clamps_agree(q.keys, vals[2:]):
        return replace(v, status="unknown", counterexample=None,
                       reason="the counterexample needs two values of one runtime element (clamped differently)")
    return v


def _points(q: _Question, accesses: Sequence[_Access], v: Verdict) -> tuple[tuple[list[int], int],
                                                                           tuple[list[int], int]] | None:
    """The two points of a counterexample (map i's, map j's) and their
    addresses by the plain evaluator; None when one is outside its map."""
    if v.counterexample is None:
        return None
    vals = [x for _, x in v.counterexample.values]
    a, b = accesses[q.i].a, accesses[q.j].a
    if len(vals) != q.domain.num_dims or not q.domain.contains(vals):
        return None
    pi = vals[: a.num_dims]
    t, s = vals[0], vals[1]
    k = vals[q.far] if q.far is not None else 1
    pj = [t + k, s] if q.lane else [t, s + k]
    pj += vals[q.offset_j: q.offset_j + b.num_dims - 2]
    if not (a.contains(pi) and b.contains(pj)):
        return None
    return (pi, a.evaluate(pi)[0]), (pj, b.evaluate(pj)[0])


def _varying_runtime(m: IndexingMap) -> bool:
    for v in m.rt_vars:
        origin = getattr(v, "origin", None)
        omap = getattr(origin, "map", None)
        if not isinstance(omap, IndexingMap) or not all(isinstance(e, Const) for e in omap.results):
            return True
    return False


def coalescing(
    module: Module,
    *,
    computation: str | None = None,
    vector_size: int = 1,
    warp_size: int = WARP_SIZE,
    timeout: float = 10.0,
) -> list[CoalescingResult]:
    """Coalescing of every operand of ``computation`` under the loop emitter with
    ``vector_size`` elements per thread (default: of every fusion of the module, in
    order, each result naming its ``computation``; the entry when there is none)."""
    if vector_size < 1 or warp_size < 1:
        raise VerifiedIndexingError("vector size and warp size must be at least 1")
    if computation is None:
        names = list(dict.fromkeys(c.name for _, c in module.fusions())) or [module.entry_name]
        return [r for name in names
                for r in coalescing(module, computation=name, vector_size=vector_size, warp_size=warp_size,
                                    timeout=timeout)]
    return [replace(r, computation=computation)
            for r in _coalescing_of(module, computation, vector_size, warp_size, timeout)]


def _coalescing_of(
    module: Module, computation: str, vector_size: int, warp_size: int, timeout: float
) -> list[CoalescingResult]:
    results = [r for r in analyze_module(module, computation=computation) if r.source == 0]
    if not results:
        raise VerifiedIndexingError(f"computation {computation} has no output")
    r = results[0]
    root_shape = module.computations[r.computation].root.shape
    if root_shape.is_tuple:  # a limit of the model, not bad input: every operand is unknown
        why = "the loop emitter's mapping of a tuple-shaped output (multi-output fusion) is not modelled"
        return [CoalescingResult(t.index, t.name, "unknown", None, None, reason=why) for t in r.targets]
    if root_shape.is_tiled:
        why = (f"the loop emitter's order over the tiled output layout {root_shape} (tiles and their padding) "
               "is not modelled")
        return [CoalescingResult(t.index, t.name, "unknown", None, None, reason=why) for t in r.targets]
    if root_shape.num_elements() == 0:  # no thread, no read
        return [CoalescingResult(t.index, t.name, "not read", None, None, reason="the output has no element")
                for t in r.targets]
    threads = thread_map(root_shape, vector_size)
    out: list[CoalescingResult] = []
    for t in r.targets:
        hidden = [u.instruction for u in r.unsupported if t.name in u.hides] + list(t.unsupported)
        if hidden or t.element is not None:
            why = f"unknown indexing through {', '.join(hidden)}" if hidden else "tuple-shaped parameter"
            out.append(CoalescingResult(t.index, t.name, "unknown", None, None, reason=why))
            continue
        approx = [why for a in t.maps for why in a.over_approximation]
        if approx:
            out.append(CoalescingResult(t.index, t.name, "unknown", None, None,
                                        reason=f"a map over-approximates the reads: {approx[0]}"))
            continue
        if any(_varying_runtime(a.map) for a in t.maps):
            out.append(CoalescingResult(t.index, t.name, "unknown", None, None,
                                        reason="addresses depend on data that changes from lane to lane"))
            continue
        try:
            address = address_exprs(t.shape)
        except UnsupportedError as exc:
            out.append(CoalescingResult(t.index, t.name, "unknown", None, None,
                                        reason=f"the operand's layout: {exc}"))
            continue
        out.append(_operand(t.index, t.name, t.shape, address, [a.map for a in t.maps], threads, vector_size,
                            warp_size, timeout))
    return out


def _operand(index: int, name: str, shape: Shape, address: list[AffineExpr], maps: list[IndexingMap],
             threads: IndexingMap, vector_size: int, warp_size: int, timeout: float) -> CoalescingResult:
    """The verdicts of one operand read through ``maps``. The addresses a warp
    reads are the union over every map (every path producing its lanes'
    elements): each obligation is asked for every ordered pair of maps ``(i,
    j)``, lane ``t`` (slot ``v``) reading through ``i`` and lane ``t + 1`` (slot
    ``v + 1``) through ``j``; a pair of one map shares its loop variables (the
    same iteration in both lanes), two maps' loops are independent."""
    same_warp = [(Dim(0) % warp_size, Interval(0, warp_size - 2))]
    to_address = IndexingMap([Interval(0, n - 1) for n in shape.dims], address)
    accesses: list[_Access] = []
    seen: set[tuple[str, tuple[tuple[RtKey, Interval] | None, ...]]] = set()
    for m in maps:
        addr = compose(compose(threads, m), to_address)
        if addr.state != "ok":
            continue
        keys = (None,) * addr.num_range_vars + tuple(_rt_key(v) for v in addr.rt_vars)
        # one path read twice: the same addresses (the text does not show where a
        # runtime variable's value comes from: its source is part of the key)
        text = (addr.format(one_line=True), keys)
        if text in seen:
            continue
        seen.add(text)
        a, _ = _as_dims(addr)
        accesses.append(_Access(a, keys))
    if not accesses:
        return CoalescingResult(index, name, "not read", None, None, reason="no output element reads the operand")
    pairs = [(i, j) for i in range(len(accesses)) for j in range(len(accesses))]
    pairs.sort(key=lambda p: p[0] != p[1])  # one map's own pairs first: their refutations make the witness

    def ask(lane: bool, step: int, far: bool = False) -> list[tuple[_Question, Verdict]]:
        """The pairs' answers, up to the first refutation (one settles the question)."""
        extra = same_warp if lane and not far else []
        out = []
        for i, j in pairs:
            q = _question(accesses[i], accesses[j], i, j, lane, step, extra,
                          (warp_size if lane else vector_size) if far else None)
            out.append((q, _ask(q, accesses, timeout)))
            if out[-1][1].refuted:
                break
        return out

    def gaps(step: int, lane: bool = True) -> tuple[str | None, str | None]:
        """Lanes ``t`` and ``t + k`` (``k >= 2``) of one warp that both read: the
        neighbour question says nothing about them when the lanes between read
        nothing (a concatenate with a constant between two slices). Proved:
        (None, None); refuted: (the lanes and addresses, None); else (None, why).
        ``lane`` False: slots ``v`` and ``v + k`` of one thread (step per slot)."""
        if (warp_size if lane else vector_size) <= 2:
            return None, None
        for q, v in ask(lane, step, far=True):
            if not v.proved and _next_readers(accesses, threads.dims[0].bounds.hi + 1, vector_size, warp_size,
                                              step, lane):
                return None, None  # every reader's next reader is one step on (every map): one run
            if v.refuted:
                pts = _points(q, accesses, v)
                assert pts is not None  # re-checked by _ask
                (pi, ai), (pj, aj) = pts
                if not lane:
                    return (f"slots {pi[1]} and {pj[1]} of thread {pi[0]} read addresses {ai} and {aj} (the slots "
                            f"between do not read the operand; a step of {step} per slot expected)"), None
                return (f"lanes {pi[0] % warp_size} and {pj[0] % warp_size} of warp {pi[0] // warp_size} read "
                        f"addresses {ai} and {aj} (the lanes between do not read the operand; a step of "
                        f"{step} per lane expected)"), None
            if not v.proved:
                return None, v.reason or "an engine gave up"
        return None, None

    lanes = ask(True, vector_size)
    lanes_ok = all(v.proved for _, v in lanes)
    gap_note: str | None = None
    if lanes_ok:
        found, why = gaps(vector_size)
        if found or why:
            lanes_ok = False
            gap_note = found or f"lanes not next to each other: {why}"
    vectors = ask(False, 1) if vector_size > 1 else []
    vec_ok = all(v.proved for _, v in vectors)
    vec_far = False  # slots v and v + k (k >= 2) of one thread, not v + k addresses apart
    if vec_ok:
        found, why = gaps(1, lane=False)
        if found or why:
            vec_ok, vec_far = False, found is not None
            gap_note = gap_note or found or f"slots not next to each other: {why}"
    uniform: list[tuple[_Question, Verdict]] = []
    vector_same: list[tuple[_Question, Verdict]] = []
    if not (lanes_ok and vec_ok):
        uniform = ask(True, 0)
        if all(v.proved for _, v in uniform) and not vec_ok:
            vector_same = ask(False, 0)
    lane_v = _combine([v for _, v in lanes])
    vec_v = _combine([v for _, v in vectors]) if vectors else None
    uniform_ok = bool(uniform) and all(v.proved for _, v in uniform)
    uniform_gap = False  # two lanes of one warp read different addresses: not one address per warp
    if uniform_ok:
        found, why = gaps(0)
        if found or why:
            uniform_ok, uniform_gap = False, found is not None
            gap_note = gap_note or found or f"lanes not next to each other: {why}"
    # a thread reading one address for every slot (a broadcast scalar) is no obstacle to a uniform warp
    same_far: tuple[str | None, str | None] = (None, None)
    if vector_same and all(v.proved for _, v in vector_same):
        same_far = gaps(0, lane=False)
    uniform_vec_ok = vec_ok or (bool(vector_same) and all(v.proved for _, v in vector_same)
                                and same_far == (None, None))
    not_coalesced = any(v.refuted for _, v in lanes) or any(v.refuted for _, v in vectors)
    not_uniform = uniform_gap or any(v.refuted for _, v in uniform) or (
        (vec_far or any(v.refuted for _, v in vectors))
        and (same_far[0] is not None or any(v.refuted for _, v in vector_same)))
    if lanes_ok and vec_ok:
        status = "coalesced"
    elif uniform_ok and uniform_vec_ok:
        status = "uniform"
    elif not_coalesced and not_uniform:
        status = "not coalesced"
    else:
        status = "unknown"
    witness = None
    if status == "not coalesced":
        lane_ref = next(((q, v) for q, v in lanes if v.refuted), None)
        if lane_ref is not None:
            witness = _witness(lane_ref[0], lane_ref[1], accesses, threads, vector_size, warp_size)
        else:
            q, v = next((q, v) for q, v in vectors if v.refuted)
            pts = _points(q, accesses, v)
            assert pts is not None  # re-checked by _ask
            (pi, ai), (pj, aj) = pts
            t = pi[0]
            witness = {"warp": t // warp_size, "thread": t, "lanes": [],
                       "note": f"thread {t}'s {vector_size} elements are not at consecutive addresses "
                               f"(slots {pi[1]} and {pj[1]} read addresses {ai} and {aj})"}
    reason: str | None = None
    if status == "unknown" and gap_note is not None:
        reason = gap_note
    elif status == "unknown":
        gave_up = [v.reason for _, v in lanes + vectors + uniform + vector_same if not v.proved and not v.refuted]
        reason = f"an engine gave up: {gave_up[0]}" if gave_up and gave_up[0] else "an engine gave up"
    return CoalescingResult(index, name, status, lane_v, vec_v, witness, reason,
                            _combine([v for _, v in uniform]) if status == "uniform" else None)


#: Reads evaluated at most by :func:`_next_readers` (threads times slots times maps).
NEXT_READER_LIMIT = 1 << 14


def _next_readers(accesses: Sequence[_Access], n_threads: int, vector_size: int, warp_size: int, step: int,
                  lane: bool) -> bool:
    """True when, evaluated at every thread and slot (maps without loop or runtime
    variables only, at most :data:`NEXT_READER_LIMIT` reads), every lane that reads
    the operand is followed in its warp by a next reading lane (the lanes between
    read nothing) whose every address is one ``step`` on from every address of
    it (``lane`` False: slots of one thread). The addresses of the readers then
    form one run, as when no lane is skipped (a concatenate's part in a row:
    lanes 0..2 read 0..2, lanes 15..17 read 3..5). False when it cannot tell."""
    if any(a.a.num_dims != 2 for a in accesses) or n_threads * vector_size * len(accesses) > NEXT_READER_LIMIT:
        return False

    def reads(t: int, v: int) -> set[int]:
        return {a.a.evaluate([t, v])[0] for a in accesses if a.a.contains([t, v])}

    groups: list[list[set[int]]] = []
    if lane:
        for w in range(-(-n_threads // warp_size)):
            for v in range(vector_size):
                groups.append([reads(t, v) for t in range(w * warp_size, min(n_threads, (w + 1) * warp_size))])
    else:
        groups = [[reads(t, v) for v in range(vector_size)] for t in range(n_threads)]
    for g in groups:
        readers = [x for x in g if x]
        for a, b in itertools.pairwise(readers):
            if {y - x for x in a for y in b} != {step}:
                return False
    return True


def _combine(vs: list[Verdict]) -> Verdict | None:
    if not vs:
        return None
    for status in ("refuted", "error", "unknown"):
        for v in vs:
            if v.status == status:
                return v
    return vs[0]


def _witness(q: _Question, v: Verdict, accesses: Sequence[_Access], threads: IndexingMap, vector_size: int,
             warp_size: int) -> dict[str, Any]:
    """The warp of the counterexample and every address its lanes read at that
    slot through the two maps of the refuted pair (plain evaluation)."""
    pts = _points(q, accesses, v)
    assert pts is not None  # re-checked by _ask
    (pi, ai), (pj, aj) = pts
    t, slot = pi[0], pi[1]
    warp = t // warp_size
    lanes: list[tuple[int, list[int], int]] = []
    for lane in range(warp_size):
        seen: set[int] = set()
        for acc, point in ((accesses[q.i].a, pi), (accesses[q.j].a, pj)):
            p = [warp * warp_size + lane, slot, *point[2:]]
            if acc.contains(p):
                addr = acc.evaluate(p)[0]
                if addr not in seen:
                    seen.add(addr)
                    lanes.append((lane, list(threads.evaluate(p[:2])), addr))
    through = "" if q.i == q.j else " (through two paths)"
    note = (
        f"lanes {t % warp_size} and {t % warp_size + 1} read addresses {ai} and {aj}{through} "
        f"(elements; expected a step of {vector_size})"
    )
    return {"warp": warp, "thread": t, "lanes": lanes, "note": note}
