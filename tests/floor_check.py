"""The rule proofs and the known-bugs corpus at the lowest z3 the package accepts.

``pyproject.toml`` asks for ``z3-solver>=5``: ``known-bugs`` fails on every 4.x
tried. This script makes that floor a checked fact. It creates (or reuses) a venv
at ``--venv`` holding only ``z3-solver==VERSION`` (pip, from PyPI or its cache),
lets it see the calling interpreter's other packages (islpy, ...) through a
``.pth`` file placed after its own site-packages, so z3 comes from the venv, and
runs this checkout (``PYTHONPATH``) there:

* ``python -m verified_indexing.proofs``: every rule of the catalogue proved;
* ``python -m verified_indexing known-bugs``: every entry of the corpus gives its
  recorded verdict.

Exit codes: 0 both pass at that z3; 1 one fails (its output is printed); 3 the
venv could not be made (no network and no cached wheel: the message says so).
``make floor-check`` runs it; ``tests/test_package.py`` runs it too (marked slow,
skipped with the reason only when pip cannot fetch the wheel).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP_FAILED = 3


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / "python"


def ensure_venv(venv: Path, z3_version: str) -> tuple[Path | None, str]:
    """The venv's interpreter with z3-solver ``z3_version`` (reused when its marker says so), or
    ``None`` and pip's message."""
    marker = venv / f".z3-{z3_version}"
    py = venv_python(venv)
    if marker.exists() and py.exists():
        return py, ""
    proc = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         f"z3-solver=={z3_version}"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        return None, proc.stdout + proc.stderr
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    # The calling interpreter's packages (islpy, ...), searched after the venv's own z3.
    Path(site, "zz_parent_site.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    marker.write_text(z3_version + "\n", encoding="utf-8")
    return py, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--z3", default="5.0.0.0", help="the z3-solver version to check (default the floor, 5.0.0.0)")
    parser.add_argument("--venv", default=str(ROOT / "build" / "floor-venv"), help="the venv directory (reused)")
    args = parser.parse_args(argv)
    py, why = ensure_venv(Path(args.venv), args.z3)
    if py is None:
        print(f"floor-check: cannot create a venv with z3-solver=={args.z3}: {why.strip()}", file=sys.stderr)
        return SETUP_FAILED
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VERIFIED_INDEXING_CACHE": str(Path(args.venv) / "proofs.sqlite")}
    version = subprocess.run(
        [str(py), "-c", "import z3; print(z3.get_version_string())"], capture_output=True, text=True, env=env
    )
    print(f"floor-check: z3 {version.stdout.strip()} ({py})")
    expected = ".".join(args.z3.split(".")[:3])
    if version.returncode != 0 or version.stdout.strip() != expected:
        print(f"floor-check: expected z3 {expected}: {version.stderr.strip()}", file=sys.stderr)
        return SETUP_FAILED
    code = 0
    for what, cmd in (
        ("rule proofs", [str(py), "-m", "verified_indexing.proofs"]),
        ("known bugs", [str(py), "-m", "verified_indexing", "known-bugs"]),
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        # The summary lines (the rules' table and the domain theorems' table each end in one), else the last line.
        lines = proc.stdout.strip().splitlines() or [""]
        summary = [ln for ln in lines if re.match(r"\d+ (domain )?rules: |\d+ known bugs: ", ln)] or lines[-1:]
        print(f"floor-check: {what}: exit {proc.returncode}: {'; '.join(summary)}")
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
