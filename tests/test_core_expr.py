"""AffineExpr and Interval: semantics against an independent reference, folding, errors."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verified_indexing import (
    Interval,
    SemiAffineError,
    ZeroDivisorError,
    ceil_div,
    const,
    dim,
    emin,
    floor_div,
    floor_mod,
    parse_expr,
    range_of,
    sym,
)
from verified_indexing.expr import Sum
from verified_indexing.testing.strategies import build, ref_eval, ref_exprs

d0, d1, s0 = dim(0), dim(1), sym(0)


@pytest.mark.parametrize("a", [-7, -6, -1, 0, 1, 5, 6, 7, 100, -100])
@pytest.mark.parametrize("b", [-7, -3, -2, -1, 1, 2, 3, 7])
def test_division_semantics_pinned_to_exact_rationals(a: int, b: int) -> None:
    q = math.floor(Fraction(a, b))
    assert floor_div(a, b) == q
    assert floor_mod(a, b) == a - b * q
    assert ceil_div(a, b) == math.ceil(Fraction(a, b))
    assert (d0.floordiv(b)).evaluate([a]) == q
    assert (d0.mod(b)).evaluate([a]) == a - b * q
    assert (d0.ceildiv(b)).evaluate([a]) == math.ceil(Fraction(a, b))


def test_documented_sign_examples() -> None:
    assert floor_mod(-7, 3) == 2
    assert floor_mod(7, -3) == -2
    assert floor_div(15, 2) // -7 == -1  # (15 floordiv 2) floordiv -7
    assert floor_div(15, -14) == -2


@given(ref_exprs(2, 1, 1), st.lists(st.integers(-50, 50), min_size=4, max_size=4))
def test_evaluate_matches_reference(node: tuple[object, ...], vals: list[int]) -> None:
    e = build(node)
    dims, syms, rts = tuple(vals[:2]), (vals[2],), (vals[3],)
    assert e.evaluate(dims, syms, rts) == ref_eval(node, dims, syms, rts)


@given(ref_exprs(2, 1, 0), st.lists(st.integers(-30, 30), min_size=3, max_size=3))
def test_printed_expression_parses_to_equal_value(node: tuple[object, ...], vals: list[int]) -> None:
    e = build(node)
    back = parse_expr(str(e))
    assert back == e
    assert back.evaluate(vals[:2], vals[2:]) == ref_eval(node, tuple(vals[:2]), tuple(vals[2:]))


def test_construction_folds_only_identities() -> None:
    assert d0 + 0 == d0
    assert d0 * 1 == d0
    assert d0 * 0 == const(0)
    assert d0.floordiv(1) == d0
    assert d0.mod(1) == const(0)
    assert d0.floordiv(-1) == -d0
    assert const(7).floordiv(-2) == const(-4)
    assert (d0 + d1) - d1 == d0
    assert (d0 + d1) * 2 == d0 * 2 + d1 * 2
    assert emin(d0, d0) == d0
    assert emin(d0, d1) == emin(d1, d0)
    # Never folded without bounds:
    assert d0.mod(4) != d0
    assert isinstance((d0 * 4 + 1).floordiv(4), type(d0.floordiv(4)))


def test_canonical_sums_print_equally() -> None:
    a = d1.mod(2) * 4 + dim(2)
    b = dim(2) + 4 * d1.mod(2)
    assert a == b and hash(a) == hash(b)
    assert str(a) == "d2 + (d1 mod 2) * 4"
    assert str(d0 * 2 + d1.floordiv(2)) == "d0 * 2 + d1 floordiv 2"
    assert str(16 - d1) == "-d1 + 16"
    assert str(-(d0.floordiv(3)) + 9) == "-(d0 floordiv 3) + 9"
    assert str(d0 - 2 * d1 - 5) == "d0 - d1 * 2 - 5"
    assert isinstance(d0 + d1, Sum)


def test_semi_affine_and_zero_divisor_are_rejected() -> None:
    with pytest.raises(SemiAffineError):
        _ = d0 * d1
    with pytest.raises(SemiAffineError):
        _ = d0.floordiv(s0)
    with pytest.raises(ZeroDivisorError):
        _ = d0.mod(0)
    with pytest.raises(ZeroDivisorError):
        _ = d0.floordiv(0)


def test_expressions_are_immutable_and_hashable() -> None:
    e = d0 + 1
    with pytest.raises(AttributeError):
        e.constant = 5  # type: ignore[misc]
    assert len({d0 + 1, 1 + d0, d0 + 1}) == 1


@given(
    ref_exprs(2, 0, 0, max_leaves=6),
    st.tuples(st.integers(-8, 8), st.integers(0, 6)),
    st.tuples(st.integers(-8, 8), st.integers(0, 6)),
)
def test_interval_evaluation_is_sound(node: tuple[object, ...], b0: tuple[int, int], b1: tuple[int, int]) -> None:
    e = build(node)
    i0, i1 = Interval(b0[0], b0[0] + b0[1]), Interval(b1[0], b1[0] + b1[1])
    iv = range_of(e, [i0, i1])
    values = {ref_eval(node, (x, y)) for x in i0 for y in i1}
    assert min(values) >= iv.lo and max(values) <= iv.hi


@given(st.integers(-20, 20), st.integers(0, 15), st.sampled_from([-7, -3, -1, 1, 2, 5, 16]))
def test_interval_division_is_exact(lo: int, width: int, c: int) -> None:
    iv = Interval(lo, lo + width)
    for fn, op in ((Interval.floordiv, floor_div), (Interval.ceildiv, ceil_div)):
        values = {op(x, c) for x in iv}
        assert fn(iv, c) == Interval(min(values), max(values))
    mods = {floor_mod(x, c) for x in iv}
    got = iv.mod(c)
    assert got.lo <= min(mods) and max(mods) <= got.hi
    if iv.lo // c == iv.hi // c:  # one period: exact
        assert got == Interval(min(mods), max(mods))


def test_interval_basics() -> None:
    assert Interval(3, 1).is_empty()
    assert Interval(0, 9).intersect(Interval(5, 20)) == Interval(5, 9)
    assert Interval(-2, 3) * Interval(-4, 1) == Interval(-12, 8)
    assert Interval(0, 9).size() == 10
    assert Interval(53, 71).mod(42) == Interval(11, 29)
    assert Interval(40, 45).mod(42) == Interval(0, 41)
    assert Interval(40, 45).mod(-42) == Interval(-41, 0)
    assert Interval(0, 6).min(Interval(3, 10)) == Interval(0, 6)
    assert str(Interval(-1, 5)) == "[-1, 5]"


@given(ref_exprs(2, 1, 0), st.lists(st.integers(-30, 30), min_size=3, max_size=3))
def test_mlir_export_has_positive_divisors_and_the_same_values(node: tuple[object, ...], vals: list[int]) -> None:
    from verified_indexing.expr import _BinaryDiv
    from verified_indexing.syntax.printer import positive_divisors

    e = positive_divisors(build(node))
    assert all(x.divisor > 0 for x in e.walk() if isinstance(x, _BinaryDiv))
    assert e.evaluate(vals[:2], vals[2:]) == ref_eval(node, tuple(vals[:2]), tuple(vals[2:]))
