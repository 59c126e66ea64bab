"""Re-prove what the proof cache stores (``verified-indexing verify-cache``).

The cache trusts a ``proved`` row of the same code: its key includes the package,
z3 and isl versions and :data:`~verified_indexing.engines.cache.SEMANTICS_VERSION`,
and a checksum guards the row against corruption. :func:`verify_cache` does not
trust: it rebuilds each sampled ``proved`` question from its stored text (only
the registered question builders are called), asks the same engine again without
the cache, and removes the row when the answer is no longer ``proved``-compatible
(``refuted`` or ``error``). A row that does not record the question of its key
(moved, or written by older code), whose replay rebuilds another question, or
(a whole result) whose served map is not the map re-proven, is a mismatch and
removed too. A row that cannot be rebuilt, or whose re-proof is ``unknown``, is
reported and kept. A whole simplification result (see
:mod:`verified_indexing.simplify.result_cache`) is re-proven by asking the engines whether
its stored input and output are equal (point by point, or as relations when a step
removed range variables).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from verified_indexing.engines import subset as _subset  # noqa: F401  (registers the subset questions)
from verified_indexing.engines.api import answer, question_from_replay
from verified_indexing.engines.cache import ProofCache
from verified_indexing.errors import VerifiedIndexingError

__all__ = ["CacheCheck", "verify_cache", "NOT_REACHED"]

NOT_REACHED = "not reached: the time budget ran out before this row"
"""The detail of a row left unchecked because the command's ``--timeout`` budget was spent."""


@dataclass(frozen=True)
class CacheCheck:
    """One re-proved row: ``outcome`` is ``confirmed``, ``mismatch`` (removed
    unless a dry run), ``unconfirmed`` (the engine said unknown) or ``skipped``."""

    key: str
    question: str
    outcome: str
    detail: str = ""

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "question": self.question, "outcome": self.outcome, "detail": self.detail}


def verify_cache(
    cache: ProofCache,
    *,
    sample: int | None = None,
    seed: int = 0,
    timeout: float = 10.0,
    remove: bool = True,
) -> list[CacheCheck]:
    """Re-prove ``sample`` stored ``proved`` rows (all when ``None``), chosen with ``seed``."""
    rows = [(k, p) for k, p in cache.rows() if isinstance(p, dict) and p.get("verdict", {}).get("status") == "proved"]
    rows.sort(key=lambda r: r[0])
    if sample is not None and sample < len(rows):
        rows = random.Random(seed).sample(rows, sample)
    out: list[CacheCheck] = []

    def mismatch(key: str, text: str, detail: str) -> None:
        if remove:
            cache.delete_key(key)
        out.append(CacheCheck(key, text, "mismatch", detail))

    from verified_indexing.engines.deadline import remaining

    for key, payload in rows:
        text = payload.get("question")
        if remaining() <= 0:  # the command's budget is spent: the rest is named, not re-proved
            out.append(CacheCheck(key, str(text), "unconfirmed", NOT_REACHED))
            continue
        if not isinstance(text, str) or cache.key_of(text) != key:
            # served to whoever asks the key's question: a row that does not record that question is wrong
            mismatch(key, str(text or payload["verdict"].get("question", "")),
                     "the row does not record the question of its key" if isinstance(text, str)
                     else "the row records no question (written by older code)")
            continue
        replay = payload.get("replay")
        if not isinstance(replay, dict):
            out.append(CacheCheck(key, text, "skipped", "no replay information in the row"))
            continue
        if replay.get("kind") == "simplify-result":
            # a whole simplification result: what is served (the stored map) must be what is re-proven
            from verified_indexing.simplify.result_cache import reprove_result

            result = payload.get("result")
            served = result.get("map") if isinstance(result, dict) else None
            if served != replay.get("output") or not text.endswith(f"\n{replay.get('input')}"):
                mismatch(key, text, "the served map or the input differs from the re-provable replay")
                continue
            try:
                v = reprove_result(replay, timeout)
            except (VerifiedIndexingError, ValueError, TypeError, KeyError) as exc:
                out.append(CacheCheck(key, text, "skipped", f"cannot rebuild the result: {exc}"))
                continue
        else:
            try:
                q = question_from_replay(replay)
            except (VerifiedIndexingError, ValueError, TypeError, KeyError) as exc:
                out.append(CacheCheck(key, text, "skipped", f"cannot rebuild the question: {exc}"))
                continue
            engine = str(replay.get("engine", "auto"))
            if f"{engine}\n{q.text}" != text:
                mismatch(key, text, "the question rebuilt from the replay is not the row's question")
                continue
            v = answer(q, engine, timeout, cache=None)
        if v.proved:
            out.append(CacheCheck(key, text, "confirmed", f"proved again by {v.engine}"))
        elif v.unknown:
            out.append(CacheCheck(key, text, "unconfirmed", f"{v.engine}: {v.reason}"))
        else:
            why = v.reason or (v.counterexample.note if v.counterexample is not None else "")
            mismatch(key, text, f"now {v.status} by {v.engine}: {why}")
    return out
