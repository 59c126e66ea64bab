"""Semantic injectivity, bijectivity and exact inverses of indexing maps, proven.

Unlike MLIR's syntactic :func:`~verified_indexing.legality.permutation.inverse_permutation`,
these decide the question on the map's actual domain:

* :func:`is_injective` -- the isl engine decides; a refutation carries two domain
  points with the same image, re-checked here with the plain evaluator;
* :func:`is_bijective` -- injective and onto a box (the engines' ``is_bijective_onto``);
* :func:`inverse` -- for an injective quasi-affine map without range or runtime
  variables, the inverse as an :class:`IndexingMap` whose domain is the image,
  with both ``inverse ∘ map = id`` on the map's domain and ``map ∘ inverse = id``
  on the inverse's domain proven by :func:`verified_indexing.engines.prove_equal`
  (together they show the inverse's domain is exactly the image).

An :class:`InverseResult` is ``proved`` only when both identities are proved;
``refuted`` when the map is not injective (with the two points); ``unknown``
when an engine gave up or isl's inverse is not one quasi-affine piece.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from verified_indexing.engines import (
    Verdict,
    indexing_map_from_isl,
    is_bijective_onto,
    prove_equal,
    to_isl_map,
)
from verified_indexing.engines import is_injective as _engine_is_injective
from verified_indexing.engines.deadline import risky_maps, run_bounded
from verified_indexing.engines.isl import IslLimitExceeded
from verified_indexing.engines.sizes import with_sizes_in_results
from verified_indexing.errors import UnsupportedError
from verified_indexing.expr import Dim
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval

__all__ = ["InverseResult", "inverse", "is_injective", "is_bijective", "collision", "identity_on"]

Status = Literal["proved", "refuted", "unknown", "error"]


@dataclass(frozen=True)
class InverseResult:
    """The outcome of :func:`inverse`.

    ``status``: ``proved`` (``inverse`` is set and both identities are proved),
    ``refuted`` (not injective: ``collision`` holds two distinct domain points
    and their common image, evaluator-confirmed), ``unknown`` or ``error``
    (``reason`` says why; ``inverse`` may hold an unproven candidate).
    """

    status: Status
    map: IndexingMap
    inverse: IndexingMap | None
    injectivity: Verdict
    left_identity: Verdict | None
    right_identity: Verdict | None
    collision: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None
    reason: str = ""

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def __str__(self) -> str:
        """The command line's text (see :func:`verified_indexing._repr.report_str`)."""
        from verified_indexing._repr import report_str

        return report_str(self)

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "map": self.map.format(one_line=True),
            "inverse": self.inverse.format(one_line=True) if self.inverse is not None else None,
            "injectivity": self.injectivity.to_json(),
            "inverse_after_map_is_identity": self.left_identity.to_json() if self.left_identity else None,
            "map_after_inverse_is_identity": self.right_identity.to_json() if self.right_identity else None,
            "collision": (
                {"first": list(self.collision[0]), "second": list(self.collision[1]), "image": list(self.collision[2])}
                if self.collision
                else None
            ),
            "reason": self.reason,
        }


def _check_plain(m: IndexingMap, what: str) -> None:
    if m.state != "ok":
        raise UnsupportedError(f"{what}: the map is {m.state.replace('_', ' ')}")
    if m.num_range_vars or m.num_rt_vars:
        raise UnsupportedError(f"{what}: maps with range or runtime variables are not supported")


def collision(m: IndexingMap, verdict: Verdict) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """The two points of an injectivity counterexample, re-checked with the plain
    evaluator (both in the domain, distinct, same image); ``None`` if the verdict
    has none or the evaluator does not confirm it."""
    ce = verdict.counterexample
    if ce is None or not ce.other_values:
        return None
    n = m.num_dims
    p = tuple(v for _, v in ce.values[:n])
    q = tuple(v for _, v in ce.other_values[:n])
    if len(p) != n or len(q) != n or p == q:
        return None
    if not (m.contains(p) and m.contains(q)):
        return None
    img = m.evaluate(p)
    if m.evaluate(q) != img:
        return None
    return p, q, img


def is_injective(m: IndexingMap, *, timeout: float = 10.0, cross_check: bool = True, sizes: int = 0) -> Verdict:
    """Whether distinct domain points of ``m`` always have distinct images.

    isl decides; with ``cross_check`` z3 answers the same question independently
    (bounded by ``min(timeout, 2 s)``): when both decide they must agree (the
    engine is then ``isl+z3``), a disagreement is an ``error``, and a z3
    ``unknown`` leaves isl's verdict (engine ``isl``). ``refuted`` verdicts
    carry an evaluator-confirmed pair (see :func:`collision`); an engine
    counterexample the evaluator rejects becomes an ``error``. ``sizes=k``: the
    first ``k`` dims are size parameters (two points of one size are compared).
    """
    _check_plain(m, "is_injective")
    m = with_sizes_in_results(m, sizes)
    v = _engine_is_injective(m, timeout=timeout)
    if v.refuted and collision(m, v) is None:
        return Verdict("error", v.engine, v.seconds, v.question, "encoding disagrees with evaluator")
    if cross_check:
        return _cross_check(v, _engine_is_injective(m, engine="z3", timeout=min(timeout, 2.0)))
    return v


def _cross_check(v: Verdict, w: Verdict) -> Verdict:
    """isl's verdict ``v`` checked against z3's ``w`` on the same question."""
    if v.engine != "isl" or v.status not in ("proved", "refuted") or w.status not in ("proved", "refuted"):
        return v
    if w.status != v.status:
        return Verdict("error", "isl+z3", v.seconds + w.seconds, v.question,
                       f"ENGINES DISAGREE: isl={v.status}, z3={w.status}")
    return replace(v, engine="isl+z3", seconds=v.seconds + w.seconds)


def is_bijective(
    m: IndexingMap, onto: Sequence[Interval | tuple[int, int]], *, timeout: float = 10.0, cross_check: bool = True
) -> Verdict:
    """Whether ``m`` maps its domain one-to-one onto the box ``onto`` (isl). z3
    cross-checks as in :func:`is_injective` when it decides; it cannot prove
    surjectivity (a quantifier alternation), so a proof stays isl's alone."""
    _check_plain(m, "is_bijective")
    box = [iv if isinstance(iv, Interval) else Interval(iv[0], iv[1]) for iv in onto]
    if len(box) != m.num_results:
        raise UnsupportedError(f"is_bijective: a box of {len(box)} intervals for {m.num_results} results")
    v = is_bijective_onto(m, box, timeout=timeout)
    if cross_check:
        return _cross_check(v, is_bijective_onto(m, box, engine="z3", timeout=min(timeout, 2.0)))
    return v


def identity_on(m: IndexingMap) -> IndexingMap:
    """``(d0, ..., dn-1) -> (d0, ..., dn-1)`` on ``m``'s domain."""
    return m.replace(results=[Dim(i) for i in range(m.num_dims)])


def _tidy(candidate: IndexingMap) -> IndexingMap:
    """The candidate through the verified simplifier (cosmetic: the identities
    are proven on whatever this returns, so a failure just keeps the input)."""
    try:
        from verified_indexing.simplify import simplify

        out = simplify(candidate)
    except Exception:  # the simplifier is optional here; the proofs below decide
        return candidate
    return out if isinstance(out, IndexingMap) and out.state == "ok" else candidate


def _isl_inverse(m: IndexingMap) -> IndexingMap | None:
    """isl's inverse relation of ``m`` as a map (in the worker process when risky)."""
    return indexing_map_from_isl(to_isl_map(m).reverse())


def inverse(m: IndexingMap, *, timeout: float = 10.0, sizes: int = 0) -> InverseResult:
    """The proven inverse of an injective map (see the module docstring).

    ``sizes=k``: the first ``k`` dims are size parameters
    (:mod:`verified_indexing.engines.sizes`); the inverse is that of the map with
    the sizes in front of its results, so it has the sizes as its first ``k``
    dims and first ``k`` results, and composes with other sized maps.

    Raises :class:`UnsupportedError` for maps with range or runtime variables
    and for KNOWN EMPTY / UNDEFINED maps.
    """
    _check_plain(m, "inverse")
    if sizes:
        m = with_sizes_in_results(m, sizes)
    inj = is_injective(m, timeout=timeout)
    if inj.refuted:
        return InverseResult("refuted", m, None, inj, None, None, collision(m, inj),
                             "the map is not injective: two domain points have the same image")
    if not inj.proved:
        return InverseResult(inj.status, m, None, inj, None, None, None, inj.reason or "injectivity not proved")
    try:
        inv = run_bounded(_isl_inverse, risky_maps([m]), timeout, args=(m,))
    except IslLimitExceeded as exc:
        return InverseResult("unknown", m, None, inj, None, None, None, f"isl could not invert the map: {exc}")
    if inv is None or inv.state != "ok":
        return InverseResult("unknown", m, None, inj, None, None, None,
                             "isl's inverse is not a single quasi-affine piece on a bounded domain")
    inv = _tidy(inv)
    left = prove_equal(compose(m, inv), identity_on(m), timeout=timeout)
    right = prove_equal(compose(inv, m), identity_on(inv), timeout=timeout)
    if left.proved and right.proved:
        return InverseResult("proved", m, inv, inj, left, right, None)
    bad = left if not left.proved else right
    status: Status = "error" if bad.refuted else bad.status
    reason = (
        "the candidate inverse from isl failed its identity check (engine disagreement)"
        if bad.refuted
        else bad.reason or "an identity proof was not completed"
    )
    return InverseResult(status, m, inv, inj, left, right, None, reason)
