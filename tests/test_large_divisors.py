"""Divisors of any size (issue 28 item 7): the simplifier's gcd splits try every divisor of the
modulus (from its factorization, no table capped at 2^16) and the gcds of the modulus with the
dividend's coefficients, so maps over 131072- and 262144-element shapes simplify. Each result is
proven equal to the input by isl (assert_maps_equal) and checked by the plain evaluator on the
domain's corners and random points; the divisor list against brute force."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.simplify import simplify
from verified_indexing.simplify.rules import _divisors, _split_divisors
from verified_indexing.testing import assert_maps_equal


def _brute(n: int) -> tuple[int, ...]:
    n = abs(n)
    return tuple(sorted((d for d in range(2, n + 1) if n % d == 0), reverse=True))


@given(st.integers(-5000, 5000))
def test_divisors_are_every_divisor(n: int) -> None:
    assert _divisors(n) == _brute(n)


@pytest.mark.parametrize("n", [1 << 17, 1 << 18, 3 << 17, 131072 * 5 * 7, 65537, 65537 * 2, 1 << 20])
def test_divisors_above_two_to_the_sixteen(n: int) -> None:
    got = _divisors(n)
    assert got == _brute(n)
    assert n in got and (n == 65537 or n // 2 in got)


def test_divisors_of_a_cofactor_beyond_trial_division_still_come_from_the_coefficients() -> None:
    from verified_indexing.expr import Dim

    big = 1_048_583 * 1_048_589  # two primes above the trial-division limit: the cofactor is taken whole
    assert 1_048_583 not in _divisors(big)
    s = Dim(0) * 1_048_583 + Dim(1)
    assert 1_048_583 in _split_divisors(s, big)  # type: ignore[arg-type]


def _sampled_equal(a: IndexingMap, b: IndexingMap, samples: int = 300) -> None:
    """The plain evaluator on the corners of the domain and on random points of it."""
    bounds = [(v.bounds.lo, v.bounds.hi) for v in a.dims]
    rng = random.Random(0)
    points = [[lo for lo, _ in bounds], [hi for _, hi in bounds]]
    points += [[rng.randint(lo, hi) for lo, hi in bounds] for _ in range(samples)]
    for p in points:
        assert a.evaluate(p) == b.evaluate(p), p


@pytest.mark.parametrize(("text", "expected"), [
    # a [4, 131072] tensor read as 262144-element rows
    ("(d0, d1) -> ((d0 * 131072 + d1) mod 262144), domain: d0 in [0, 3], d1 in [0, 131071]",
     "(d0, d1) -> (d1 + (d0 mod 2) * 131072), domain: d0 in [0, 3], d1 in [0, 131071]"),
    # an [8, 262144] tensor: the 524288-element row and the 131072-element column block
    ("(d0, d1) -> ((d0 * 262144 + d1) mod 524288, (d0 * 262144 + d1) floordiv 131072), "
     "domain: d0 in [0, 7], d1 in [0, 262143]",
     "(d0, d1) -> (d1 + (d0 mod 2) * 262144, d0 * 2 + d1 floordiv 131072), domain: d0 in [0, 7], d1 in [0, 262143]"),
    # a gcd that is not a power of two: 3 * 2^17
    ("(d0, d1) -> ((d0 * 393216 + d1) mod 786432), domain: d0 in [0, 5], d1 in [0, 393215]",
     "(d0, d1) -> (d1 + (d0 mod 2) * 393216), domain: d0 in [0, 5], d1 in [0, 393215]"),
])
def test_maps_over_large_shapes_simplify(text: str, expected: str) -> None:
    m = parse_indexing_map(text)
    out = simplify(m)
    assert out == parse_indexing_map(expected), out.format(one_line=True)
    assert_maps_equal(out, m, engine="isl")
    _sampled_equal(m, out)
