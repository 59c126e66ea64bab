"""Throughput past one process (issue 27, item 4): the same work on 1 and on 2 worker processes, in one run.

Two workloads, each run as a user runs it (a fresh ``verified-indexing`` process, a fresh proof cache, the
command's whole wall time: start-up, reading, the pool, printing):

* ``simplify --batch`` of N maps (default 1,000: seeded random maps, reshape chains and op chains of
  ``benchmarks/simplify.py`` and ``benchmarks/simplify_vs_tvm.py``), ``--jobs 1`` against ``--jobs 2``;
* ``analyze`` of a dump directory (the corpus modules and, jax installed, 18 modules of
  ``benchmarks/hlo_models.py``, named as XLA's ``--xla_dump_to`` names them), ``--jobs 1`` against
  ``--jobs 2``;
* with Ray installed (extra ``distributed``), the batch on ``--backend ray`` too (a local Ray runtime started
  by the command: its start-up is counted).

Each configuration runs ``ROUNDS`` times, alternating, and the median is kept; the 2-process output must be
byte for byte the 1-process output (a mismatch is reported and the exit status is 1). The load average
before and after is printed: the machine is shared, and a ratio measured under load says so. Goal (issue 27):
2 processes at least 1.7x the throughput of one. Run: ``python benchmarks/throughput.py [N]``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 3
GOAL = 1.7


def batch_lines(n: int) -> list[str]:
    """``n`` simplify questions (JSONL lines): 60% random maps, 20% reshape chains, 20% op chains."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from simplify import random_maps
    from simplify_vs_tvm import op_chains, reshape_chains

    k = n // 5
    maps = random_maps(n - 2 * k) + reshape_chains(k) + op_chains(k)
    return [json.dumps({"map": str(m)}) for m in maps]


def dump_directory(out: Path, models: bool) -> int:
    """A dump-like directory (``module_NNNN.NAME.after_optimizations.txt``) of the corpus modules and, with
    ``models`` (jax installed), the models of ``benchmarks/hlo_models.py`` at a few sizes, optimized and not
    (so that the work is seconds, not a tenth of one); the number of modules."""
    shared = ROOT.parent / "shared" / "corpus" / "jax_hlo"
    base = shared if shared.is_dir() else ROOT / "examples" / "jax_hlo"
    paths = sorted(base.glob("*.hlo")) + sorted((ROOT / "examples" / "hlo").glob("*.hlo"))
    out.mkdir(parents=True, exist_ok=True)
    k = 0
    for k, p in enumerate(paths):
        shutil.copy(p, out / f"module_{k:04d}.{p.stem.replace('.', '_')}.after_optimizations.txt")
    if models:
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import hlo_models as h; from pathlib import Path\n"
                "out, k = Path(sys.argv[2]), int(sys.argv[3])\n"
                "for kind in h.KINDS:\n"
                "    for layers in (2, 6, 12):\n"
                "        for opt in (False, True):\n"
                "            k += 1\n"
                "            name = f'module_{k:04d}.{kind}{layers}{\"_opt\" if opt else \"\"}.after_optimizations.txt'\n"
                "            (out / name).write_text(h.hlo_text(kind, layers, opt))\n")
        subprocess.run([sys.executable, "-c", code, str(ROOT / "benchmarks"), str(out), str(k)], check=True,
                       env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=1800, capture_output=True)
    return len(list(out.iterdir()))


def command(argv: list[str], cache: Path) -> tuple[float, bytes, int]:
    """Wall seconds, standard output and exit code of ``verified-indexing ARGV`` in a fresh process with the
    proof cache ``cache`` (removed first: cold)."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(cache) + suffix).unlink(missing_ok=True)
    env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(cache), PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "verified_indexing", *argv], capture_output=True, env=env,
                          timeout=1800)
    return time.perf_counter() - t, proc.stdout, proc.returncode


def compare(label: str, argv: list[str], variants: dict[str, list[str]], cache: Path, rounds: int = ROUNDS
            ) -> tuple[list[str], bool]:
    """Each variant's extra arguments run ``rounds`` times, alternating; the medians, each variant's ratio to
    the first, and whether every output equals the first variant's."""
    times: dict[str, list[float]] = {v: [] for v in variants}
    first: bytes | None = None
    same = True
    codes: set[int] = set()
    for _ in range(rounds):
        for name, extra in variants.items():
            seconds, out, code = command([*argv, *extra], cache)
            times[name].append(seconds)
            codes.add(code)
            if first is None:
                first = out
            elif out != first:
                same = False
    base = statistics.median(times[next(iter(variants))])
    lines = [f"{label} (exit codes {sorted(codes)}):"]
    for name, ts in times.items():
        med = statistics.median(ts)
        runs = ", ".join(f"{t:.2f}" for t in ts)
        lines.append(f"  {name:<10} median {med:6.2f} s (runs {runs}); throughput x{base / med:.2f} of 1 process")
    lines.append(f"  output of every variant byte-identical to 1 process: {'yes' if same else 'NO'}")
    return lines, same


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = ROUNDS if n >= 200 else 1  # a short run (CI's smoke test): one round
    ok = True
    print(f"throughput: {os.cpu_count()} CPUs; load average before {_load()}; {rounds} round(s), medians; "
          f"fresh proof cache per run")
    with tempfile.TemporaryDirectory(prefix="vi-bench-throughput-") as tmp:
        batch = Path(tmp) / "maps.jsonl"
        batch.write_text("\n".join(batch_lines(n)) + "\n")
        cache = Path(tmp) / "cache.sqlite"
        variants = {"1 process": ["--jobs", "1"], "2 proc": ["--jobs", "2"]}
        if importlib.util.find_spec("ray") is not None and n >= 200:
            variants["ray, 2"] = ["--backend", "ray", "--jobs", "2"]
        lines, same = compare(f"simplify --batch of {n} maps", ["simplify", "--batch", str(batch), "--no-timing"],
                              variants, cache, rounds)
        ok &= same
        print("\n".join(lines), flush=True)
        if "ray, 2" not in variants:
            print("  ray: " + ("not installed (extra 'distributed')" if importlib.util.find_spec("ray") is None
                               else "skipped in a short run (its start-up alone is seconds)"))
        dump = Path(tmp) / "dump"
        modules = dump_directory(dump, importlib.util.find_spec("jax") is not None and n >= 200)
        lines, same = compare(f"analyze of a dump directory of {modules} modules",
                              ["analyze", str(dump), "--json", "--no-timing"],
                              {"1 process": ["--jobs", "1"], "2 proc": ["--jobs", "2"]}, cache, rounds)
        ok &= same
        print("\n".join(lines))
    print(f"load average after {_load()} (goal: 2 processes >= x{GOAL} of one, on an otherwise idle machine)")
    return 0 if ok else 1


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
