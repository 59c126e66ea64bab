"""isl's integer search ignores the operation limit: large divisors run under a wall-clock deadline instead
(a regression test for a hang found in review: ``d0 + d0 mod 2^33`` over ``[60, 10^12 + 60]``)."""

from __future__ import annotations

import pytest

from verified_indexing import Interval, parse_expr, parse_indexing_map
from verified_indexing.engines import IslLimitExceeded, exact_range, prove_equal
from verified_indexing.engines.deadline import largest_divisor, run_bounded
from verified_indexing.simplify import simplify


def test_pathological_exact_range_is_bounded_not_hung() -> None:
    m = parse_indexing_map("(d0) -> (d0), domain: d0 in [60, 1000000000060]")
    e = parse_expr("d0 + d0 mod 8589934592")
    with pytest.raises(IslLimitExceeded, match="did not finish"):
        exact_range(e, m, limited=True)


def test_risky_queries_that_finish_give_the_exact_answer() -> None:
    m = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 2097152]")
    e = parse_expr("d0 mod 1048576 + d0 floordiv 1048576")
    assert largest_divisor(m, [e]) == 1048576
    expected = max(x % 1048576 + x // 1048576 for x in (1048575, 2097151, 2097152))
    assert exact_range(e, m, limited=True) == Interval(0, expected)


def test_simplify_returns_on_the_pathological_map_and_stays_equal() -> None:
    m = parse_indexing_map("(d0) -> ((d0 + d0 mod 8589934592) ceildiv -7), domain: d0 in [60, 1000000000060]")
    out = simplify(m, timeout=2)
    assert prove_equal(m, out, engine="z3").proved


def _boom() -> int:
    raise ValueError("from the child")


def _add(a: int, b: int) -> int:
    return a + b


def test_errors_in_the_bounded_child_reach_the_caller() -> None:
    with pytest.raises(ValueError, match="from the child"):
        run_bounded(_boom, risky=True)
    assert run_bounded(_add, risky=True, args=(41, 1)) == 42


def test_the_one_map_answer_is_memoised_with_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    from verified_indexing.engines import deadline

    m = parse_indexing_map("(d0) -> ((d0 floordiv 3) mod 5), domain: d0 in [0, 99]")
    assert deadline.risky_maps([m]) is False
    monkeypatch.setattr(deadline, "RISKY_DIV_DEPTH", 2)  # two nested divisions now count as risky
    assert deadline.risky_maps([m]) is True
    assert deadline.risky_maps([m], existential=False) is True  # the unmemoised path agrees
