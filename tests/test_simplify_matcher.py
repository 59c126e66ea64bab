"""The matcher compiled from the catalogue (verified_indexing.simplify.matcher) against the rule-by-rule
matcher: the same rewrite on every catalogue rule's left-hand side instance and on random expressions.
The oracle is the old path (every rule for the node's class, in catalogue order), and enumeration for
the rewrites themselves."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verified_indexing.simplify.engine as engine
from verified_indexing import IndexingMap
from verified_indexing.expr import AffineExpr, CeilDiv, Dim, FloorDiv, Max, Min, Mod, Sum, Sym
from verified_indexing.simplify.matcher import compiled_candidates, matcher_source, pattern_of
from verified_indexing.simplify.rules import EXPR_ALGEBRA, RULES, Rule, rule_heads
from verified_indexing.testing.strategies import affine_exprs


def rewriter(domain: IndexingMap, compiled: bool, exact: bool = False) -> engine.Rewriter:
    old = engine.COMPILED_MATCHER
    engine.COMPILED_MATCHER = compiled
    try:
        return engine.Rewriter(domain, exact=exact)
    finally:
        engine.COMPILED_MATCHER = old


def both(e: AffineExpr, domain: IndexingMap, exact: bool = False) -> None:
    """The compiled and the rule-by-rule matcher: the same first rewrite of ``e`` (rule and result), the
    same simplified form and the same steps; and the simplified form agrees with ``e`` on the box."""
    new, old = rewriter(domain, True, exact), rewriter(domain, False, exact)
    assert new._step(e) == old._step(e)
    assert [s[0] for s in new._log] == [s[0] for s in old._log]
    new, old = rewriter(domain, True, exact), rewriter(domain, False, exact)
    out = new.simplify(e)
    assert out == old.simplify(e)
    assert [(s[0], s[2], s[3]) for s in new._log] == [(s[0], s[2], s[3]) for s in old._log]
    bounds = [range(v.bounds.lo, v.bounds.hi + 1) for v in domain.dims]
    syms = [range(v.bounds.lo, v.bounds.hi + 1) for v in domain.range_vars]
    for d in itertools.product(*bounds):
        for s in itertools.product(*syms):
            assert out.evaluate(d, s) == e.evaluate(d, s)


DOMAIN = IndexingMap([(0, 7), (-3, 5), (0, 11)], [Dim(0)], [(0, 3)])


def _values(rule: Rule, rng: random.Random) -> Iterator[tuple[dict[str, AffineExpr], dict[str, int]]]:
    """Bindings for ``rule``: pattern variables over a few small subterms, constants over small ints."""
    subterms: list[AffineExpr] = [Dim(0), Dim(1), Dim(0) * 3 + Dim(2), Dim(2).floordiv(4), Dim(0).mod(3) * 2 + Sym(0),
                                  Dim(1) * -2 + 5, Dim(0) * 4 + Dim(2) * 8 + 1, Dim(2).mod(6)]
    consts = [-4, -3, -2, 2, 3, 4, 6, 8]
    for _ in range(40):
        yield ({n: rng.choice(subterms) for n in rule.variables}, {n: rng.choice(consts) for n in rule.constants})


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rules_lhs_instances_same_rewrite(rule: Rule) -> None:
    rng = random.Random(rule.name)
    seen = 0
    for variables, constants in _values(rule, rng):
        try:
            lhs = rule.lhs(EXPR_ALGEBRA, SimpleNamespace(**variables), SimpleNamespace(**constants))
        except (ArithmeticError, ValueError):
            continue
        seen += 1
        both(lhs, DOMAIN)
    assert seen


def test_leaves_are_catalogue_ordered_and_within_declared_heads() -> None:
    fn = compiled_candidates(RULES)
    order = {r.name: i for i, r in enumerate(RULES)}
    samples: list[AffineExpr] = [Dim(0), Sym(0), Dim(0) * 2 + 1, Dim(0).floordiv(3), Dim(0).mod(3),
                                 Dim(0).ceildiv(3), Min(Dim(0), Dim(1)), Max(Dim(0), Dim(1)),
                                 (Dim(0).floordiv(2) + Dim(1)).floordiv(3), Dim(0).mod(6).floordiv(2),
                                 Dim(0).floordiv(2).floordiv(2), Dim(0).mod(6).mod(3),
                                 Dim(0).floordiv(4) * 4 + Dim(0).mod(4), Dim(0) - Dim(0).mod(4)]
    for e in samples:
        leaf = fn(e)
        assert leaf is not None
        idx = [order[r.name] for r in leaf]
        assert idx == sorted(idx)
        for r in leaf:
            heads = rule_heads(r)
            assert heads is None or isinstance(e, heads)
    assert "def candidates(e):" in matcher_source()
    assert str(pattern_of(RULES[5])) == "FloorDiv(FloorDiv(x))"  # div_div, read off its lhs


def test_a_linear_sum_is_offered_no_sum_rule() -> None:
    fn = compiled_candidates(RULES)
    assert fn(Dim(0) * 4 + Dim(1)) == ()  # no division term: recombine and the in-sum rules cannot match
    names = [r.name for r in fn(Dim(0).floordiv(4) * 4 + Dim(0).mod(4)) or ()]
    assert "recombine" in names and "div_reduce_coefficients_in_sum" in names


@st.composite
def cases(draw: st.DrawFn) -> tuple[AffineExpr, IndexingMap]:
    lo = [draw(st.integers(-4, 4)) for _ in range(2)]
    dims = [(a, a + draw(st.integers(0, 9))) for a in lo]
    e = draw(affine_exprs(2, 1, 0, max_leaves=7))
    return e, IndexingMap(dims, [Dim(0)], [(0, draw(st.integers(0, 4)))])


@settings(max_examples=150)
@given(cases(), st.booleans())
def test_random_expressions_same_rewrite(case: tuple[AffineExpr, IndexingMap], exact: bool) -> None:
    e, domain = case
    both(e, domain, exact)


def test_node_kinds_cover_every_expression_class() -> None:
    fn = compiled_candidates(RULES)
    for e in (Dim(0), Sym(0), Dim(0) + 1, FloorDiv(Dim(0), 2), Mod(Dim(0), 2), CeilDiv(Dim(0), 2),
              Min(Dim(0), Dim(1)), Max(Dim(0), Dim(1)), Sum(((Dim(0), 2),), 0)):
        assert fn(e) is not None
