"""Size parameters: legality questions asked for every size at once.

A *size parameter* is a tensor size or loop extent that the input leaves
symbolic (MLIR's ``?`` dimensions, CINN's ``for (i, 0, N)``, TVM's
``T.int32()`` extents). The convention, shared by every question of the
project:

* a question over ``k`` size parameters has them as the **first ``k`` dims** of
  every map it mentions, each with bounds ``[0, SIZE_MAX]`` (``SIZE_MAX`` is
  ``2**63 - 1``: every size an int64 dimension holds, which is what XLA, MLIR,
  TVM and CINN store sizes in);
* a loop of size ``N`` is a dim ``i`` with bounds ``[0, SIZE_MAX - 1]`` and the
  constraint ``N - 1 - i in [0, SIZE_MAX]`` (:func:`loop_dim`).

Dims are universally quantified in equality, implication and relation-subset
questions, so those already hold "for every size". Injectivity and image
inclusion compare two points or two images: the sizes must stay the same on
both sides, which :func:`with_sizes_in_results` arranges by putting them in
front of the results. ``engines.is_injective``, ``engines.prove_subset`` and
``legality.inverse`` take ``sizes=k`` and do exactly that.

Where an obligation fails for some sizes only, isl computes the exact set of
sizes where it fails (:func:`violating_sizes_injective`,
:func:`violating_sizes_subset`) and :func:`size_condition` turns their union
into the condition under which it holds (``N0 <= 8``), as affine constraints
a caller adds to its domains to prove the obligations again under it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import islpy as isl

from verified_indexing.engines.isl import engine_context, first_point, to_isl_map
from verified_indexing.errors import MapError
from verified_indexing.expr import AffineExpr, Const, Dim
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval

__all__ = [
    "SIZE_MAX",
    "SIZE_BOUNDS",
    "SizeCondition",
    "sizes_problem",
    "loop_constraint",
    "with_sizes_in_results",
    "violating_sizes_injective",
    "violating_sizes_subset",
    "size_condition",
]

SIZE_MAX = 2**63 - 1
SIZE_BOUNDS = Interval(0, SIZE_MAX)
# Bound of an affine constraint expression over sizes (its value is at most a
# few sizes added together): large enough never to cut a real point.
_CONSTRAINT_MAX = 2**80


def loop_constraint(var: AffineExpr, extent: AffineExpr, lo: int = 0) -> tuple[AffineExpr, Interval]:
    """The constraint ``var <= lo + extent - 1`` as ``(expr, interval)`` for a
    loop whose extent is an affine expression of the size dims; the lower end
    ``var >= lo`` (a constant) is the loop variable's own bounds,
    ``[lo, lo + SIZE_MAX - 1]``."""
    return (extent + (lo - 1) - var, Interval(0, _CONSTRAINT_MAX))


def with_sizes_in_results(m: IndexingMap, k: int) -> IndexingMap:
    """``m`` with its first ``k`` dims (the sizes) copied in front of its results,
    so that injectivity and image questions compare points of one size."""
    _check_sizes(m, k)
    if k == 0 or m.state != "ok":
        return m
    return m.replace(results=tuple(Dim(i) for i in range(k)) + tuple(m.results))


def sizes_problem(k: int, *maps: IndexingMap) -> str | None:
    """Why ``k`` size parameters do not fit ``maps`` (None when they do): the one
    check behind every ``sizes=`` argument (questions answer ``error`` with it,
    :func:`with_sizes_in_results` raises it)."""
    for m in maps:
        if k < 0 or (m.state == "ok" and k > m.num_dims):
            return f"{k} size parameters, but the map has {m.num_dims} dims"
    return None


def _check_sizes(m: IndexingMap, k: int) -> None:
    why = sizes_problem(k, m)
    if why is not None:
        raise MapError(why)


def violating_sizes_injective(m: IndexingMap, k: int) -> Any:
    """The exact set (an ``isl.Set`` over the ``k`` sizes) of sizes for which two
    different domain points of ``m`` have the same results (empty for a KNOWN
    EMPTY map)."""
    _check_sizes(m, k)
    if m.is_known_empty:
        return _sizes_set(k, engine_context()).subtract(_sizes_set(k, engine_context()))
    rel = to_isl_map(with_sizes_in_results(m, k), ctx=engine_context())
    ident = isl.Map.identity(rel.get_space().domain().map_from_set())
    pairs = rel.apply_range(rel.reverse()).subtract(ident)
    dom = pairs.domain()
    n = dom.dim(isl.dim_type.set)
    return dom.project_out(isl.dim_type.set, k, n - k)


def violating_sizes_subset(a: IndexingMap, b: IndexingMap, k: int) -> Any:
    """The exact set of sizes for which some result of ``a`` is not a result of
    ``b`` (image inclusion fails), over the ``k`` sizes. A KNOWN EMPTY ``a`` has
    no result; a KNOWN EMPTY ``b`` none either (every size where ``a`` has one
    violates)."""
    ctx = engine_context()
    _check_sizes(a, k)
    _check_sizes(b, k)
    if a.is_known_empty:
        return _sizes_set(k, ctx).subtract(_sizes_set(k, ctx))
    ia = to_isl_map(with_sizes_in_results(a, k), ctx=ctx).range()
    if b.is_known_empty:
        ib = isl.Set.empty(ia.get_space())
    else:
        ib = to_isl_map(with_sizes_in_results(b, k), ctx=ctx).range()
    diff = ia.subtract(ib)
    n = diff.dim(isl.dim_type.set)
    return diff.project_out(isl.dim_type.set, k, n - k)


ConditionStatus = Literal["every", "when", "never"]


@dataclass(frozen=True)
class SizeCondition:
    """Where a set of obligations holds, over the size parameters.

    ``status``: ``every`` (no size violates them), ``when`` (they hold exactly
    for the sizes satisfying ``text``, and some such sizes are all at least 1),
    ``never`` (they fail for every size at which no tensor is empty).
    ``constraints``: the condition as affine constraints over the size dims,
    ``None`` when it is not a single conjunction of affine constraints (a union,
    or a divisibility condition), in which case a caller cannot re-prove under it.
    ``violation``: sizes where the obligations fail (``None`` for ``every``).
    """

    status: ConditionStatus
    text: str
    constraints: tuple[tuple[AffineExpr, Interval], ...] | None
    violation: tuple[int, ...] | None = None


def _sizes_set(k: int, ctx: Any) -> Any:
    names = ", ".join(f"n{i}" for i in range(k))
    return isl.Set(f"{{ [{names}] }}", context=ctx)


def _universe(k: int, ctx: Any) -> Any:
    names = ", ".join(f"n{i}" for i in range(k))
    conds = " and ".join(f"0 <= n{i} <= {SIZE_MAX}" for i in range(k)) or "1 = 1"
    return isl.Set(f"{{ [{names}] : {conds} }}", context=ctx)


def _coefficients(c: Any, k: int) -> tuple[list[int], int]:
    coefs = [int(c.get_coefficient_val(isl.dim_type.set, i).to_python()) for i in range(k)]
    return coefs, int(c.get_constant_val().to_python())


def _linear(coefs: Sequence[int], const: int) -> AffineExpr:
    e: AffineExpr = Const(const)
    for i, v in enumerate(coefs):
        if v:
            e = e + Dim(i) * v
    return e


def _format_constraint(coefs: Sequence[int], const: int, equality: bool, names: Sequence[str]) -> str:
    """``sum coefs*names + const >= 0`` (or ``= 0``), written with positive
    coefficients on each side: ``N0 <= 8``, ``N1 >= N0 + 1``, ``N0 = N1``."""

    def side(pairs: list[tuple[int, int]], c: int) -> str:
        words = [(f"{v} * " if v != 1 else "") + names[i] for i, v in pairs]
        if c or not words:
            words.append(str(c))
        return " + ".join(words)

    pos = [(i, v) for i, v in enumerate(coefs) if v > 0]
    neg = [(i, -v) for i, v in enumerate(coefs) if v < 0]
    le, ge = ("=", "=") if equality else ("<=", ">=")
    if not pos:
        return f"{side(neg, 0)} {le} {const}"
    if not neg:
        return f"{side(pos, 0)} {ge} {-const}"
    if const >= 0:
        return f"{side(neg, 0)} {le} {side(pos, const)}"
    return f"{side(pos, 0)} {ge} {side(neg, -const)}"


def size_condition(violations: Sequence[Any], k: int, names: Sequence[str]) -> SizeCondition:
    """The condition on the ``k`` sizes (named ``names``) under which no set of
    ``violations`` (isl sets over the sizes, e.g. from
    :func:`violating_sizes_injective`) applies; see :class:`SizeCondition`."""
    ctx = engine_context()
    universe = _universe(k, ctx)
    bad = isl.Set.empty(universe.get_space())
    for v in violations:
        bad = bad.union(isl.Set(v.to_str(), context=ctx).reset_space(universe.get_space()))
    bad = bad.intersect(universe).coalesce()
    if bad.is_empty():
        return SizeCondition("every", "every size", ())
    witness = first_point(bad, k)
    good = universe.subtract(bad).coalesce()
    nonempty = good
    for i in range(k):
        nonempty = nonempty.lower_bound_val(isl.dim_type.set, i, 1)
    if nonempty.is_empty():
        return SizeCondition("never", "only sizes with an empty tensor", None, witness)
    gist = good.gist(universe).coalesce()
    bsets = gist.get_basic_sets()
    texts: list[str] = []
    constraints: list[tuple[AffineExpr, Interval]] | None = []
    for b in bsets:
        parts = []
        for c in b.get_constraints():
            coefs, const = _coefficients(c, k)
            parts.append(_format_constraint(coefs, const, c.is_equality(), names))
        texts.append(" and ".join(parts) if parts else "true")
    if any(b.dim(isl.dim_type.div) for b in bsets):
        # one pass: a name such as ``n0`` must not be renamed again; isl writes
        # coefficients against the name (``2n1``), so a digit may precede it
        text = re.sub(r"(?<![A-Za-z_])n(\d+)\b", lambda mt: names[int(mt.group(1))], gist.to_str())
        return SizeCondition("when", text, None, witness)
    if len(bsets) == 1:
        for c in bsets[0].get_constraints():
            e = _linear(*_coefficients(c, k))
            assert constraints is not None
            constraints.append((e, Interval(0, 0) if c.is_equality() else Interval(0, _CONSTRAINT_MAX)))
    else:
        constraints = None
    text = " or ".join(f"({t})" if len(bsets) > 1 else t for t in texts)
    return SizeCondition("when", text, None if constraints is None else tuple(constraints), witness)
