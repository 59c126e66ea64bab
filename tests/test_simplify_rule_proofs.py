"""The per-map proof by rule instances (``verified_indexing.simplify.api._rule_instances_verdict``).

A candidate that is the input with only its results rewritten, every step an instance of a catalogue
rule (proven in general by ``proofs/``), is proven by those instances (engine ``rules``) instead of a
whole-map proof. Oracles: enumeration of every domain point, and the whole-map proof
(``TRUST_RULE_PROOFS = False``), which must give the same output map.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings

import verified_indexing.simplify.api as api
from verified_indexing import parse_indexing_map as P
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.simplify import RULES, Step, rule_by_name, simplify_with_report
from verified_indexing.testing.strategies import indexing_maps


def points(m: IndexingMap) -> dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], tuple[int, ...]]:
    """Every domain point with the map's results (the oracle)."""
    return {p: tuple(r.evaluate(*p) for r in m.results) for p in m.domain_points()}


def test_the_trusted_rules_are_the_catalogue_proven_in_proofs() -> None:
    # tests/test_proofs.py proves every rule of RULES (0 unknown, 0 refuted); the trusted set is that tuple
    assert set(api._CATALOGUE) == {r.name for r in RULES} and len(api._CATALOGUE) == len(RULES)
    assert all(api._CATALOGUE[r.name] is r for r in RULES)


def test_rule_only_result_is_proven_by_its_rules_and_agrees_with_enumeration() -> None:
    m = P("(d0, d1, d2) -> ((d0 * 16 + d1 * 4 + d2) floordiv 8, (d0 * 16 + d1 * 4 + d2) mod 8), "
          "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
    rep = simplify_with_report(m)
    assert rep.verdict is not None and rep.verdict.proved and rep.verdict.engine == "rules"
    assert {s.rule for s in rep.steps} <= set(api._CATALOGUE)
    assert rep.map != m and points(rep.map) == points(m)


def test_a_domain_step_without_a_general_theorem_is_proven_whole() -> None:
    # the mod constraints are merged (a domain step with no general theorem): the whole map is proven;
    # domain steps with theorems (proofs/domain.py) are covered in tests/test_simplify_domain_rules.py
    m = P("(d0, d1) -> (d1 mod 16), domain: d0 in [0, 30], d1 in [0, 14], d0 mod 2 in [1, 1], d0 mod 3 in [1, 1]")
    rep = simplify_with_report(m)
    assert any(s.rule == "constraint_mod_merge" for s in rep.steps)
    assert rep.verdict is not None and rep.verdict.proved and rep.verdict.engine != "rules"
    assert points(rep.map) == points(m)


def test_a_rule_outside_the_catalogue_is_never_trusted() -> None:
    # a false rule with a catalogue rule's name (a modified copy): its step is proven whole, refuted there,
    # and not applied (the rewrite-by-rewrite fallback rejects it)
    good = rule_by_name("mod_nowrap")
    bad = replace(good, rhs=lambda A, v, k: A.add(v.x, A.const(1 - k.c * k.k)))
    rules = tuple(bad if r is good else r for r in RULES)
    m = P("(d0) -> (d0 mod 16), domain: d0 in [0, 14]")
    assert api._rule_instances_verdict(m, m.replace(results=[P("(d0) -> (d0 + 1), domain: d0 in [0, 14]").results[0]]),
                                       [Step("mod_nowrap", "result 0", "", "")], rules) is None
    rep = simplify_with_report(m, rules=rules, isl_candidate=False)
    assert points(rep.map) == points(m)
    assert any(s.rule == "mod_nowrap" for s in rep.rejected)


@settings(max_examples=40)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0, max_constraints=1))
def test_random_maps_same_output_with_and_without_the_rule_proof(m: IndexingMap) -> None:
    same_output_with_and_without_the_rule_proofs(m)


def same_output_with_and_without_the_rule_proofs(m: IndexingMap) -> None:
    """Simplifying ``m`` gives the same map with the per-map proof by rule instances as with the
    whole-map proof (``TRUST_RULE_PROOFS = False``); a map proven by its rules has ``m``'s points."""
    rep = simplify_with_report(m, isl_candidate=False)
    old = api.TRUST_RULE_PROOFS
    api.TRUST_RULE_PROOFS = False
    try:
        whole = simplify_with_report(m, isl_candidate=False)
    finally:
        api.TRUST_RULE_PROOFS = old
    assert rep.map == whole.map
    if rep.verdict is not None and rep.verdict.engine == "rules":
        if rep.map.num_range_vars == m.num_range_vars:
            assert points(rep.map) == points(m)
        else:  # an unused range variable was removed afterwards (its own step, proven as a relation)
            assert {(p[0], v) for p, v in points(rep.map).items()} == {(p[0], v) for p, v in points(m).items()}


@pytest.mark.parametrize("text", [
    "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
    "(d0) -> ((d0 floordiv 4) floordiv 2, (d0 mod 8) mod 4, min(d0, 20)), domain: d0 in [0, 15]",
    "(d0, d1) -> ((d0 * 6 + d1) floordiv 3 - (d0 * 2), (d0 * 4 + d1 * 2) mod 8), domain: d0 in [-5, 5], d1 in [0, 2]",
])
def test_examples_proven_by_rules_agree_with_enumeration(text: str) -> None:
    m = P(text)
    rep = simplify_with_report(m)
    assert rep.verdict is not None and rep.verdict.proved
    assert points(rep.map) == points(m)
