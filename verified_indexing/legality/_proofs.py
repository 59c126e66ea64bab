"""Proof helpers shared by the fusion and inline checks."""

from __future__ import annotations

import time
from typing import Any

import islpy as isl

from verified_indexing.engines import Verdict, Z3Encoder, image, to_isl_map
from verified_indexing.indexing_map import IndexingMap

__all__ = ["not_written", "reads_inside", "now"]

_ENUM_LIMIT = 200_000


def not_written(producer_write: IndexingMap, element: tuple[int, ...], timeout: float) -> bool | None:
    """Confirm, independently of isl, that no producer iteration writes ``element``:
    by enumeration of small domains, else by z3 (``None`` if z3 gives up)."""
    if producer_write.box_size() <= _ENUM_LIMIT:
        return all(producer_write.evaluate(d) != element for d, _, _ in producer_write.domain_points(_ENUM_LIMIT))
    enc = Z3Encoder()
    env = enc.map_vars(producer_write, "p_")
    s = enc.solver(timeout=timeout)
    s.add(*enc.domain(producer_write, env))
    for r, x in zip(producer_write.results, element):
        s.add(enc.expr(r, env) == x)
    s.add(*enc.side_conditions)
    r = s.check()
    if r == enc.z3.unknown:
        return None
    return bool(r == enc.z3.unsat)


def reads_inside(
    consumer_read: IndexingMap, producer_write: IndexingMap, timeout: float
) -> tuple[Verdict, dict[str, Any] | None]:
    """Whether the image of ``consumer_read`` lies in the image of ``producer_write``
    (isl). A refutation comes with a witness ``{consumer_iteration, element, note}``
    whose element is confirmed unwritten without isl (:func:`not_written`)."""
    question = "every element the consumer reads is written by the producer"
    t0 = now()
    try:
        reads = image(consumer_read)
        written = image(producer_write)
        inside = reads.is_subset(written)
    except isl.Error as exc:
        return Verdict("unknown", "isl", now() - t0, question, f"isl failed: {exc}"), None
    if inside:
        return Verdict("proved", "isl", now() - t0, question), None
    missing = reads.subtract(written)
    bad_iters = to_isl_map(consumer_read).intersect_range(missing).domain()
    point = bad_iters.sample_point()
    c = tuple(int(point.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(consumer_read.num_dims))
    if not consumer_read.contains(c):
        return Verdict("error", "isl", now() - t0, question, "encoding disagrees with evaluator"), None
    element = consumer_read.evaluate(c)
    confirmed = not_written(producer_write, element, timeout)
    if confirmed is None:
        return Verdict("unknown", "isl", now() - t0, question,
                       f"isl says {element} is never written; z3 could not confirm it"), None
    if not confirmed:
        return Verdict("error", "isl", now() - t0, question, "encoding disagrees with evaluator"), None
    witness: dict[str, Any] = {
        "consumer_iteration": list(c),
        "element": list(element),
        "note": f"consumer iteration {c} reads element {element}, which no producer iteration writes",
    }
    return Verdict("refuted", "isl", now() - t0, question, str(witness["note"])), witness


def now() -> float:
    return time.perf_counter()
