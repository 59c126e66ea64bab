"""Inclusion and equality questions other areas need: subsets of domains, images
and relations, pointwise equality, relation equality.

Each returns a four-valued :class:`~verified_indexing.engines.verdict.Verdict`
like the questions of :mod:`verified_indexing.engines.api`, with the same
``engine=``, ``timeout=`` and ``cache=`` arguments, and every refutation is
confirmed before it is reported.

What the sets are (range variables are existentially quantified, runtime
variables are inputs, as in :func:`~verified_indexing.engines.prove_equal`):

* ``domain``: ``{(dims, rt vars) : exists range vars in the domain}``;
* ``image``: ``{results : exists a domain point}``;
* ``relation``: ``{(dims, rt vars) -> results : exists range vars in the domain}``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import islpy as isl

from verified_indexing.engines import enumerate as en
from verified_indexing.engines import z3_queries as zq
from verified_indexing.engines.api import (
    CacheArg,
    EngineResult,
    Evidence,
    Question,
    _ctx,
    _isl_point,
    _named,
    _pt_from,
    _pt_json,
    _rebuildable,
    _split,
    _subexprs,
    _z3_engine,
    answer,
    z3_lacks,
)
from verified_indexing.engines.api import _pointwise_question as _pointwise
from verified_indexing.engines.api import equality_question as _equality_question
from verified_indexing.engines.isl import first_point as _isl_first
from verified_indexing.engines.isl import pointwise_map, to_isl_domain, to_isl_map
from verified_indexing.engines.verdict import Counterexample, Verdict
from verified_indexing.indexing_map import IndexingMap

__all__ = [
    "SUBSET_KINDS",
    "prove_subset",
    "is_subset",
    "subset_question",
    "prove_pointwise_equal",
    "pointwise_equality_question",
    "prove_relation_equal",
]

SUBSET_KINDS = ("domain", "image", "relation")


def _isl_set(m: IndexingMap, of: str) -> Any:
    """``m``'s domain, image or relation in the engine context."""
    if of == "domain":
        return to_isl_domain(m, symbols=False, ctx=_ctx())
    rel = to_isl_map(m, ctx=_ctx())
    return rel.range() if of == "image" else rel


def _lacks(b: IndexingMap, of: str, element: Any, timeout: float) -> bool:
    """Whether ``b`` lacks ``element`` (see :func:`enumerate.subset_element`):
    decided by the plain evaluator over ``b``'s range-variable box (domain,
    relation) or whole box (image) when it is small enough, else by an exact
    quantifier-free z3 query. Raises :class:`CannotConfirm` when neither can."""
    if of == "image":
        results: tuple[int, ...] = tuple(element)
        inputs = None
        free = [v.bounds for _, _, v in b.variables()]
    else:
        (d, r), results = (element, ()) if of == "domain" else element
        inputs = (d, r)
        free = [v.bounds for v in b.range_vars]
    size = 1
    for iv in free:
        size *= iv.size()
    if size <= en.RELATION_LIMIT:
        if of == "image":
            return all(b.evaluate(*pt) != results for pt in b.domain_points(en.RELATION_LIMIT))
        assert inputs is not None
        d, r = inputs
        for s in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in free]):
            if b.contains(d, s, r) and (of == "domain" or b.evaluate(d, s, r) == results):
                return False
        return True
    return z3_lacks(b, results, inputs, timeout)


@_rebuildable
def subset_question(a: IndexingMap, b: IndexingMap, of: str = "relation", timeout: float = 10.0) -> Question | Verdict:
    """The question "``a``'s domain/image/relation is a subset of ``b``'s", or a
    verdict when it is decided at once (KNOWN EMPTY ``a``) or ill-formed."""
    text = f"subset ({of}): {a.format(one_line=True)}  <=  {b.format(one_line=True)}"
    if of not in SUBSET_KINDS:
        return Verdict(
            "error", "none", 0.0, text, f"unknown subset kind {of!r}; choose one of {', '.join(SUBSET_KINDS)}"
        )
    if a.is_undefined or b.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map has no domain, image or relation")
    if a.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "the first map is KNOWN EMPTY")
    if not b.is_known_empty:
        arities = [("dimension variables", a.num_dims, b.num_dims), ("runtime variables", a.num_rt_vars, b.num_rt_vars)]
        if of == "image":
            arities = []
        if of != "domain":
            arities.append(("results", a.num_results, b.num_results))
        for what, x, y in arities:
            if x != y:
                return Verdict("error", "none", 0.0, text, f"the maps have different numbers of {what} ({x} and {y})")
    n = a.num_dims + a.num_range_vars + a.num_rt_vars

    def confirm(ev: Evidence) -> Counterexample | None:
        pt = _pt_from(ev["point"])
        if not a.contains(*pt):
            return None
        element = en.subset_element(a, pt, of)
        if not b.is_known_empty and not _lacks(b, of, element, timeout):
            return None
        res = a.evaluate(*pt)
        what = {"domain": "inputs", "image": "results", "relation": "inputs and results"}[of]
        return Counterexample(
            "subset",
            _named(a, pt),
            res,
            None,
            tuple(_subexprs("source", a.results, a, pt)) if of != "domain" else (),
            in_domain="source",
            note=f"The source has these {what} at this point; the target has none such.",
        )

    def run_isl(timeout: float) -> EngineResult:
        if b.is_known_empty:
            dom = to_isl_domain(a, ctx=_ctx())
            if dom.is_empty():
                return "proved", None, ""
            return "refuted", {"point": _pt_json(_split(a, _isl_first(dom, n)))}, ""
        x, y = _isl_set(a, of), _isl_set(b, of)
        if x.is_subset(y):
            return "proved", None, ""
        diff = x.subtract(y)
        if of == "domain":
            w = _isl_first(diff, a.num_dims + a.num_rt_vars)
            pre = to_isl_domain(a, ctx=_ctx())
            for i, v in enumerate(w[: a.num_dims]):
                pre = pre.fix_val(isl.dim_type.set, i, v)
            for i, v in enumerate(w[a.num_dims :]):
                pre = pre.fix_val(isl.dim_type.set, a.num_dims + a.num_range_vars + i, v)
        elif of == "image":
            ys = _isl_first(diff, a.num_results)
            pre = pointwise_map(a, ctx=_ctx()).intersect_range(_isl_point(ys)).domain()
        else:
            nin = a.num_dims + a.num_rt_vars
            w = _isl_first(diff.wrap(), nin + a.num_results)
            ins, ys = w[:nin], w[nin:]
            pre = pointwise_map(a, ctx=_ctx()).intersect_range(_isl_point(ys)).domain()
            for i, v in enumerate(ins[: a.num_dims]):
                pre = pre.fix_val(isl.dim_type.set, i, v)
            for i, v in enumerate(ins[a.num_dims :]):
                pre = pre.fix_val(isl.dim_type.set, a.num_dims + a.num_range_vars + i, v)
        return "refuted", {"point": _pt_json(_split(a, _isl_first(pre, n)))}, ""

    def run_enum(timeout: float) -> EngineResult:
        if b.is_known_empty:
            pt = en.find_point(a, timeout=timeout)
        else:
            pt = en.find_subset_violation(a, b, of)
        return ("proved", None, "") if pt is None else ("refuted", {"point": _pt_json(pt)}, "")

    engines: dict[str, Callable[[float], EngineResult]] = {"isl": run_isl, "enum": run_enum}
    build: Callable[[], zq.Z3Query] | None = None
    if b.is_known_empty:

        def build() -> zq.Z3Query:
            return zq.nonempty_query(a, text)

    elif of != "image" and b.num_range_vars == 0:

        def build() -> zq.Z3Query:
            return zq.subset_query(a, b, of, text)

    if build is not None:
        engines["z3"] = _z3_engine(build, lambda vals: {"point": _pt_json(_split(a, vals))})
    else:
        why = "the target's image" if of == "image" else "the target's range variables"
        engines["z3"] = lambda timeout: (
            "unknown",
            None,
            f"z3 cannot decide this inclusion without quantifiers ({why}); use isl",
        )
    return Question(f"subset-{of}", text, engines, confirm, build)


def prove_subset(
    a: IndexingMap,
    b: IndexingMap,
    *,
    of: str = "relation",
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
    sizes: int = 0,
) -> Verdict:
    """Prove that ``a``'s domain, image or relation (``of``) is a subset of ``b``'s.

    ``sizes=k``: the first ``k`` dims of both maps are size parameters (see
    :mod:`verified_indexing.engines.sizes`); for ``image`` they are put in front
    of both maps' results, so images are compared size by size (the other kinds
    already compare dims).

    ``domain``: every ``(dims, rt vars)`` for which ``a`` has a domain point
    (some range-variable values) is one for ``b`` too; the maps need the same
    numbers of dims and rt vars. ``image``: every result tuple of ``a`` is one of
    ``b`` (same number of results; the inputs may differ). ``relation``: every
    ``(dims, rt vars) -> results`` pair of ``a`` is one of ``b`` (same numbers of
    dims, rt vars and results).

    ``refuted`` carries a domain point of ``a`` (values by ``a``'s names, ``a``'s
    results as ``source``) whose element ``b`` lacks: the evaluator confirms the
    point is in ``a``; that ``b`` lacks the element is confirmed by the evaluator
    over ``b``'s range-variable box (the whole box for ``image``) when it has at
    most ``RELATION_LIMIT`` points, else by an exact z3 query (if z3 gives up, the
    verdict is ``unknown``). isl and enumeration decide every case; z3 decides
    ``domain`` and ``relation`` when ``b`` has no range variables, and says
    ``unknown`` otherwise. A KNOWN EMPTY ``a`` is a subset of anything; a KNOWN
    EMPTY ``b`` contains only empty sets; UNDEFINED is an ``error``.
    """
    if sizes:
        from verified_indexing.engines.sizes import sizes_problem, with_sizes_in_results

        if (why := sizes_problem(sizes, a, b)) is not None:
            return Verdict("error", "none", 0.0, f"subset-{of}", why)
    if sizes and of == "image":

        a, b = with_sizes_in_results(a, sizes), with_sizes_in_results(b, sizes)
    q = subset_question(a, b, of, timeout)
    if isinstance(q, Verdict):
        return q
    return answer(q, engine, timeout, cache)


def is_subset(
    a: IndexingMap,
    b: IndexingMap,
    *,
    of: str = "relation",
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    """The same question as :func:`prove_subset` (named like :func:`is_empty` and
    :func:`is_injective`; it returns a :class:`Verdict`, not a bool)."""
    return prove_subset(a, b, of=of, engine=engine, timeout=timeout, cache=cache)


def pointwise_equality_question(a: IndexingMap, b: IndexingMap) -> Question | Verdict:
    """The question "``a`` and ``b`` are pointwise equal", or a verdict when it is
    decided at once (both KNOWN EMPTY) or ill-formed."""
    text = f"pointwise-equal: {a.format(one_line=True)}  ==  {b.format(one_line=True)}"
    if a.is_undefined or b.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map cannot be compared")
    if a.is_known_empty or b.is_known_empty:
        # An empty domain has no points: the same as comparing relations.
        q = _equality_question(a, b)
        if isinstance(q, Verdict):
            return Verdict(q.status, q.engine, q.seconds, text, q.reason, q.counterexample)
        return Question("pointwise-equal-empty", text, q.engines, q.confirm, q.z3_query)
    for what, x, y in (
        ("dimension variables", a.num_dims, b.num_dims),
        ("range variables", a.num_range_vars, b.num_range_vars),
        ("runtime variables", a.num_rt_vars, b.num_rt_vars),
        ("results", a.num_results, b.num_results),
    ):
        if x != y:
            return Verdict("error", "none", 0.0, text, f"the maps have different numbers of {what} ({x} and {y})")
    return _pointwise(a, b, text, "pointwise-equal")


def prove_pointwise_equal(
    a: IndexingMap, b: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None
) -> Verdict:
    """Prove that ``a`` and ``b`` have the same domain over *all* their variables
    (dims, range variables, rt vars, positionally) and the same results at every
    point of it. Range variables are universally quantified, like dims: this is
    stronger than :func:`prove_equal` (which compares relations) and is what a
    rewrite that keeps every variable must satisfy. Every engine decides it.

    The maps need the same numbers of dims, range variables, rt vars and results
    (else ``error``). A domain difference is ``refuted`` with a point in one
    domain only; a result difference with a common point. KNOWN EMPTY equals a
    map with an empty domain; UNDEFINED is an ``error``.
    """
    q = pointwise_equality_question(a, b)
    if isinstance(q, Verdict):
        return q
    return answer(q, engine, timeout, cache)


def prove_relation_equal(
    a: IndexingMap, b: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None
) -> Verdict:
    """Prove that ``a`` and ``b`` denote the same relation
    ``{(dims, rt vars) -> results : exists range vars in the domain}``.

    This is exactly the meaning of :func:`prove_equal` (which it calls), under a
    name that says so next to :func:`prove_pointwise_equal`; the maps may have
    different numbers of range variables. isl and enumeration decide it; z3
    proves only the sufficient pointwise condition when range variables are
    involved (else ``unknown``).
    """
    q = _equality_question(a, b)
    if isinstance(q, Verdict):
        return q
    return answer(q, engine, timeout, cache)
