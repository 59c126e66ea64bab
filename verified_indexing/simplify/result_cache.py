"""Whole simplification results in the proof cache: a repeated ``simplify`` question is a lookup.

Key: the question text ``simplify-result`` + :data:`RESULT_FORMAT` + the options that can
change the answer (``exact``, ``replace_point_dims``, ``isl_candidate``, ``per_rewrite``,
``rescale_range_vars``, ``timeout``, isl's operation limit) + a fingerprint of the rule
catalogue + the input map's canonical one-line text, hashed by
:meth:`~verified_indexing.engines.cache.ProofCache.key_of` with the package, z3 and isl
versions and ``SEMANTICS_VERSION`` (so another version, option or input is another key).

What is stored: only results of :func:`~verified_indexing.simplify.simplify_with_report`
with ``verify=True`` and the library's own catalogue, whose every round was proven (the
report is ``verified``, stopped at a fixpoint, not by the round bound or the time budget)
(an unchanged result only when no rule applied and no proof failed: the whole-result proof was not
needed, not failed). The row holds the result map's text (stored only when it
parses back to the same map), the steps and the final verdict, and how the result was
proven: ``pointwise`` (same variables, same results at every point) or ``relation`` (a step
removed or rescaled range variables, proven with range variables existential).

What the cache trusts: a row whose key and checksum match was written by this code after
those proofs; it is returned without proving again. ``verify-cache`` does not trust it: it
parses both maps from the row and asks the engines again (without the cache) whether
they are equal in the stored sense, and removes the row when the answer is refuted or error.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

from verified_indexing.indexing_map import IndexingMap

__all__ = ["RESULT_FORMAT", "RELATION_STEPS", "result_question", "rules_fingerprint", "reprove_result"]

RESULT_FORMAT = "simplify-result-1"
"""Bump whenever what a stored whole result means changes."""

RELATION_STEPS = frozenset({"remove_unused_symbols", "drop_existential_var", "rescale_range_var",
                             "solve_range_var"})
"""Steps proven as relations (range variables existential) rather than point by point."""


@lru_cache(maxsize=1)
def rules_fingerprint() -> str:
    """A digest of the rule catalogue (names and texts): a changed catalogue is another key."""
    from verified_indexing.simplify.rules import RULES

    text = "\n".join(f"{r.name}: {r.text} if {r.where}" for r in RULES)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def result_question(m: IndexingMap, options: dict[str, Any]) -> str:
    """The canonical question text of ``simplify_with_report(m, **options)``."""
    opts = ", ".join(f"{k}={options[k]!r}" for k in sorted(options))
    return f"simplify-result ({RESULT_FORMAT}; rules {rules_fingerprint()}; {opts})\n{m.format(one_line=True)}"


@lru_cache(maxsize=4096)
def parse_stored_map(text: str) -> IndexingMap:
    """A stored map text, parsed (maps are immutable, so a parse is shared)."""
    from verified_indexing.syntax import parse_indexing_map

    return parse_indexing_map(text, "<cache>")


def reprove_result(replay: dict[str, Any], timeout: float) -> Any:
    """The engines' verdict (no cache) that a whole-result row's output equals its input
    in the stored sense (``pointwise`` or ``relation``)."""
    from verified_indexing.engines import prove_equal, prove_pointwise_equal

    a = parse_stored_map(str(replay["input"]))
    b = parse_stored_map(str(replay["output"]))
    if replay.get("equivalence") == "pointwise":
        return prove_pointwise_equal(a, b, timeout=timeout, cache=None)
    return prove_equal(a, b, timeout=timeout, cache=None)
