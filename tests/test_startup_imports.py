"""Issue 27 item 3: nothing heavy is imported before it is needed. ``--help`` and ``show -e MAP`` import
none of numpy, z3, islpy, jax, tvm (checked with ``python -X importtime``, which reports every module as
it is imported, even when the command line ends the process with ``os._exit``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numpy", "z3", "islpy", "jax", "jaxlib", "tvm", "tqdm")
MAP = "(d0, d1) -> (d0 * 4 + d1 floordiv 8, d1 mod 8), domain: d0 in [0, 15], d1 in [0, 31]"


def _imported(argv: list[str], tmp_path: Path) -> set[str]:
    """The top-level packages the command ``verified-indexing ARGV`` imported."""
    import os

    env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / "cache.sqlite"))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "verified_indexing", *argv],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "verified_indexing" in names  # the oracle sees the package's own imports
    return names


@pytest.mark.parametrize("argv", [["--help"], ["show", "-e", MAP]], ids=["help", "show"])
def test_light_commands_import_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    assert _imported(argv, tmp_path) & set(HEAVY) == set()


def test_the_check_sees_a_heavy_import(tmp_path: Path) -> None:
    """The check can fail: a command that proves with isl imports islpy."""
    assert "islpy" in _imported(["prove-equal", "-e", "d0 floordiv 4 * 4 + d0 mod 4", "-e", "d0",
                                 "--domain", "d0 in [0, 63]", "--engine", "isl"], tmp_path)
