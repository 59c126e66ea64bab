"""Differential tests: isl, z3 and enumeration agree on random small maps.

Every question is asked of every engine; all answers must be definite (an
``unknown`` fails the test) and equal, and every refutation's counterexample is
re-checked here with the plain evaluator (IndexingMap.contains / evaluate), the
independent oracle. Hypothesis runs derandomized under the CI profile.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap, Interval
from verified_indexing.engines import (
    Verdict,
    exact_range,
    is_empty,
    is_injective,
    prove_equal,
    prove_expr_equal,
    prove_implies,
)
from verified_indexing.expr import AffineExpr, Const, Dim, Sym, emax, emin

DIVISORS = st.sampled_from([-5, -3, -2, 2, 3, 4, 7])


def exprs(nd: int, ns: int = 0) -> st.SearchStrategy[AffineExpr]:
    variables: list[AffineExpr] = [Dim(i) for i in range(nd)] + [Sym(j) for j in range(ns)]
    leaves = st.one_of(st.integers(-6, 6).map(Const), st.sampled_from(variables))

    def extend(kids: st.SearchStrategy[AffineExpr]) -> st.SearchStrategy[AffineExpr]:
        return st.one_of(
            st.tuples(kids, kids).map(lambda t: t[0] + t[1]),
            st.tuples(kids, kids).map(lambda t: t[0] - t[1]),
            st.tuples(kids, st.integers(-4, 4)).map(lambda t: t[0] * t[1]),
            st.tuples(kids, DIVISORS).map(lambda t: t[0].floordiv(t[1])),
            st.tuples(kids, DIVISORS).map(lambda t: t[0].mod(t[1])),
            st.tuples(kids, DIVISORS).map(lambda t: t[0].ceildiv(t[1])),
            st.tuples(kids, kids).map(lambda t: emin(t[0], t[1])),
            st.tuples(kids, kids).map(lambda t: emax(t[0], t[1])),
        )

    return st.recursive(leaves, extend, max_leaves=5)


BOUNDS = st.tuples(st.integers(-5, 4), st.integers(0, 6)).map(lambda t: Interval(t[0], t[0] + t[1]))


@st.composite
def maps(draw: st.DrawFn, nd: int | None = None, ns: int = 0, nres: int | None = None) -> IndexingMap:
    nd = draw(st.integers(1, 2)) if nd is None else nd
    nres = draw(st.integers(1, 2)) if nres is None else nres
    dims = [draw(BOUNDS) for _ in range(nd)]
    syms = [draw(BOUNDS) for _ in range(ns)]
    results = [draw(exprs(nd, ns)) for _ in range(nres)]
    constraints = []
    e = draw(exprs(nd, ns))
    if draw(st.booleans()) and not isinstance(e, Const):
        lo = draw(st.integers(-8, 6))
        constraints.append((e, Interval(lo, lo + draw(st.integers(0, 10)))))
    return IndexingMap(dims, results, syms, (), constraints)


def _point(m: IndexingMap, values: tuple[tuple[str, int], ...]) -> tuple[tuple[int, ...], ...]:
    vals = [v for _, v in values]
    nd, ns = m.num_dims, m.num_range_vars
    return tuple(vals[:nd]), tuple(vals[nd : nd + ns]), tuple(vals[nd + ns :])


def _agree(verdicts: list[Verdict]) -> str:
    statuses = {v.status for v in verdicts}
    assert statuses <= {"proved", "refuted"}, [str(v) for v in verdicts]
    assert len(statuses) == 1, [str(v) for v in verdicts]
    return statuses.pop()


def _confirm_equality_refutation(v: Verdict, a: IndexingMap, b: IndexingMap) -> None:
    ce = v.counterexample
    assert ce is not None
    d, s, r = _point(a, ce.values)
    in_a, in_b = a.contains(d, s, r), b.contains(d, s, r)
    if ce.kind == "domain":
        assert in_a != in_b
    else:
        assert ce.kind == "results" and in_a and in_b
        assert a.evaluate(d, s, r) != b.evaluate(d, s, r)


def _brute_equal(a: IndexingMap, b: IndexingMap) -> bool:
    """Independent oracle: plain Python over the hull of both boxes."""
    pa = {(d, s, r): a.evaluate(d, s, r) for d, s, r in a.domain_points()}
    pb = {(d, s, r): b.evaluate(d, s, r) for d, s, r in b.domain_points()}
    return pa == pb


@st.composite
def equality_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    a = draw(maps())
    how = draw(st.sampled_from(["rewrite", "random", "bounds", "same"]))
    if how == "same":
        return a, a
    if how == "rewrite":
        # an always-true identity: e = (e floordiv c) * c + e mod c
        c = draw(DIVISORS)
        results = [r.floordiv(c) * c + r.mod(c) for r in a.results]
        return a, a.replace(results=results)
    if how == "bounds":
        i = draw(st.integers(0, a.num_dims - 1))
        dims = list(a.dims)
        old = dims[i].bounds
        dims[i] = dims[i].with_bounds(Interval(old.lo, old.hi + draw(st.integers(-1, 1))))
        return a, a.replace(dims=dims)
    b = draw(maps(nd=a.num_dims, nres=a.num_results))
    return a, b.replace(dims=a.dims)


@settings(max_examples=450)
@given(equality_pairs())
def test_equality_engines_agree(pair: tuple[IndexingMap, IndexingMap]) -> None:
    a, b = pair
    verdicts = [prove_equal(a, b, engine=e) for e in ("isl", "z3", "enum")]
    status = _agree(verdicts)
    assert (status == "proved") == _brute_equal(a, b)
    if status == "refuted":
        for v in verdicts:
            _confirm_equality_refutation(v, a, b)


@settings(max_examples=300)
@given(maps(), exprs(2), exprs(2))
def test_expr_equality_engines_agree(m: IndexingMap, e1: AffineExpr, e2: AffineExpr) -> None:
    if m.num_dims < 2:
        m = m.replace(dims=[*m.dims, Interval(-1, 2)])
    verdicts = [prove_expr_equal(e1, e2, m, engine=e) for e in ("isl", "z3", "enum")]
    status = _agree(verdicts)
    brute = all(e1.evaluate(d, s, r) == e2.evaluate(d, s, r) for d, s, r in m.domain_points())
    assert (status == "proved") == brute
    for v in verdicts:
        if v.refuted:
            assert v.counterexample is not None
            d, s, r = _point(m, v.counterexample.values)
            assert m.contains(d, s, r) and e1.evaluate(d, s, r) != e2.evaluate(d, s, r)


@settings(max_examples=200)
@given(maps())
def test_emptiness_engines_agree(m: IndexingMap) -> None:
    verdicts = [is_empty(m, engine=e) for e in ("isl", "z3", "enum")]
    status = _agree(verdicts)
    assert (status == "proved") == (next(iter(m.domain_points()), None) is None)
    for v in verdicts:
        if v.refuted:
            assert v.counterexample is not None
            assert m.contains(*_point(m, v.counterexample.values))


@settings(max_examples=150)
@given(maps(), exprs(2))
def test_exact_range_matches_enumeration_and_z3(m: IndexingMap, e: AffineExpr) -> None:
    if m.num_dims < 2:
        m = m.replace(dims=[*m.dims, Interval(0, 3)])
    values = [e.evaluate(d, s, r) for d, s, r in m.domain_points()]
    rng = exact_range(e, m)
    if not values:
        assert rng is None
        return
    assert rng == Interval(min(values), max(values))
    # z3 agrees that the range holds and is tight at both ends.
    assert prove_implies(m, e, rng, engine="z3").proved
    assert prove_implies(m, e, Interval(rng.lo + 1, rng.hi), engine="z3").refuted
    assert prove_implies(m, e, Interval(rng.lo, rng.hi - 1), engine="z3").refuted


@settings(max_examples=200)
@given(maps())
def test_injectivity_engines_agree(m: IndexingMap) -> None:
    verdicts = [is_injective(m, engine=e) for e in ("isl", "z3", "enum")]
    status = _agree(verdicts)
    images = [(m.evaluate(d, s, r), d) for d, s, r in m.domain_points()]
    brute = len({img for img, _ in images}) == len({d for _, d in images})
    assert (status == "proved") == brute
    for v in verdicts:
        if v.refuted:
            ce = v.counterexample
            assert ce is not None
            p1, p2 = _point(m, ce.values), _point(m, ce.other_values)
            assert m.contains(*p1) and m.contains(*p2)
            assert p1 != p2 and m.evaluate(*p1) == m.evaluate(*p2)


@st.composite
def relation_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    a = draw(maps(nd=1, ns=1, nres=1))
    how = draw(st.sampled_from(["drop-unused", "random", "mirror"]))
    if how == "drop-unused":
        # add an unused range variable to a (the simplifier's inverse), compare with a
        return a.replace(range_vars=[*a.range_vars, Interval(0, 2)]), a
    if how == "mirror":
        # s0 -> lo + hi - s0 enumerates the same range values: same relation
        s = a.range_vars[0].bounds
        flip = [Dim(0), Const(s.lo + s.hi) - Sym(0)]
        return a, a.replace(
            results=[r.substitute(dims=flip[:1], syms=flip[1:]) for r in a.results],
            constraints=[(e.substitute(dims=flip[:1], syms=flip[1:]), iv) for e, iv in a.constraints],
        )
    b = draw(maps(nd=1, ns=1, nres=1))
    return a, b.replace(dims=a.dims)


@settings(max_examples=150)
@given(relation_pairs())
def test_relation_equality_isl_and_enum_agree(pair: tuple[IndexingMap, IndexingMap]) -> None:
    a, b = pair
    vi, ve = prove_equal(a, b, engine="isl"), prove_equal(a, b, engine="enum")
    status = _agree([vi, ve])

    def rel(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
        return {(d, m.evaluate(d, s, r)) for d, s, r in m.domain_points()}

    assert (status == "proved") == (rel(a) == rel(b))
    # z3 may only prove (the sufficient pointwise condition) or give up, never refute here.
    vz = prove_equal(a, b, engine="z3")
    assert vz.status in ("proved", "unknown")
    if vz.proved:
        assert status == "proved"
    for v in (vi, ve):
        if v.refuted:
            ce = v.counterexample
            assert ce is not None and ce.kind == "relation"
            has, lacks = (a, b) if ce.in_domain == "source" else (b, a)
            d, s, r = _point(has, ce.values)
            res = ce.source if ce.in_domain == "source" else ce.target
            assert has.contains(d, s, r) and has.evaluate(d, s, r) == res
            assert (d, res) not in rel(lacks)


@settings(max_examples=100)
@given(maps())
def test_indexing_map_from_isl_round_trip(m: IndexingMap) -> None:
    """Back from isl: when representable, the map is equal to the original (by
    enumeration, an engine independent of the isl encoding)."""
    from verified_indexing.engines import indexing_map_from_isl, to_isl_map

    back = indexing_map_from_isl(to_isl_map(m))
    if back is None:
        return
    if back.is_known_empty:
        assert next(iter(m.domain_points()), None) is None
        return
    pa = {d: m.evaluate(d, s, r) for d, s, r in m.domain_points()}
    pb = {d: back.evaluate(d, s, r) for d, s, r in back.domain_points()}
    assert pa == pb


@settings(max_examples=100)
@given(maps(nres=2), maps(nd=2))
def test_compose_relation_matches_substitution_compose(first: IndexingMap, second: IndexingMap) -> None:
    """The core's substitution-based compose equals isl's relational composition."""
    from verified_indexing import compose
    from verified_indexing.engines import compose_relation, to_isl_map

    composed = compose(first, second)
    if composed.is_known_empty:
        assert compose_relation(first, second).is_empty()
        return
    assert compose_relation(first, second).is_equal(to_isl_map(composed))


@settings(max_examples=80)
@given(maps(nd=2, nres=2), st.tuples(BOUNDS, BOUNDS))
def test_bijectivity_isl_and_enum_agree(m: IndexingMap, box: tuple[Interval, Interval]) -> None:
    from verified_indexing.engines import is_bijective_onto

    target = list(box)
    vi, ve = is_bijective_onto(m, target, engine="isl"), is_bijective_onto(m, target, engine="enum")
    status = _agree([vi, ve])
    images: dict[tuple[int, ...], tuple[int, ...]] = {}
    ok = True
    for d, s, r in m.domain_points():
        y = m.evaluate(d, s, r)
        if y in images and images[y] != d:
            ok = False
        images[y] = d
    ok = ok and set(images) == {(a, b) for a in target[0] for b in target[1]}
    assert (status == "proved") == ok
    vz = is_bijective_onto(m, target, engine="z3")
    assert vz.status in ("unknown", "refuted")
    if vz.refuted:
        assert status == "refuted"


def test_bijective_examples() -> None:
    from verified_indexing import parse_indexing_map
    from verified_indexing.engines import is_bijective_onto

    m = parse_indexing_map("(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert is_bijective_onto(m, [Interval(0, 3), Interval(0, 7)], engine="isl").proved
    v = is_bijective_onto(m, [Interval(0, 4), Interval(0, 7)], engine="isl")
    assert v.refuted and v.counterexample is not None and v.counterexample.values == (("y0", 4), ("y1", 0))
    many = parse_indexing_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
    v2 = is_bijective_onto(many, [Interval(0, 4)], engine="isl")
    assert v2.refuted and v2.counterexample is not None
    assert "not single-valued" in v2.counterexample.note or "not injective" in v2.counterexample.note
