"""A worker process that dies does not take the batch with it (``run_ordered(on_crash=...)``).

Oracle: the plain in-process map of the same function over the items that do not crash."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_helpers import square_or_die

from verified_indexing.cli._batch import record, worker_died
from verified_indexing.parallel import run_ordered


def test_a_dying_worker_gives_one_crash_answer_and_the_rest_run() -> None:
    items = [1, 2, -3, 4, 5, -6, 7]
    got = list(run_ordered(square_or_die, items, jobs=2, on_crash=lambda x, exc: ("died", x)))
    want = [x * x if x >= 0 else ("died", x) for x in items]
    assert got == want


def test_without_on_crash_the_broken_pool_is_an_error() -> None:
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(BrokenProcessPool):
        list(run_ordered(square_or_die, [1, -1, 2], jobs=2))


def test_the_batch_record_of_a_dead_worker_is_an_internal_error() -> None:
    code, output = worker_died((["simplify", "--json"], "v"), RuntimeError("boom"))
    rec = record(output, code, "simplify", line=3)
    assert code == 4 and rec["exit_code"] == 4 and rec["line"] == 3
    assert rec["error"]["kind"] == "internal" and "died" in rec["error"]["message"]
    assert json.loads(output)["schema"] == rec["schema"]
