"""Benchmark of the verified simplifier (prints one table; not a timed test).

Per map: unverified simplification (rules only) vs verified (rules, isl exact
ranges, whole-result proof), median and p95; the effect of repeating the run
(engine caches warm); how many maps reach the smallest cost any mode found.
Maps: the spec's simplifier examples, its constraint example, the reshape chain,
every spec map block with a domain, and a few hundred seeded random maps.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time

from verified_indexing import AffineExpr, IndexingMap, Interval, compose, parse_indexing_map
from verified_indexing.expr import Dim
from verified_indexing.simplify import map_cost, simplify_with_report

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "spec", "xla-indexing-analysis.md")


def spec_maps() -> list[IndexingMap]:
    texts = [
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) floordiv 10, d2 mod 10),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1) -> (-((d0 * -11 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
    ]
    maps = [parse_indexing_map(t) for t in texts]
    a = parse_indexing_map("(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 20, (d0 * 100 + d1 * 10 + d2) mod 20),"
                           " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
    b = parse_indexing_map("(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) mod 100) floordiv 10,"
                           " (d0 * 20 + d1) mod 10), domain: d0 in [0, 49], d1 in [0, 19]")
    maps.append(compose(a, b))
    if os.path.isfile(SPEC):
        from verified_indexing.markdown_maps import extract_map_blocks

        with open(SPEC, encoding="utf-8") as f:
            for block in extract_map_blocks(f.read()):
                if "domain" in block.text:
                    try:
                        maps.append(parse_indexing_map(block.text))
                    except Exception:
                        pass
    return maps


def parity_maps() -> list[IndexingMap]:
    """The inputs of the XLA/MLIR parity suite (tests/test_simplify_xla_parity.py)."""
    import importlib.util

    path = os.path.join(os.path.dirname(__file__), "..", "tests", "test_simplify_xla_parity.py")
    spec = importlib.util.spec_from_file_location("_parity_cases", path)
    if spec is None or spec.loader is None:
        return []
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [parse_indexing_map(c[2]) for c in mod.ALL_CASES]


def random_expr(rng: random.Random, ndims: int, depth: int) -> AffineExpr:
    if depth == 0 or rng.random() < 0.25:
        return Dim(rng.randrange(ndims)) * rng.choice([1, 1, 2, 4, 8, -1, 3]) + rng.randint(-4, 4)
    kind = rng.choice(["add", "add", "floordiv", "mod", "mul"])
    a = random_expr(rng, ndims, depth - 1)
    if kind == "add":
        return a + random_expr(rng, ndims, depth - 1)
    if kind == "mul":
        return a * rng.choice([2, 4, -2, 3])
    c = rng.choice([2, 4, 8, 16, 3, -2, -4])
    return a.floordiv(c) if kind == "floordiv" else a.mod(c)


def random_maps(n: int, seed: int = 2026) -> list[IndexingMap]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        nd = rng.randint(1, 3)
        dims = [(0, rng.choice([3, 7, 9, 15, 31, 63])) for _ in range(nd)]
        results = [random_expr(rng, nd, 3) for _ in range(rng.randint(1, 3))]
        cons = []
        if rng.random() < 0.3:
            lo = rng.randint(-5, 10)
            cons.append((random_expr(rng, nd, 1), Interval(lo, lo + rng.randint(0, 30))))
        out.append(IndexingMap(dims, results, constraints=cons))
    return out


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def forget_memos() -> None:
    """Forget this process's in-process memos (isl's candidates, isl builders, point tables, risky-map
    answers), so the next variant timed on a map starts cold like the first one."""
    from verified_indexing.engines import deadline, points
    from verified_indexing.engines import isl as isl_engine
    from verified_indexing.simplify.api import _ISL_CANDIDATES
    from verified_indexing.simplify.cost import cost, measure
    from verified_indexing.simplify.rules import _divisors, forget_terms

    _ISL_CANDIDATES.clear()
    forget_terms()
    cost.cache_clear()  # the cost model's memos (keyed by expression: an earlier map's subterms are not seen)
    measure.cache_clear()
    _divisors.cache_clear()
    isl_engine._BUILDERS.__dict__.clear()
    points._LOCAL.__dict__.clear()
    deadline._RISKY_ONE.clear()


def run(maps: list[IndexingMap], label: str, cache_dir: str) -> None:
    from verified_indexing.engines import ProofCache

    cache = ProofCache(os.path.join(cache_dir, f"{label.split()[0]}.sqlite"))
    unv: list[float] = []
    ver: list[float] = []
    per: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    smallest = 0
    modes: dict[str, int] = {}
    for m in maps:
        t = time.perf_counter()
        u = simplify_with_report(m, verify=False)
        unv.append(time.perf_counter() - t)
        forget_memos()
        t = time.perf_counter()
        v = simplify_with_report(m)
        ver.append(time.perf_counter() - t)
        forget_memos()
        t = time.perf_counter()
        simplify_with_report(m, per_rewrite=True)
        per.append(time.perf_counter() - t)
        forget_memos()
        t = time.perf_counter()
        simplify_with_report(m, cache=cache)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        simplify_with_report(m, cache=cache)
        warm.append(time.perf_counter() - t)
        modes[v.mode] = modes.get(v.mode, 0) + 1
        best = min(map_cost(u.map), map_cost(v.map), map_cost(m))
        smallest += map_cost(v.map) == best
    print(f"{label}: {len(maps)} maps")
    for name, xs in [
        ("unverified (rules only)", unv),
        ("verified (whole-result proof)", ver),
        ("verified, per-rewrite proofs", per),
        ("verified, proof cache cold", cold),
        ("verified, proof cache warm", warm),
    ]:
        print(f"  {name:<32} median {statistics.median(xs) * 1000:7.2f} ms   p95 {pct(xs, 0.95) * 1000:7.2f} ms")
    print(f"  proof modes {modes}; verified result at the smallest cost found: {smallest}/{len(maps)}")


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run(spec_maps(), "spec maps", d)
        run(parity_maps(), "XLA/MLIR parity inputs", d)
        run(random_maps(n), "random maps (seed 2026)", d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
