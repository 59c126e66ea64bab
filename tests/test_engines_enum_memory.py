"""The enumeration engine streams in constant memory per chunk: the peak of traced allocations (numpy
arrays are traced) does not grow with the number of points, and the answers are unchanged."""

from __future__ import annotations

import tracemalloc

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.engines import enumerate as en
from verified_indexing.interval import Interval

pytest.importorskip("numpy")


def _maps(rows: int) -> tuple[str, str]:
    dom = f"domain: d0 in [0, {rows - 1}], d1 in [0, 9], d2 in [0, 9]"
    a = ("(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 100, ((d0 * 100 + d1 * 10 + d2) mod 100) floordiv 10,"
         f" d2 mod 10), {dom}")
    return a, f"(d0, d1, d2) -> (d0, d1, d2), {dom}"


def _peak(rows: int) -> int:
    a, b = (parse_indexing_map(t) for t in _maps(rows))
    tracemalloc.start()
    try:
        assert en.find_pointwise_difference(a, b) is None
        assert en.find_violation(a, a.results[1], Interval(0, 9)) is None
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_box() -> None:
    small = _peak(2 * en.CHUNK // 100)  # 2 chunks
    large = _peak(8 * en.CHUNK // 100)  # 8 chunks
    assert large < 1.5 * small + (1 << 20), (small, large)
    # a chunk's arrays: a few dozen int64 columns of CHUNK entries at most
    assert large < 40 * 8 * en.CHUNK


def test_streaming_still_finds_the_first_difference() -> None:
    a, b = _maps(8 * en.CHUNK // 100)
    wrong = b.replace("(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1, d2 mod 7)")
    pt = en.find_pointwise_difference(parse_indexing_map(a), parse_indexing_map(wrong))
    assert pt == ((0, 0, 7), (), ())
