"""One integer semantics through every engine: floordiv / mod / ceildiv for values
and divisors of both signs, pinned against Python's own ``//`` and ``%``
(the reference: floor division, remainder with the divisor's sign)."""

from __future__ import annotations

import islpy as isl
import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap, Interval, dim, emax, emin
from verified_indexing.engines import Z3Encoder, exact_range, prove_expr_equal
from verified_indexing.engines.isl import pointwise_map
from verified_indexing.expr import AffineExpr

VALUES = range(-13, 14)
DIVISORS = [-7, -4, -3, -2, 2, 3, 5]


def _python(op: str, a: int, c: int) -> int:
    if op == "floordiv":
        return a // c
    if op == "mod":
        return a % c
    return -((-a) // c)  # ceildiv, written from the definition


def _expr(op: str, c: int) -> AffineExpr:
    d0 = dim(0)
    return {"floordiv": d0.floordiv(c), "mod": d0.mod(c), "ceildiv": d0.ceildiv(c)}[op]


@pytest.mark.parametrize("op", ["floordiv", "mod", "ceildiv"])
@pytest.mark.parametrize("c", DIVISORS)
def test_z3_encoding_matches_python(op: str, c: int) -> None:
    e = _expr(op, c)
    enc = Z3Encoder()
    xs = {a: enc.int_var(f"x{a}") for a in VALUES}
    terms = {a: enc.expr(e, {("d", 0): xs[a]}) for a in VALUES}
    s = enc.solver(timeout=5.0)
    s.add(*[xs[a] == a for a in VALUES], *enc.side_conditions)
    assert s.check() == z3.sat
    md = s.model()
    for a in VALUES:
        assert md.eval(terms[a]).as_long() == _python(op, a, c), (op, a, c)
    # and the values are forced: no other value is possible for any of them
    s.add(z3.Or(*[terms[a] != _python(op, a, c) for a in VALUES]))
    assert s.check() == z3.unsat


@pytest.mark.parametrize("op", ["floordiv", "mod", "ceildiv"])
@pytest.mark.parametrize("c", DIVISORS)
def test_isl_encoding_matches_python(op: str, c: int) -> None:
    m = IndexingMap([(VALUES.start, VALUES.stop - 1)], [_expr(op, c)])
    rel = pointwise_map(m)
    expected = isl.Map("{ " + "; ".join(f"[{a}] -> [{_python(op, a, c)}]" for a in VALUES) + " }")
    assert rel.is_equal(expected), (op, c, str(rel))


@pytest.mark.parametrize("op", ["floordiv", "mod", "ceildiv"])
@pytest.mark.parametrize("c", DIVISORS)
def test_evaluator_matches_python(op: str, c: int) -> None:
    e = _expr(op, c)
    assert [e.evaluate([a]) for a in VALUES] == [_python(op, a, c) for a in VALUES]


def test_mod_sign_follows_divisor() -> None:
    """The contract's own examples: -7 mod 3 = 2, 7 mod -3 = -2 (through isl's exact range)."""
    m = IndexingMap([(-7, -7)], [])
    assert exact_range(dim(0).mod(3), m) == Interval(2, 2)
    m2 = IndexingMap([(7, 7)], [])
    assert exact_range(dim(0).mod(-3), m2) == Interval(-2, -2)


def test_symbolic_divisor_theorem() -> None:
    """For all x and c != 0: (x floordiv c) * c + x mod c = x, with c a z3 variable."""
    enc = Z3Encoder()
    x, c = enc.int_var("x"), enc.int_var("c")
    claim = enc.floordiv(x, c) * c + enc.mod(x, c) == x
    s = enc.solver(timeout=5.0)
    s.add(c != 0, *enc.side_conditions, z3.Not(claim))
    assert s.check() == z3.unsat


def test_symbolic_divisor_matches_constant_divisor() -> None:
    """The symbolic-divisor encoding agrees with Python for fixed values of both signs."""
    for a in (-9, -1, 0, 4, 11):
        for c in (-4, -1, 1, 3):
            enc = Z3Encoder()
            x, k = enc.int_var("x"), enc.int_var("k")
            q, r, cd = enc.floordiv(x, k), enc.mod(x, k), enc.ceildiv(x, k)
            s = enc.solver(timeout=5.0)
            s.add(x == a, k == c, *enc.side_conditions)
            assert s.check() == z3.sat
            md = s.model()
            assert (md.eval(q).as_long(), md.eval(r).as_long(), md.eval(cd).as_long()) == (
                a // c,
                a % c,
                -((-a) // c),
            )


def test_symbolic_false_rule_is_refuted() -> None:
    """A false 'rule' (x mod c < c for every nonzero c) is refuted: negative c."""
    enc = Z3Encoder()
    x, c = enc.int_var("x"), enc.int_var("c")
    claim = enc.mod(x, c) >= 0  # build terms first: they add the side conditions
    s = enc.solver(timeout=5.0)
    s.add(c != 0, *enc.side_conditions, z3.Not(claim))
    assert s.check() == z3.sat
    md = s.model()
    assert md.eval(c).as_long() < 0
    assert md.eval(x).as_long() % md.eval(c).as_long() < 0


def test_min_max_encodings() -> None:
    d0, d1 = dim(0), dim(1)
    dom = IndexingMap([(-3, 3), (-3, 3)], [])
    for engine in ("isl", "z3", "enum"):
        assert prove_expr_equal(emin(d0, d1) + emax(d0, d1), d0 + d1, dom, engine=engine).proved
        assert prove_expr_equal(emin(d0, d1), d0, dom, engine=engine).refuted


@settings(max_examples=150)
@given(
    a_lo=st.integers(-40, 40),
    width=st.integers(0, 30),
    c=st.integers(-9, 9).filter(lambda v: v != 0),
    k=st.integers(-3, 3),
)
def test_exact_range_negative_bounds(a_lo: int, width: int, c: int, k: int) -> None:
    """isl's exact range of k*d0 + d0 floordiv c + d0 mod c equals brute force."""
    e = k * dim(0) + dim(0).floordiv(c) + dim(0).mod(c)
    m = IndexingMap([(a_lo, a_lo + width)], [])
    values = [e.evaluate([a]) for a in range(a_lo, a_lo + width + 1)]
    assert exact_range(e, m) == Interval(min(values), max(values))


def test_is_bijective_onto_accepts_lo_hi_pairs() -> None:
    from verified_indexing import parse_indexing_map
    from verified_indexing.engines import is_bijective_onto

    m = parse_indexing_map("(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert is_bijective_onto(m, [(0, 3), (0, 7)], engine="isl").proved
    v = is_bijective_onto(m, [(0, 3), (0, 8)], engine="isl")
    assert v.refuted and v.counterexample is not None
