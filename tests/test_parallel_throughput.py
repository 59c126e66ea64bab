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


def test_no_fork_with_a_threaded_runtime_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """jax (XLA's thread pools, invisible to ``threading``) loaded: the pool spawns, and so does the engine
    worker; without it and with one thread both may fork."""
    import sys
    import types

    from verified_indexing.engines import deadline

    for name in deadline._THREADED_RUNTIMES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    if threading.active_count() == 1 and deadline._WORKER.proc is None and sys.platform == "linux":
        assert start_method() == "fork" and deadline._may_fork()
    monkeypatch.setitem(sys.modules, "jax", types.ModuleType("jax"))
    assert start_method() == "spawn"
    assert not deadline._may_fork()


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


CORPUS = Path(__file__).resolve().parent / "hlo_corpus" / "jax"


def _cli3(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("extra", [[], ["--json"], ["--computation", "ENTRY"], ["--computation", "region_0.1"],
                                   ["--direction", "input-to-output", "--json"]])
def test_a_dump_directory_read_and_analyzed_by_workers_is_the_one_process_report(tmp_path: Path,
                                                                                extra: list[str]) -> None:
    # each file is read and analyzed by a worker (the parent reads none): the report, the notes and the exit
    # code are those of one process, which reads and analyzes every module itself
    for name in ("attention", "sort", "topk", "cumsum", "scatter_add"):
        (tmp_path / f"{name}.hlo").write_text((CORPUS / f"{name}.post.hlo").read_text())
    one = _cli3("analyze", str(tmp_path), "--jobs", "1", "--no-timing", *extra)
    two = _cli3("analyze", str(tmp_path), "--jobs", "2", "--no-timing", *extra)
    assert one == two and one[0] == 0 and "maps" in one[1]
    if extra[-1:] == ["region_0.1"]:  # a computation of one module: the others are not analyzed
        assert "region_0.1" in one[1] and "fused_computation" not in one[1]


def test_a_bad_file_of_a_dump_directory_is_reported_as_by_one_process(tmp_path: Path) -> None:
    from verified_indexing.cli.analyze import _read_and_analyze

    for name in ("sort", "topk", "cumsum"):
        (tmp_path / f"{name}.hlo").write_text((CORPUS / f"{name}.post.hlo").read_text())
    bad = "HloModule broken\n\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n"
    (tmp_path / "broken.hlo").write_text(bad)
    one = _cli3("analyze", str(tmp_path), "--jobs", "1", "--no-timing")
    two = _cli3("analyze", str(tmp_path), "--jobs", "2", "--no-timing")
    assert one == two and one[0] == 3 and "broken.hlo" in one[2]
    assert _read_and_analyze((bad, "broken.hlo", None, None, {}, float("inf"))) is None


def test_a_worker_reads_and_analyzes_one_input_as_the_parent_would() -> None:
    from verified_indexing.cli.analyze import _read_and_analyze
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo_modules

    text = (CORPUS / "attention.post.hlo").read_text()
    done = _read_and_analyze((text, "a.hlo", None, None, {"verify": True}, float("inf")))
    assert done is not None
    modules, _, outcomes = done
    (module,) = load_hlo_modules(text, "a.hlo", [])
    assert [m.name for m in modules] == [module.name] and len(outcomes) == 1 and outcomes[0][1] == []
    want = analyze_module(module, verify=True)
    assert [[str(a.map) for t in r.targets for a in t.maps] for r in outcomes[0][0]] == \
        [[str(a.map) for t in r.targets for a in t.maps] for r in want]
