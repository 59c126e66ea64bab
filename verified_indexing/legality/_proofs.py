"""Proof helpers shared by the fusion and inline checks."""

from __future__ import annotations

import time
from typing import Any

from verified_indexing.engines import Verdict, Z3Encoder, prove_subset
from verified_indexing.engines.sizes import with_sizes_in_results
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
    consumer_read: IndexingMap, producer_write: IndexingMap, timeout: float, sizes: int = 0
) -> tuple[Verdict, dict[str, Any] | None]:
    """Whether the image of ``consumer_read`` lies in the image of ``producer_write``
    (:func:`verified_indexing.engines.prove_subset` with ``of="image"``). A
    refutation comes with a witness ``{consumer_iteration, element, note}``: the
    engine confirms it, and it is confirmed again here without the engine that
    found it (the consumer point by evaluation, the element unwritten by
    :func:`not_written`)."""
    question = "every element the consumer reads is written by the producer"
    t0 = now()
    if sizes:  # compare images size by size: the sizes lead the results (the witness element includes them)
        consumer_read = with_sizes_in_results(consumer_read, sizes)
        producer_write = with_sizes_in_results(producer_write, sizes)
    v = prove_subset(consumer_read, producer_write, of="image", timeout=timeout)
    if v.proved:
        return Verdict("proved", v.engine, now() - t0, question), None
    ce = v.counterexample
    if not v.refuted or ce is None:
        return Verdict(v.status, v.engine, now() - t0, question, v.reason), None
    c = tuple(val for _, val in ce.values[: consumer_read.num_dims])
    if not consumer_read.contains(c):
        return Verdict("error", v.engine, now() - t0, question, "encoding disagrees with evaluator"), None
    element = consumer_read.evaluate(c)
    confirmed = not_written(producer_write, element, timeout)
    if confirmed is None:
        return Verdict("unknown", v.engine, now() - t0, question,
                       f"{v.engine} says {element} is never written; z3 could not confirm it"), None
    if not confirmed:
        return Verdict("error", v.engine, now() - t0, question, "encoding disagrees with evaluator"), None
    witness: dict[str, Any] = {
        "consumer_iteration": list(c),
        "element": list(element),
        "note": f"consumer iteration {c} reads element {element}, which no producer iteration writes",
    }
    return Verdict("refuted", v.engine, now() - t0, question, str(witness["note"])), witness


def now() -> float:
    return time.perf_counter()
