"""Start-up cost of the command line against a bare Python start, in one run.

Each command runs ``K`` times (default 15) in a fresh interpreter (``sys.executable``, the
environment of this process); the table prints the median wall time of each and its ratio to
``python -c pass``:

* ``import verified_indexing`` (the package's lazy top level);
* ``verified-indexing --help`` and ``--version`` (argparse only: no map, isl or z3 module);
* a one-map ``simplify`` and a one-pair ``prove-equal`` (every import their work needs, the work
  itself a few milliseconds);
* per command: ``show`` of one map, ``check-rule`` of one rule, ``analyze`` of one instruction;
  each row also names the heavy packages (numpy, z3, islpy, jax, tvm, tqdm) the command imported.

The package is byte-compiled first (``compileall``, into ``__pycache__``, as ``pip install``
does for a wheel): with ``PYTHONDONTWRITEBYTECODE`` set and no bytecode, every start
re-compiles the package's sources and that, not the tool, dominates (about 0.17 s here).
Goals of the performance issue: ``--help`` <= 3x and a one-map ``simplify`` <= 8x a bare start.

Run: ``python benchmarks/startup.py [K]``.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = "(d0, d1) -> (d0 * 4 + d1 floordiv 8, d1 mod 8), domain: d0 in [0, 15], d1 in [0, 31]"
HLO = "p0 = f32[20] parameter(0)\nbc = f32[10,20,30] broadcast(p0), dimensions={1}\n"
HEAVY = ("numpy", "z3", "islpy", "jax", "tvm", "tqdm")
"""The packages whose import costs tens of milliseconds or more: each row says which it imported."""


def _time(argv: list[str], env: dict[str, str], k: int) -> float:
    """Median wall seconds of ``k`` runs of ``argv`` (each must exit 0)."""
    times = []
    for _ in range(k):
        t = time.perf_counter()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return statistics.median(times)


def main() -> int:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    import verified_indexing

    package = Path(verified_indexing.__file__).resolve().parent
    env = dict(os.environ)
    env["VERIFIED_INDEXING_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="vi-startup-"), "cache.sqlite")
    py = [sys.executable]
    cli = [*py, "-m", "verified_indexing"]
    rows = [
        ("python -c pass", [*py, "-c", "pass"]),
        ("import verified_indexing", [*py, "-c", "import verified_indexing"]),
        ("--help", [*cli, "--help"]),
        ("--version", [*cli, "--version"]),
        ("simplify (one map)", [*cli, "simplify", "--no-cache", "-e", MAP] if _has_no_cache(cli, env)
         else [*cli, "simplify", "-e", MAP]),
        ("prove-equal (one pair)", [*cli, "prove-equal", "-e", "d0 floordiv 4 * 4 + d0 mod 4", "-e", "d0",
                                    "--domain", "d0 in [0, 63]"]),
        ("show (one map)", [*cli, "show", "-e", MAP]),
        ("check-rule (one rule)", [*cli, "check-rule", "x floordiv 4 * 4 + x mod 4 -> x"]),
        ("analyze (one instruction)", [*cli, "analyze", "-e", HLO]),
    ]
    compiled = compileall.compile_dir(str(package), quiet=1, force=False)
    print(f"start-up against a bare Python start: median of {k} runs each, {sys.executable} "
          f"(package byte-compiled: {'yes' if compiled else 'partly'})")
    base = None
    for label, argv in rows:
        t = _time(argv, env, k)
        base = base or t
        note = ""
        if argv[1:3] == ["-m", "verified_indexing"]:
            note = f"   heavy imports: {', '.join(_heavy(argv, env)) or 'none'}"
        print(f"  {label:<26} {t * 1000:8.1f} ms   x{t / base:6.2f}{note}")
    print("goals: --help <= x3, one-map simplify <= x8")
    return 0


def _heavy(argv: list[str], env: dict[str, str]) -> list[str]:
    """The packages of :data:`HEAVY` the command imports (``python -X importtime``: every import is
    reported as it happens, even when the command line ends the process with ``os._exit``)."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True)
    found = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            found.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return [h for h in HEAVY if h in found]


def _has_no_cache(cli: list[str], env: dict[str, str]) -> bool:
    proc = subprocess.run([*cli, "simplify", "--help"], env=env, capture_output=True, text=True)
    return "--no-cache" in proc.stdout


if __name__ == "__main__":
    sys.exit(main())
