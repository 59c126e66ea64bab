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

from proofs.theorems import prove_rule
from verified_indexing import parse_indexing_map
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
        return min(a, b)

    def max(self, a: Any, b: Any) -> int:
        return max(a, b)

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
            k = {c: rng.choice([rng.randint(-12, 12), rng.randint(1, 6)]) for c in rule.constants}
            ranges = {}
            for v in rule.variables:
                lo = rng.randint(-30, 30)
                ranges[v] = (lo, lo + rng.randint(0, 8))
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
