"""The inclusion and equality questions (prove_subset, prove_pointwise_equal,
prove_relation_equal), compose_relation with runtime variables, and isl's
operation limit.

Oracles: plain Python over ``domain_points`` (sets of elements built here,
independently of the engines' enumeration code), the core's substitution-based
``compose``, and the other engines; every refutation's counterexample is
re-checked here with ``IndexingMap.contains`` / ``evaluate``.
"""

from __future__ import annotations

import itertools
from typing import Any

import islpy as isl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap, Interval, compose, parse_indexing_map
from verified_indexing.engines import (
    Verdict,
    compose_relation,
    get_max_operations,
    is_injective,
    is_subset,
    prove_equal,
    prove_pointwise_equal,
    prove_relation_equal,
    prove_subset,
    set_max_operations,
    to_isl_map,
)
from verified_indexing.expr import Dim
from verified_indexing.testing.strategies import indexing_maps

ENGINES = ("isl", "z3", "enum")


def P(text: str) -> IndexingMap:
    return parse_indexing_map(text)


def _split(m: IndexingMap, values: tuple[tuple[str, int], ...]) -> tuple[tuple[int, ...], ...]:
    vals = [v for _, v in values]
    nd, ns = m.num_dims, m.num_range_vars
    return tuple(vals[:nd]), tuple(vals[nd : nd + ns]), tuple(vals[nd + ns :])


def _elements(m: IndexingMap, of: str) -> set[Any]:
    """The domain / image / relation of ``m`` as a Python set (the oracle)."""
    out: set[Any] = set()
    for d, s, r in m.domain_points():
        if of == "domain":
            out.add((d, r))
        elif of == "image":
            out.add(m.evaluate(d, s, r))
        else:
            out.add(((d, r), m.evaluate(d, s, r)))
    return out


def _element(m: IndexingMap, pt: tuple[tuple[int, ...], ...], of: str) -> Any:
    d, s, r = pt
    if of == "domain":
        return (d, r)
    if of == "image":
        return m.evaluate(d, s, r)
    return ((d, r), m.evaluate(d, s, r))


def _definite(verdicts: list[Verdict]) -> str:
    statuses = {v.status for v in verdicts}
    assert statuses <= {"proved", "refuted"}, [str(v) for v in verdicts]
    assert len(statuses) == 1, [str(v) for v in verdicts]
    return statuses.pop()


SMALL = indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_bound=3, max_results=2, max_constraints=1)


def _loosen(m: IndexingMap, widen: int) -> IndexingMap:
    """``m`` with every bound widened and its constraints dropped (a superset of
    its domain, image and relation when the results are kept)."""

    def wide(vs: Any) -> list[Any]:
        return [v.with_bounds(Interval(v.bounds.lo - widen, v.bounds.hi + widen)) for v in vs]

    return m.replace(dims=wide(m.dims), range_vars=wide(m.range_vars), rt_vars=wide(m.rt_vars), constraints=[])


@st.composite
def subset_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    a = draw(SMALL)
    how = draw(st.sampled_from(["loosen", "tighten", "random", "same", "drop-sym"]))
    if how == "same":
        return a, a
    if how == "loosen":
        return a, _loosen(a, draw(st.integers(0, 1)))
    if how == "tighten":
        return _loosen(a, draw(st.integers(0, 1))), a
    if how == "drop-sym" and a.num_range_vars:
        # The same results with the range variable pinned to its lower bound.
        lo = a.range_vars[0].bounds.lo
        return a, a.replace(range_vars=[a.range_vars[0].with_bounds(Interval(lo, lo))])
    b = draw(SMALL)
    return a, b.replace(dims=a.dims, rt_vars=a.rt_vars) if (
        b.num_dims == a.num_dims and b.num_rt_vars == a.num_rt_vars
    ) else a.replace(results=list(reversed(a.results)))


def _check_subset_refutation(v: Verdict, a: IndexingMap, b: IndexingMap, of: str) -> None:
    ce = v.counterexample
    assert ce is not None and ce.kind == "subset"
    pt = _split(a, ce.values)
    assert a.contains(*pt)
    assert _element(a, pt, of) not in _elements(b, of)
    assert ce.source == a.evaluate(*pt)


@settings(max_examples=120)
@given(subset_pairs(), st.sampled_from(["domain", "image", "relation"]))
def test_subset_engines_agree_with_enumeration(pair: tuple[IndexingMap, IndexingMap], of: str) -> None:
    a, b = pair
    if of != "domain" and a.num_results != b.num_results:
        return
    expected = _elements(a, of) <= _elements(b, of)
    engines = ["isl", "enum"]
    if of != "image" and b.num_range_vars == 0:
        engines.append("z3")
    verdicts = [prove_subset(a, b, of=of, engine=e) for e in engines]
    status = _definite(verdicts)
    assert (status == "proved") == expected, [str(v) for v in verdicts]
    for v in verdicts:
        if v.refuted:
            _check_subset_refutation(v, a, b, of)


def test_subset_examples() -> None:
    a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    even = P("(d0) -> (d0 * 2), domain: d0 in [0, 4]")
    # image of even = {0, 2, 4, 6, 8}; image of a = [0, 6]: 8 is missing.
    v = prove_subset(even, a, of="image")
    assert v.refuted and v.counterexample is not None
    assert v.counterexample.values == (("d0", 4),) and v.counterexample.source == (8,)
    assert prove_subset(even, a, of="domain").proved  # [0, 4] within [0, 5]
    assert prove_subset(a, even, of="domain").refuted
    # `even` relates 1 -> 2 (as does `a`: 1 -> {1, 2}) and 2 -> 4 (`a`: 2 -> {2, 3}).
    v = prove_subset(even, a, of="relation", engine="enum")
    assert v.refuted and v.counterexample is not None and v.counterexample.values == (("d0", 2),)
    # is_subset is the same question.
    assert is_subset(even, a, of="image").status == "refuted"
    # A pointwise-smaller domain with the same results is a subset of the relation.
    small = P("(d0)[s0] -> (d0 + s0), domain: d0 in [1, 3], s0 in [0, 1], d0 + s0 in [0, 3]")
    for e in ("isl", "enum", "all"):
        assert prove_subset(small, a, of="relation", engine=e).proved


def test_subset_z3_cases_and_ill_formed_questions() -> None:
    a = P("(d0) -> (d0 mod 4), domain: d0 in [0, 9]")
    b = P("(d0) -> (d0 - (d0 floordiv 4) * 4), domain: d0 in [-3, 12]")
    v = prove_subset(a, b, of="relation", engine="z3")
    assert v.proved and v.engine == "z3"
    v = prove_subset(b, a, of="relation", engine="z3")
    assert v.refuted and v.counterexample is not None
    pt = _split(b, v.counterexample.values)
    assert not a.contains(*pt)
    # z3 does not decide images (a quantifier over the target's domain).
    assert prove_subset(a, b, of="image", engine="z3").unknown
    ranged = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    assert prove_subset(a, ranged, of="relation", engine="z3").unknown
    # Arity mismatches and UNDEFINED are errors, KNOWN EMPTY is a subset of anything.
    two = P("(d0, d1) -> (d0), domain: d0 in [0, 1], d1 in [0, 1]")
    assert prove_subset(a, two, of="domain").error
    assert prove_subset(a, P("(d0) -> (d0, d0), domain: d0 in [0, 9]"), of="image").error
    # images may come from different inputs: {0, ..., 3} is not within {0, 1}
    v = prove_subset(a, two, of="image")
    assert v.refuted and v.counterexample is not None and v.counterexample.source == (2,)
    assert prove_subset(two.replace(results=[Dim(0) + 2]), a, of="image").proved
    assert prove_subset(IndexingMap.undefined(), a).error
    assert prove_subset(IndexingMap.known_empty(), a).proved
    v = prove_subset(a, IndexingMap.known_empty(), engine="all")
    assert v.refuted and v.counterexample is not None and a.contains(*_split(a, v.counterexample.values))
    assert prove_subset(a, b, of="bogus").error


@st.composite
def pointwise_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    a = draw(SMALL)
    how = draw(st.sampled_from(["same", "identity", "shift-bound", "random"]))
    if how == "same":
        return a, a
    if how == "identity":
        c = draw(st.sampled_from([-3, 2, 5]))
        return a, a.replace(results=[r.floordiv(c) * c + r.mod(c) for r in a.results])
    if how == "shift-bound":
        vs = list(a.variables())
        if not vs:
            return a, a
        k, i, v = vs[draw(st.integers(0, len(vs) - 1))]
        moved = v.with_bounds(Interval(v.bounds.lo, v.bounds.hi + draw(st.sampled_from([-1, 1]))))
        lists = {"d": list(a.dims), "s": list(a.range_vars), "rt": list(a.rt_vars)}
        lists[k][i] = moved
        return a, a.replace(dims=lists["d"], range_vars=lists["s"], rt_vars=lists["rt"])
    b = draw(SMALL)
    if (b.num_dims, b.num_range_vars, b.num_rt_vars) != (a.num_dims, a.num_range_vars, a.num_rt_vars):
        return a, a.replace(results=list(reversed(a.results)))
    return a, b.replace(dims=a.dims, range_vars=a.range_vars, rt_vars=a.rt_vars, results=b.results[: a.num_results])


@settings(max_examples=120)
@given(pointwise_pairs())
def test_pointwise_and_relation_equality_agree_with_enumeration(pair: tuple[IndexingMap, IndexingMap]) -> None:
    a, b = pair
    if a.num_results != b.num_results:
        return
    pa = {pt: a.evaluate(*pt) for pt in a.domain_points()}
    pb = {pt: b.evaluate(*pt) for pt in b.domain_points()}
    verdicts = [prove_pointwise_equal(a, b, engine=e) for e in ENGINES]
    status = _definite(verdicts)
    assert (status == "proved") == (pa == pb)
    for v in verdicts:
        if v.refuted:
            ce = v.counterexample
            assert ce is not None
            pt = _split(a, ce.values)
            assert pa.get(pt) != pb.get(pt)
    relation_equal = _elements(a, "relation") == _elements(b, "relation")
    rel = [prove_relation_equal(a, b, engine=e) for e in ("isl", "enum")]
    assert _definite(rel) == ("proved" if relation_equal else "refuted")
    if pa == pb:  # pointwise equality implies relation equality
        assert relation_equal


def test_pointwise_is_stronger_than_relation_equality() -> None:
    a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    b = P("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 5], s0 in [0, 1]")
    for e in ENGINES:
        v = prove_pointwise_equal(a, b, engine=e)
        assert v.refuted and v.counterexample is not None
        pt = _split(a, v.counterexample.values)
        assert a.evaluate(*pt) != b.evaluate(*pt)
    assert prove_relation_equal(a, b, engine="isl").proved
    assert prove_relation_equal(a, b, engine="enum").proved
    assert prove_relation_equal(a, b, engine="z3").unknown
    assert prove_equal(a, b).proved
    # different numbers of range variables: pointwise is ill-formed, relations compare.
    c = P("(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 5], s0 in [0, 1], s1 in [0, 0]")
    assert prove_pointwise_equal(a, c).error
    assert prove_relation_equal(a, c).proved
    assert prove_pointwise_equal(IndexingMap.known_empty(), IndexingMap.known_empty()).proved
    empty = P("(d0) -> (d0), domain: d0 in [0, 5], d0 mod 7 in [6, 6]")
    assert prove_pointwise_equal(IndexingMap.known_empty(), empty, engine="all").proved


# -- compose_relation with runtime variables ------------------------------------


def _isl_points(rel: Any) -> set[tuple[int, ...]]:
    pts: set[tuple[int, ...]] = set()
    w = rel.wrap()
    n = w.dim(isl.dim_type.set)

    def add(p: Any) -> None:
        pts.add(tuple(int(p.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n)))

    w.foreach_point(add)
    return pts


def _composed_by_enumeration(first: IndexingMap, second: IndexingMap) -> set[tuple[int, ...]]:
    """``{(d, rt2, rt1, z)}`` by plain evaluation: first's points, then every
    (range var, rt var) value of second at first's results."""
    out: set[tuple[int, ...]] = set()
    s2 = [range(v.bounds.lo, v.bounds.hi + 1) for v in second.range_vars]
    r2 = [range(v.bounds.lo, v.bounds.hi + 1) for v in second.rt_vars]
    for d, _, r1 in first.domain_points():
        y = first.evaluate(d, _, r1)
        for s in itertools.product(*s2):
            for r in itertools.product(*r2):
                if second.contains(y, s, r):
                    out.add((*d, *r, *r1, *second.evaluate(y, s, r)))
    return out


@st.composite
def compose_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    first = draw(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_bound=2, max_results=2, max_constraints=1))
    ny = first.num_results
    second = draw(indexing_maps(max_dims=0, max_syms=1, max_rts=2, max_bound=2, max_results=2, max_constraints=1))
    # give second ny dims with bounds that cut some of first's results
    dims = [Interval(draw(st.integers(-4, 0)), draw(st.integers(0, 5))) for _ in range(ny)]
    res = [*second.results, *[Dim(i) * draw(st.integers(-2, 2)) for i in range(ny)]]
    if second.num_rt_vars:
        from verified_indexing.expr import RtSym

        res.append(Dim(0) + RtSym(second.num_rt_vars - 1) if ny else RtSym(0))
    second = IndexingMap(dims, res, second.range_vars, second.rt_vars, second.constraints)
    return first, second


@settings(max_examples=60)
@given(compose_pairs())
def test_compose_relation_with_runtime_variables(pair: tuple[IndexingMap, IndexingMap]) -> None:
    first, second = pair
    rel = compose_relation(first, second)
    sub = compose(first, second)
    expected = _composed_by_enumeration(first, second)
    assert _isl_points(rel) == expected
    if sub.state == "ok":
        assert rel.is_equal(to_isl_map(sub))
        # and the substitution-based composite relates exactly the same tuples
        got = {(*d, *r, *sub.evaluate(d, s, r)) for d, s, r in sub.domain_points()}
        assert got == expected


def test_compose_relation_runtime_order_example() -> None:
    first = P("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 2]")
    second = P("(d0)[s0]{rt0} -> (d0 * 2 + rt0 + s0), domain: d0 in [0, 4], s0 in [0, 1], rt0 in [5, 6]")
    rel = compose_relation(first, second)
    # inputs [d0, rt of second, rt of first]: d0 = 1, rt2 = 6, rt1 = 2 -> y = 3 -> z = 12 + s0
    pts = _isl_points(rel)
    assert (1, 6, 2, 12) in pts and (1, 6, 2, 13) in pts and (1, 6, 2, 14) not in pts
    assert (3, 5, 2, 15) not in pts  # y = 5 is outside second's d0 bounds
    assert rel.is_equal(to_isl_map(compose(first, second)))


# -- isl's operation limit -------------------------------------------------------


def _chain(v: Any, k: int, depth: int) -> Any:
    e = v
    for i in range(depth):
        e = (e * (7 + k + 2 * i)).floordiv(5 + 3 * i + k)
    return e


def test_isl_operation_limit_gives_unknown_then_recovers() -> None:
    # A deep chain of floordivs over a 10^12-point box: expensive for isl's
    # injectivity test (hundreds of milliseconds), cheap to state.
    d0, d1 = Dim(0), Dim(1)
    m = IndexingMap([Interval(0, 10**6), Interval(0, 10**6)], [_chain(d0 + d1, 0, 4) + _chain(d0 - d1 * 2, 1, 4)])
    previous = set_max_operations(10_000)
    try:
        assert get_max_operations() == 10_000
        v = is_injective(m, engine="isl")
        assert v.unknown
        assert "operation limit (10000 operations) was exceeded" in v.reason
        # auto falls back to z3 (which refutes with a confirmed pair, or gives up).
        assert not is_injective(m).proved
    finally:
        set_max_operations(previous)
    assert get_max_operations() == previous
    # the engine context is usable again with the normal limit
    v = is_injective(m, engine="isl")
    assert v.refuted and v.counterexample is not None
    ce = v.counterexample
    p1, p2 = (tuple(x for _, x in vals) for vals in (ce.values, ce.other_values))
    assert p1 != p2 and m.evaluate(p1) == m.evaluate(p2)
    small = P("(d0) -> (d0 floordiv 2), domain: d0 in [0, 9]")
    assert prove_equal(small, small.replace(results=[Dim(0).floordiv(2)]), engine="isl").proved
    with pytest.raises(ValueError):
        set_max_operations(-1)


def test_public_isl_builders_stay_in_the_default_context() -> None:
    # Other areas combine to_isl_map with their own isl objects (default context).
    m = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    mine = isl.Map("{ [x] -> [y] : 0 <= x <= 5 and x <= y <= x + 1 }")
    assert to_isl_map(m).is_equal(mine)
    prove_equal(m, m, engine="isl")  # runs in the engine context
    assert to_isl_map(m).is_equal(mine)


def test_symbol_pinning_keeps_relation_subset() -> None:
    a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    pinned = a.replace(range_vars=[a.range_vars[0].with_bounds(Interval(0, 0))])
    for e in ("isl", "enum"):
        assert prove_subset(pinned, a, engine=e).proved
        v = prove_subset(a, pinned, engine=e)
        assert v.refuted and v.counterexample is not None
        assert v.counterexample.values[1] == ("s0", 1)


def test_auto_keeps_every_reason_when_isl_z3_and_enum_give_up() -> None:
    a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    b = P("(d0) -> (d0 * 2), domain: d0 in [0, 4]")
    big_a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5000000], s0 in [0, 1]")
    big_b = P("(d0) -> (d0 * 2), domain: d0 in [0, 4000000]")
    previous = set_max_operations(1)
    try:
        v = prove_subset(big_b, big_a, of="image")
        small = prove_subset(b, a, of="image")
    finally:
        set_max_operations(previous)
    assert v.unknown
    assert "isl: isl gave up: the operation limit (1 operations) was exceeded" in v.reason
    assert "then z3: z3 cannot decide this inclusion" in v.reason
    assert "then enum: " in v.reason
    # on a small box, enumeration (the last engine of auto) decides it
    assert small.refuted and small.engine == "enum"
    # with the normal limit isl decides it (8 = 2 * 4 is not in [0, 6])
    v = prove_subset(b, a, of="image")
    assert v.refuted and v.counterexample is not None and v.counterexample.source == (8,)


def test_large_range_variable_boxes_are_confirmed_by_z3() -> None:
    # The target's range variable has 10^7 values: too many to evaluate, so the
    # counterexample is confirmed by an exact z3 query (and is still checked
    # against the plain evaluator on the source side).
    a = P("(d0) -> (d0 * 3), domain: d0 in [0, 10]")
    b = P("(d0)[s0] -> (d0 * 3 + s0 * 2), domain: d0 in [0, 10], s0 in [1, 10000000]")
    v = prove_subset(a, b, engine="isl")
    assert v.refuted and v.counterexample is not None
    d0 = v.counterexample.values[0][1]
    # independent check: 3*d0 = 3*d0 + 2*s0 needs s0 = 0, outside [1, 10^7]
    assert a.evaluate((d0,)) == (3 * d0,)
    wide = P("(d0)[s0] -> (d0 * 3 + s0 * 2), domain: d0 in [0, 10], s0 in [0, 10000000]")
    assert prove_subset(a, wide, engine="isl").proved
    # relation equality: the same confirmation path (the source relates d0 -> 3*d0)
    v = prove_relation_equal(a, b, engine="isl")
    assert v.refuted and v.counterexample is not None and v.counterexample.kind == "relation"


def test_exact_range_with_the_operation_limit() -> None:
    from verified_indexing.engines import IslLimitExceeded, exact_range

    m = IndexingMap([Interval(-50, 50), Interval(0, 7)], [])
    e = Dim(0).floordiv(-3) * 2 + Dim(1).mod(-5)
    values = [e.evaluate(*p) for p in m.domain_points()]
    expected = Interval(min(values), max(values))
    assert exact_range(e, m) == expected
    assert exact_range(e, m, limited=True) == expected
    previous = set_max_operations(1)
    try:
        with pytest.raises(IslLimitExceeded, match="operation limit"):
            exact_range(e, m, limited=True)
        assert exact_range(e, m) == expected  # the default stays unlimited
    finally:
        set_max_operations(previous)
