"""The domain steps as rules proven once for all integers (``verified_indexing.simplify.domain_rules``,
``proofs/domain.py``), and maps whose every step is a proven rule or domain rule proven by those steps.

Oracles: plain-integer enumeration of each theorem on small values, enumeration of every domain point
of the maps, and the whole-map proof (``TRUST_RULE_PROOFS = False`` / ``TRUST_DOMAIN_PROOFS = False``),
which must give the same output map.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simplify_rule_proofs import points, same_output_with_and_without_the_rule_proofs

import verified_indexing.simplify.api as api
from verified_indexing import parse_indexing_map as P
from verified_indexing.expr import Dim
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval
from verified_indexing.proofs.domain import evaluate_domain_instance, prove_domain_rule
from verified_indexing.simplify import RULES, simplify_with_report
from verified_indexing.simplify.constraints import normalize_constraint
from verified_indexing.simplify.domain_rules import DOMAIN_RULES, STEP_THEOREMS, domain_rule
from verified_indexing.testing.strategies import indexing_maps


@pytest.mark.parametrize("rule", DOMAIN_RULES, ids=lambda r: r.name)
def test_every_domain_rule_is_proved_by_z3_and_holds_on_small_integers(rule: object) -> None:
    from verified_indexing.simplify.domain_rules import DomainRule

    assert isinstance(rule, DomainRule)
    v = prove_domain_rule(rule)
    assert v.proved, v
    # independent of z3: every instance with small constants and values, on plain integers
    checked = 0
    for consts in itertools.product(range(-5, 6), repeat=len(rule.constants)):
        k = dict(zip(rule.constants, consts))
        for x in range(-12, 13):
            inst = evaluate_domain_instance(rule, x, k)
            if inst is None or not inst[0]:
                continue
            checked += 1
            assert inst[1] == inst[2], (rule.name, k, x)
    assert checked > 0


def test_a_wrong_domain_rule_is_refuted_with_a_confirmed_counterexample() -> None:
    good = domain_rule("constraint_floordiv")
    from verified_indexing.simplify.domain_rules import Bounds, _after_bounds

    off_by_one: Bounds = lambda A, k: (k.l * k.d, k.u * k.d + k.d)  # noqa: E731
    bad = replace(good, bounds=off_by_one, after=_after_bounds(off_by_one))
    v = prove_domain_rule(bad)
    assert v.refuted and v.counterexample is not None
    vals = dict(v.counterexample.values)
    d, u, x = vals["d"], vals["u"], vals["x"]
    assert d > 0 and x == u * d + d and not (x // d <= u)  # plain Python confirms: x is after but not before


def test_every_trusted_domain_step_has_its_theorems() -> None:
    assert api._DOMAIN_STEPS == frozenset(STEP_THEOREMS)
    for theorems in STEP_THEOREMS.values():
        assert theorems and all(t in DOMAIN_RULES for t in theorems)
    # the steps without a general theorem are never trusted
    assert not {"constraint_mod_merge", "point_dims", "domain_empty"} & api._DOMAIN_STEPS


@settings(max_examples=60)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=2), st.integers(-5, 5), st.integers(-6, 6),
       st.integers(0, 8), st.sampled_from([None, 2, 3, -2]))
def test_normalize_constraint_keeps_the_set(coefs: list[int], k: int, lo: int, width: int, div: int | None) -> None:
    # each normalization step, applied to e in [lo, hi] over a small box, keeps the set of points
    e = sum((Dim(i) * c for i, c in enumerate(coefs)), start=Dim(0) * 0) + k
    if div is not None:
        e = e.floordiv(div)
    iv = Interval(lo, lo + width)
    box = list(itertools.product(range(-7, 8), repeat=len(coefs)))
    cur, civ = e, iv
    for _ in range(4):
        step = normalize_constraint(cur, civ)
        if step is None:
            break
        _, nxt, niv = step
        before = {p for p in box if civ.lo <= cur.evaluate(p, (), ()) <= civ.hi}
        after = {p for p in box if niv.lo <= nxt.evaluate(p, (), ()) <= niv.hi}
        assert before == after, (cur, civ, nxt, niv)
        cur, civ = nxt, niv


def test_a_map_with_domain_steps_is_proven_by_its_rules_and_agrees_with_enumeration() -> None:
    # before this change: the constraint rewritten (a domain step) sent the map to a whole-map proof
    m = P("(d0, d1) -> (d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14], d0 + 2 in [2, 6]")
    rep = simplify_with_report(m)
    assert {s.rule for s in rep.steps if s.where == "domain"} & api._DOMAIN_STEPS
    assert rep.verdict is not None and rep.verdict.proved and rep.verdict.engine == "rules"
    assert rep.map != m and points(rep.map) == points(m)


def test_a_domain_step_without_a_theorem_is_proven_whole() -> None:
    m = P("(d0) -> (d0 floordiv 4), domain: d0 in [0, 40], d0 mod 4 in [1, 1], d0 mod 6 in [1, 1]")
    rep = simplify_with_report(m)
    assert any(s.rule == "constraint_mod_merge" for s in rep.steps)
    assert rep.verdict is not None and rep.verdict.proved and rep.verdict.engine != "rules"
    assert points(rep.map) == points(m)


def test_the_domain_proof_can_be_switched_off() -> None:
    m = P("(d0, d1) -> (d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14], d0 + 2 in [2, 6]")
    old = api.TRUST_DOMAIN_PROOFS
    api.TRUST_DOMAIN_PROOFS = False
    try:
        rep = simplify_with_report(m)
    finally:
        api.TRUST_DOMAIN_PROOFS = old
    assert rep.verdict is not None and rep.verdict.proved and rep.verdict.engine != "rules"
    assert rep.map == simplify_with_report(m).map


def test_an_unrecorded_domain_change_is_never_trusted() -> None:
    m = P("(d0) -> (d0 mod 16), domain: d0 in [0, 20], d0 * 2 in [0, 20]")
    wrong = P("(d0) -> (d0), domain: d0 in [0, 12]")  # a different domain, no step saying how
    from verified_indexing.simplify import Step

    assert api._rule_instances_verdict(m, wrong, [Step("mod_nowrap", "result 0", "", "")], RULES) is None
    assert api._rule_instances_verdict(m, wrong, [Step("constraint_mod_merge", "domain", "", "")], RULES) is None


@settings(max_examples=40)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0, max_constraints=2, max_bound=5))
def test_random_constrained_maps_same_output_with_and_without_the_rule_proofs(m: IndexingMap) -> None:
    same_output_with_and_without_the_rule_proofs(m)


@pytest.mark.parametrize("text", [
    "(d0, d1) -> (d0 floordiv 4 + d1), domain: d0 in [0, 31], d1 in [0, 7], d0 floordiv 8 in [1, 2]",
    "(d0, d1) -> ((d0 * 3 + d1) mod 3), domain: d0 in [0, 9], d1 in [0, 2], d0 * 2 + d1 * 4 + 2 in [4, 12]",
    "(d0) -> (d0 mod 8), domain: d0 in [-9, 20], -d0 + 3 in [-4, 3]",
    "(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in [-5, 30]",
    "(d0, d1) -> (d1 floordiv 2), domain: d0 in [0, 5], d1 in [0, 11], d0 floordiv -2 in [-1, 0]",
])
def test_examples_with_domain_steps(text: str) -> None:
    same_output_with_and_without_the_rule_proofs(P(text))


@settings(max_examples=40)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_constraints=1, max_bound=4))
def test_leaf_shortcut_gives_the_same_rewrites(m: IndexingMap) -> None:
    # constants and variables decided without the matcher (engine.LEAF_SHORTCUT) against every node offered
    # to the matcher: the same results and steps, and the results equal the input's at every point
    from verified_indexing.simplify import engine
    from verified_indexing.simplify.engine import Rewriter

    outs = []
    for shortcut in (True, False):
        old = engine.LEAF_SHORTCUT
        engine.LEAF_SHORTCUT = shortcut
        try:
            rw = Rewriter(m, exact=True)
            outs.append(([rw.simplify(r) for r in m.results], [(s.rule, s.before, s.after) for s in rw.steps]))
        finally:
            engine.LEAF_SHORTCUT = old
    assert outs[0] == outs[1]
    assert points(m.replace(results=outs[0][0])) == points(m)


def test_leaf_shortcut_keeps_point_values() -> None:
    from verified_indexing.simplify.engine import Rewriter

    m = P("(d0, d1)[s0] -> (d0 + d1 * 3 + s0), domain: d0 in [2, 2], d1 in [0, 4], s0 in [-1, -1]")
    rw = Rewriter(m, exact=True)
    assert rw._leaves == 2
    out = rw.simplify(m.results[0])
    assert [s.rule for s in rw.steps].count("point_value") == 2
    assert points(m.replace(results=[out])) == points(m)


def test_a_rewriter_made_under_a_spent_budget_stops() -> None:
    # the rewriter reads the clock at each node only under a command budget: under one that is spent it
    # rewrites nothing and says so; with no budget it rewrites (the answer checked by enumeration)
    import time

    from verified_indexing.engines.deadline import command_budget
    from verified_indexing.simplify.engine import Rewriter

    m = P("(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [0, 15]")
    with command_budget(1e-6):
        time.sleep(0.002)
        rw = Rewriter(m, exact=True)
        assert rw.simplify(m.results[0]) == m.results[0] and rw.truncated
    rw = Rewriter(m, exact=True)
    out = rw.simplify(m.results[0])
    assert out != m.results[0] and not rw.truncated
    assert points(m.replace(results=[out])) == points(m)
