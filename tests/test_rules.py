"""The rule catalogue against independent oracles, and proof discipline with a
planted wrong rule."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import parse_indexing_map
from verified_indexing.expr import Const
from verified_indexing.proofs.theorems import prove_rule
from verified_indexing.simplify import RULES, rule_by_name, simplify_with_report
from verified_indexing.simplify.rules import Algebra


class FractionAlgebra(Algebra):
    """An independent integer semantics: exact rationals and math.floor."""

    def lit(self, value: int) -> int:
        return value

    def const(self, k: Any) -> int:
        return int(k)

    def add(self, *terms: Any) -> int:
        return sum(terms)

    def scale(self, term: Any, k: Any) -> int:
        return int(term) * int(k)

    def fdiv(self, term: Any, k: Any) -> int:
        return math.floor(Fraction(term, k))

    def mod(self, term: Any, k: Any) -> int:
        return int(term) - int(k) * math.floor(Fraction(term, k))

    def min(self, a: Any, b: Any) -> int:
        return int(min(a, b))

    def max(self, a: Any, b: Any) -> int:
        return int(max(a, b))

    def all(self, *conds: Any) -> bool:
        return all(conds)

    def any(self, *conds: Any) -> bool:
        return any(conds)


FA = FractionAlgebra()


def test_every_rule_holds_on_random_instances() -> None:
    # Random constants and ranges; whenever the side condition holds, both sides
    # agree on every value of the range (independent rational semantics).
    rng = random.Random(4)
    for rule in RULES:
        hits = 0
        for _ in range(4000):
            ranges = {}
            for v in rule.variables:
                lo = rng.randint(-30, 30)
                ranges[v] = (lo, lo + rng.choice([0, rng.randint(0, 8)]))
            # a constant is sometimes a range's end (conditions such as "x in [k, k]")
            ends = [e for r in ranges.values() for e in r] or [0]
            k = {c: rng.choice([rng.randint(-12, 12), rng.randint(1, 6), rng.choice(ends)]) for c in rule.constants}
            lo_ns = SimpleNamespace(**{v: r[0] for v, r in ranges.items()})
            hi_ns = SimpleNamespace(**{v: r[1] for v, r in ranges.items()})
            if not rule.condition(FA, SimpleNamespace(**k), lo_ns, hi_ns):
                continue
            hits += 1
            for _ in range(5):
                vals = {v: rng.randint(*ranges[v]) for v in rule.variables}
                ns, ks = SimpleNamespace(**vals), SimpleNamespace(**k)
                assert rule.lhs(FA, ns, ks) == rule.rhs(FA, ns, ks), (rule.name, k, vals)
        assert hits > 20, rule.name  # the test exercised the rule


def test_catalogue_names_unique_and_documented() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    with open(Path(__file__).resolve().parent.parent / "docs" / "rules.md", encoding="utf-8") as f:
        doc = f.read()
    for r in RULES:
        assert r.name in doc


def test_planted_wrong_side_condition_is_refuted() -> None:
    # (x floordiv a) floordiv b -> x floordiv (a*b) is false for b < 0.
    bad = replace(rule_by_name("div_div"), name="div_div_bad", condition=lambda A, k, lo, hi: A.all(k.a > 0, k.b != 0))
    v = prove_rule(bad, timeout=10.0)
    assert v.refuted and v.counterexample is not None
    vals = dict(v.counterexample.values)
    a, b, x = vals["a"], vals["b"], vals["x"]
    # Confirm with plain Python floor division (the oracle).
    assert (x // a) // b != x // (a * b)
    assert v.counterexample.source == ((x // a) // b,)


def test_planted_wrong_range_condition_is_refuted() -> None:
    bad = replace(rule_by_name("mod_gcd_factor"), name="gcd_bad",
                  condition=lambda A, k, lo, hi: A.all(k.g > 0, k.k > 0, lo.y >= 0, hi.y <= k.g))
    v = prove_rule(bad, timeout=10.0)
    assert v.refuted and v.counterexample is not None


def test_engine_never_applies_a_wrong_rule() -> None:
    bad = replace(rule_by_name("div_div"), name="div_div_bad", condition=lambda A, k, lo, hi: A.all(k.a > 0, k.b != 0))
    rules = (bad, *RULES)
    m = parse_indexing_map("(d0) -> ((d0 floordiv 2) floordiv -7), domain: d0 in [0, 20]")
    unverified = simplify_with_report(m, verify=False, rules=rules).map
    assert any(unverified.evaluate(p[0]) != m.evaluate(p[0]) for p in m.domain_points())  # the bug is real
    rep = simplify_with_report(m, rules=rules)
    assert rep.verified
    for p in m.domain_points():
        assert rep.map.evaluate(p[0]) == m.evaluate(p[0])
    assert any(s.verdict is not None and s.verdict.refuted for s in rep.rejected)


# -- the rules added in round 2: applied by the engine, checked by enumeration --------
def _points(m: Any) -> dict[Any, Any]:
    return {p: tuple(r.evaluate(*p) for r in m.results) for p in m.domain_points()}


NEW_RULE_CASES = [
    # (input, expected output, a rule that must appear in the steps)
    ("(d0, d1) -> ((d0 * 4 + d1 * 8) mod 16), domain: d0 in [-20, 20], d1 in [-9, 9]",
     "(d0, d1) -> (((d0 + d1 * 2) mod 4) * 4), domain: d0 in [-20, 20], d1 in [-9, 9]", "mod_scale"),
    ("(d0, d1) -> ((d0 * 2 + d1 * 6) floordiv -4), domain: d0 in [-20, 20], d1 in [-5, 5]",
     "(d0, d1) -> ((d0 + d1 * 3) floordiv -2), domain: d0 in [-20, 20], d1 in [-5, 5]", "div_scale"),
    ("(d0) -> (((d0 mod 8) * 4) mod 16), domain: d0 in [-40, 40]",
     "(d0) -> ((d0 mod 4) * 4), domain: d0 in [-40, 40]", "mod_scale"),
    ("(d0) -> ((d0 * 8 + 5) ceildiv 4), domain: d0 in [-20, 20]",
     "(d0) -> (d0 * 2 + 2), domain: d0 in [-20, 20]", "cdiv_pull_multiples"),
    ("(d0) -> (d0 ceildiv -8), domain: d0 in [-24, -17]",
     "(d0) -> (3), domain: d0 in [-24, -17]", "cdiv_point"),
    ("(d0, d1) -> ((d0 * 3 + d1 * 6) ceildiv 9), domain: d0 in [-20, 20], d1 in [-5, 5]",
     "(d0, d1) -> ((d0 + d1 * 2) ceildiv 3), domain: d0 in [-20, 20], d1 in [-5, 5]", "cdiv_scale"),
    ("(d0, d1) -> (min(d0, d0 + d1)), domain: d0 in [-5, 5], d1 in [0, 3]",
     "(d0, d1) -> (d0), domain: d0 in [-5, 5], d1 in [0, 3]", "min_offset"),
    ("(d0, d1) -> (max(d0 + 2, d0 - d1)), domain: d0 in [-5, 5], d1 in [0, 3]",
     "(d0, d1) -> (d0 + 2), domain: d0 in [-5, 5], d1 in [0, 3]", "max_offset"),
    # coefficients reduced modulo the divisor, negative divisors made positive, one-value subterms
    ("(d0, d1) -> ((d1 * 3) mod 2, d0), domain: d0 in [-20, 20], d1 in [-9, 9]",
     "(d0, d1) -> (d1 mod 2, d0), domain: d0 in [-20, 20], d1 in [-9, 9]", "mod_reduce_coefficients"),
    ("(d0) -> ((d0 * 4 + 1) floordiv 3), domain: d0 in [-20, 20]",
     "(d0) -> (d0 + (d0 + 1) floordiv 3), domain: d0 in [-20, 20]", "div_reduce_coefficients"),
    ("(d0) -> ((d0 * 5) ceildiv 4), domain: d0 in [-20, 20]",
     "(d0) -> (d0 + d0 ceildiv 4), domain: d0 in [-20, 20]", "cdiv_reduce_coefficients"),
    ("(d0) -> ((d0 * 3 - 1) mod -2), domain: d0 in [-20, 20]",
     "(d0) -> (d0 mod 2 - 1), domain: d0 in [-20, 20]", "mod_negative_divisor"),
    ("(d0) -> ((-d0 + 2) floordiv -4), domain: d0 in [-20, 20]",
     "(d0) -> ((d0 + 2) floordiv 4 - 1), domain: d0 in [-20, 20]", "div_negative_divisor"),
    ("(d0) -> ((-d0 + 2) ceildiv -4), domain: d0 in [-20, 20]",
     "(d0) -> ((d0 + 2) ceildiv 4 - 1), domain: d0 in [-20, 20]", "cdiv_negative_divisor"),
    ("(d0, d1) -> (d0 * 4 + d1, d1 + 2), domain: d0 in [-3, 3], d1 in [2, 2]",
     "(d0, d1) -> (d0 * 4 + 2, 4), domain: d0 in [-3, 3], d1 in [2, 2]", "point_value"),
    # the factor 3 out of a mod term of a sum (41 = 3*13 + 2), the quotient's coefficients reduced mod 8
    ("(d0, d1) -> (-((d0 * -21 - d1 * 3 + 41) mod 24) + 23), domain: d0 in [0, 1], d1 in [0, 6]",
     "(d0, d1) -> (((d0 + d1 * 7 + 5) mod 8) * -3 + 21), domain: d0 in [0, 1], d1 in [0, 6]",
     "mod_gcd_scale_in_sum"),
]


def test_new_rules_applied_and_checked_by_enumeration() -> None:
    for src, want, rule in NEW_RULE_CASES:
        m = parse_indexing_map(src)
        rep = simplify_with_report(m, isl_candidate=False)
        assert rep.map == parse_indexing_map(want), (src, rep.map.format(True))
        assert rule in {s.rule.rstrip("+") for s in rep.steps}, (src, [s.rule for s in rep.steps])
        assert _points(rep.map) == _points(m)  # the enumeration oracle
        # The rules alone (no proof) are already right.
        assert _points(simplify_with_report(m, verify=False).map) == _points(m)


def test_new_rules_do_not_fire_outside_their_conditions() -> None:
    # min(d0, d0 + d1) with d1 of both signs: neither operand is always smaller.
    m = parse_indexing_map("(d0, d1) -> (min(d0, d0 + d1)), domain: d0 in [-5, 5], d1 in [-1, 3]")
    assert simplify_with_report(m, isl_candidate=False).map == m
    # d2 (in [0, 6]) is in what no factor g of 24 divides, so that part never lies in [0, g - 1]
    m = parse_indexing_map("(d0, d2) -> (-((d0 * -21 + d2 + 41) mod 24) + 23), domain: d0 in [0, 1], d2 in [0, 6]")
    assert "mod_gcd_scale_in_sum" not in {s.rule for s in simplify_with_report(m, isl_candidate=False).steps}
    # x ceildiv -8 spans two periods on [-24, -16]: no point rule.
    m = parse_indexing_map("(d0) -> (d0 ceildiv -8), domain: d0 in [-24, -16]")
    out = simplify_with_report(m, isl_candidate=False).map
    assert _points(out) == _points(m) and len(set(_points(m).values())) == 2


@st.composite
def _scaled_maps(draw: st.DrawFn) -> Any:
    """Maps that exercise the round-2 rules: ceildiv, common factors, min/max of
    operands that differ by a small term, negative divisors and bounds."""
    from verified_indexing import IndexingMap
    from verified_indexing.expr import Dim, emax, emin

    lo0, lo1 = draw(st.integers(-8, 4)), draw(st.integers(-4, 4))
    dims = [(lo0, lo0 + draw(st.integers(0, 10))), (lo1, lo1 + draw(st.integers(0, 4)))]
    g = draw(st.sampled_from([2, 3, 4]))
    a, b = draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
    base = Dim(0) * (a * g) + Dim(1) * (b * g) + draw(st.integers(-2, 2)) * g
    k = draw(st.sampled_from([1, 2, 3, -2, -3]))
    op = draw(st.sampled_from(["floordiv", "ceildiv", "mod"]))
    e1 = {"floordiv": base.floordiv, "ceildiv": base.ceildiv, "mod": base.mod}[op](g * k)
    off = Dim(1) + draw(st.integers(-2, 2)) if draw(st.booleans()) else Const(draw(st.integers(-3, 3)))
    e2 = emin(Dim(0), Dim(0) + off) if draw(st.booleans()) else emax(Dim(0), Dim(0) + off)
    e3 = (Dim(0) * draw(st.sampled_from([1, 2, -1])) + draw(st.integers(-9, 9))).ceildiv(draw(st.sampled_from([2, 4, -4])))
    return IndexingMap(dims, [e1, e2, e3])


@settings(max_examples=120)
@given(_scaled_maps())
def test_random_scaled_maps_verified_and_enumeration(m: Any) -> None:
    from verified_indexing.simplify import cost, map_cost, simplify

    rep = simplify_with_report(m)
    assert rep.verified
    assert _points(rep.map) == _points(m)
    assert map_cost(rep.map) <= map_cost(m)
    for before, after in zip(m.results, rep.map.results):
        assert cost(after) <= cost(before)
    assert simplify(rep.map) == rep.map
    assert _points(simplify_with_report(m, verify=False).map) == _points(m)


RECOMBINATION_VARIANTS = [
    # nested digits recombine (scaled forms), with negative values in the domain
    ("(d0) -> (((d0 floordiv 2) mod 4) * 2 + d0 mod 2), domain: d0 in [-50, 100]",
     "(d0) -> (d0 mod 8), domain: d0 in [-50, 100]"),
    ("(d0) -> ((d0 floordiv 8) * 8 + ((d0 floordiv 2) mod 4) * 2 + d0 mod 2), domain: d0 in [-50, 100]",
     "(d0) -> (d0), domain: d0 in [-50, 100]"),
    ("(d0) -> ((d0 floordiv 8) * 4 + (d0 mod 8) floordiv 2), domain: d0 in [-50, 100]",
     "(d0) -> (d0 floordiv 2), domain: d0 in [-50, 100]"),
    # subtraction forms
    ("(d0) -> (d0 - d0 mod 4), domain: d0 in [-50, 100]",
     "(d0) -> ((d0 floordiv 4) * 4), domain: d0 in [-50, 100]"),
    ("(d0) -> ((d0 floordiv 4) * 4 - d0), domain: d0 in [-50, 100]",
     "(d0) -> (-(d0 mod 4)), domain: d0 in [-50, 100]"),
    # min/max against constants and ordered operands
    ("(d0) -> (max(d0, 0), min(d0, 100)), domain: d0 in [0, 10]",
     "(d0) -> (d0, d0), domain: d0 in [0, 10]"),
    ("(d0, d1) -> (min(d0 * 2, d1 * 2 + 1)), domain: d0 in [0, 10], d1 in [10, 20]",
     "(d0, d1) -> (d0 * 2), domain: d0 in [0, 10], d1 in [10, 20]"),
]


def test_recombination_variants_by_rules_alone() -> None:
    for src, want in RECOMBINATION_VARIANTS:
        m = parse_indexing_map(src)
        for kwargs in ({"verify": False}, {"isl_candidate": False}):
            out = simplify_with_report(m, **kwargs).map  # type: ignore[arg-type]
            assert out == parse_indexing_map(want), (src, kwargs, out.format(True))
            assert _points(out) == _points(m)
