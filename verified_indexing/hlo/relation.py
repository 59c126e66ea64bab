"""Exact relations of composed indexing maps (isl), the independent side of a fusion proof.

A map ``(d)[s]{rt} -> (r)`` is the relation ``{[d, rt] -> [r] : exists s in the
domain}`` (:func:`verified_indexing.engines.to_isl_map`): range variables are
existential, runtime variables are inputs. :func:`chain` composes such relations
exactly with the variable order of :func:`verified_indexing.compose` (the
runtime variables of the later map first), so a composed-and-simplified map can
be checked for equality against the relation built from the per-op maps alone.
"""

from __future__ import annotations

import math
import time
from typing import Any

import islpy as isl

from verified_indexing.engines.isl import relation_then, to_isl_map
from verified_indexing.engines.verdict import Verdict
from verified_indexing.indexing_map import IndexingMap

__all__ = ["relation", "chain", "drop_rt_inputs", "check_equal", "relations_equal"]


def relation(m: IndexingMap) -> Any:
    """The exact relation of ``m`` (inputs ``[d..., rt...]``)."""
    return to_isl_map(m)


def chain(first: Any, num_dims: int, second: IndexingMap) -> Any:
    """The relation of ``first`` followed by the map ``second``.

    ``first`` has inputs ``[d (num_dims), rt_first...]``; ``second``'s runtime
    variables become inputs placed right after ``d`` (``[d, rt_second, rt_first]``),
    the order :func:`verified_indexing.compose` gives its result.
    """
    return relation_then(first, num_dims, second)


def drop_rt_inputs(rel: Any, num_dims: int, rt_indices: list[int]) -> Any:
    """Project out the runtime-variable inputs ``rt_indices`` (existentially)."""
    for k in sorted(rt_indices, reverse=True):
        rel = rel.project_out(isl.dim_type.in_, num_dims + k, 1)
    return rel


def relations_equal(a: Any, b: Any) -> bool:
    """Exact equality of two relations (False when their arities differ).

    Under a command budget (:func:`verified_indexing.engines.deadline.command_budget`) a relation with
    divisions is compared in the worker process, killed at the deadline (isl's equality of relations
    with nested divisions can run for minutes without consulting its operation limit): then
    :class:`~verified_indexing.engines.deadline.DeadlineExceeded` when the budget runs out."""
    from verified_indexing.engines.deadline import remaining, run_bounded

    for kind in (isl.dim_type.in_, isl.dim_type.out):
        if a.dim(kind) != b.dim(kind):
            return False
    if remaining() == math.inf:
        return bool(a.is_equal(b))
    if not any(bm.dim(isl.dim_type.div) for m in (a, b) for bm in m.get_basic_maps()):
        return bool(a.is_equal(b))  # no division, no existential: isl answers at once
    return bool(run_bounded(_equal_texts, True, math.inf, args=(a.to_str(), b.to_str())))


def _equal_texts(a: str, b: str) -> bool:
    """In the worker: two relations, read from isl's own text, equal."""
    from verified_indexing.engines.isl import engine_context

    ctx = engine_context()
    return bool(isl.Map(a, context=ctx).is_equal(isl.Map(b, context=ctx)))


def check_equal(m: IndexingMap, rel: Any, question: str) -> Verdict:
    """Prove ``m`` equal to the exact relation ``rel`` (isl): ``proved``, ``error``
    naming a point where they differ (never a guess), or ``unknown`` when the
    command's time budget runs out first."""
    from verified_indexing.engines.deadline import DeadlineExceeded

    start = time.perf_counter()
    mine = to_isl_map(m)
    try:
        equal = relations_equal(mine, rel)
    except DeadlineExceeded as exc:
        return Verdict("unknown", "isl", time.perf_counter() - start, question, reason=f"time budget: {exc}")
    if not equal:
        diff = mine.subtract(rel).union(rel.subtract(mine)) if mine.get_space() == rel.get_space() else None
        where = ""
        if diff is not None and not diff.is_empty():
            where = f": they differ at {diff.sample().wrap().sample_point()}"
        return Verdict(
            "error",
            "isl",
            time.perf_counter() - start,
            question,
            reason="the composed map is not equal to the exact composition of the per-op maps" + where,
        )
    return Verdict("proved", "isl", time.perf_counter() - start, question)
