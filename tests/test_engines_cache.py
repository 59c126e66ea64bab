"""The proof cache: hits, never caching unknown, corruption detected and rebuilt,
tampered rows never trusted, concurrent writers (separate processes)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.engines import ProofCache, default_cache, prove_equal
from verified_indexing.engines.cache import default_cache_path

A = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
B = "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"
WRONG = "(d0, d1) -> (d0, d1 + 1), domain: d0 in [0, 6], d1 in [0, 14]"
REL_A = "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]"
REL_B = "(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 5], s0 in [0, 1]"


def test_hit_returns_the_same_verdict(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    a, b = parse_indexing_map(A), parse_indexing_map(B)
    first = prove_equal(a, b, engine="z3", cache=cache)
    assert first.proved and not first.cached
    second = prove_equal(a, b, engine="z3", cache=cache)
    assert second.proved and second.cached and second.engine == "z3"
    assert cache.hits == 1 and len(cache) == 1
    # another engine is another question
    assert not prove_equal(a, b, engine="isl", cache=cache).cached


def test_refutation_is_cached_and_rechecked(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    a, w = parse_indexing_map(A), parse_indexing_map(WRONG)
    first = prove_equal(a, w, engine="isl", cache=cache)
    second = prove_equal(a, w, engine="isl", cache=cache)
    assert first.refuted and second.refuted and second.cached
    assert second.counterexample == first.counterexample


def test_unknown_is_never_cached(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    v = prove_equal(parse_indexing_map(REL_A), parse_indexing_map(REL_B), engine="z3", cache=cache)
    assert v.unknown
    assert len(cache) == 0
    cache.put("question", v, None)  # put ignores unknown too
    assert len(cache) == 0


def test_corrupted_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not an sqlite database" * 100)
    cache = ProofCache(path)
    v = prove_equal(parse_indexing_map(A), parse_indexing_map(WRONG), engine="isl", cache=cache)
    assert v.refuted and cache.rebuilt and not cache.disabled
    assert len(cache) == 1
    assert any(p.name.startswith("c.sqlite.corrupt.") for p in tmp_path.iterdir())


def test_wrong_schema_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE proofs (key TEXT, verdict TEXT)")
    conn.commit()
    conn.close()
    cache = ProofCache(path)
    assert prove_equal(parse_indexing_map(A), parse_indexing_map(B), engine="isl", cache=cache).proved
    assert cache.rebuilt and len(cache) == 1


def _rows(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT key, payload, checksum FROM proofs").fetchall()
    conn.close()
    return rows


def _set_payload(path: Path, key: str, payload: str, checksum: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE proofs SET payload = ?, checksum = ? WHERE key = ?", (payload, checksum, key))
    conn.commit()
    conn.close()


def test_tampered_row_is_not_trusted(tmp_path: Path) -> None:
    """A refutation edited into a proof (checksum not updated) is ignored and recomputed."""
    path = tmp_path / "c.sqlite"
    cache = ProofCache(path)
    a, w = parse_indexing_map(A), parse_indexing_map(WRONG)
    assert prove_equal(a, w, engine="isl", cache=cache).refuted
    cache.close()
    ((key, payload, checksum),) = _rows(path)
    data = json.loads(payload)
    data["verdict"]["status"] = "proved"
    data["verdict"]["counterexample"] = None
    _set_payload(path, key, json.dumps(data), checksum)
    cache2 = ProofCache(path)
    v = prove_equal(a, w, engine="isl", cache=cache2)
    assert v.refuted and not v.cached


def test_cached_counterexample_is_rechecked(tmp_path: Path) -> None:
    """Even with a valid checksum, a cached counterexample the evaluator does not
    confirm is dropped (here: the evidence point moved to where the maps agree... outside)."""
    path = tmp_path / "c.sqlite"
    cache = ProofCache(path)
    a, w = parse_indexing_map(A), parse_indexing_map(WRONG)
    first = prove_equal(a, w, engine="isl", cache=cache)
    cache.close()
    ((key, payload, _),) = _rows(path)
    data = json.loads(payload)
    data["evidence"]["point"] = [[100, 100], [], []]  # in neither domain: not a counterexample
    new_payload = json.dumps(data, sort_keys=True)
    _set_payload(path, key, new_payload, ProofCache._checksum(key, new_payload))
    cache2 = ProofCache(path)
    v = prove_equal(a, w, engine="isl", cache=cache2)
    assert v.refuted and not v.cached
    assert v.counterexample == first.counterexample


def test_default_cache_path_honours_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIED_INDEXING_CACHE", str(tmp_path / "env.sqlite"))
    assert default_cache_path() == tmp_path / "env.sqlite"
    assert default_cache().path == tmp_path / "env.sqlite"
    monkeypatch.delenv("VERIFIED_INDEXING_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "verified_indexing" / "proofs.sqlite"


def test_unusable_location_disables_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = ProofCache(blocker / "sub" / "c.sqlite")  # a directory under a regular file
    assert prove_equal(parse_indexing_map(A), parse_indexing_map(B), engine="isl", cache=cache).proved
    assert cache.disabled and "cannot use the proof cache" in cache.disabled_reason


def _worker(args: tuple[str, int]) -> list[str]:
    path, seed = args
    cache = ProofCache(path)
    out: list[str] = []
    for k in range(6):
        n = 3 + (seed + k) % 6
        a = parse_indexing_map(f"(d0) -> (d0 floordiv {n} * {n} + d0 mod {n}), domain: d0 in [0, 40]")
        b = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 40]")
        out.append(prove_equal(a, b, engine="isl", cache=cache).status)
    return out


def test_concurrent_writers(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        results = pool.map(_worker, [(path, s) for s in range(3)])
    assert all(s == "proved" for r in results for s in r)
    cache = ProofCache(path)
    assert len(cache) == 6  # n in 3..8: six distinct questions, each stored once
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_threads_share_one_cache(tmp_path: Path) -> None:
    import threading

    cache = ProofCache(tmp_path / "t.sqlite")
    statuses: list[str] = []

    def work(n: int) -> None:
        a = parse_indexing_map(f"(d0) -> (d0 floordiv {n} * {n} + d0 mod {n}), domain: d0 in [-20, 20]")
        b = parse_indexing_map("(d0) -> (d0), domain: d0 in [-20, 20]")
        statuses.append(prove_equal(a, b, engine="z3", cache=cache).status)

    threads = [threading.Thread(target=work, args=(n,)) for n in (2, 3, 4, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == ["proved"] * 4
    assert 3 <= len(cache) <= 4  # n = 2 twice: stored once or twice (same key, replaced)


def test_fork_child_uses_its_own_connection_and_contexts(tmp_path: Path) -> None:
    """After z3 queries in the parent (the context pool thread running), a forked
    child can still prove, with the same cache file."""
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    cache = ProofCache(tmp_path / "f.sqlite")
    a, b = parse_indexing_map(A), parse_indexing_map(B)
    assert prove_equal(a, b, engine="z3", cache=cache).proved
    ctx = multiprocessing.get_context("fork")
    q: multiprocessing.Queue[str] = ctx.Queue()

    def child() -> None:
        w = parse_indexing_map(WRONG)
        q.put(prove_equal(a, w, engine="z3", cache=cache).status)

    p = ctx.Process(target=child)
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get(timeout=5) == "refuted"
    assert len(cache) == 2


def test_fork_child_gets_its_own_isl_engine_context(tmp_path: Path) -> None:
    """The isl engine context is per process: a forked child makes its own (and
    the isl and z3 answers in the child are the real ones)."""
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    from verified_indexing.engines.isl import engine_context

    parent_ctx = engine_context()
    a, b = parse_indexing_map(A), parse_indexing_map(B)
    assert prove_equal(a, b, engine="isl").proved
    ctx = multiprocessing.get_context("fork")
    q: multiprocessing.Queue[tuple[bool, str, str]] = ctx.Queue()

    def child() -> None:
        w = parse_indexing_map(WRONG)
        fresh = engine_context() is not parent_ctx
        q.put((fresh, prove_equal(a, w, engine="isl").status, prove_equal(a, b, engine="all").status))

    p = ctx.Process(target=child)
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get(timeout=5) == (True, "refuted", "proved")
    assert engine_context() is parent_ctx
