"""Whole simplification results in the proof cache: reused for the same input, options and versions only;
what is stored is a proven result, and ``verify-cache`` re-proves it (and removes a planted wrong one)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.engines import ProofCache, prove_pointwise_equal
from verified_indexing.engines.verify_cache import verify_cache
from verified_indexing.simplify import simplify_with_report

M = ("(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
     "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
OTHER = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
# a step that removes a range variable: the result is a relation-equal map with fewer variables
REL = ("(d0, d1)[s0, s1] -> (d0, s0), domain: d0 in [0, 7], d1 in [0, 127], s0 in [0, 127], s1 in [0, 31], "
       "(d1 - s1) mod 32 in [0, 0], d1 - s1 in [0, 96]")


def _rows(cache: ProofCache) -> list[dict[str, object]]:
    return [p for _, p in cache.rows() if isinstance(p.get("replay"), dict) and p["replay"].get("kind") ==
            "simplify-result"]


def test_a_repeated_question_is_a_lookup(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    m = parse_indexing_map(M)
    first = simplify_with_report(m, cache=cache)
    assert not first.cached and first.verified and first.map != m
    assert len(_rows(cache)) == 1
    second = simplify_with_report(m, cache=cache)
    assert second.cached and second.verified and second.map == first.map
    assert [s.rule for s in second.steps] == [s.rule for s in first.steps]
    # another process (a fresh object on the same file) reads the row
    third = simplify_with_report(m, cache=ProofCache(tmp_path / "c.sqlite"))
    assert third.cached and third.map == first.map
    # what is stored is equal to the input: proven again here, independently of the cache
    assert prove_pointwise_equal(m, third.map, engine="z3").proved
    assert third.to_json()["cached"] is True


def test_not_reused_for_another_input_or_option(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    m = parse_indexing_map(M)
    simplify_with_report(m, cache=cache)
    assert not simplify_with_report(parse_indexing_map(OTHER), cache=cache).cached
    assert not simplify_with_report(m, cache=cache, isl_candidate=False).cached
    assert not simplify_with_report(m, cache=cache, replace_point_dims=True).cached
    assert not simplify_with_report(m, cache=cache, timeout=5.0).cached
    # small domains by enumeration or by isl (the command line's setting): both proven, forms can differ
    from verified_indexing.engines import points

    prev = points.set_enabled(not points.enabled())
    try:
        assert not simplify_with_report(m, cache=cache).cached
    finally:
        points.set_enabled(prev)
    assert simplify_with_report(m, cache=cache).cached
    # a renamed variable is another input text
    renamed = parse_indexing_map(M.replace("d2", "x"))
    assert not simplify_with_report(renamed, cache=cache).cached
    # unverified runs never read or write whole results
    n = len(_rows(cache))
    assert not simplify_with_report(m, cache=cache, verify=False).cached
    assert len(_rows(cache)) == n


@pytest.mark.parametrize("which", ["package", "engines"])
def test_not_reused_across_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    m = parse_indexing_map(M)
    simplify_with_report(m, cache=cache)
    assert simplify_with_report(m, cache=cache).cached
    if which == "package":
        monkeypatch.setattr(sys.modules["verified_indexing"], "__version__", "999.0-other")
    else:
        import verified_indexing.engines.cache as cache_mod

        monkeypatch.setattr(cache_mod, "_engine_versions", lambda: "z3 0.0.0; isl other")
    # neither the in-process memo nor the file answers for other versions: a new proof, a second row
    assert not simplify_with_report(m, cache=cache).cached
    assert len(_rows(cache)) == 2
    monkeypatch.undo()
    # a fresh object reads the original versions' row from the file
    assert simplify_with_report(m, cache=ProofCache(tmp_path / "c.sqlite")).cached
    assert len(_rows(cache)) == 2


def test_relation_results_are_stored_as_relations_and_reproved(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    m = parse_indexing_map(REL)
    first = simplify_with_report(m, cache=cache)
    assert first.map.num_range_vars == 1
    (row,) = _rows(cache)
    assert row["replay"]["equivalence"] == "relation"  # type: ignore[index]
    checks = verify_cache(cache)
    assert [c.outcome for c in checks if c.question.startswith("simplify-result")] == ["confirmed"]


def test_verify_cache_removes_a_planted_wrong_result(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ProofCache(path)
    m = parse_indexing_map(M)
    good = simplify_with_report(m, cache=cache)
    cache.close()
    # plant a wrong output in the row (with a valid checksum: verify-cache must not trust it)
    conn = sqlite3.connect(str(path))
    rows = conn.execute("SELECT key, payload FROM proofs").fetchall()
    planted = 0
    for key, payload in rows:
        data = json.loads(payload)
        if data.get("replay", {}).get("kind") != "simplify-result":
            continue
        wrong = good.map.format(True).replace("mod 8", "mod 4")
        data["replay"]["output"] = wrong
        data["result"]["map"] = wrong
        new = json.dumps(data, sort_keys=True)
        conn.execute("UPDATE proofs SET payload = ?, checksum = ? WHERE key = ?",
                     (new, ProofCache._checksum(key, new), key))
        planted += 1
    conn.commit()
    conn.close()
    assert planted == 1
    cache = ProofCache(path)
    checks = [c for c in verify_cache(cache) if c.question.startswith("simplify-result")]
    assert [c.outcome for c in checks] == ["mismatch"]
    assert _rows(cache) == []
    again = simplify_with_report(m, cache=cache)
    assert not again.cached and again.map == good.map


def test_custom_rules_are_never_cached(tmp_path: Path) -> None:
    from verified_indexing.simplify.rules import RULES

    cache = ProofCache(tmp_path / "c.sqlite")
    m = parse_indexing_map(M)
    simplify_with_report(m, cache=cache, rules=list(RULES))
    assert _rows(cache) == []


def test_an_unchanged_map_is_cached_only_when_no_proof_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ProofCache(tmp_path / "c.sqlite")
    plain = parse_indexing_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 5]")
    first = simplify_with_report(plain, cache=cache)
    assert first.map == plain and not first.cached
    again = simplify_with_report(plain, cache=cache)
    assert again.cached and again.map == plain
    # a map left unchanged because its proofs failed is asked again (the failure may be a time limit)
    import verified_indexing.simplify.api as api
    from verified_indexing.engines import Verdict

    monkeypatch.setattr(api, "prove_maps_pointwise",
                        lambda a, b, **k: Verdict("unknown", "isl", 0.0, "q", reason="simulated limit"))
    monkeypatch.setattr(api, "TRUST_RULE_PROOFS", False)  # (its rule instances would prove it otherwise)
    m = parse_indexing_map(M)
    cache2 = ProofCache(tmp_path / "d.sqlite")
    failed = simplify_with_report(m, cache=cache2)
    assert failed.map == m
    assert _rows(cache2) == []
    assert not simplify_with_report(m, cache=cache2).cached
