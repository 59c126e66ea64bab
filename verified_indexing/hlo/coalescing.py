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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from verified_indexing.engines import Verdict, prove_expr_equal
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim
from verified_indexing.hlo.bitcast import physical_order
from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.ir import Module, Shape
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval

__all__ = ["WARP_SIZE", "CoalescingResult", "coalescing", "thread_map"]

WARP_SIZE = 32


def _linearize(shape: Shape) -> list[AffineExpr]:
    """The physical linear index (in elements) of a logical index ``d0, d1, ...``."""
    order = physical_order(shape)
    expr: AffineExpr = Const(0)
    for dim in order:
        expr = expr * shape.dims[dim] + Dim(dim)
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


def _shifted(m: IndexingMap, k: int, by: int) -> tuple[list[AffineExpr], list[tuple[AffineExpr, Interval]]]:
    """Results and domain conditions of ``m`` with dim ``k`` replaced by ``dk + by``."""
    subst = [Dim(i) + by if i == k else Dim(i) for i in range(m.num_dims)]
    res = [e.substitute(dims=subst) for e in m.results]
    cons = [(e.substitute(dims=subst), iv) for e, iv in m.constraints]
    cons.append((Dim(k) + by, m.dims[k].bounds))
    return res, cons


def _pair_question(a: IndexingMap, k: int, step: int, extra: Sequence[tuple[AffineExpr, Interval]],
                   timeout: float) -> tuple[Verdict, IndexingMap]:
    """Prove ``addr(dk + 1) - addr(dk) == step`` wherever both points are in the domain."""
    res1, cons1 = _shifted(a, k, 1)
    domain = IndexingMap([v.bounds for v in a.dims], [], constraints=[*a.constraints, *cons1, *extra])
    return prove_expr_equal(res1[0] - a.results[0], Const(step), domain, timeout=timeout), domain


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
        out.append(_operand(t.index, t.name, t.shape, [a.map for a in t.maps], threads, vector_size, warp_size,
                            timeout))
    return out


def _operand(index: int, name: str, shape: Shape, maps: list[IndexingMap], threads: IndexingMap,
             vector_size: int, warp_size: int, timeout: float) -> CoalescingResult:
    same_warp = [(Dim(0) % warp_size, Interval(0, warp_size - 2))]
    lanes: list[Verdict] = []
    uniform: list[Verdict] = []
    vectors: list[Verdict] = []
    vector_same: list[Verdict] = []  # per map: contiguous, or one address per thread
    refutation: tuple[IndexingMap, Verdict] | None = None
    step_refuted: tuple[IndexingMap, Verdict] | None = None  # lanes refuted, but one address (uniform)
    for m in maps:
        addr = compose(compose(threads, m), IndexingMap([Interval(0, n - 1) for n in shape.dims], _linearize(shape)))
        if addr.state != "ok":
            continue
        a, _ = _as_dims(addr)
        v1, _ = _pair_question(a, 0, vector_size, same_warp, timeout)
        # Several maps: one may be coalesced and another uniform, and the operand
        # is then neither; every map needs its one-address answer (with vectors too:
        # lanes may be coalesced while the vector is one address).
        if not v1.proved or len(maps) > 1 or vector_size > 1:
            v0, _ = _pair_question(a, 0, 0, same_warp, timeout)
            uniform.append(v0)
            if v1.refuted and not v0.proved and refutation is None:
                refutation = (a, v1)
            if v1.refuted and v0.proved and step_refuted is None:
                step_refuted = (a, v1)
        lanes.append(v1)
        if vector_size > 1:
            vec = _pair_question(a, 1, 1, (), timeout)[0]
            vectors.append(vec)
            # a thread reading one address for every slot (a broadcast scalar) is no
            # obstacle to a uniform warp
            vector_same.append(vec if vec.proved else _pair_question(a, 1, 0, (), timeout)[0])
    if not lanes:
        return CoalescingResult(index, name, "not read", None, None, reason="no output element reads the operand")
    lane_v = _combine(lanes)
    vec_v = _combine(vectors) if vectors else None
    is_uniform = len(uniform) == len(lanes) and all(u.proved for u in uniform)
    if refutation is None and step_refuted is not None and any(u.refuted for u in uniform):
        # a uniform map among maps that are not: not coalesced (its lanes) and not uniform (another map)
        refutation = step_refuted
    vec_ok = vec_v is None or vec_v.proved
    if lane_v is not None and lane_v.proved and vec_ok:
        status = "coalesced"
    elif is_uniform and all(v.proved for v in vector_same):
        status = "uniform"
    elif (refutation is not None) or (vec_v is not None and vec_v.refuted):
        status = "not coalesced"
    else:
        status = "unknown"
    witness = None
    if refutation is not None:
        witness = _witness(refutation[0], refutation[1], threads, vector_size, warp_size)
    elif status == "not coalesced" and vec_v is not None and vec_v.refuted:
        witness = {"warp": -1, "lanes": [], "note": "a thread's vector is not contiguous"}
        if vec_v.counterexample is not None:
            vals = dict(vec_v.counterexample.values)
            t = vals.get("d0", 0)
            witness = {"warp": t // warp_size, "lanes": [], "note": f"thread {t}'s {vector_size} elements are not "
                       f"at consecutive addresses (slot {vals.get('d1', 0)})"}
    reason = "an engine gave up" if status == "unknown" else None
    return CoalescingResult(index, name, status, lane_v, vec_v, witness, reason,
                            _combine(uniform) if status == "uniform" else None)


def _combine(vs: list[Verdict]) -> Verdict | None:
    if not vs:
        return None
    for status in ("refuted", "error", "unknown"):
        for v in vs:
            if v.status == status:
                return v
    return vs[0]


def _witness(a: IndexingMap, v: Verdict, threads: IndexingMap, vector_size: int, warp_size: int) -> dict[str, Any]:
    """The warp of the counterexample, every lane's address (plain evaluation)."""
    ce = v.counterexample
    assert ce is not None
    vals = [x for _, x in ce.values]
    t = vals[0]
    warp = t // warp_size
    rest = vals[2:]
    lanes = []
    for lane in range(warp_size):
        point = [warp * warp_size + lane, vals[1], *rest]
        if a.contains(point):
            lanes.append((lane, list(threads.evaluate(point[:2])), a.evaluate(point)[0]))
    note = (
        f"lanes {t % warp_size} and {t % warp_size + 1} read addresses {a.evaluate(vals)[0]} and "
        f"{a.evaluate([t + 1, *vals[1:]])[0]} (elements; expected a step of {vector_size})"
    )
    return {"warp": warp, "thread": t, "lanes": lanes, "note": note}
