"""HLO benchmark: parse time and analysis time per corpus module, proofs on and off.

For every module of the corpus (``../shared/corpus/jax_hlo`` or the bundled
``examples/jax_hlo``, then the GPU-style modules of ``examples/hlo``): the parse time, the analysis time of every fusion (the
entry computation for a module without fusions) with proofs on, first with a
cold proof cache (a fresh cache file, first analysis of the module in this
process), then warm (median of 3), and with proofs off (median of 3), and the
cost of proofs as the ratio on/off; then llama-sized optimized modules and the real-model-sized
modules of issue 27 (:func:`real_models`). Run: ``python benchmarks/hlo.py`` (``--real 10,100,1024``:
only the real-model-sized modules, at those sizes in KB).
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
    for line in _llama(LLAMA_LAYERS):
        print(line)
    for line in real_models(REAL_SIZES if LLAMA_LAYERS is _LLAMA_DEFAULT else REAL_SHORT):
        print(line)
    return 0 if worst[1] < 1.0 else 1


# -- real-model-sized modules, unoptimized and optimized (issue 27) ----------------------------------------------
REAL_SIZES = [10 << 10, 100 << 10, 1 << 20, 2 << 20, 4 << 20]
"""Sizes (bytes of HLO text) of the unoptimized modules, for the growth exponent; the optimized ones are
generated at the sizes of 1 MB and above (``--real 10,1024`` in KB to change)."""

REAL_SHORT = [10 << 10]
"""The sizes of a short run (``--llama`` given, as CI's smoke test does): no optimized module."""

_CHILD = """
import contextlib, json, os, resource, sys, time
from verified_indexing.cli import main
t = time.perf_counter()
sys.argv = ["verified-indexing", "analyze", *sys.argv[1:]]  # the command line's own entry point
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    try:
        code = main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
seconds = time.perf_counter() - t
print(json.dumps({"code": code, "seconds": seconds,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)
"""


def _measure(path: Path, *extra: str) -> dict[str, float]:
    """``verified-indexing analyze PATH EXTRA...`` in a fresh process, its report discarded: the command's own
    seconds (reading, parsing, analysis, printing; interpreter start-up apart), the process's wall
    seconds and peak resident memory, and the exit code."""
    import json
    import subprocess

    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), *extra], capture_output=True, text=True,
                          timeout=900)
    wall = time.perf_counter() - t
    try:
        found = json.loads(proc.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SystemExit(f"analyze {path} failed: {proc.stderr[-500:]}") from None
    return {**found, "wall": wall}


def _slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log y against log x (1: linear)."""
    import math

    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den if den else float("nan")


_LIVE: list[bool] = []
"""Set by ``--real``: each line of :func:`real_models` is printed as soon as it is measured."""


def _say(lines: list[str], line: str) -> None:
    lines.append(line)
    if _LIVE:
        print(line, flush=True)


def real_models(sizes: list[int] | None = None) -> list[str]:
    """A llama-style decoder, a mixture-of-experts stack and a training step whose layers run in ``while``
    loops, written in JAX (``benchmarks/hlo_models.py``), generated in a subprocess at each size, unoptimized
    (no fusions: the default answer is each instruction one op deep; at 1 MB and above also ``--computation
    ENTRY``, the entry composed) and optimized (XLA:CPU's fusions) at 1 MB and above; each analyzed by the
    command in a fresh process. Prints seconds and peak memory against the goals (< 60 s, < 1 GB) and the
    growth exponent of the command's time against the file size over the unoptimized sizes (goal <= 1.1)."""
    import importlib.util
    import subprocess

    sizes = sizes or REAL_SIZES
    if importlib.util.find_spec("jax") is None:
        return ["real-model-sized HLO: skipped: jax not installed (pip install 'verified-indexing[bench]')"]
    lines = ["real-model-sized HLO (benchmarks/hlo_models.py; analyze in a fresh process, report discarded):"]
    worst_s, worst_mb = 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("llama", "moe", "train"):
            xs: list[float] = []
            ys: list[float] = []
            for optimized in (False, True):
                for size in sizes:
                    if optimized and size < (1 << 20):
                        continue
                    path = Path(tmp) / f"{kind}.{'opt' if optimized else 'unopt'}.{size}.hlo"
                    gen = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import hlo_models as h; "
                           f"t, n = h.sized({kind!r}, {size}, {optimized}); open({str(path)!r}, 'w').write(t); "
                           "print(n)")
                    proc = subprocess.run([sys.executable, "-c", gen], capture_output=True, text=True, timeout=1800,
                                          env=dict(os.environ, JAX_PLATFORMS="cpu"))
                    if proc.returncode != 0:
                        lines.append(f"  {kind} {size >> 10} KB: generation failed: {proc.stderr.strip()[-300:]}")
                        continue
                    layers = int(proc.stdout.strip() or 0)
                    m = _measure(path)
                    nbytes = path.stat().st_size
                    worst_s, worst_mb = max(worst_s, m["wall"]), max(worst_mb, m["peak_mb"])
                    if not optimized:
                        xs.append(nbytes)
                        ys.append(m["seconds"])
                    _say(lines,
                        f"  {kind:<5} {'optimized' if optimized else 'unoptimized':<11} {layers:>4} layers "
                        f"{nbytes / 1e6:6.2f} MB: command {m['seconds']:6.2f} s, process {m['wall']:6.2f} s, "
                        f"peak {m['peak_mb']:6.0f} MB, exit {int(m['code'])}"
                    )
                    if not optimized and size >= (1 << 20):  # the entry composed: the explicit choice
                        e = _measure(path, "--computation", "ENTRY")
                        worst_s, worst_mb = max(worst_s, e["wall"]), max(worst_mb, e["peak_mb"])
                        _say(lines,
                            f"  {kind:<5} {'--computation ENTRY':<23} {nbytes / 1e6:6.2f} MB: command "
                            f"{e['seconds']:6.2f} s, process {e['wall']:6.2f} s, peak {e['peak_mb']:6.0f} MB, "
                            f"exit {int(e['code'])}"
                        )
                    path.unlink()
            if len(xs) >= 2:
                lines.append(f"  {kind}: growth exponent of the command's time against file size, unoptimized "
                             f"{xs[0] / 1e3:.0f} KB to {xs[-1] / 1e6:.1f} MB: {_slope(xs, ys):.2f} (goal <= 1.1)")
                big = [(x, y) for x, y in zip(xs, ys) if x >= 1e6]
                if len(big) >= 2:  # the start-up of the engines flattens the small sizes: the large ones alone
                    lines.append(f"  {kind}: the same from 1 MB up only: "
                                 f"{_slope([x for x, _ in big], [y for _, y in big]):.2f}")
    lines.append(f"  worst: {worst_s:.1f} s (goal < 60 s), {worst_mb:.0f} MB peak (goal < 1024 MB)")
    return lines


# -- a llama-sized module ----------------------------------------------------------------------------------------
LLAMA_LAYERS = _LLAMA_DEFAULT = [8, 16, 32, 64]
"""Transformer blocks per generated module (``--llama 2,4`` to change; 64 blocks is about 1.7 MB, 13k
instructions)."""

_LLAMA_SOURCE = """
import sys
import jax
import jax.numpy as jnp


def block(x, p):
    h = x - x.mean(-1, keepdims=True)
    h = h / jnp.sqrt((h * h).mean(-1, keepdims=True) + 1e-5) * p["g1"]
    heads = lambda t: t.reshape(x.shape[0], x.shape[1], 4, -1).transpose(0, 2, 1, 3)
    q, k, v = heads(h @ p["wq"]), heads(h @ p["wk"]), heads(h @ p["wv"])
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 4.0
    s = jnp.where(jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool)), s, -1e9)
    o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v).transpose(0, 2, 1, 3).reshape(x.shape)
    x = x + o @ p["wo"]
    h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * p["g2"]
    return x + (jax.nn.silu(h @ p["w1"]) * (h @ p["w3"])) @ p["w2"]


def model(x, params):
    for p in params:
        x = block(x, p)
    return x


layers, out, d = int(sys.argv[1]), sys.argv[2], 64
shapes = {"g1": (d,), "g2": (d,), "wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d),
          "w1": (d, 4 * d), "w3": (d, 4 * d), "w2": (4 * d, d)}
params = [{n: jax.ShapeDtypeStruct(s, jnp.float32) for n, s in shapes.items()} for _ in range(layers)]
x = jax.ShapeDtypeStruct((2, 32, d), jnp.float32)
with open(out, "w") as f:
    f.write(jax.jit(model).lower(x, params).compile().as_text())
"""


def _llama(layer_counts: list[int]) -> list[str]:
    """Generate a llama-style module (RMS/layer norm, 4-head causal attention, SwiGLU MLP) per layer count with
    jax in a subprocess (jitted, ``.compile().as_text()``: XLA's optimized HLO with its fusions), then parse it
    and analyse every fusion with proofs: time (parse: the best of three), instructions per second, traced peak
    memory (a second run), and the growth exponents of parse and analysis time against file size (1 is linear)."""
    import gc
    import importlib.util
    import math
    import subprocess
    import tracemalloc

    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    if importlib.util.find_spec("jax") is None:  # (not imported here: jax runs in the subprocess only, and
        # its objects in this heap would make every garbage collection of the timed runs longer)
        return ["llama-sized HLO: skipped: jax not installed (pip install 'verified-indexing[bench]')"]
    lines = ["llama-sized HLO (jax-generated transformer blocks, optimized HLO):"]
    sizes: list[float] = []
    parse_times: list[float] = []
    analyze_times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layer_counts:
            path = Path(tmp) / f"llama{layers}.hlo"
            t0 = time.perf_counter()
            env = dict(os.environ, JAX_PLATFORMS="cpu")
            proc = subprocess.run([sys.executable, "-c", _LLAMA_SOURCE, str(layers), str(path)], env=env,
                                  capture_output=True, text=True, timeout=1200)
            if proc.returncode != 0:
                return [*lines, f"  skipped: generating {layers} blocks failed: {proc.stderr.strip()[-300:]}"]
            generate = time.perf_counter() - t0
            text = path.read_text()
            parse_s = math.inf
            for _ in range(3):  # the best of three: a single parse time varies by a third between runs
                gc.collect()  # each timed run starts with no garbage of the last one
                t0 = time.process_time()
                module = parse_module(text, str(path))
                parse_s = min(parse_s, time.process_time() - t0)
            gc.collect()
            t0 = time.process_time()
            results = analyze_module(module)
            analyze_s = time.process_time() - t0
            instructions = sum(len(c.instructions) for c in module.computations.values())
            verdicts = [v for r in results for v in r.verdicts()]
            proved = sum(v.proved for v in verdicts)
            tracemalloc.start()
            analyze_module(parse_module(text, str(path)))
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            sizes.append(len(text))
            parse_times.append(parse_s)
            analyze_times.append(analyze_s)
            lines.append(
                f"  {layers:>3} blocks: {len(text) / 1e6:5.2f} MB, {instructions:>6} instructions, "
                f"{len(module.fusions()):>5} fusions, {sum(r.num_maps for r in results):>5} maps "
                f"(proofs {proved}/{len(verdicts)} proved); parse {parse_s:6.2f} s "
                f"({instructions / max(parse_s, 1e-9):,.0f} instr/s), analysis {analyze_s:6.2f} s "
                f"({instructions / max(analyze_s, 1e-9):,.0f} instr/s), parse+analysis peak "
                f"{peak / 2**20:.0f} MiB traced (jax generation {generate:.1f} s, not counted)"
            )

    def slope(ys: list[float]) -> float:
        xs = [math.log(x) for x in sizes]
        ls = [math.log(max(y, 1e-9)) for y in ys]
        mx, my = sum(xs) / len(xs), sum(ls) / len(ls)
        den = sum((x - mx) ** 2 for x in xs)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ls)) / den if den else float("nan")

    if len(sizes) >= 2:
        lines.append(f"  growth exponent against file size (least squares over {len(sizes)} sizes; 1 is linear): "
                     f"parse {slope(parse_times):.2f}, analysis {slope(analyze_times):.2f}")
    return lines


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
    """N nested fusions against N chained ones (each with its own computation; CPU time, the best of three
    runs), and the growth exponent of the nested cost fitted over N (1 is linear)."""
    import math

    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo

    sizes = [25, 50, 100]
    rows, nested_times = [], []
    for n in sizes:
        times = []
        for text in (_nested(n), _chained(n)):
            best = math.inf
            for _ in range(3):  # the best of three (each run from a freshly loaded module): tens of ms are noisy
                module = load_hlo(text)
                t = time.process_time()
                analyze_module(module)
                best = min(best, time.process_time() - t)
            times.append(best)
        nested_times.append(times[0])
        rows.append(f"N={n}: nested {times[0]:.2f} s, chained {times[1]:.2f} s, ratio x{times[0] / max(times[1], 1e-9):.2f}")
    slope = math.log(nested_times[-1] / max(nested_times[0], 1e-9)) / math.log(sizes[-1] / sizes[0])
    return "nested vs chained fusions (CPU): " + "; ".join(rows) + f"; nested growth exponent {slope:.2f}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--real":  # only the real-model-sized modules (sizes in KB)
        _LIVE.append(True)
        found = real_models([int(x) << 10 for x in sys.argv[2].split(",") if x])
        for line in found:
            if "growth exponent" in line or "the same from" in line or "worst:" in line or "skipped" in line \
                    or "failed" in line or line.startswith("real-model"):
                print(line, flush=True)
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[1] == "--llama":
        LLAMA_LAYERS = [int(x) for x in sys.argv[2].split(",") if x]
    sys.exit(main())
