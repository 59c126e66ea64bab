"""``assert_maps_equal``: a test assertion that proves, not samples."""

from __future__ import annotations

import itertools

from verified_indexing.engines.verdict import Counterexample, Verdict
from verified_indexing.indexing_map import IndexingMap

__all__ = ["assert_maps_equal"]

# Range-variable boxes larger than this are not enumerated when re-checking a
# ``relation`` counterexample (the engines have already confirmed it).
_ENUM_LIMIT = 100_000


def assert_maps_equal(
    a: IndexingMap | str,
    b: IndexingMap | str,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    msg: str = "",
) -> Verdict:
    """Prove that ``a`` and ``b`` are the same map (the same domain and the same
    results at every point, range variables existentially quantified, as
    :func:`verified_indexing.prove_equal` decides it); return the ``proved``
    verdict.

    Maps may be given as text (parsed with :func:`verified_indexing.parse_indexing_map`).

    Raises :class:`AssertionError` when the maps are not proven equal:

    * ``refuted``: the message holds both maps, the counterexample (every
      variable's value and what each side gives there), and the counterexample
      has been re-evaluated on both maps with the plain evaluator
      (:meth:`IndexingMap.contains` / :meth:`IndexingMap.evaluate`) first;
    * ``unknown`` (e.g. a timeout, or z3 on a question it only half decides):
      the message gives the engine's reason; unknown is never a pass;
    * ``error`` (different numbers of dims, results...): the reason.

    ``msg`` is prepended to the message (as pytest's ``assert x, msg``).
    """
    from verified_indexing.engines import prove_equal
    from verified_indexing.syntax import parse_indexing_map

    ma = parse_indexing_map(a, "<first map>") if isinstance(a, str) else a
    mb = parse_indexing_map(b, "<second map>") if isinstance(b, str) else b
    verdict = prove_equal(ma, mb, engine=engine, timeout=timeout)
    if verdict.proved:
        return verdict
    head = [msg] if msg else []
    head += [f"  first:  {_one_line(ma)}", f"  second: {_one_line(mb)}"]
    if verdict.refuted:
        ce = verdict.counterexample
        assert ce is not None  # a refutation always carries one (see Verdict)
        check = _recheck(ma, mb, ce)
        lines = [f"the maps differ (refuted by {verdict.engine}):", *head, "counterexample:"]
        lines += ["  " + line for line in ce.lines()]
        lines.append(f"plain evaluator: {check}")
        raise AssertionError("\n".join(lines))
    what = "unknown" if verdict.unknown else "error"
    raise AssertionError(
        "\n".join([f"could not prove the maps equal ({what}, engine {verdict.engine}): {verdict.reason}", *head])
    )


def _one_line(m: IndexingMap) -> str:
    return m.format(one_line=True)


def _split(m: IndexingMap, values: list[int]) -> tuple[list[int], list[int], list[int]] | None:
    nd, ns, nr = m.num_dims, m.num_range_vars, m.num_rt_vars
    if len(values) != nd + ns + nr:
        return None
    return values[:nd], values[nd : nd + ns], values[nd + ns :]


def _relates(m: IndexingMap, dims: list[int], rts: list[int], results: tuple[int, ...]) -> bool | None:
    """Whether some range-variable value of ``m`` relates (dims, rts) to ``results``; ``None`` when the
    range box is too large to enumerate."""
    boxes = [range(v.bounds.lo, v.bounds.hi + 1) for v in m.range_vars]
    size = 1
    for box in boxes:
        size *= len(box)
    if size > _ENUM_LIMIT:
        return None
    return any(
        m.contains(dims, s, rts) and m.evaluate(dims, s, rts) == results for s in itertools.product(*boxes)
    )


def _recheck(a: IndexingMap, b: IndexingMap, ce: Counterexample) -> str:
    """Re-evaluate the counterexample on both maps; a one-line account of what was confirmed.

    Raises AssertionError (with the reason) if the evaluator contradicts the engines: that is a bug of
    the engines, reported rather than hidden."""
    values = [v for _, v in ce.values]
    if ce.kind in ("results", "domain"):
        pa, pb = _split(a, values), _split(b, values)
        if pa is None or pb is None:
            return "not re-evaluated (the maps' variables differ in number)"
        in_a, in_b = a.contains(*pa), b.contains(*pb)
        if ce.kind == "results":
            if not (in_a and in_b):
                raise AssertionError(f"engine counterexample {ce} is not in both domains (engine bug)")
            ra, rb = a.evaluate(*pa), b.evaluate(*pb)
            if ra == rb:
                raise AssertionError(f"engine counterexample {ce} gives equal results {ra} (engine bug)")
            return f"confirmed: both domains hold the point; first gives {ra}, second gives {rb}"
        if in_a == in_b:
            raise AssertionError(f"engine counterexample {ce} is in both domains or neither (engine bug)")
        return f"confirmed: the point is in the {'first' if in_a else 'second'} domain only"
    if ce.kind == "relation":
        side, other = (a, b) if ce.in_domain == "source" else (b, a)
        results = ce.source if ce.in_domain == "source" else ce.target
        point = _split(side, values)
        if point is None or results is None:
            return "not re-evaluated (relation example without the relating side's point)"
        dims, syms, rts = point
        if not side.contains(dims, syms, rts) or side.evaluate(dims, syms, rts) != results:
            raise AssertionError(f"engine counterexample {ce} is not related by its side (engine bug)")
        related = _relates(other, dims, rts, results)
        if related is None:
            return "relating side confirmed; the other side's range variables are too many to enumerate"
        if related:
            raise AssertionError(f"engine counterexample {ce} is related by both maps (engine bug)")
        name = "first" if side is a else "second"
        return f"confirmed by enumeration: only the {name} map relates these inputs to {results}"
    return f"not re-evaluated (counterexample kind {ce.kind!r})"
