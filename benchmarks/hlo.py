"""HLO benchmark: parse time and analysis time per corpus module, proofs on and off.

For every module of the corpus (``../shared/corpus/jax_hlo`` or the bundled
``examples/jax_hlo``, then the GPU-style modules of ``examples/hlo``): the parse time, the analysis time of every fusion (the
entry computation for a module without fusions) with proofs on, first with a
cold proof cache (a fresh cache file, first analysis of the module in this
process), then warm (median of 3), and with proofs off (median of 3), and the
cost of proofs as the ratio on/off. Run: ``python benchmarks/hlo.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verified_indexing.hlo.ir import Module

ROOT = Path(__file__).resolve().parent.parent


def _corpus() -> list[Path]:
    """The JAX corpus, then the GPU-style modules of ``examples/hlo``."""
    shared = ROOT.parent / "shared" / "corpus" / "jax_hlo"
    base = shared if shared.is_dir() else ROOT / "examples" / "jax_hlo"
    return sorted(base.glob("*.hlo")) + sorted((ROOT / "examples" / "hlo").glob("*.hlo"))


def _run(module: Module, name: str, verify: bool) -> tuple[float, int]:
    """Seconds to analyze every fusion (or the entry computation), and the number of maps."""
    from verified_indexing.hlo.fusion import analyze_module

    computation = None if module.fusions() else module.entry_name
    start = time.perf_counter()
    results = analyze_module(module, computation=computation, verify=verify)
    seconds = time.perf_counter() - start
    if verify:
        for r in results:
            for v in r.verdicts():
                if not v.proved:
                    raise SystemExit(f"{name}: a proof is {v.status}: {v.reason}")
    return seconds, sum(r.num_maps for r in results)


def _opcode_coverage(paths: list[Path]) -> str:
    """How many opcodes are modeled, and how many instructions of the corpus have one."""
    from verified_indexing.hlo.ops import UNSUPPORTED_OPCODES, supported_opcodes
    from verified_indexing.hlo.parser import parse_module

    modeled = supported_opcodes()
    total = covered = 0
    unmodeled: dict[str, int] = {}
    for path in paths:
        module = parse_module(path.read_text(), str(path))
        for comp in module.computations.values():
            for inst in comp.instructions:
                total += 1
                if inst.opcode in modeled or inst.opcode in ("fusion", "call"):
                    covered += 1
                else:
                    unmodeled[inst.opcode] = unmodeled.get(inst.opcode, 0) + 1
    names = ", ".join(f"{k} x{v}" for k, v in sorted(unmodeled.items()))
    return (
        f"opcodes: {len(modeled)} modeled, {len(UNSUPPORTED_OPCODES)} named unsupported; corpus instructions "
        f"with a model (fusion/call composed through): {covered}/{total}; without: {names or 'none'}"
    )


def main() -> int:
    cache_dir = tempfile.mkdtemp(prefix="vi-bench-hlo-")
    os.environ["VERIFIED_INDEXING_CACHE"] = str(Path(cache_dir) / "proofs.sqlite")  # cold: a fresh cache

    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module
    from verified_indexing.hlo.report import load_hlo

    t0 = time.perf_counter()
    # Imports and engine start-up (isl, z3, simplifier tables), reported apart.
    warm_up = load_hlo("p = f32[2,3] parameter(0)\nROOT t = f32[3,2] transpose(p), dimensions={1,0}\n")
    analyze_module(warm_up, computation=warm_up.entry_name)
    startup = time.perf_counter() - t0

    paths = _corpus()
    header = (
        f"{'module':<28}{'fusions':>8}{'maps':>6}{'parse ms':>10}{'cold on ms':>12}"
        f"{'warm on ms':>12}{'off ms':>9}{'on/off':>8}"
    )
    print(f"HLO analysis benchmark: {len(paths)} modules (start-up {startup * 1000:.0f} ms, not counted)")
    print(header)
    print("-" * len(header))
    colds: list[float] = []
    ratios: list[float] = []
    worst = ("", 0.0)
    for path in paths:
        text = path.read_text()
        start = time.perf_counter()
        module = parse_module(text, str(path))
        parse_s = time.perf_counter() - start
        cold, maps = _run(module, path.name, True)
        warm = statistics.median(_run(module, path.name, True)[0] for _ in range(3))
        off = statistics.median(_run(module, path.name, False)[0] for _ in range(3))
        ratio = warm / off if off > 0 else float("inf")
        colds.append(cold + parse_s)
        ratios.append(ratio)
        if cold + parse_s > worst[1]:
            worst = (path.name, cold + parse_s)
        print(
            f"{path.name:<28}{len(module.fusions()):>8}{maps:>6}{parse_s * 1000:>10.2f}{cold * 1000:>12.1f}"
            f"{warm * 1000:>12.1f}{off * 1000:>9.1f}{ratio:>8.2f}"
        )
    print("-" * len(header))
    print(
        f"parse + cold analysis with proofs: median {statistics.median(colds) * 1000:.1f} ms, "
        f"max {worst[1] * 1000:.1f} ms ({worst[0]}); target < 1000 ms per module: "
        f"{'met' if worst[1] < 1.0 else 'NOT met'}"
    )
    print(f"cost of proofs (warm on / off): median x{statistics.median(ratios):.2f}, max x{max(ratios):.2f}")
    print(_opcode_coverage(paths))
    print(_nesting())
    return 0 if worst[1] < 1.0 else 1


def _nested(n: int) -> str:
    comps = ["c0 {\n  p = f32[8,16] parameter(0)\n  ROOT e = f32[8,16] exponential(p)\n}\n"]
    for i in range(1, n + 1):
        comps.append(f"c{i} {{\n  p = f32[8,16] parameter(0)\n  t = f32[8,16] negate(p)\n"
                     f"  ROOT f = f32[8,16] fusion(t), kind=kLoop, calls=c{i - 1}\n}}\n")
    comps.append(f"ENTRY main {{\n  p = f32[8,16] parameter(0)\n  ROOT f = f32[8,16] fusion(p), kind=kLoop, calls=c{n}\n}}\n")
    return "HloModule nested\n" + "".join(comps)


def _chained(n: int) -> str:
    comps = [f"c{i} {{\n  p = f32[8,16] parameter(0)\n  t = f32[8,16] negate(p)\n  ROOT e = f32[8,16] exponential(t)\n}}\n"
             for i in range(n)]
    body, prev = ["  p = f32[8,16] parameter(0)"], "p"
    for i in range(n):
        body.append(f"  {'ROOT ' if i == n - 1 else ''}f{i} = f32[8,16] fusion({prev}), kind=kLoop, calls=c{i}")
        prev = f"f{i}"
    return "HloModule chained\n" + "".join(comps) + "ENTRY main {\n" + "\n".join(body) + "\n}\n"


def _nesting() -> str:
    """N nested fusions against N chained ones (each with its own computation), and the growth exponent of
    the nested cost fitted over N (1 is linear)."""
    import math

    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo

    sizes = [25, 50, 100]
    rows, nested_times = [], []
    for n in sizes:
        times = []
        for text in (_nested(n), _chained(n)):
            module = load_hlo(text)
            t = time.process_time()
            analyze_module(module)
            times.append(time.process_time() - t)
        nested_times.append(times[0])
        rows.append(f"N={n}: nested {times[0]:.2f} s, chained {times[1]:.2f} s, ratio x{times[0] / max(times[1], 1e-9):.2f}")
    slope = math.log(nested_times[-1] / max(nested_times[0], 1e-9)) / math.log(sizes[-1] / sizes[0])
    return "nested vs chained fusions (CPU): " + "; ".join(rows) + f"; nested growth exponent {slope:.2f}"


if __name__ == "__main__":
    sys.exit(main())
