"""The command line's process tunes Python's cyclic garbage collector for large inputs
(``verified_indexing.cli.GC_THRESHOLDS``); a library caller of ``main(argv)`` keeps its own thresholds."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from verified_indexing.cli import GC_THRESHOLDS, main

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import atexit, gc, sys
from verified_indexing.cli import main
atexit.register(lambda: print(gc.get_threshold(), file=sys.stderr))
sys.argv = ["verified-indexing", "simplify", "--no-timing", "-e", "(d0) -> (d0 mod 4), domain: d0 in [0, 3]"]
main()
"""


def test_the_command_line_process_collects_less_often() -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "(d0) -> (d0)" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == str(GC_THRESHOLDS)
    assert GC_THRESHOLDS[0] > 700  # Python's default: the young generation is collected less often


def test_a_library_caller_keeps_its_thresholds(capsys: object) -> None:
    before = gc.get_threshold()
    assert main(["simplify", "--no-timing", "-e", "(d0) -> (d0 mod 4), domain: d0 in [0, 3]"]) == 0
    assert gc.get_threshold() == before
