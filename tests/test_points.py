"""Exact answers on small domains by enumeration (engines/points.py), the rule index of the
rewriter, and the switch the command line uses.

Oracles: isl's exact range and emptiness, isl's pointwise equality, and the plain evaluator
(``IndexingMap.contains`` / ``evaluate`` point by point)."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.engines import exact_range, is_empty, points, prove_pointwise_equal
from verified_indexing.expr import AffineExpr, CeilDiv, Const, Dim, FloorDiv, Max, Min, Mod, Sum, Sym, emax
from verified_indexing.interval import Interval
from verified_indexing.simplify import simplify_with_report
from verified_indexing.simplify.rules import RULES, rule_heads
from verified_indexing.testing.strategies import affine_exprs, indexing_maps


def _ok(m: IndexingMap) -> bool:
    return m.state == "ok"


def _brute_range(m: IndexingMap, e: AffineExpr) -> Interval | None:
    vals = [e.evaluate(d, s, r) for d, s, r in m.domain_points(100_000)]
    return Interval(min(vals), max(vals)) if vals else None


@settings(max_examples=80)
@given(indexing_maps(max_dims=3, max_syms=1, max_rts=1, max_constraints=2).filter(_ok), st.data())
def test_exact_range_and_emptiness_match_isl_and_the_evaluator(m: IndexingMap, data: st.DataObject) -> None:
    table = points.table_for(m)
    assert table is not None  # small boxes, small values: always tabulated
    empty = is_empty(m, engine="isl")
    assert table.is_empty() == empty.proved
    e = data.draw(affine_exprs(m.num_dims, m.num_range_vars, m.num_rt_vars, max_leaves=5))
    got = table.range(e)
    assert got == _brute_range(m, e)
    if not empty.proved:
        assert got == exact_range(e, m)


@settings(max_examples=60)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0, max_constraints=2).filter(_ok), st.data())
def test_range_without_a_constraint_is_the_range_over_the_other_constraints(m: IndexingMap,
                                                                             data: st.DataObject) -> None:
    table = points.table_for(m)
    assert table is not None
    e = data.draw(affine_exprs(m.num_dims, m.num_range_vars, 0, max_leaves=4))
    for i in range(len(m.constraints)):
        rest = m.replace(constraints=[c for k, c in enumerate(m.constraints) if k != i])
        assert table.range(e, without={i}) == _brute_range(rest, e)


@settings(max_examples=80)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=1, max_results=2).filter(_ok), st.data())
def test_pointwise_difference_matches_isl(a: IndexingMap, data: st.DataObject) -> None:
    n = a.num_dims, a.num_range_vars, a.num_rt_vars
    results = [data.draw(affine_exprs(*n, max_leaves=4)) if data.draw(st.booleans()) else r for r in a.results]
    b = a.replace(results=results)
    if data.draw(st.booleans()) and a.constraints:
        b = b.replace(constraints=list(a.constraints[1:]))
    decided, point = points.find_pointwise_difference(a, b)
    assert decided
    isl = prove_pointwise_equal(a, b, engine="isl")
    assert (point is None) == isl.proved
    if point is not None:  # the point really differs (plain evaluator)
        assert a.contains(*point) != b.contains(*point) or a.evaluate(*point) != b.evaluate(*point)


def test_values_that_could_leave_int64_are_not_tabulated() -> None:
    big = parse_indexing_map(f"(d0) -> (d0 * {1 << 40}), domain: d0 in [0, {1 << 23}]")
    assert points.table_for(big) is None  # box too large
    wide = parse_indexing_map(f"(d0) -> (d0 * {1 << 61} + 3), domain: d0 in [0, 3]")
    # the table is the domain's; a result that could wrap is declined when it is asked about
    table = points.table_for(wide)
    assert table is not None
    with pytest.raises(ValueError):
        table.range(wide.results[0])  # d0 * 2^61 reaches 2^62.6: numpy could wrap
    with pytest.raises(ValueError):
        table.affine_fit(wide.results[0])
    with pytest.raises(ValueError):  # not affine (the quick corner test says so), still declined
        table.affine_fit(wide.results[0].floordiv(3) + wide.results[0].floordiv(5))
    assert points.find_pointwise_difference(wide, wide) == (True, None)  # the same results: nothing to evaluate
    other = wide.replace(results=[emax(wide.results[0], 0)])  # equal on the domain, but evaluating it could wrap
    assert points.find_pointwise_difference(wide, other) == (False, None)
    # a constraint that could wrap: no table
    wrapped = parse_indexing_map(f"(d0) -> (d0), domain: d0 in [0, 3], d0 * {1 << 61} in [0, {1 << 62}]")
    assert points.table_for(wrapped) is None
    ok = parse_indexing_map("(d0) -> (d0 * 4), domain: d0 in [0, 3]")
    table = points.table_for(ok)
    assert table is not None
    with pytest.raises(ValueError):
        table.range(Dim(0) * (1 << 61) * 4)  # the expression, not the table, would overflow


def test_switched_off_means_isl_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    import verified_indexing.simplify.api as api

    monkeypatch.setattr(api, "TRUST_RULE_PROOFS", False)  # the whole-map proof (else: by the rules' theorems)
    m = parse_indexing_map("(d0, d1) -> ((d0 * 4 + d1) floordiv 4), domain: d0 in [0, 7], d1 in [0, 3]")
    on = simplify_with_report(m)
    assert on.verdict.engine == "enum" and on.verified
    prev = points.set_enabled(False)
    try:
        off = simplify_with_report(m)
    finally:
        points.set_enabled(prev)
    assert off.verdict.engine != "enum" and off.verified
    assert on.map == off.map == parse_indexing_map("(d0, d1) -> (d0), domain: d0 in [0, 7], d1 in [0, 3]")


def test_the_command_line_answers_with_isl(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import verified_indexing.simplify.api as api
    from verified_indexing.cli import main

    monkeypatch.setattr(api, "TRUST_RULE_PROOFS", False)  # the whole-map proof (else: by the rules' theorems)
    text = "(d0, d1) -> ((d0 * 4 + d1) floordiv 4), domain: d0 in [0, 7], d1 in [0, 3]"
    assert main(["simplify", "--json", "--no-timing", "-e", text]) == 0
    out = json.loads(capsys.readouterr().out)
    report = out["results"][0] if "results" in out else out
    assert report["verdict"]["engine"] == "isl"
    assert points.enabled()  # restored for the library after the command


# -- the rule index ------------------------------------------------------------------------------

_NODES = [Const(3), Dim(0), Sym(0), Dim(0) * 2 + Dim(1), FloorDiv(Dim(0) * 6 + 3, 3), Mod(Dim(0) * 6 + 3, 3),
          CeilDiv(Dim(0) * 6 + 3, 3), Min(Dim(0), Dim(0) + 2), Max(Dim(0), Dim(1)),
          Sum(((Mod(Dim(0), 4), 1), (FloorDiv(Dim(0), 4), 4)), 0)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_every_rule_declares_the_nodes_it_fires_on(rule: object) -> None:
    heads = rule_heads(rule)  # type: ignore[arg-type]
    assert heads, "every catalogue matcher declares its node classes"

    def wide(e: AffineExpr) -> Interval:
        return Interval(-100, 100)

    for node, rng in itertools.product(_NODES, [wide, lambda e: Interval(0, 1)]):
        proposed = list(rule.match(node, rng))  # type: ignore[attr-defined]
        if proposed:
            assert isinstance(node, heads), (node, heads)


@settings(max_examples=200)
@given(affine_exprs(2, 1, 0, max_leaves=6))
def test_no_matcher_proposes_outside_its_heads(e: AffineExpr) -> None:
    for node in e.walk():
        for rule in RULES:
            heads = rule_heads(rule)
            assert heads is not None
            if not isinstance(node, heads):
                assert not list(rule.match(node, lambda x: Interval(-50, 50))), (rule.name, str(node))


# -- found by the review of this change ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "(d0) -> (d0 floordiv 1180591620717411303424), domain: d0 in [0, 9]",
    "(d0, d1) -> (d0 * 1180591620717411303424 + d1), domain: d0 in [0, 0], d1 in [0, 5]",
    "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 3], d0 floordiv 1180591620717411303424 + d1 in [0, 2]",
])
def test_constants_beyond_int64_are_left_to_isl(text: str) -> None:
    m = parse_indexing_map(text)  # a divisor or coefficient of 2^70: numpy cannot hold it
    table = points.table_for(m)  # the domain's table (none when a constraint holds the constant)
    assert table is None if m.constraints else table is not None
    if table is not None:
        with pytest.raises(ValueError):
            table.range(m.results[0])  # the result holds the constant: declined when asked
    assert points.find_pointwise_difference(m, m)[1] is None  # the same map: never a difference
    rep = simplify_with_report(m)
    assert rep.verified and rep.map.state == "ok"
    for d, s, r in m.domain_points(1000):  # the plain evaluator: the same results on the same domain
        assert rep.map.contains(d, s, r) and rep.map.evaluate(d, s, r) == m.evaluate(d, s, r)


def test_isl_candidate_on_a_large_box_still_reaches_the_fixpoint() -> None:
    m = parse_indexing_map("(d0, d1) -> (((d0 mod 16) mod 3) * 7), domain: d0 in [15, 16], d1 in [0, 99999]")
    assert points.table_for(m) is None  # isl answers: the box has 200,000 points
    once = simplify_with_report(m).map
    assert simplify_with_report(once).map == once
    assert once.results == (Const(0),)  # ((15 or 16) mod 16) mod 3 = 0


def test_a_round_cut_short_by_the_step_cap_is_followed_by_another() -> None:
    # 2500 results of (d0 + 8k) mod 8: the first round stops at the rewriter's 2000 steps
    res = ", ".join(f"(d0 + {8 * k}) mod 8" for k in range(1, 2501))
    m = parse_indexing_map(f"(d0) -> ({res}), domain: d0 in [0, 7], d0 mod 2 in [0, 0]")
    r = simplify_with_report(m, verify=False, exact=True)
    assert r.rounds >= 2
    assert simplify_with_report(r.map, verify=False, exact=True).map == r.map
    assert all(x == Dim(0) for x in r.map.results)  # (d0 + 8k) mod 8 = d0 on [0, 7]


def test_variables_of_a_deep_tree_need_no_recursion() -> None:
    # found by review: the cached variables() recursed two frames per level (the parser caps text at 100)
    e: AffineExpr = Dim(0)
    for i in range(3000):
        e = (e + Sym(0)).mod(7) if i % 2 else e.floordiv(3)
    assert e.variables() == {("d", 0), ("s", 0)}


@settings(max_examples=60)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=2).filter(_ok))
def test_the_domain_steps_give_the_same_answers_from_points_and_from_isl(m: IndexingMap) -> None:
    # one function asks both engines the same exact questions (constraints._exact_domain_with)
    from verified_indexing.simplify.constraints import simplify_domain

    on = simplify_domain(m, lambda e: e)
    prev = points.set_enabled(False)
    try:
        off = simplify_domain(m, lambda e: e)
    finally:
        points.set_enabled(prev)
    assert on[0] == off[0], (m.format(True), on[0].format(True), off[0].format(True))
    assert [(s.rule, s.before, s.after) for s in on[1]] == [(s.rule, s.before, s.after) for s in off[1]]


@settings(max_examples=80)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=1, max_results=2).filter(_ok), st.data())
def test_results_on_one_domain_are_compared_on_its_table(a: IndexingMap, data: st.DataObject) -> None:
    from verified_indexing.engines import enumerate as en

    # the same domain, other results (a rewrite of the results): the table's answer is the enumeration engine's
    others = data.draw(st.lists(affine_exprs(a.num_dims, a.num_range_vars, a.num_rt_vars, max_leaves=4),
                                min_size=a.num_results, max_size=a.num_results))
    b = a.replace(results=[r if data.draw(st.booleans()) else o for r, o in zip(a.results, others)])
    decided, point = points.find_pointwise_difference(a, b)
    if not decided:
        return
    assert point == en.find_pointwise_difference(a, b)  # the first differing point, in the same order
    if point is not None:  # the plain evaluator confirms it
        assert a.contains(*point) and a.evaluate(*point) != b.evaluate(*point)


@settings(max_examples=120)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=2, max_results=2).filter(_ok), st.data())
def test_a_domain_inside_the_box_is_compared_on_the_outer_table(a: IndexingMap, data: st.DataObject) -> None:
    """b: a's variables with bounds tightened inside a's, some constraints kept, others added, some results
    changed (what the domain steps and the rewriter make of a). The oracles: the enumeration engine's first
    differing point over the hull, and the plain evaluator."""
    from verified_indexing.engines import enumerate as en

    kinds = {"d": a.dims, "s": a.range_vars, "rt": a.rt_vars}
    tightened = {}
    for kind, vs in kinds.items():
        out = []
        for v in vs:
            lo = data.draw(st.integers(v.bounds.lo, v.bounds.hi))
            hi = data.draw(st.integers(lo, v.bounds.hi))
            out.append(v.with_bounds(Interval(lo, hi)) if data.draw(st.booleans()) else v)
        tightened[kind] = out
    kept = [c for c in a.constraints if data.draw(st.booleans())]
    extra = data.draw(st.lists(affine_exprs(a.num_dims, a.num_range_vars, a.num_rt_vars, max_leaves=3),
                               max_size=1))
    cons = kept + [(e, Interval(-3, 6)) for e in extra]
    others = data.draw(st.lists(affine_exprs(a.num_dims, a.num_range_vars, a.num_rt_vars, max_leaves=4),
                                min_size=a.num_results, max_size=a.num_results))
    results = [r if data.draw(st.booleans()) else o for r, o in zip(a.results, others)]
    b = IndexingMap(tightened["d"], results, tightened["s"], tightened["rt"], cons)
    if b.state != "ok":
        return
    decided, point = points.find_pointwise_difference(a, b)
    if not decided:
        return
    assert point == en.find_pointwise_difference(a, b)  # the first differing point, in the same order
    if point is not None:  # the plain evaluator confirms it
        assert a.contains(*point) != b.contains(*point) or a.evaluate(*point) != b.evaluate(*point)


@settings(max_examples=40)
@given(indexing_maps(max_dims=3, max_syms=1, max_rts=1, max_constraints=2).filter(_ok))
def test_the_columns_are_every_box_point_in_the_enumeration_order(m: IndexingMap) -> None:
    # the oracle: itertools.product over the bounds (the box's order, the last variable fastest), not the
    # chunk code the columns replace
    table = points.table_for(m)
    assert table is not None
    kinds = [(k, i) for k, i, _ in m.variables()]
    expected = list(itertools.product(*[range(v.bounds.lo, v.bounds.hi + 1) for _, _, v in m.variables()]))
    got = list(zip(*[table.cols[k].tolist() for k in kinds])) if kinds else [()]  # (no variable: one point)
    assert got == expected
    chunk = next(table._box.chunks(True))  # the enumeration engine's own chunk: the same arrays
    assert all(table.cols[k].dtype == chunk[k].dtype and (table.cols[k] == chunk[k]).all() for k in kinds)
    mask = table.mask
    inside = [m.contains(p[:m.num_dims], p[m.num_dims:m.num_dims + m.num_range_vars],
                         p[m.num_dims + m.num_range_vars:]) for p in expected]
    assert (mask is None and all(inside)) or (mask is not None and mask.tolist() == inside)


def test_a_plain_box_rejected_at_its_corners_builds_no_column() -> None:
    m = parse_indexing_map("(d0, d1) -> (d0), domain: d0 in [0, 63], d1 in [0, 63]")
    table = points.DomainPoints(m)
    e = (Dim(0) * 3 + Dim(1)).mod(8)
    assert table.affine_fit(e) is None
    assert table._cols is None and table._masks is None  # decided in Python integers
    # the answer is right: no affine form equals it at every point (the evaluator at three points)
    assert e.evaluate([0, 0]) == 0 and e.evaluate([0, 1]) == 1 and e.evaluate([0, 8]) == 0


@settings(max_examples=40)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=2).filter(_ok), st.data())
def test_lazy_and_eager_tables_answer_alike_and_as_the_evaluator(m: IndexingMap, data: st.DataObject) -> None:
    e = data.draw(affine_exprs(m.num_dims, m.num_range_vars, m.num_rt_vars, max_leaves=5))
    answers = []
    for lazy, fast in ((True, True), (False, False)):
        prev = points.LAZY_TABLES, points.FAST_COLUMNS
        points.LAZY_TABLES, points.FAST_COLUMNS = lazy, fast
        try:
            table = points.DomainPoints(m)
            answers.append((table.range(e), table.affine_fit(e), table.is_empty()))
        finally:
            points.LAZY_TABLES, points.FAST_COLUMNS = prev
    assert answers[0] == answers[1]
    rng, fit, empty = answers[0]
    assert rng == _brute_range(m, e) and empty == (rng is None)
    if fit is not None:  # the fit equals e at every domain point (plain evaluator)
        assert all(fit.evaluate(d, s, r) == e.evaluate(d, s, r) for d, s, r in m.domain_points(100_000))
