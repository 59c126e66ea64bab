"""The process pool's fast paths (chunks of items per task, forked workers, one command-line parser per
worker) change nothing but the speed.

Oracles: the plain in-process map of the function; for a ``simplify --batch``, each map simplified by its
own ``simplify --json`` command (a fresh parser, in this process), and the ``--jobs 1`` output byte for byte."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_helpers import square_or_die

from verified_indexing import parallel
from verified_indexing.cli import main
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.parallel import chunk_size, run_ordered, start_method


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_chunks_keep_input_order_and_a_crash_inside_a_chunk_is_found(method: str, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    monkeypatch.setattr(parallel, "start_method", lambda: method)
    items = [1, 2, 3, -4, 5, 6, 7, 8, -9, 10, 11]
    got = list(run_ordered(square_or_die, items, jobs=2, chunk=3, on_crash=lambda x, exc: ("died", x)))
    assert got == [x * x if x >= 0 else ("died", x) for x in items]
    assert list(run_ordered(square_or_die, list(range(23)), jobs=2, chunk=4)) == [x * x for x in range(23)]


def test_chunk_sizes() -> None:
    assert chunk_size(7, 2) == 1 and chunk_size(1000, 2) == parallel.CHUNK and chunk_size(40, 2) == 5
    with pytest.raises(VerifiedIndexingError, match="chunk must be at least 1"):
        run_ordered(square_or_die, [1, 2], jobs=2, chunk=0)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert start_method() == "spawn"
    finally:
        stop.set()
        thread.join()


def _maps() -> list[str]:
    out = []
    for k in range(36):
        a, b, n = 2 + k % 5, 3 + k % 7, 4 + k % 9
        out.append(f"(d0, d1) -> ((d0 * {a} + d1) floordiv {b}, (d0 * {a} + d1) mod {b}, d1 mod {a}), "
                   f"domain: d0 in [0, {n}], d1 in [0, {a - 1}]")
    return out


def test_a_batch_on_two_processes_is_the_one_process_output_and_each_maps_own_answer(tmp_path: Path) -> None:
    maps = _maps()
    lines = [json.dumps({"map": m}) for m in maps]
    lines.insert(17, "not json")  # a bad line among the chunks keeps its place
    batch = tmp_path / "maps.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    code1, one = _cli("simplify", "--batch", str(batch), "--jobs", "1", "--no-timing")
    code2, two = _cli("simplify", "--batch", str(batch), "--jobs", "2", "--no-timing")
    assert two == one and code2 == code1 == 3
    records = [json.loads(r) for r in two.splitlines()]
    assert [r["line"] for r in records] == list(range(1, len(lines) + 1))
    assert records[17]["exit_code"] == 3 and records[17]["error"]["kind"] == "bad-input"
    answers = [r for k, r in enumerate(records) if k != 17]
    for m, r in zip(maps, answers):
        code, alone = _cli("simplify", "--json", "--no-timing", "-e", m)
        want = {k: v for k, v in json.loads(alone).items() if k not in ("schema", "command")}
        assert r["exit_code"] == code == 0 and r["result"] == want


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (extra 'distributed')")
def test_ray_runs_the_same_chunks_in_order() -> None:
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        got = list(run_ordered(abs, list(range(-11, 12)), jobs=2, backend="ray", chunk=4))
    finally:
        ray.shutdown()
    assert got == [abs(x) for x in range(-11, 12)]
