"""The proof questions: each returns a four-valued :class:`Verdict`.

Engines (``engine=``): ``isl`` (exact Presburger arithmetic), ``z3`` (SMT with
the explicit quotient/remainder encoding), ``enum`` (plain evaluation of every
point; ``unknown`` when the box is too large), ``all`` (every engine; any
disagreement between a proof and a refutation is an ``error``), ``auto`` (isl,
falling back to z3 if isl fails).

Whatever the engine, a candidate counterexample is re-checked with the plain
evaluator (:meth:`IndexingMap.contains`, :meth:`IndexingMap.evaluate`) before
it is reported; if the evaluator does not confirm it, the verdict is ``error``
("encoding disagrees with evaluator").

``cache=``: ``None`` or ``False`` (no cache), ``True`` (:func:`default_cache`)
or a :class:`ProofCache`. ``unknown`` and ``error`` are never cached; a cached
refutation is re-checked with the evaluator before it is returned.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

import islpy as isl
import z3

from verified_indexing.engines import enumerate as en
from verified_indexing.engines import z3_queries as zq
from verified_indexing.engines.cache import ProofCache, default_cache
from verified_indexing.engines.deadline import (
    DeadlineExceeded,
    command_budget,
    preload_in_worker,
    remaining,
    risky_maps,
    run_bounded,
    run_in_worker,
)
from verified_indexing.engines.isl import (
    IslLimitExceeded,
    _read,
    engine_context,
    get_max_operations,
    is_quota_error,
    limited_context,
    point_values,
    pointwise_map,
    pointwise_pair,
    to_isl_domain,
    to_isl_map,
)
from verified_indexing.engines.isl import (
    first_point as _isl_first,
)
from verified_indexing.engines.verdict import ENGINES, Counterexample, Verdict
from verified_indexing.errors import MapError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, RtSym, Sym
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval
from verified_indexing.syntax.printer import format_expr

__all__ = [
    "ENGINES",
    "prove_equal",
    "prove_expr_equal",
    "prove_implies",
    "is_empty",
    "exact_range",
    "is_injective",
    "is_bijective_onto",
    "Question",
    "answer",
    "equality_question",
    "expr_equality_question",
]

preload_in_worker(__name__)  # the worker has the engines loaded before its first question

CacheArg = ProofCache | None | bool
Point = en.Point
Evidence = dict[str, Any]

DISAGREE = "encoding disagrees with evaluator"


# ---------------------------------------------------------------------------
# Evaluator-side helpers
# ---------------------------------------------------------------------------


def _named(m: IndexingMap, pt: Point) -> tuple[tuple[str, int], ...]:
    d, s, r = pt
    vals = list(d) + list(s) + list(r)
    return tuple((m.var_name(k, i), v) for (k, i, _), v in zip(m.variables(), vals))


def _subexprs(side: str, exprs: Sequence[AffineExpr], m: IndexingMap, pt: Point) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    seen: set[AffineExpr] = set()
    for e in exprs:
        for sub in e.walk():
            if sub in seen or isinstance(sub, (Const, Dim, Sym, RtSym)):
                continue
            seen.add(sub)
            out.append((side, format_expr(sub, m.var_name), sub.evaluate(*pt)))
    return out


def _violations(side: str, m: IndexingMap, pt: Point) -> list[tuple[str, str, int]]:
    """The bounds and constraints of ``m`` that the point violates."""
    out: list[tuple[str, str, int]] = []
    d, s, r = pt
    for (k, i, v), x in zip(m.variables(), list(d) + list(s) + list(r)):
        if x not in v.bounds:
            out.append((side, f"{m.var_name(k, i)} in {v.bounds}", x))
    for e, iv in m.constraints:
        val = e.evaluate(d, s, r)
        if val not in iv:
            out.append((side, f"{format_expr(e, m.var_name)} in {iv}", val))
    return out


def _pt_json(pt: Point) -> list[list[int]]:
    return [list(pt[0]), list(pt[1]), list(pt[2])]


def _pt_from(data: Any) -> Point:
    d, s, r = data
    return tuple(int(x) for x in d), tuple(int(x) for x in s), tuple(int(x) for x in r)


def _split(m: IndexingMap, values: Sequence[int]) -> Point:
    nd, ns = m.num_dims, m.num_range_vars
    vals = tuple(int(v) for v in values)
    return vals[:nd], vals[nd : nd + ns], vals[nd + ns :]


# ---------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------


EngineResult = tuple[str, Evidence | None, str]
"""``("proved" | "refuted" | "unknown", evidence, reason)`` from one engine."""


@dataclass
class Question:
    """One proof question: its canonical text, how each engine answers it, and
    how the evaluator confirms a candidate counterexample (the evidence)."""

    kind: str
    text: str
    engines: dict[str, Callable[[float], EngineResult]]
    confirm: Callable[[Evidence], Counterexample | None]
    z3_query: Callable[[], zq.Z3Query] | None = None
    recipe: tuple[Callable[..., Question], tuple[Any, ...]] | None = None
    """A module-level builder and picklable arguments that rebuild this question
    (in the worker process, see :mod:`~verified_indexing.engines.deadline`)."""


_F = TypeVar("_F", bound=Callable[..., Any])
_REBUILDERS: dict[str, Callable[..., Any]] = {}
"""Question builders by name: the only functions a cache row may ask to call."""


def _rebuildable(build: _F) -> _F:
    """Record how a question was built (a module-level builder and its arguments),
    so the worker process can rebuild it."""
    sig = inspect.signature(build)

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        q = build(*bound.args)
        if isinstance(q, Question):
            q.recipe = (wrapper, tuple(bound.args))
        return q

    _REBUILDERS[f"{build.__module__}.{build.__qualname__}"] = wrapper
    return cast(_F, wrapper)


def _arg_to_json(x: Any) -> Any:
    if isinstance(x, IndexingMap):
        return {"map": x.format(one_line=True)}
    if isinstance(x, AffineExpr):
        return {"expr": str(x)}
    if isinstance(x, Interval):
        return {"interval": [x.lo, x.hi]}
    if isinstance(x, tuple):
        return {"tuple": [_arg_to_json(y) for y in x]}
    if isinstance(x, (str, int, float)) and not isinstance(x, bool):
        return x
    raise TypeError(f"cannot store an argument of type {type(x).__name__}")


def _arg_from_json(x: Any) -> Any:
    from verified_indexing.syntax import parse_expr, parse_indexing_map

    if isinstance(x, dict):
        if "map" in x:
            return parse_indexing_map(str(x["map"]), "<cache>")
        if "expr" in x:
            return parse_expr(str(x["expr"]), source="<cache>")
        if "interval" in x:
            lo, hi = x["interval"]
            return Interval(int(lo), int(hi))
        if "tuple" in x:
            return tuple(_arg_from_json(y) for y in x["tuple"])
        raise ValueError(f"unknown argument {x!r}")
    if isinstance(x, (str, int, float)):
        return x
    raise ValueError(f"unknown argument {x!r}")


def replay_of(q: Question, engine: str) -> dict[str, Any] | None:
    """How to rebuild ``q`` from text (stored in the cache for ``verify-cache``), or ``None``."""
    if q.recipe is None:
        return None
    build, args = q.recipe
    try:
        return {
            "engine": engine,
            "builder": f"{build.__module__}.{build.__qualname__}",
            "args": [_arg_to_json(a) for a in args],
        }
    except TypeError:
        return None


def question_from_replay(replay: dict[str, Any]) -> Question:
    """The question a cache row's ``replay`` describes (only registered builders are called)."""
    build = _REBUILDERS.get(str(replay.get("builder")))
    if build is None:
        raise ValueError(f"unknown question builder {replay.get('builder')!r}")
    q = build(*[_arg_from_json(a) for a in replay["args"]])
    if not isinstance(q, Question):
        raise ValueError("the builder did not give a question")
    return q


def _is_risky(q: Question) -> bool:
    if q.recipe is None:
        return False
    args = q.recipe[1]
    maps = [a for a in args if isinstance(a, IndexingMap)]
    exprs = [a for a in args if isinstance(a, AffineExpr)]
    # range variables are existential (projected out) only in these questions
    existential = q.kind in ("equal-relation", "injective", "bijective") or q.kind.startswith("subset-")
    return risky_maps(maps, exprs, existential=existential)


Recipe = tuple[Callable[..., "Question"], tuple[Any, ...]]


def _remote_engine(recipe: Recipe, engine: str, timeout: float) -> EngineResult:
    """In the worker process: rebuild the question and run one engine."""
    build, args = recipe
    return _engine_result(build(*args), engine, timeout)


class CannotConfirm(Exception):
    """The evaluator cannot afford to re-check a candidate (e.g. a huge box): the
    verdict becomes ``unknown``, never an unconfirmed refutation."""


def _verdict(q: Question, engine: str, status: str, evidence: Evidence | None, reason: str) -> Verdict:
    if status == "refuted":
        assert evidence is not None
        try:
            ce = q.confirm(evidence)
        except CannotConfirm as exc:
            return Verdict("unknown", engine, 0.0, q.text, f"a counterexample was found but not confirmed: {exc}")
        except (VerifiedIndexingError, ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
            # malformed evidence from an engine: never a refutation
            ce = None
            reason = f"{DISAGREE}: {type(exc).__name__}: {exc}"
        if ce is None:
            return Verdict("error", engine, 0.0, q.text, reason or DISAGREE)
        return Verdict("refuted", engine, 0.0, q.text, reason, ce)
    return Verdict(status, engine, 0.0, q.text, reason)  # type: ignore[arg-type]


def _run_engine(q: Question, engine: str, timeout: float) -> tuple[Verdict, Evidence | None]:
    fn = q.engines.get(engine)
    if fn is None:
        return Verdict("unknown", engine, 0.0, q.text, f"the {engine} engine does not answer this question"), None
    t0 = time.perf_counter()
    timeout = remaining(timeout)
    if timeout <= 0:
        status, evidence, reason = "unknown", None, "the time budget was exhausted before it could start"
    elif engine == "isl" and not math.isinf(timeout) and _is_risky(q):
        # isl can run away where its operation limit is not consulted: a worker process with a hard deadline
        assert q.recipe is not None
        try:
            status, evidence, reason = run_in_worker(_remote_engine, (q.recipe, engine, timeout), timeout)
        except DeadlineExceeded as exc:
            status, evidence, reason = "unknown", None, f"isl {exc}"
    else:
        status, evidence, reason = _engine_result(q, engine, timeout)
    v = _verdict(q, engine, status, evidence, reason)
    return v.with_time(time.perf_counter() - t0), evidence


def _engine_result(q: Question, engine: str, timeout: float) -> EngineResult:
    """One engine's answer, its failures turned into ``unknown`` with the reason."""
    fn = q.engines[engine]
    try:
        if engine == "isl":
            with limited_context():
                status, evidence, reason = fn(timeout)
        else:
            status, evidence, reason = fn(timeout)
    except en.TooLarge as exc:
        status, evidence, reason = "unknown", None, str(exc)
    except isl.Error as exc:
        if is_quota_error(exc):
            why = f"isl gave up: the operation limit ({get_max_operations()} operations) was exceeded"
            status, evidence, reason = "unknown", None, why
        else:
            status, evidence, reason = "unknown", None, f"isl failed: {exc}"
    except z3.Z3Exception as exc:
        status, evidence, reason = "unknown", None, f"z3 failed: {exc}"
    return status, evidence, reason


def _resolve_cache(cache: CacheArg) -> ProofCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return default_cache()
    return cache


def answer(q: Question, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None) -> Verdict:
    """Answer a question with one engine (or all), through the cache."""
    if engine not in ENGINES:
        raise VerifiedIndexingError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if not timeout > 0:  # also rejects NaN; infinity means no wall-clock limit
        raise VerifiedIndexingError(f"the timeout must be a positive number of seconds, got {timeout}")
    store = _resolve_cache(cache)
    key = f"{engine}\n{q.text}"
    t0 = time.perf_counter()
    if store is not None:
        hit = store.get(key)
        if hit is not None:
            cached, cached_evidence = hit
            if cached.status == "proved":
                return replace(cached, seconds=time.perf_counter() - t0, cached=True)
            if cached.status == "refuted" and cached_evidence is not None:
                ce = _safe_confirm(q, cached_evidence)
                if ce is not None and ce == cached.counterexample:
                    return replace(cached, seconds=time.perf_counter() - t0, cached=True)
            store.delete(key)
    verdict: Verdict
    evidence: Evidence | None
    with command_budget(timeout):  # the timeout bounds the whole answer, every engine included
        verdict, evidence = _answer_engines(q, engine, timeout)
    verdict = verdict.with_time(time.perf_counter() - t0)
    if store is not None and verdict.status in ("proved", "refuted"):
        store.put(key, verdict, evidence, replay_of(q, engine))
    return verdict


def _answer_engines(q: Question, engine: str, timeout: float) -> tuple[Verdict, Evidence | None]:
    verdict: Verdict
    evidence: Evidence | None
    if engine == "all":
        verdict, evidence = _run_all(q, timeout)
    elif engine == "auto":
        verdict, evidence = _run_auto(q, timeout)
    else:
        verdict, evidence = _run_engine(q, engine, timeout)
    return verdict, evidence


AUTO_SHARES = {"isl": 0.5, "z3": 0.6, "enum": 1.0}
"""Under a finite budget, the share of what is left that each engine of ``auto``
may use (isl half, z3 60% of the rest, enumeration the remainder), so a later
engine still has time when an earlier one runs away."""


def _run_auto(q: Question, timeout: float) -> tuple[Verdict, Evidence | None]:
    """isl, then z3 when isl says ``unknown``, then enumeration (small boxes only)
    when z3 does too; an ``unknown`` names every engine's reason."""
    ladder = [e for e in ("isl", "z3", "enum") if e in q.engines]
    tried: list[Verdict] = []
    verdict: Verdict | None = None
    evidence: Evidence | None = None
    for i, name in enumerate(ladder):
        left = remaining(timeout)
        last = i == len(ladder) - 1
        share = left if (last or math.isinf(left)) else left * AUTO_SHARES[name]
        if name == "enum" and tried and left <= 0:
            break
        verdict, evidence = _run_engine(q, name, share)
        if not verdict.unknown:
            return verdict, evidence
        tried.append(verdict)
    assert verdict is not None
    if len(tried) > 1:
        first = tried[0]
        reason = f"{first.engine}: {first.reason}" + "".join(f"; then {v.engine}: {v.reason}" for v in tried[1:])
        verdict = replace(verdict, reason=reason)
    return verdict, evidence


def _safe_confirm(q: Question, evidence: Evidence) -> Counterexample | None:
    try:
        return q.confirm(evidence)
    except (CannotConfirm, VerifiedIndexingError, ArithmeticError, IndexError, KeyError, TypeError, ValueError):
        return None


def _run_all(q: Question, timeout: float) -> tuple[Verdict, Evidence | None]:
    results = [(e, *_run_engine(q, e, timeout)) for e in ("isl", "z3", "enum") if e in q.engines]
    summary = ", ".join(f"{e}={v.status}" for e, v, _ in results)
    statuses = {v.status for _, v, _ in results}
    name = f"all({summary})"
    if "error" in statuses:
        bad = next(v for _, v, _ in results if v.error)
        return Verdict("error", name, 0.0, q.text, f"{bad.engine}: {bad.reason}"), None
    if "proved" in statuses and "refuted" in statuses:
        return Verdict("error", name, 0.0, q.text, f"ENGINES DISAGREE: {summary}"), None
    for _, v, ev in results:
        if v.refuted:
            return replace(v, engine=name), ev
    for _, v, ev in results:
        if v.proved:
            return replace(v, engine=name), ev
    reasons = "; ".join(f"{v.engine}: {v.reason}" for _, v, _ in results)
    return Verdict("unknown", name, 0.0, q.text, reasons), None


def _ctx() -> Any:
    """The isl context of engine queries (see :func:`engine_context`)."""
    return engine_context()


def _isl_point(values: Sequence[int]) -> Any:
    return _read(isl.Set, "{ [" + ", ".join(str(v) for v in values) + "] }", _ctx())


def _isl_witness(m: IndexingMap, ins: Sequence[int], res: Sequence[int]) -> Point:
    """A domain point with inputs ``ins`` = (dims, rts) whose results are ``res``."""
    dom = pointwise_map(m, ctx=_ctx()).intersect_range(_isl_point(res)).domain()
    d, r = ins[: m.num_dims], ins[m.num_dims :]
    for i, v in enumerate(d):
        dom = dom.fix_val(isl.dim_type.set, i, v)
    for i, v in enumerate(r):
        dom = dom.fix_val(isl.dim_type.set, m.num_dims + m.num_range_vars + i, v)
    return _split(m, _isl_first(dom, m.num_dims + m.num_range_vars + m.num_rt_vars))


def _isl_non_injective(m: IndexingMap, rel: Any) -> tuple[Point, Point]:
    """Two domain points with different inputs and the same results (rel not injective)."""
    nin = m.num_dims + m.num_rt_vars
    ident = isl.Map.identity(rel.get_space().domain().map_from_set())
    pairs = rel.apply_range(rel.reverse()).subtract(ident)
    w = _isl_first(pairs.wrap(), 2 * nin)
    x1, x2 = w[:nin], w[nin:]
    common = rel.intersect_domain(_isl_point(x1)).range().intersect(rel.intersect_domain(_isl_point(x2)).range())
    y = _isl_first(common, m.num_results)
    return _isl_witness(m, x1, y), _isl_witness(m, x2, y)


def _isl_multi_valued(m: IndexingMap, rel: Any) -> tuple[Point, Point]:
    """Two domain points with the same inputs and different results (rel not single-valued)."""
    k = m.num_results
    ident = isl.Map.identity(rel.get_space().range().map_from_set())
    pairs = rel.reverse().apply_range(rel).subtract(ident)
    w = _isl_first(pairs.wrap(), 2 * k)
    y1, y2 = w[:k], w[k:]
    xs = rel.intersect_range(_isl_point(y1)).domain().intersect(rel.intersect_range(_isl_point(y2)).domain())
    x = _isl_first(xs, m.num_dims + m.num_rt_vars)
    return _isl_witness(m, x, y1), _isl_witness(m, x, y2)


def _z3_engine(
    build: Callable[[], zq.Z3Query], to_evidence: Callable[[list[int]], Evidence]
) -> Callable[[float], EngineResult]:
    def run(timeout: float) -> EngineResult:
        status, values, reason = zq.solve(build(), timeout)
        if status == "unsat":
            return "proved", None, ""
        if status == "unknown":
            return "unknown", None, f"z3: {reason}"
        return "refuted", to_evidence(values), ""

    return run


# -- equality -----------------------------------------------------------------


def _missing_variable(m: IndexingMap, exprs: Sequence[AffineExpr]) -> str | None:
    """Why an expression cannot be read over ``m``'s variables (one it lacks), or
    ``None``. A KNOWN EMPTY domain has no points, so nothing is missing."""
    if m.state != "ok":
        return None
    counts = {"d": m.num_dims, "s": m.num_range_vars, "rt": m.num_rt_vars}
    for e in exprs:
        for kind, i in sorted(e.variables()):
            if i >= counts[kind]:
                return f"the expression {e} uses the variable {kind}{i}, which the domain does not have"
    return None


def _check_usable(*maps: IndexingMap) -> None:
    for m in maps:
        if m.is_undefined:
            raise MapError("an UNDEFINED map cannot be compared or reasoned about")


def _point_question_confirm(a: IndexingMap, b: IndexingMap) -> Callable[[Evidence], Counterexample | None]:
    def confirm(ev: Evidence) -> Counterexample | None:
        pt = _pt_from(ev["point"])
        in_a, in_b = a.contains(*pt), b.contains(*pt)
        ra = a.evaluate(*pt) if in_a else None
        rb = b.evaluate(*pt) if in_b else None
        if in_a != in_b:
            side, other, excl = ("source", "target", b) if in_a else ("target", "source", a)
            return Counterexample(
                "domain",
                _named(a, pt),
                ra,
                rb,
                tuple(_violations(other, excl, pt)),
                in_domain=side,
                note=f"The point is in the {side} domain only.",
            )
        if in_a and ra != rb:
            assert ra is not None and rb is not None
            idx = [i for i in range(len(ra)) if ra[i] != rb[i]]
            subs = _subexprs("source", [a.results[i] for i in idx], a, pt)
            subs += _subexprs("target", [b.results[i] for i in idx], b, pt)
            which = ", ".join(f"#{i}" for i in idx)
            return Counterexample("results", _named(a, pt), ra, rb, tuple(subs), note=f"Results {which} differ.")
        return None

    return confirm


@_rebuildable
def _pointwise_question(a: IndexingMap, b: IndexingMap, text: str, kind: str) -> Question:
    def run_isl(timeout: float) -> EngineResult:
        da, pa, db, pb = pointwise_pair(a, b, ctx=_ctx())
        n = a.num_dims + a.num_range_vars + a.num_rt_vars
        if da is not db and not da.is_equal(db):
            diff = da.subtract(db).union(db.subtract(da))
            return "refuted", {"point": _pt_json(_split(a, _isl_first(diff, n)))}, ""
        if pa.is_equal(pb):
            return "proved", None, ""
        differ = da.subtract(pa.intersect(pb).domain())
        return "refuted", {"point": _pt_json(_split(a, _isl_first(differ, n)))}, ""

    def run_enum(timeout: float) -> EngineResult:
        pt = en.find_pointwise_difference(a, b, timeout=timeout)
        if pt is None:
            return "proved", None, ""
        return "refuted", {"point": _pt_json(pt)}, ""

    def build() -> zq.Z3Query:
        return zq.pointwise_query(a, b, text)

    run_z3 = _z3_engine(build, lambda vals: {"point": _pt_json(_split(a, vals))})
    return Question(kind, text, {"isl": run_isl, "z3": run_z3, "enum": run_enum}, _point_question_confirm(a, b), build)


def z3_lacks(
    m: IndexingMap,
    results: tuple[int, ...],
    inputs: tuple[tuple[int, ...], tuple[int, ...]] | None,
    timeout: float,
) -> bool:
    """Whether no domain point of ``m`` (with the given ``(dims, rts)`` if
    ``inputs``) has these ``results``, decided by an exact z3 query; raises
    :class:`CannotConfirm` when z3 gives up or fails."""
    try:
        status, _, reason = zq.solve(zq.preimage_query(m, results, inputs, "membership"), timeout, minimize=False)
    except z3.Z3Exception as exc:
        raise CannotConfirm(f"z3 failed while confirming: {exc}") from None
    if status == "unknown":
        raise CannotConfirm(f"z3 gave up while confirming ({reason})")
    return bool(status == "unsat")


timeout_for_confirm = 10.0
"""Wall-clock limit of a z3 query that confirms a counterexample."""


@_rebuildable
def _relation_question(a: IndexingMap, b: IndexingMap, text: str) -> Question:
    """Equality of the relations {(d, rt) -> results : exists s}."""

    def confirm(ev: Evidence) -> Counterexample | None:
        side = ev["side"]
        pt = _pt_from(ev["point"])
        res = tuple(int(x) for x in ev["results"])
        has, lacks = (a, b) if side == "source" else (b, a)
        if not has.contains(*pt) or has.evaluate(*pt) != res:
            return None
        d, _, r = pt
        s_box = 1
        for v in lacks.range_vars:
            s_box *= v.bounds.size()
        if s_box > en.RELATION_LIMIT:
            # Too many range-variable values to evaluate: an exact quantifier-free
            # z3 query decides whether some value relates d, r to res.
            if not z3_lacks(lacks, res, (d, r), timeout_for_confirm):
                return None
        else:
            for s in itertools.product(*[range(v.bounds.lo, v.bounds.hi + 1) for v in lacks.range_vars]):
                if lacks.contains(d, s, r) and lacks.evaluate(d, s, r) == res:
                    return None
        values = _named(has, pt)
        other = "target" if side == "source" else "source"
        return Counterexample(
            "relation",
            values,
            res if side == "source" else None,
            res if side == "target" else None,
            tuple(_subexprs(side, has.results, has, pt)),
            in_domain=side,
            note=f"The {side} relates these inputs to these results; no range-variable value of the {other} does.",
        )

    def run_isl(timeout: float) -> EngineResult:
        ra, rb = to_isl_map(a, ctx=_ctx()), to_isl_map(b, ctx=_ctx())
        if ra.is_equal(rb):
            return "proved", None, ""
        for side, x, y, m in (("source", ra, rb, a), ("target", rb, ra, b)):
            diff = x.subtract(y)
            if diff.is_empty():
                continue
            nin = m.num_dims + m.num_rt_vars
            w = _isl_first(diff.wrap(), nin + m.num_results)
            ins, res = w[:nin], w[nin:]
            return "refuted", {"side": side, "point": _pt_json(_isl_witness(m, ins, res)), "results": list(res)}, ""
        return "unknown", None, "isl: relations differ but no difference point was found"  # pragma: no cover

    def run_enum(timeout: float) -> EngineResult:
        found = en.relation_difference(a, b, timeout=timeout)
        if found is None:
            return "proved", None, ""
        side, pt, res = found
        return "refuted", {"side": side, "point": _pt_json(pt), "results": list(res)}, ""

    def build() -> zq.Z3Query:
        q = zq.pointwise_query(a, b, text)
        q.comments.append("range variables are existential: the pointwise check is sufficient, not necessary")
        q.sat_refutes = False
        return q

    def run_z3(timeout: float) -> EngineResult:
        # A pointwise proof is sound for relations; a pointwise difference is not a refutation.
        status, _, reason = zq.solve(build(), timeout, minimize=False)
        if status == "unsat":
            return "proved", None, ""
        return (
            "unknown",
            None,
            "z3 cannot compare relations with existential range variables without quantifiers; use isl"
            + (f" ({reason})" if reason else ""),
        )

    engines: dict[str, Callable[[float], EngineResult]] = {"isl": run_isl, "enum": run_enum}
    z3_query: Callable[[], zq.Z3Query] | None = None
    if a.num_range_vars == b.num_range_vars:
        engines["z3"] = run_z3
        z3_query = build
    else:
        engines["z3"] = lambda timeout: (
            "unknown",
            None,
            "z3 cannot compare relations with different range variables without quantifiers; use isl",
        )
    return Question("equal-relation", text, engines, confirm, z3_query)


@_rebuildable
def _empty_vs(m: IndexingMap, side: str, text: str) -> Question:
    """KNOWN EMPTY compared with ``m``: equal iff ``m``'s domain is empty."""
    base = _nonempty_question(m, text)

    def confirm(ev: Evidence) -> Counterexample | None:
        pt = _pt_from(ev["point"])
        if not m.contains(*pt):
            return None
        res = m.evaluate(*pt)
        return Counterexample(
            "domain",
            _named(m, pt),
            res if side == "source" else None,
            res if side == "target" else None,
            in_domain=side,
            note=f"The other map is KNOWN EMPTY; this point is in the {side} domain.",
        )

    return Question("equal-empty", text, base.engines, confirm, base.z3_query)


def equality_question(a: IndexingMap, b: IndexingMap) -> Question | Verdict:
    """The question "a equals b", or an ``error`` verdict when it is ill-formed."""
    text = f"equal: {a.format(one_line=True)}  ==  {b.format(one_line=True)}"
    if a.is_undefined or b.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map cannot be compared")
    if a.is_known_empty and b.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "both maps are KNOWN EMPTY", vacuous=True)
    if a.is_known_empty:
        return _empty_vs(b, "target", text)
    if b.is_known_empty:
        return _empty_vs(a, "source", text)
    for what, x, y in (
        ("dimension variables", a.num_dims, b.num_dims),
        ("runtime variables", a.num_rt_vars, b.num_rt_vars),
        ("results", a.num_results, b.num_results),
    ):
        if x != y:
            return Verdict("error", "none", 0.0, text, f"the maps have different numbers of {what} ({x} and {y})")
    if a.num_range_vars == 0 and b.num_range_vars == 0:
        return _pointwise_question(a, b, text, "equal")
    return _relation_question(a, b, text)


def prove_equal(
    a: IndexingMap,
    b: IndexingMap,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
    sizes: int = 0,
) -> Verdict:
    """Prove that two maps are equal: the same domain over (dims, rt vars) and the
    same results everywhere, range variables existentially quantified.

    Without range variables this is pointwise equality (every engine decides
    it). With range variables the relations ``{(d, rt) -> results : exists s}``
    are compared: isl and enumeration decide; z3 proves only the sufficient
    pointwise condition and otherwise says ``unknown``. KNOWN EMPTY equals a map
    with an empty domain. UNDEFINED, or different numbers of dims, rt vars or
    results, give ``error``.

    ``sizes=k`` (the first ``k`` dims are size parameters, see
    :mod:`verified_indexing.engines.sizes`) changes nothing in the question:
    dims are compared point by point, so equality already holds size by size;
    it is accepted so that every question of a sized obligation reads alike.
    """
    from verified_indexing.engines.sizes import sizes_problem

    if (why := sizes_problem(sizes, a, b)) is not None:
        return Verdict("error", "none", 0.0, "equal", why)
    q = equality_question(a, b)
    if isinstance(q, Verdict):
        return q
    return answer(q, engine, timeout, cache)


def _domain_only(m: IndexingMap, results: Sequence[AffineExpr]) -> IndexingMap:
    return IndexingMap(m.dims, results, m.range_vars, m.rt_vars, m.constraints, state=m.state)


def _domain_text(m: IndexingMap) -> str:
    """The domain part of a map's one-line text (``domain: d0 in [0, 9], ...``)."""
    full = m.format(one_line=True)
    i = full.find("domain:")
    return full[i:] if i >= 0 else full


def expr_equality_question(e1: AffineExpr, e2: AffineExpr, domain: IndexingMap) -> Question | Verdict:
    """The question "e1 == e2 on every point of domain", or a verdict when it is decided at once."""
    if domain.is_undefined:
        return Verdict("error", "none", 0.0, f"expr-equal: {e1} == {e2}", "an UNDEFINED map has no domain")
    missing = _missing_variable(domain, (e1, e2))
    if missing is not None:
        return Verdict("error", "none", 0.0, f"expr-equal: {e1} == {e2} over {_domain_text(domain)}", missing)
    names = domain.var_name if domain.state == "ok" else None
    t1 = format_expr(e1, names) if names else str(e1)
    t2 = format_expr(e2, names) if names else str(e2)
    text = f"expr-equal: {t1} == {t2} over {_domain_text(domain)}"
    if domain.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "the domain is KNOWN EMPTY", vacuous=True)
    try:
        a, b = _domain_only(domain, [e1]), _domain_only(domain, [e2])
    except MapError as exc:
        return Verdict("error", "none", 0.0, text, str(exc))
    return _pointwise_question(a, b, text, "expr-equal")


def prove_expr_equal(
    e1: AffineExpr,
    e2: AffineExpr,
    domain: IndexingMap,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    """Prove ``e1 == e2`` at every point of ``domain`` (its variables and
    constraints; its results are ignored). Every variable, range variables
    included, is universally quantified here. An expression using a variable
    the domain lacks gives ``error``."""
    q = expr_equality_question(e1, e2, domain)
    if isinstance(q, Verdict):
        return q
    return answer(q, engine, timeout, cache)


def prove_implies(
    domain: IndexingMap,
    expr: AffineExpr,
    interval: Interval,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    """Prove that ``expr`` lies in ``interval`` at every point of ``domain``.
    An UNDEFINED domain, or an expression using a variable the domain lacks,
    gives ``error``; a KNOWN EMPTY domain is proved at once."""
    if domain.is_undefined:
        return Verdict("error", "none", 0.0, f"implies: {expr} in {interval}", "an UNDEFINED map has no domain")
    missing = _missing_variable(domain, (expr,))
    if missing is not None:
        return Verdict("error", "none", 0.0, f"implies: {expr} in {interval} over {_domain_text(domain)}", missing)
    shown = format_expr(expr, domain.var_name) if domain.state == "ok" else str(expr)
    text = f"implies: {shown} in {interval} over {_domain_text(domain)}"
    if domain.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "the domain is KNOWN EMPTY", vacuous=True)
    return answer(_implies_question(domain, expr, interval, text), engine, timeout, cache)


@_rebuildable
def _implies_question(m: IndexingMap, expr: AffineExpr, interval: Interval, text: str) -> Question:
    def confirm(ev: Evidence) -> Counterexample | None:
        pt = _pt_from(ev["point"])
        if not m.contains(*pt):
            return None
        v = expr.evaluate(*pt)
        if v in interval:
            return None
        subs = [("expr", format_expr(expr, m.var_name), v), *_subexprs("expr", [expr], m, pt)]
        return Counterexample(
            "implies",
            _named(m, pt),
            subexpressions=tuple(dict.fromkeys(subs)),
            note=f"The expression is {v}, outside {interval}.",
        )

    n = m.num_dims + m.num_range_vars + m.num_rt_vars

    def run_isl(timeout: float) -> EngineResult:
        dom = to_isl_domain(m, ctx=_ctx())
        inside = pointwise_map(m, (expr,), ctx=_ctx()).intersect_range(
            _read(isl.Set, f"{{ [x] : {interval.lo} <= x <= {interval.hi} }}", _ctx())
        )
        bad = dom.subtract(inside.domain())
        if bad.is_empty():
            return "proved", None, ""
        return "refuted", {"point": _pt_json(_split(m, _isl_first(bad, n)))}, ""

    def run_enum(timeout: float) -> EngineResult:
        pt = en.find_violation(m, expr, interval, timeout=timeout)
        return ("proved", None, "") if pt is None else ("refuted", {"point": _pt_json(pt)}, "")

    def build() -> zq.Z3Query:
        return zq.implies_query(m, expr, interval, text)

    run_z3 = _z3_engine(build, lambda vals: {"point": _pt_json(_split(m, vals))})
    return Question("implies", text, {"isl": run_isl, "z3": run_z3, "enum": run_enum}, confirm, build)


@_rebuildable
def _nonempty_question(m: IndexingMap, text: str) -> Question:
    n = m.num_dims + m.num_range_vars + m.num_rt_vars

    def confirm(ev: Evidence) -> Counterexample | None:
        pt = _pt_from(ev["point"])
        if not m.contains(*pt):
            return None
        return Counterexample("nonempty", _named(m, pt), m.evaluate(*pt), note="A point of the domain.")

    def run_isl(timeout: float) -> EngineResult:
        dom = to_isl_domain(m, ctx=_ctx())
        if dom.is_empty():
            return "proved", None, ""
        return "refuted", {"point": _pt_json(_split(m, _isl_first(dom, n)))}, ""

    def run_enum(timeout: float) -> EngineResult:
        pt = en.find_point(m, timeout=timeout)
        return ("proved", None, "") if pt is None else ("refuted", {"point": _pt_json(pt)}, "")

    def build() -> zq.Z3Query:
        return zq.nonempty_query(m, text)

    run_z3 = _z3_engine(build, lambda vals: {"point": _pt_json(_split(m, vals))})
    return Question("empty", text, {"isl": run_isl, "z3": run_z3, "enum": run_enum}, confirm, build)


def is_empty(m: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None) -> Verdict:
    """Prove that the domain of ``m`` has no point (``refuted`` carries a domain point).
    KNOWN EMPTY is proved empty at once; UNDEFINED is an ``error``."""
    text = f"empty: {m.format(one_line=True)}"
    if m.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map has no domain")
    if m.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "the map is KNOWN EMPTY")
    return answer(_nonempty_question(m, text), engine, timeout, cache)


def exact_range(expr: AffineExpr, m: IndexingMap, *, limited: bool = False) -> Interval | None:
    """The exact ``[min, max]`` of ``expr`` over the domain of ``m`` (via isl);
    ``None`` when the domain is empty. Raises :class:`MapError` for UNDEFINED or
    an expression using a variable ``m`` lacks.

    By default isl runs without an operation limit (in islpy's default context).
    With ``limited=True`` it runs in the engine context under
    :func:`get_max_operations`, and under a wall-clock deadline when a divisor is
    large (see :mod:`~verified_indexing.engines.deadline`); it raises
    :class:`IslLimitExceeded` (never a guess) when either limit is exceeded."""
    _check_usable(m)
    if m.is_known_empty:
        return None
    missing = _missing_variable(m, (expr,))
    if missing is not None:
        raise MapError(missing)
    if not limited:
        return _exact_range(pointwise_map(m, (expr,)))

    try:
        # isl's reading and integer search ignore the operation limit: risky queries get a wall-clock deadline too.
        risky = risky_maps([m], [expr], existential=False, results=False)  # a pointwise query of expr alone
        return run_bounded(_limited_exact_range, risky, args=(expr, m))
    except isl.Error as exc:
        if is_quota_error(exc):
            raise IslLimitExceeded(
                f"isl gave up: the operation limit ({get_max_operations()} operations) was exceeded"
            ) from None
        raise


def _limited_exact_range(expr: AffineExpr, m: IndexingMap) -> Interval | None:
    with limited_context() as ctx:
        return _exact_range(pointwise_map(m, (expr,), ctx=ctx))


def _exact_range(pm: Any) -> Interval | None:
    rng = pm.range()
    if rng.is_empty():
        return None
    lo = point_values(rng.lexmin().sample_point(), 1)[0]
    hi = point_values(rng.lexmax().sample_point(), 1)[0]
    return Interval(lo, hi)


def is_injective(
    m: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None, sizes: int = 0
) -> Verdict:
    """Prove that different inputs (dims, rt vars) never share a result tuple
    (with range variables: the relation is injective). ``refuted`` carries two
    domain points with the same results.

    ``sizes=k``: the first ``k`` dims are size parameters (see
    :mod:`verified_indexing.engines.sizes`): the question is asked for each size
    separately (two points of one size), and a counterexample names the sizes
    (sizes that do not fit the map: ``error``)."""
    if sizes:
        from verified_indexing.engines.sizes import sizes_problem, with_sizes_in_results

        if (why := sizes_problem(sizes, m)) is not None:
            return Verdict("error", "none", 0.0, "injective", why)
        m = with_sizes_in_results(m, sizes)
    text = f"injective: {m.format(one_line=True)}"
    if m.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map has no relation")
    if m.is_known_empty:
        return Verdict("proved", "none", 0.0, text, "the map is KNOWN EMPTY")
    return answer(_injective_question(m, text), engine, timeout, cache)


@_rebuildable
def _injective_question(m: IndexingMap, text: str) -> Question:
    n = m.num_dims + m.num_range_vars + m.num_rt_vars

    def confirm(ev: Evidence) -> Counterexample | None:
        p1, p2 = _pt_from(ev["first"]), _pt_from(ev["second"])
        if not (m.contains(*p1) and m.contains(*p2)):
            return None
        if (p1[0], p1[2]) == (p2[0], p2[2]) or m.evaluate(*p1) != m.evaluate(*p2):
            return None
        subs = _subexprs("first", m.results, m, p1) + _subexprs("second", m.results, m, p2)
        return Counterexample(
            "injectivity",
            _named(m, p1),
            m.evaluate(*p1),
            m.evaluate(*p2),
            tuple(subs),
            other_values=_named(m, p2),
            note="Two different inputs have the same results.",
        )

    def run_isl(timeout: float) -> EngineResult:
        rel = to_isl_map(m, ctx=_ctx())
        if rel.is_injective():
            return "proved", None, ""
        first, second = _isl_non_injective(m, rel)
        return "refuted", {"first": _pt_json(first), "second": _pt_json(second)}, ""

    def run_enum(timeout: float) -> EngineResult:
        found = en.find_injectivity_violation(m, timeout=timeout)
        if found is None:
            return "proved", None, ""
        return "refuted", {"first": _pt_json(found[0]), "second": _pt_json(found[1])}, ""

    def build() -> zq.Z3Query:
        return zq.injectivity_query(m, text)

    run_z3 = _z3_engine(
        build, lambda vals: {"first": _pt_json(_split(m, vals[:n])), "second": _pt_json(_split(m, vals[n:]))}
    )
    return Question("injective", text, {"isl": run_isl, "z3": run_z3, "enum": run_enum}, confirm, build)


def is_bijective_onto(
    m: IndexingMap,
    box: Sequence[Interval | tuple[int, int]],
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    """Prove that ``m`` is a bijection from its domain (over dims and rt vars)
    onto the box (``Interval``s or ``(lo, hi)`` pairs): single-valued, injective,
    every result inside the box and every box point reached. z3 can refute
    (injectivity, results outside the box) but not prove surjectivity: it then
    says ``unknown``."""
    intervals = [b if isinstance(b, Interval) else Interval(*b) for b in box]
    return _is_bijective_onto(m, intervals, engine=engine, timeout=timeout, cache=cache)


def _is_bijective_onto(
    m: IndexingMap, box: Sequence[Interval], *, engine: str, timeout: float, cache: CacheArg
) -> Verdict:
    box = list(box)
    text = f"bijective onto {' x '.join(str(b) for b in box)}: {m.format(one_line=True)}"
    if m.is_undefined:
        return Verdict("error", "none", 0.0, text, "an UNDEFINED map has no relation")
    if m.is_known_empty:
        return Verdict("error", "none", 0.0, text, "a KNOWN EMPTY map has no result arity to compare with the box")
    if len(box) != m.num_results:
        why = f"the box has {len(box)} dimensions, the map {m.num_results} results"
        return Verdict("error", "none", 0.0, text, why)
    return answer(_bijective_question(m, tuple(box), text), engine, timeout, cache)


@_rebuildable
def _bijective_question(m: IndexingMap, box: tuple[Interval, ...], text: str) -> Question:
    n = m.num_dims + m.num_range_vars + m.num_rt_vars
    box_set_text = (
        "{ ["
        + ", ".join(f"y{i}" for i in range(len(box)))
        + "] : "
        + (" and ".join(f"{b.lo} <= y{i} <= {b.hi}" for i, b in enumerate(box)) or "1 = 1")
        + " }"
    )

    def confirm(ev: Evidence) -> Counterexample | None:
        reason = ev["reason"]
        if reason == "not surjective":
            y = tuple(int(v) for v in ev["box_point"])
            if any(v not in b for v, b in zip(y, box)):
                return None
            if m.box_size() > en.RELATION_LIMIT:
                raise CannotConfirm(f"the domain box has {m.box_size()} points")
            for pt in m.domain_points(en.RELATION_LIMIT):
                if m.evaluate(*pt) == y:
                    return None
            return Counterexample(
                "bijectivity",
                tuple((f"y{i}", v) for i, v in enumerate(y)),
                note="This point of the box is not the image of any domain point.",
            )
        p1 = _pt_from(ev["first"])
        if not m.contains(*p1):
            return None
        r1 = m.evaluate(*p1)
        if reason == "outside the box":
            if all(v in b for v, b in zip(r1, box)):
                return None
            return Counterexample("bijectivity", _named(m, p1), r1, note="The results leave the box.")
        p2 = _pt_from(ev["second"])
        if not m.contains(*p2):
            return None
        r2 = m.evaluate(*p2)
        same_in = (p1[0], p1[2]) == (p2[0], p2[2])
        if reason == "not single-valued" and (not same_in or r1 == r2):
            return None
        if reason == "not injective" and (same_in or r1 != r2):
            return None
        return Counterexample(
            "bijectivity", _named(m, p1), r1, r2, other_values=_named(m, p2), note=f"The map is {reason}."
        )

    def run_isl(timeout: float) -> EngineResult:
        rel = to_isl_map(m, ctx=_ctx())
        target = _read(isl.Set, box_set_text, _ctx())
        outside = rel.range().subtract(target)
        if not outside.is_empty():
            y = _isl_first(outside, len(box))
            pre = pointwise_map(m, ctx=_ctx()).intersect_range(_isl_point(y)).domain()
            return "refuted", {"reason": "outside the box", "first": _pt_json(_split(m, _isl_first(pre, n)))}, ""
        missing = target.subtract(rel.range())
        if not missing.is_empty():
            return "refuted", {"reason": "not surjective", "box_point": list(_isl_first(missing, len(box)))}, ""
        if not rel.is_single_valued():
            p1, p2 = _isl_multi_valued(m, rel)
            return "refuted", {"reason": "not single-valued", "first": _pt_json(p1), "second": _pt_json(p2)}, ""
        if not rel.is_injective():
            p1, p2 = _isl_non_injective(m, rel)
            return "refuted", {"reason": "not injective", "first": _pt_json(p1), "second": _pt_json(p2)}, ""
        return "proved", None, ""

    def run_enum(timeout: float) -> EngineResult:
        found = en.find_bijectivity_violation(m, box)
        if found is None:
            return "proved", None, ""
        reason, p1, p2, y = found
        ev: Evidence = {"reason": reason}
        if p1 is not None:
            ev["first"] = _pt_json(p1)
        if p2 is not None:
            ev["second"] = _pt_json(p2)
        if y is not None:
            ev["box_point"] = list(y)
        return "refuted", ev, ""

    def run_z3(timeout: float) -> EngineResult:
        status, vals, _ = zq.solve(zq.image_outside_query(m, list(box), text), timeout)
        if status == "sat":
            return "refuted", {"reason": "outside the box", "first": _pt_json(_split(m, vals))}, ""
        if m.num_range_vars == 0:
            status2, vals2, _ = zq.solve(zq.injectivity_query(m, text), timeout)
            if status2 == "sat":
                return (
                    "refuted",
                    {
                        "reason": "not injective",
                        "first": _pt_json(_split(m, vals2[:n])),
                        "second": _pt_json(_split(m, vals2[n:])),
                    },
                    "",
                )
        return "unknown", None, "z3 cannot prove surjectivity (a quantifier alternation); use isl or enum"

    return Question("bijective", text, {"isl": run_isl, "z3": run_z3, "enum": run_enum}, confirm)
