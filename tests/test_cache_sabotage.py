"""The proof cache serves a row only for the question it records, and ``verify-cache`` re-proves what is served.

Sabotage (as stale or buggy code would leave it): a ``proved`` row copied under another question's key
(with a valid checksum), a whole simplification result whose served map differs from the map its replay
re-proves. Oracle: the same question asked with no cache at all.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from verified_indexing.engines import ProofCache, prove_equal
from verified_indexing.engines.verify_cache import verify_cache
from verified_indexing.simplify import simplify_with_report
from verified_indexing.syntax import parse_indexing_map

TRUE_A = parse_indexing_map("(d0) -> (d0 floordiv 4 * 4 + d0 mod 4), domain: d0 in [0, 31]")
TRUE_B = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 31]")
FALSE_B = parse_indexing_map("(d0) -> (d0 + 1), domain: d0 in [0, 31]")


def _rows(path: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return {k: (p, c) for k, p, c in conn.execute("SELECT key, payload, checksum FROM proofs")}


def _write(path: Path, key: str, payload: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT OR REPLACE INTO proofs (key, payload, checksum) VALUES (?, ?, ?)",
                     (key, payload, ProofCache._checksum(key, payload)))


def test_a_proved_row_under_another_key_is_neither_served_nor_confirmed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ProofCache(path)
    assert prove_equal(TRUE_A, TRUE_B, cache=cache).proved
    assert prove_equal(TRUE_A, FALSE_B, cache=cache).refuted
    cache.close()
    rows = _rows(path)
    proved = [p for p, _ in rows.values() if json.loads(p)["verdict"]["status"] == "proved"]
    refuted_keys = [k for k, (p, _) in rows.items() if json.loads(p)["verdict"]["status"] == "refuted"]
    assert len(proved) == 1 and len(refuted_keys) == 1
    _write(path, refuted_keys[0], proved[0])  # the false question's key now holds the true one's proof

    oracle = prove_equal(TRUE_A, FALSE_B, cache=None)
    assert oracle.refuted
    served = prove_equal(TRUE_A, FALSE_B, cache=ProofCache(path))
    assert served.refuted and not served.cached

    _write(path, refuted_keys[0], proved[0])
    fresh = ProofCache(path)
    checks = {c.key: c for c in verify_cache(fresh)}
    assert checks[refuted_keys[0]].outcome == "mismatch", checks[refuted_keys[0]]
    assert refuted_keys[0] not in dict(fresh.rows())
    assert all(c.outcome == "confirmed" for k, c in checks.items() if k != refuted_keys[0])


def test_a_row_without_its_question_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ProofCache(path)
    assert prove_equal(TRUE_A, TRUE_B, cache=cache).proved
    cache.close()
    ((key, (payload, _)),) = _rows(path).items()
    old = json.loads(payload)
    del old["question"]  # as older code wrote it
    _write(path, key, json.dumps(old, sort_keys=True))
    assert not prove_equal(TRUE_A, TRUE_B, cache=ProofCache(path)).cached  # re-derived, not trusted
    _write(path, key, json.dumps(old, sort_keys=True))
    fresh = ProofCache(path)
    (check,) = verify_cache(fresh)
    assert check.outcome == "mismatch" and "no question" in check.detail
    assert not fresh.rows()


def test_a_whole_result_serves_only_the_map_it_proves(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    m = parse_indexing_map("(d0, d1) -> (d0 * 8 + d1 floordiv 4, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 31]")
    want = simplify_with_report(m, cache=None).map
    cache = ProofCache(path)
    assert simplify_with_report(m, cache=cache).map == want
    cache.close()
    key, payload = next((k, json.loads(p)) for k, (p, _) in _rows(path).items() if "result" in json.loads(p))
    wrong = "(d0, d1) -> (d0 * 8, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 31]"
    payload["result"]["map"] = wrong  # the replay still names the right output: verify-cache would confirm it
    _write(path, key, json.dumps(payload, sort_keys=True))
    again = simplify_with_report(m, cache=ProofCache(path))
    assert again.map == want and not again.cached

    payload["replay"]["output"] = wrong  # consistent, but false: the re-proof refutes it
    _write(path, key, json.dumps(payload, sort_keys=True))
    fresh = ProofCache(path)
    checks = {c.key: c for c in verify_cache(fresh)}
    assert checks[key].outcome == "mismatch", checks[key]
    assert key not in dict(fresh.rows())
