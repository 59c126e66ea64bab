"""Benchmark: isl, z3 and enumeration proving the spec's simplifier examples
(and the reshape round trip) equal to their simplified forms, on boxes growing
from 10^2 to 10^9 points, plus the proof cache's hit time.

Each example is scaled by its first dimension (the identities hold for any
extent of it). isl and z3 times are medians of REPEAT runs; enumeration runs
once, only up to ENUM_LIMIT points ("skipped" beyond). Run:
``python benchmarks/engines.py`` (also part of ``make bench``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from verified_indexing import IndexingMap, compose, parse_indexing_map
from verified_indexing.engines import ProofCache, prove_equal, prove_pointwise_equal, prove_subset

REPEAT = 5
ENUM_LIMIT = 10**7
SIZES = [10**k for k in range(2, 10)]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def ex1(points: int) -> tuple[IndexingMap, IndexingMap]:
    n = _ceil_div(points, 15)
    dom = f"domain: d0 in [0, {n - 1}], d1 in [0, 14]"
    return (
        parse_indexing_map(f"(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), {dom}"),
        parse_indexing_map(f"(d0, d1) -> (d0, d1), {dom}"),
    )


def ex2(points: int) -> tuple[IndexingMap, IndexingMap]:
    n = _ceil_div(points, 100)
    dom = f"domain: d0 in [0, {n - 1}], d1 in [0, 9], d2 in [0, 9]"
    return (
        parse_indexing_map(
            "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 100, ((100 * d0 + 10 * d1 + d2) mod 100) floordiv 10,"
            f" d2 mod 10), {dom}"
        ),
        parse_indexing_map(f"(d0, d1, d2) -> (d0, d1, d2), {dom}"),
    )


def ex3(points: int) -> tuple[IndexingMap, IndexingMap]:
    n = _ceil_div(points, 100)
    dom = f"domain: d0 in [0, {n - 1}], d1 in [0, 9], d2 in [0, 9]"
    return (
        parse_indexing_map(
            f"(d0, d1, d2) -> ((16 * d0 + 4 * d1 + d2) floordiv 8, (16 * d0 + 4 * d1 + d2) mod 8), {dom}"
        ),
        parse_indexing_map(f"(d0, d1, d2) -> (2 * d0 + (4 * d1 + d2) floordiv 8, (4 * d1 + d2) mod 8), {dom}"),
    )


def ex4(points: int) -> tuple[IndexingMap, IndexingMap]:
    n = _ceil_div(points, 11)
    dom = f"domain: d0 in [0, {n - 1}], d1 in [0, 10]"
    return (
        parse_indexing_map(f"(d0, d1) -> (-((-11 * d0 - d1 + 109) floordiv 11) + 9), {dom}"),
        parse_indexing_map(f"(d0, d1) -> (d0), {dom}"),
    )


def reshape(points: int) -> tuple[IndexingMap, IndexingMap]:
    n = _ceil_div(points, 100)
    first = parse_indexing_map(
        "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 20, (100 * d0 + 10 * d1 + d2) mod 20),"
        f" domain: d0 in [0, {n - 1}], d1 in [0, 9], d2 in [0, 9]"
    )
    second = parse_indexing_map(
        "(d0, d1) -> ((20 * d0 + d1) floordiv 100, ((20 * d0 + d1) mod 100) floordiv 10, (20 * d0 + d1) mod 10),"
        f" domain: d0 in [0, {5 * n - 1}], d1 in [0, 19]"
    )
    ident = parse_indexing_map(f"(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, {n - 1}], d1 in [0, 9], d2 in [0, 9]")
    return compose(first, second), ident


EXAMPLES: list[tuple[str, Callable[[int], tuple[IndexingMap, IndexingMap]]]] = [
    ("spec1", ex1),
    ("spec2", ex2),
    ("spec3", ex3),
    ("spec4", ex4),
    ("reshape", reshape),
]


def _time(a: IndexingMap, b: IndexingMap, engine: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        v = prove_equal(a, b, engine=engine)
        times.append(time.perf_counter() - t0)
        if not v.proved:
            sys.exit(f"benchmark: {engine} did not prove the example: {v}")
    return statistics.median(times) * 1000


def _new_questions() -> None:
    """The inclusion / pointwise questions on the same examples (isl and z3 where
    it decides; every answer must be proved: the simplified form's image and
    relation equal the original's)."""
    questions: list[tuple[str, str, Callable[[IndexingMap, IndexingMap, str], object]]] = [
        ("pointwise", "z3", lambda a, b, e: prove_pointwise_equal(a, b, engine=e)),
        ("subset-relation", "z3", lambda a, b, e: prove_subset(a, b, of="relation", engine=e)),
        ("subset-image", "", lambda a, b, e: prove_subset(a, b, of="image", engine=e)),
    ]
    print()
    print(f"{'question':<16} {'engine':<6} {'median ms':>10} {'max ms':>8}  (5 examples x boxes 1e2..1e9)")
    for qname, other, ask in questions:
        for engine in ("isl", other):
            if not engine:
                continue
            times = []
            for _, build in EXAMPLES:
                for size in SIZES:
                    a, b = build(size)
                    t0 = time.perf_counter()
                    v = ask(a, b, engine)
                    times.append((time.perf_counter() - t0) * 1000)
                    if not getattr(v, "proved", False):
                        sys.exit(f"benchmark: {engine} did not prove {qname}: {v}")
            print(f"{qname:<16} {engine:<6} {statistics.median(times):10.2f} {max(times):8.2f}")


def main() -> int:
    print(f"{'example':<9} {'points':>7} {'box':>12} {'isl ms':>9} {'z3 ms':>9} {'enum ms':>10}")
    per_engine: dict[str, list[float]] = {"isl": [], "z3": []}
    for name, build in EXAMPLES:
        for size in SIZES:
            a, b = build(size)
            box = a.box_size()
            isl_ms = _time(a, b, "isl", REPEAT)
            z3_ms = _time(a, b, "z3", REPEAT)
            per_engine["isl"].append(isl_ms)
            per_engine["z3"].append(z3_ms)
            enum = f"{_time(a, b, 'enum', 1):10.1f}" if box <= ENUM_LIMIT else f"{'skipped':>10}"
            print(f"{name:<9} {'1e' + str(len(str(size)) - 1):>7} {box:>12} {isl_ms:9.2f} {z3_ms:9.2f} {enum}")
    print()
    for engine, times in per_engine.items():
        print(f"{engine}: median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {len(times)} runs")
    _new_questions()
    with tempfile.TemporaryDirectory() as tmp:
        cache = ProofCache(Path(tmp) / "bench.sqlite")
        a, b = ex1(10**6)
        prove_equal(a, b, engine="isl", cache=cache)
        hits = []
        for _ in range(20):
            t0 = time.perf_counter()
            v = prove_equal(a, b, engine="isl", cache=cache)
            hits.append(time.perf_counter() - t0)
            assert v.cached and v.proved
        cache.close()
    print(f"cache hit: median {statistics.median(hits) * 1000:.3f} ms over {len(hits)} lookups")
    print(_enumeration_memory())
    return 0


def _enumeration_memory() -> str:
    """Peak traced memory (numpy arrays included) of a streaming enumeration at 5e5 and 5e6 points: constant
    per chunk means the same peak at both sizes."""
    import tracemalloc

    from verified_indexing.engines import enumerate as en

    out = []
    for points in (500_000, 5_000_000):
        a, b = ex2(points)
        tracemalloc.start()
        t0 = time.perf_counter()
        en.find_pointwise_difference(a, b, limit=10**7)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out.append(f"{a.box_size():.0e} points: peak {peak / 2**20:.1f} MiB, {seconds:.2f} s")
    return f"enumeration (pointwise, chunks of {en.CHUNK}): " + "; ".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
