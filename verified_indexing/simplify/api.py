"""The verified simplifier: ``simplify``, ``simplify_with_report``, ``simplify_expr``.

Proof discipline (measured in docs/simplifier.md): the candidate is built with
every rewrite unverified, then the *whole* result is proven equal to the input
(same domain and, point by point, the same results: every point of a small domain
compared, :mod:`verified_indexing.engines.points`, else isl). Only when that proof
fails (refuted or unknown) does the simplifier fall back to proving each rewrite on
its own before applying it, dropping the ones that are not proved; the fallback
result is proven as a whole again. If no proof succeeds, the input map itself is
returned. A refuted rewrite is recorded with its counterexample.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from verified_indexing.engines import deadline as _deadline  # (loaded with the engine; read at each call)
from verified_indexing.expr import AffineExpr, CeilDiv, Const, FloorDiv, Max, Min, Mod, Sum, Sym
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.simplify.constraints import settled_domain
from verified_indexing.simplify.cost import cost, map_cost
from verified_indexing.simplify.domain_rules import STEP_THEOREMS
from verified_indexing.simplify.engine import Rewriter, Step
from verified_indexing.simplify.rules import RULES, Rule
from verified_indexing.syntax import format_expr

__all__ = ["SimplifyReport", "simplify", "simplify_with_report", "simplify_expr", "prove_maps_pointwise"]

_LATE: dict[str, Any] = {}
"""Names of modules imported on first use, kept once imported (an import statement in a function costs
about a microsecond each time; these are asked a few times per map, and importing them with this module
would slow down the command line's start)."""


def _late(module: str, name: str) -> Any:
    """``module.name``, its module imported on first use."""
    hit = _LATE.get(name)
    if hit is None:
        import importlib

        hit = _LATE[name] = getattr(importlib.import_module(module), name)
    return hit


@dataclass
class SimplifyReport:
    """What :func:`simplify_with_report` did.

    Attributes:
        input: the map given.
        map: the simplified map (the input itself when nothing could be proven).
        steps: the transformations applied, in order.
        rejected: rewrites that were not applied because their proof failed
            (refuted ones carry the counterexample in their verdict).
        verdict: the proof that ``map`` equals ``input`` (``None`` when
            ``verify=False`` or when ``map`` is the input unchanged).
        verified: True when ``map`` was proven equal to ``input`` (or is it).
        mode: ``"whole"`` (one proof of the result), ``"per-rewrite"`` (the
            fallback) or ``"unverified"``.
        seconds_rewrite, seconds_proof: time spent rewriting and proving.
        cached: True when the report was read from the proof cache's whole
            results (a repeated question; see
            :mod:`verified_indexing.simplify.result_cache`): the steps and verdict are
            those of the run that stored it, the times are zero.
    """

    input: IndexingMap
    map: IndexingMap
    steps: list[Step] = field(default_factory=list)
    rejected: list[Step] = field(default_factory=list)
    verdict: Any = None
    verified: bool = False
    mode: str = "whole"
    seconds_rewrite: float = 0.0
    seconds_proof: float = 0.0
    rounds: int = 1
    note: str = ""
    cached: bool = False
    domain_settled: bool = field(default=False, repr=False)
    """The last round's domain is a fixpoint of the domain steps and no rewriter stopped short (step
    cap, time budget): see ``_another_round_may_help``. False on a report read from the cache."""

    def __str__(self) -> str:
        """The command line's text (``verified-indexing simplify``): the simplified map."""
        return str(self.map)

    def __repr__(self) -> str:
        """One line (at most 299 characters): the map before and after, the steps and the proof."""
        from verified_indexing._repr import clip, short

        proof = "unverified" if self.mode == "unverified" else (
            self.verdict.status if self.verdict is not None else ("unchanged" if self.map == self.input else "proved"))
        return short("SimplifyReport", f"{clip(self.input.format(one_line=True), 110)} -> "
                     f"{clip(self.map.format(one_line=True), 110)}; {len(self.steps)} steps, {proof}")

    @property
    def cost_before(self) -> int:
        return map_cost(self.input)

    @property
    def cost_after(self) -> int:
        return map_cost(self.map)

    def to_json(self) -> dict[str, Any]:
        from verified_indexing.serialize import map_to_json

        return {
            "input": map_to_json(self.input),
            "map": map_to_json(self.map),
            "verified": self.verified,
            "mode": self.mode,
            "verdict": self.verdict.to_json() if self.verdict is not None else None,
            "cost_before": self.cost_before,
            "cost_after": self.cost_after,
            "steps": [s.to_json() for s in self.steps],
            "rejected": [s.to_json() for s in self.rejected],
            "seconds_rewrite": self.seconds_rewrite,
            "seconds_proof": self.seconds_proof,
            "rounds": self.rounds,
            "note": self.note,
            "cached": self.cached,
        }


def prove_maps_pointwise(a: IndexingMap, b: IndexingMap, *, timeout: float = 10.0, cache: Any = None) -> Any:
    """Prove that ``a`` and ``b`` (same variables) have the same domain and the same
    results at every point ``(dims, range vars, rt vars)`` (range variables are
    compared as inputs, not existentially): the engines' ``prove_pointwise_equal``."""
    Verdict = _late("verified_indexing.engines.verdict", "Verdict")
    prove_pointwise_equal = _late("verified_indexing.engines.subset", "prove_pointwise_equal")
    find_pointwise_difference = _late("verified_indexing.engines.points", "find_pointwise_difference")

    start = time.perf_counter()
    if _same_shape(a, b):
        # A small domain: every point compared (exact, cheaper than one isl question). A difference goes
        # to the engines below, which re-find it and confirm the counterexample with the plain evaluator.
        decided, point = find_pointwise_difference(a, b)
        if decided and point is None:
            def text() -> str:  # (built when read: most of these proofs are never shown)
                return f"pointwise-equal: {a.format(one_line=True)}  ==  {b.format(one_line=True)}"

            return Verdict.deferred("proved", "enum", time.perf_counter() - start, text)
    try:
        return prove_pointwise_equal(a, b, timeout=timeout, cache=cache)
    except Exception as exc:  # an engine fault is never a proof
        return Verdict("error", "isl", time.perf_counter() - start, f"{a.format(True)} == {b.format(True)}",
                       reason=f"engine failure: {type(exc).__name__}: {exc}")


def _same_shape(a: IndexingMap, b: IndexingMap) -> bool:
    return (a.state == b.state == "ok" and (a.num_dims, a.num_range_vars, a.num_rt_vars, a.num_results)
            == (b.num_dims, b.num_range_vars, b.num_rt_vars, b.num_results))


def _rewrite_map(
    m: IndexingMap,
    *,
    exact: bool,
    check_results: bool,
    timeout: float,
    cache: Any,
    rules: Sequence[Rule],
    replace_point_dims: bool,
) -> tuple[IndexingMap, list[Step], list[Step], bool]:
    """One pass of domain then result simplification (before symbol removal), and whether the
    domain is settled (:func:`~verified_indexing.simplify.constraints.settled_domain`)."""
    steps: list[Step] = []
    rejected: list[Step] = []

    def names(kind: Any, index: int) -> str:
        return m.var_name(kind, index)

    # Constraint expressions are rewritten with box ranges only (valid on the whole box, each pass
    # with the bounds the last one tightened), so the set they define cannot change.
    box_rws: list[Rewriter] = []

    def box_rewriter(cur: IndexingMap) -> Callable[[AffineExpr], AffineExpr]:
        last = box_rws[-1].domain if box_rws else None  # (its map is cur's, less the constraints)
        if last is not None and (last.dims, last.range_vars, last.rt_vars, last.results) == (
                cur.dims, cur.range_vars, cur.rt_vars, cur.results):
            return box_rws[-1].simplify
        box_rws.append(Rewriter(cur.replace(constraints=[]), exact=False, rules=rules, names=names, where="domain"))
        return box_rws[-1].simplify

    dm, dsteps, settled = settled_domain(
        m,
        box_rewriter,
        exact=exact,
        replace_point_dims=replace_point_dims,
        name=lambda e: format_expr(e, names),
    )
    steps += [s for rw in box_rws for s in rw.steps] + dsteps
    if dm.state != "ok":
        return dm, steps, rejected, settled and not any(b.truncated for b in box_rws)
    check = None
    if check_results:
        from verified_indexing.engines import prove_expr_equal

        def check(before: AffineExpr, after: AffineExpr) -> Any:
            try:
                return prove_expr_equal(before, after, dm, timeout=timeout, cache=cache)
            except Exception:  # an engine fault is never a proof
                return None

    results = []
    rw = Rewriter(dm, exact=exact, check=check, rules=rules, names=names)
    for i, r in enumerate(dm.results):
        rw.where = f"result {i}"
        results.append(rw.simplify(r))
    steps += rw.steps
    rejected += rw.rejected
    settled = settled and not rw.truncated and not any(b.truncated for b in box_rws)
    return dm.replace(results=results), steps, rejected, settled


def simplify_with_report(
    m: IndexingMap,
    *,
    verify: bool = True,
    timeout: float = 10.0,
    exact: bool | None = None,
    replace_point_dims: bool = False,
    rules: Sequence[Rule] = RULES,
    isl_candidate: bool = True,
    per_rewrite: bool = False,
    cache: Any = None,
    rescale_range_vars: bool = False,
) -> SimplifyReport:
    """Simplify ``m`` and say how (see the module docstring for the discipline).

    Args:
        m: the map.
        verify: prove the result equal to ``m`` (isl); ``False`` skips every proof
            (and isl's exact ranges unless ``exact=True``).
        timeout: seconds per proof query.
        exact: use isl's exact ranges and emptiness (default: ``verify``).
        replace_point_dims: replace dimensions with a single value by that value.
        rules: the catalogue (tests pass modified copies).
        isl_candidate: also try isl's own quasi-affine form of the map's results,
            kept only when proven equal and cheaper (needs ``verify``).
        per_rewrite: prove every rewrite as it is applied from the start (instead
            of proving the whole result first); for measurements.
        cache: the engines' proof cache argument (``None``/``False``: none,
            ``True``: the default cache, or a ``ProofCache``). With a cache (and
            ``verify``, the default ``rules``), a fully proven result is also stored
            whole, keyed by the input's text, these options and the versions: asking
            the same question again is a lookup (``report.cached``).
        rescale_range_vars: replace a range variable ``s`` constrained by
            ``s mod c in [r, r]`` (``c > 0``) by ``s = c*t + r`` over the exact
            range of ``t``, as XLA's ``RescaleSymbols`` does. This changes what the
            range variable means, so it is proven as a *relation* (range variables
            existential, :func:`~verified_indexing.engines.prove_equal`), not point
            by point; off by default (needs ``verify``).
    """
    kwargs = dict(verify=verify, timeout=timeout, exact=exact, replace_point_dims=replace_point_dims, rules=rules,
                  isl_candidate=isl_candidate, per_rewrite=per_rewrite, cache=cache,
                  rescale_range_vars=rescale_range_vars)
    store, question, memo = None, "", None
    if verify and rules is RULES and cache is not None and cache is not False:
        # A repeated question is a lookup (whole results: see verified_indexing.simplify.result_cache).
        from verified_indexing.engines.api import _resolve_cache
        from verified_indexing.engines.cache import _versions
        from verified_indexing.engines.isl import get_max_operations
        from verified_indexing.engines.points import enabled as points_enabled
        from verified_indexing.simplify.result_cache import result_question, rules_fingerprint

        store = _resolve_cache(cache)
        if store is not None:
            options = {
                "exact": exact, "replace_point_dims": replace_point_dims, "isl_candidate": isl_candidate,
                "per_rewrite": per_rewrite, "rescale_range_vars": rescale_range_vars, "timeout": float(timeout),
                "isl_max_operations": get_max_operations(),
                # small domains by enumeration or by isl: both proven, but the forms can differ
                "enumeration": points_enabled()}
            # the parsed row, remembered in this process under everything its key holds
            memo = ("simplify-result", m, tuple(options.values()), _versions(), rules_fingerprint())
            parts = store.memo_get(memo)
            if parts is not None:
                out, steps, verdict, mode, rounds = parts
                return SimplifyReport(m, out, list(steps), [], verdict, True, mode, 0.0, 0.0, rounds, "", True)
            question = result_question(m, options)
            hit = _report_from_row(m, store.get_result(question))
            if hit is not None:
                store.memo_put(memo, (hit.map, tuple(hit.steps), hit.verdict, hit.mode, hit.rounds))
                return hit
    report = _simplify_core(m, kwargs)
    if store is not None and _store_result(store, question, report):
        hit = _report_from_row(m, store.get_result(question))
        if hit is not None:
            store.memo_put(memo, (hit.map, tuple(hit.steps), hit.verdict, hit.mode, hit.rounds))
    return report


def _report_from_row(m: IndexingMap, row: dict[str, Any] | None) -> SimplifyReport | None:
    """The report of a stored whole result (``None`` when the row is unusable)."""
    if row is None:
        return None
    from verified_indexing.engines import Verdict
    from verified_indexing.simplify.result_cache import parse_stored_map

    try:
        out = parse_stored_map(str(row["map"]))
        steps = [Step(str(s["rule"]), str(s["where"]), str(s["before"]), str(s["after"]),
                      Verdict.from_json(s["verdict"]) if s.get("verdict") is not None else None)
                 for s in row["steps"]]
        verdict = Verdict.from_json(row["verdict"]) if row.get("verdict") is not None else None
    except Exception:  # a row this code cannot read is a miss, never an answer
        return None
    if verdict is not None:
        verdict = replace(verdict, cached=True)
    return SimplifyReport(input=m, map=out, steps=steps, verdict=verdict, verified=True, mode=str(row["mode"]),
                          rounds=int(row["rounds"]), cached=True)


def _store_result(store: Any, question: str, report: SimplifyReport) -> bool:
    """Store a fully proven result (see verified_indexing.simplify.result_cache for what qualifies)."""
    from verified_indexing.engines import Verdict
    from verified_indexing.engines.deadline import budget_exhausted
    from verified_indexing.simplify.result_cache import RELATION_STEPS, parse_stored_map

    m, out = report.input, report.map
    if not report.verified or report.note or budget_exhausted() or out.state != "ok":
        return False
    if out == m and (report.mode != "whole" or report.rejected):
        return False  # unchanged because proofs failed, not because no rule applies: ask again next time
    if any(s.verdict is not None and not s.verdict.proved for s in report.steps):
        return False
    text = out.format(one_line=True)
    try:
        if parse_stored_map(text) != out:
            return False
    except Exception:
        return False
    relation = any(s.rule in RELATION_STEPS for s in report.steps)
    seconds = report.seconds_rewrite + report.seconds_proof
    whole = Verdict("proved", "simplifier", seconds, f"simplify-result {m.format(True)} == {text}")
    row = {"map": text, "steps": [s.to_json() for s in report.steps], "mode": report.mode, "rounds": report.rounds,
           "verdict": report.verdict.to_json() if report.verdict is not None else None}
    replay = {"kind": "simplify-result", "input": m.format(True), "output": text,
              "equivalence": "relation" if relation else "pointwise"}
    store.put_result(question, whole, row, replay)
    return True


def _simplify_core(m: IndexingMap, kwargs: dict[str, Any]) -> SimplifyReport:
    """The fixpoint of :func:`_simplify_once` (no whole-result cache)."""
    report = _simplify_once(m, **kwargs)
    # Iterate to a fixpoint: one pass can enable another rewrite (e.g. after isl's
    # quasi-affine form or a dropped range variable), so simplify(simplify(m)) == simplify(m).
    prev, last = m, report
    while report.map != m and report.map.state == "ok" and _another_round_may_help(prev, last):
        if report.rounds >= MAX_ROUNDS:
            report.note = f"stopped after {MAX_ROUNDS} rounds without reaching a fixpoint"
            break
        if _deadline.budget_exhausted():
            report.note = f"stopped after {report.rounds} rounds: the time budget is exhausted"
            break
        prev = report.map
        nxt = last = _simplify_once(prev, **kwargs)
        if nxt.map == prev:
            break
        # each round is proven equal to its input (when verify): the chain is proven by transitivity
        report.map = nxt.map
        report.steps += nxt.steps
        report.rejected += nxt.rejected
        report.verdict = nxt.verdict if nxt.verdict is not None else report.verdict
        report.verified = report.verified and nxt.verified
        if nxt.mode == "per-rewrite":
            report.mode = "per-rewrite"
        report.seconds_rewrite += nxt.seconds_rewrite
        report.seconds_proof += nxt.seconds_proof
        report.domain_settled = nxt.domain_settled
        report.rounds += 1
    return report


MAX_ROUNDS = 8
"""Rounds of :func:`simplify_with_report` before it stops short of a fixpoint (with a note)."""

SIGN_RULES = frozenset({"div_negative_divisor", "mod_negative_divisor", "cdiv_negative_divisor"})
"""Rules that make a negative divisor positive. Their results are cheaper but can be much harder for
isl to prove equal to the input (nested ``mod -c``): they are not used on a map isl may already
struggle with (:func:`~verified_indexing.engines.deadline.risky_maps`), and when a whole result is
not proven in time, the candidate without them is tried before the rewrite-by-rewrite fallback,
which also goes without them."""

CANDIDATE_STEPS = ("isl_quasi_affine", "affine_on_domain")
"""Steps that replace results by a candidate found outside the rewriter (:func:`_isl_candidate`)."""


def _another_round_may_help(before: IndexingMap, report: SimplifyReport) -> bool:
    """Whether another round can change the output of the round that took ``before`` to ``report``.

    Not when that round's domain is settled (its last domain pass, with the bounds it had tightened,
    changed nothing; no rewriter stopped at its step cap or the time budget) and every other change
    was the rewriter's on that domain: the rewriter's output is its own fixpoint there (every node it
    returns has simplified children and no rule that applies). Another round is asked for after
    isl's candidate (isl's form depends on how the results are written: the next question can give a
    cheaper one), a round on a risky map whose result is not risky (it went without
    :data:`SIGN_RULES`), a relation step or a removed variable (``--no-verify`` removes unused ones without
    a step), the fallback mode and an unsettled domain."""
    if report.mode == "per-rewrite" or not report.domain_settled:
        return True
    relation_steps = _late("verified_indexing.simplify.result_cache", "RELATION_STEPS")
    if any(s.rule in CANDIDATE_STEPS or s.rule in relation_steps for s in report.steps):
        return True
    after = report.map
    # the round went without SIGN_RULES, the next need not
    if _deadline.risky_maps([before]) and not _deadline.risky_maps([after]):
        return True
    return (before.num_dims, before.num_range_vars, before.num_rt_vars) != (
        after.num_dims, after.num_range_vars, after.num_rt_vars)


def _simplify_once(
    m: IndexingMap,
    *,
    verify: bool,
    timeout: float,
    exact: bool | None,
    replace_point_dims: bool,
    rules: Sequence[Rule],
    isl_candidate: bool,
    per_rewrite: bool,
    cache: Any,
    rescale_range_vars: bool,
) -> SimplifyReport:
    """One pass of the simplifier (see :func:`simplify_with_report`)."""
    use_exact = verify if exact is None else exact
    mode = ("per-rewrite" if per_rewrite else "whole") if verify else "unverified"
    report = SimplifyReport(input=m, map=m, mode=mode)
    if m.state != "ok" or _already_simple(m):  # (before the risky walk below: nothing is rewritten)
        report.verified = True
        return report
    if verify and (rules is RULES or any(r.name in SIGN_RULES for r in rules)):  # (RULES holds them)
        if _deadline.risky_maps([m]):  # isl may already struggle: no form that is harder to prove
            rules = [r for r in rules if r.name not in SIGN_RULES]
    t0 = time.perf_counter()
    cand, steps, rejected, report.domain_settled = _rewrite_map(
        m,
        exact=use_exact,
        check_results=per_rewrite and verify,
        timeout=timeout,
        cache=cache,
        rules=rules,
        replace_point_dims=replace_point_dims,
    )
    report.rejected = rejected
    report.seconds_rewrite = time.perf_counter() - t0
    report.steps = steps
    if not verify:
        report.map = _finish(cand)
        return report
    t1 = time.perf_counter()
    verdict = _rule_instances_verdict(m, cand, report.steps, rules) if TRUST_RULE_PROOFS else None
    if verdict is None:
        verdict = _prove(m, cand, timeout, cache)
    failed = verdict is not None and not verdict.proved
    plain_rules = [r for r in rules if r.name not in SIGN_RULES] if failed else rules
    if verdict is not None and not verdict.proved and not verdict.refuted and len(plain_rules) < len(rules):
        # Not proven in time: the candidate without negative divisors made positive (a form isl can
        # take much longer to prove equal), proven whole, before proving rewrite by rewrite.
        alt, alt_steps, alt_rejected, alt_settled = _rewrite_map(
            m, exact=use_exact, check_results=False, timeout=timeout, cache=cache, rules=plain_rules,
            replace_point_dims=replace_point_dims)
        alt_verdict = _prove(m, alt, timeout, cache)
        if alt_verdict is None or alt_verdict.proved:
            cand, report.steps, report.domain_settled, verdict = alt, alt_steps, alt_settled, alt_verdict
            report.rejected += alt_rejected
        rules = plain_rules  # (and for the rewrites proven one by one below)
    if verdict is not None and not verdict.proved:
        # Fallback: prove each rewrite before applying it.
        report.mode = "per-rewrite"
        if verdict.refuted:
            report.rejected.append(Step("whole-result", "map", m.format(True), cand.format(True), verdict))
        cand, steps, rejected, report.domain_settled = _rewrite_map(
            m,
            exact=use_exact,
            check_results=True,
            timeout=timeout,
            cache=cache,
            rules=rules,
            replace_point_dims=replace_point_dims,
        )
        report.steps, report.rejected = steps, report.rejected + rejected
        verdict = _prove(m, cand, timeout, cache)
        if verdict is not None and not verdict.proved:
            # Still not proven: the input itself is the only safe answer.
            cand = m
            report.steps = []
            verdict = None
    final = _finish(cand)
    if final is not cand and final != cand:
        from verified_indexing.engines import prove_equal

        try:
            v2 = prove_equal(cand, final, timeout=timeout, cache=cache)
        except Exception:  # an engine fault is never a proof: keep the variables
            v2 = None
        if v2 is not None and v2.proved:
            report.steps.append(Step.deferred("remove_unused_symbols", "map", _one_line(cand), _one_line(final), v2))
            cand = final
    if use_exact and cand.state == "ok" and cand.num_range_vars:
        cand, more = _drop_existential_vars(cand, timeout, cache)
        report.steps += more
    if use_exact and cand.state == "ok" and cand.num_range_vars:
        cand, more = _solve_range_vars(cand, timeout, cache, rules)
        report.steps += more
    if rescale_range_vars and cand.state == "ok" and cand.num_range_vars:
        cand, more = _rescale_range_vars(cand, timeout, cache, rules)
        report.steps += more
    if isl_candidate and cand.state == "ok":
        found = _isl_candidate(cand)
        if found is not None and map_cost(found[0]) < map_cost(cand):
            alt, name = found
            v3 = prove_maps_pointwise(cand, alt, timeout=timeout, cache=cache)
            if v3.proved:
                report.steps.append(Step.deferred(name, "results", _one_line(cand), _one_line(alt), v3))
                cand = alt
    report.map = cand
    report.verdict = verdict
    report.verified = True
    report.seconds_proof = time.perf_counter() - t1
    return report


def _one_line(m: IndexingMap) -> Callable[[], str]:
    """A function printing ``m`` on one line (a step's text, built when read)."""
    return lambda: m.format(one_line=True)


def _already_simple(m: IndexingMap) -> bool:
    """Whether ``m`` is its own simplification, with nothing to ask: no range variable, no
    constraint, no variable with one value, no unused runtime variable, and every result linear.
    The domain is then a box that is not empty and whose bounds are tight, and every result is a
    canonical sum of variables that no rule matches (each rule needs a division, a ``min``/``max`` or a
    subexpression with one value)."""
    if m.num_range_vars or m.constraints:
        return False
    if any(v.bounds.is_point() for v in m.dims) or any(v.bounds.is_point() for v in m.rt_vars):
        return False
    if m.num_rt_vars and m.remove_unused_symbols() is not m:  # an unused one is removed (with its proof)
        return False
    return _linear(m)


def _linear(m: IndexingMap) -> bool:
    """Whether every result of ``m`` is linear (no division, ``min`` or ``max``)."""
    stack = list(m.results)
    while stack:  # (no generator per node)
        x = stack.pop()
        t = type(x)
        if t is Sum:
            stack.extend([u for u, _ in x.terms])  # type: ignore[attr-defined]
        elif t in _NONLINEAR:
            return False
    return True


TRUST_RULE_PROOFS = True
"""Whether a candidate made only of catalogue rule instances on an unchanged domain is proven by
those instances (:func:`_rule_instances_verdict`) instead of a whole-map proof. ``False`` proves
every candidate whole (what the simplifier did before; the benchmark times both)."""

TRUST_DOMAIN_PROOFS = True
"""Whether the domain steps with a general theorem (:data:`~verified_indexing.simplify.domain_rules.STEP_THEOREMS`)
count as proven steps for :func:`_rule_instances_verdict` (``False``: a candidate with a domain step is
proven whole, as before; the benchmark times both)."""

_DOMAIN_STEPS: frozenset[str] = frozenset(STEP_THEOREMS)
"""The domain steps whose theorems ``proofs/domain.py`` proves (``tests/test_proofs_domain.py`` fails
otherwise)."""

_CATALOGUE: dict[str, Rule] = {r.name: r for r in RULES}
_CATALOGUE_NAMES = frozenset(_CATALOGUE)
"""The catalogue by name: the rules whose general theorems ``proofs/`` proves (every one is proved;
``tests/test_proofs.py`` and ``tests/test_simplify_rule_proofs.py`` fail otherwise)."""


def _rule_instances_verdict(m: IndexingMap, cand: IndexingMap, steps: Sequence[Step],
                            rules: Sequence[Rule]) -> Any:
    """``proved`` (engine ``rules``) when every step from ``m`` to ``cand`` is an instance of a catalogue rule
    or of a proven domain rule; ``None`` otherwise (the caller then proves the candidate whole).

    What this rests on: each rule's theorem, proven by z3 in ``proofs/`` for all integers
    (``condition and lo.v <= v <= hi.v for each pattern variable v  ->  lhs == rhs``); the engine
    applies a rule only where the instantiated ``lhs`` is exactly the subexpression and the condition
    holds with sound ranges of the bound subexpressions over the domain (interval evaluation over the
    box of variable bounds, or the exact range over the domain from enumeration or isl). Each step thus
    replaces a subexpression by one equal to it at every point of the domain. A step on the domain is a
    rule instance in a constraint (valid on the whole box, so the constraint defines the same set) or a
    domain rule of :mod:`~verified_indexing.simplify.domain_rules` (``proofs/domain.py`` proves for all
    integers that the constraint before and after hold at the same points, under its side condition,
    which the engine decides per map with the rule's own function and sound ranges): the domain is the
    same set of points, and the results are equal at each of them. A rule object not in the catalogue (a
    modified copy, a user's rule) or any other step (a merge of ``mod`` constraints, a point dimension,
    an empty domain) leaves the proof to :func:`_prove`."""
    if cand == m or not steps or cand.state != "ok" or m.state != "ok":
        return None
    if (cand.num_dims, cand.num_range_vars, cand.num_rt_vars, cand.num_results) != (
            m.num_dims, m.num_range_vars, m.num_rt_vars, m.num_results):
        return None
    if any(a.name != b.name for a, b in zip((*cand.dims, *cand.range_vars, *cand.rt_vars),
                                            (*m.dims, *m.range_vars, *m.rt_vars))):
        return None
    same_domain = (cand.dims, cand.range_vars, cand.rt_vars, cand.constraints) == (
        m.dims, m.range_vars, m.rt_vars, m.constraints)
    if not same_domain and not TRUST_DOMAIN_PROOFS:
        return None
    trusted = _CATALOGUE_NAMES if rules is RULES else {r.name for r in rules if _CATALOGUE.get(r.name) is r}
    for s in steps:
        if s.rule in trusted:
            continue
        if s.where == "domain" and s.rule in _DOMAIN_STEPS and TRUST_DOMAIN_PROOFS:
            continue
        return None
    if not same_domain and not any(s.where == "domain" for s in steps):
        return None  # (the domain changed with no step saying how: never trusted)
    Verdict = _late("verified_indexing.engines.verdict", "Verdict")

    def text() -> str:  # (built when read)
        return f"pointwise-equal: {m.format(one_line=True)}  ==  {cand.format(one_line=True)}"

    return Verdict.deferred("proved", "rules", 0.0, text)


def _prove(m: IndexingMap, cand: IndexingMap, timeout: float, cache: Any) -> Any:
    if cand == m:
        return None
    return prove_maps_pointwise(m, cand, timeout=timeout, cache=cache)


def _drop_existential_vars(m: IndexingMap, timeout: float, cache: Any) -> tuple[IndexingMap, list[Step]]:
    """Remove range variables that no result uses, with every constraint that
    mentions them, when isl proves the map unchanged as a relation (range
    variables existentially quantified, :func:`~verified_indexing.engines.prove_equal`).

    This drops constraints such as ``(d1 - s1) mod 32 in [0, 0]`` whose only role
    is to say that some ``s1`` exists, which the remaining bounds already imply.
    """
    from verified_indexing.engines import prove_equal

    steps: list[Step] = []
    for _ in range(m.num_range_vars):
        in_results = set().union(*(r.variables() for r in m.results)) if m.results else set()
        for i in range(m.num_range_vars):
            if ("s", i) in in_results:
                continue
            keep = [(e, iv) for e, iv in m.constraints if not e.uses("s", i)]
            if len(keep) == len(m.constraints):
                continue
            alt = m.replace(constraints=keep).remove_unused_symbols()
            try:
                v = prove_equal(m, alt, timeout=timeout, cache=cache)
            except Exception:  # an engine fault is never a proof
                continue
            if v.proved:
                dropped = ", ".join(f"{format_expr(e, m.var_name)} in [{iv.lo}, {iv.hi}]"
                                    for e, iv in m.constraints if e.uses("s", i))
                steps.append(Step("drop_existential_var", "domain", f"{m.var_name('s', i)}: {dropped}",
                                  "(implied: dropped with the variable)", v))
                m = alt
                break
        else:
            break
    return m, steps


def _proven_relation_step(
    m: IndexingMap, alt: IndexingMap, timeout: float, cache: Any, rules: Sequence[Rule], *,
    fewer_range_vars: bool = False,
) -> tuple[IndexingMap, Any] | None:
    """``alt`` simplified, with the verdict proving it the same relation as ``m`` (range variables
    existential), when it is no costlier (and, if asked, has fewer range variables); else ``None``."""
    from verified_indexing.engines import prove_equal

    alt = simplify_with_report(alt, timeout=timeout, cache=cache, rules=rules, isl_candidate=False).map
    if alt.state != "ok" or map_cost(alt) > map_cost(m):
        return None
    if fewer_range_vars and alt.num_range_vars >= m.num_range_vars:
        return None
    try:
        v = prove_equal(m, alt, timeout=timeout, cache=cache)
    except Exception:  # an engine fault is never a proof
        return None
    return (alt, v) if v.proved else None


def _rescale_range_vars(
    m: IndexingMap, timeout: float, cache: Any, rules: Sequence[Rule]
) -> tuple[IndexingMap, list[Step]]:
    """``s mod c in [r, r]`` (``c > 0``, ``0 <= r < c``) on a bare range variable:
    substitute ``s = c*t + r`` with ``t`` over ``[ceil((lo - r)/c), floor((hi - r)/c)]``,
    drop the constraint, simplify, and keep the result only when isl proves it the
    same relation as ``m`` and it is no costlier."""
    from verified_indexing.expr import Mod, ceil_div, floor_div
    from verified_indexing.interval import Interval

    steps: list[Step] = []
    progress = True
    while progress:
        progress = False
        for idx, (e, iv) in enumerate(m.constraints):
            if not (isinstance(e, Mod) and isinstance(e.lhs, Sym) and e.divisor > 0 and iv.lo == iv.hi):
                continue
            c, r, i = e.divisor, iv.lo, e.lhs.index
            if not 0 <= r < c:
                continue
            b = m.range_vars[i].bounds
            lo_t, hi_t = ceil_div(b.lo - r, c), floor_div(b.hi - r, c)
            if lo_t > hi_t:
                continue
            sub: list[AffineExpr] = [Sym(j) for j in range(m.num_range_vars)]
            sub[i] = Sym(i) * c + r
            new_vars = list(m.range_vars)
            new_vars[i] = new_vars[i].with_bounds(Interval(lo_t, hi_t))
            alt = IndexingMap(
                m.dims,
                [x.substitute(syms=sub) for x in m.results],
                new_vars,
                m.rt_vars,
                [(x.substitute(syms=sub), xv) for k, (x, xv) in enumerate(m.constraints) if k != idx],
            )
            found = _proven_relation_step(m, alt, timeout, cache, rules)
            if found is not None:
                alt, v = found
                name = m.var_name("s", i)
                steps.append(Step("rescale_range_var", "map", f"{name} mod {c} in [{r}, {r}]",
                                  f"{name} -> {name} * {c}{f' + {r}' if r else ''}, {name} in [{lo_t}, {hi_t}]", v))
                m = alt
                progress = True
                break
    return m, steps


def _determined_by_mod(m: IndexingMap, i: int) -> tuple[int | None, bool, AffineExpr] | None:
    """A range variable with one value is that value. A constraint ``(rest + k*s) mod c in [r, r]``
    (``k`` = +-1, ``c > 0``, ``rest`` free of ``s``) on range variable ``s = s_i``
    whose range holds at most ``c`` values fixes ``s``:
    ``s = lo + ((k*(r - rest) - lo) mod c)``, the one value of ``[lo, lo + c - 1]`` congruent
    to ``k*(r - rest)``. Returns (the constraint's index or ``None``, whether the variable's
    bounds must be kept as a constraint on the value (fewer than ``c`` values), the value)."""
    from verified_indexing.expr import Mod

    b = m.range_vars[i].bounds
    if b.lo == b.hi:
        return None, False, Const(b.lo)
    for idx, (e, iv) in enumerate(m.constraints):
        if not (isinstance(e, Mod) and e.divisor > 0 and iv.lo == iv.hi and 0 <= iv.lo < e.divisor):
            continue
        c = e.divisor
        if b.hi - b.lo + 1 > c:
            continue
        lhs = e.lhs if isinstance(e.lhs, Sum) else Sum(((e.lhs, 1),), 0)
        k = [coef for t, coef in lhs.terms if t == Sym(i)]
        if len(k) != 1 or k[0] not in (1, -1):
            continue
        rest = lhs - Sym(i) * k[0]
        if rest.uses("s", i):
            continue
        return idx, b.hi - b.lo + 1 < c, ((Const(iv.lo) - rest) * k[0] - b.lo).mod(c) + b.lo
    return None


def _solve_range_vars(
    m: IndexingMap, timeout: float, cache: Any, rules: Sequence[Rule]
) -> tuple[IndexingMap, list[Step]]:
    """Eliminate each range variable fixed by a ``mod`` constraint (:func:`_determined_by_mod`):
    substitute its value, drop the constraint (keeping the variable's bounds as a constraint when
    its range has fewer than ``c`` values), simplify, and keep the result only when isl proves it
    the same relation as ``m`` (range variables existential) and it is no costlier."""
    from verified_indexing.interval import Interval

    steps: list[Step] = []
    progress = True
    while progress and m.state == "ok":
        progress = False
        for i in range(m.num_range_vars):
            found = _determined_by_mod(m, i)
            if found is None:
                continue
            idx, keep_bounds, value = found
            b = m.range_vars[i].bounds
            sub: list[AffineExpr] = [Sym(j) for j in range(m.num_range_vars)]
            sub[i] = value
            constraints = [(x.substitute(syms=sub), xv) for k, (x, xv) in enumerate(m.constraints) if k != idx]
            if keep_bounds:
                constraints.append((value, Interval(b.lo, b.hi)))
            alt = IndexingMap(m.dims, [x.substitute(syms=sub) for x in m.results], m.range_vars, m.rt_vars,
                              constraints).remove_unused_symbols()
            found_alt = _proven_relation_step(m, alt, timeout, cache, rules, fewer_range_vars=True)
            if found_alt is not None:
                alt, v = found_alt
                name = m.var_name("s", i)
                why = (f"{name} in [{b.lo}, {b.hi}]" if idx is None else
                       f"{format_expr(m.constraints[idx][0], m.var_name)} in [{m.constraints[idx][1].lo}, "
                       f"{m.constraints[idx][1].hi}]")
                steps.append(Step("solve_range_var", "map", why, f"{name} = {format_expr(value, m.var_name)}", v))
                m = alt
                progress = True
                break
    return m, steps


def _finish(m: IndexingMap) -> IndexingMap:
    return m.remove_unused_symbols() if m.state == "ok" else m


def _isl_quasi_affine(m: IndexingMap) -> IndexingMap | None:
    from verified_indexing.engines.isl import limited_context, quasi_affine_results, text_pointwise_map

    with limited_context() as ctx:
        # isl's quasi-affine form depends on how the map was built: the text form gives the candidates
        # this step was tuned on (the direct construction's are sometimes costlier)
        results = quasi_affine_results(text_pointwise_map(m, ctx=ctx))
        return None if results is None else m.replace(results=results)


_ISL_CANDIDATES: dict[tuple[IndexingMap, int], IndexingMap | None] = {}
_NO_CANDIDATE: Any = object()
"""Finished :func:`_isl_candidate` answers (the fixpoint's later rounds ask again); a
failure (a limit, a deadline) is never remembered."""


def _nonlinear_nodes(e: AffineExpr) -> int:
    """The ``floordiv``/``ceildiv``/``mod``/``min``/``max`` nodes of ``e``."""
    n = 0
    stack = [e]
    while stack:  # (no generator per node)
        x = stack.pop()
        t = type(x)
        if t is Sum:
            stack.extend([u for u, _ in x.terms])  # type: ignore[attr-defined]
        elif t in _NONLINEAR:
            n += 1
            stack.extend(x.children())
    return n


_NONLINEAR = frozenset([FloorDiv, CeilDiv, Mod, Min, Max])


def _affine_fits(m: IndexingMap, table: Any, counts: Sequence[int] | None = None) -> IndexingMap | None:
    """``m`` with each non-linear result that is affine on the domain (every point of the table
    says so) replaced by that affine form; ``None`` when a result cannot be evaluated in ``int64``
    (the table cannot speak for it). ``counts``: each result's :func:`_nonlinear_nodes`, if known."""
    results = list(m.results)
    for i, r in enumerate(results):
        if (counts[i] if counts is not None else _nonlinear_nodes(r)):
            try:
                fit = table.affine_fit(r)
            except ValueError:  # int64 could overflow
                return None
            if fit is not None and cost(fit) < cost(r):
                results[i] = fit
    return m if tuple(results) == m.results else m.replace(results=results)


def _isl_candidate(m: IndexingMap) -> tuple[IndexingMap, str] | None:
    """A cheaper form of ``m``'s results, over ``m``'s own variables, to be proven, with the name of
    the step that found it (``None``: none).

    On a small domain (a point table, :mod:`verified_indexing.engines.points`), each non-linear
    result that is affine on the domain is replaced by that affine form (read off neighbouring points,
    checked at every point). On a small plain box (no constraint), isl is then asked only when some
    result still has two or more divisions (or ``min``/``max``): a result with one division that is
    not affine cannot lose that division, and a linear result on a box cannot get cheaper (isl's form
    of a one-division result is sometimes cheaper in other ways; that is given up for speed).
    Elsewhere (a constrained domain, no table, a value beyond ``int64``) isl's quasi-affine form of
    the results is asked for as well. isl is not asked when every result is linear and the domain is
    a plain box with no point dimension: isl's form is then that linear result (the question, a text
    round trip through isl, costs more than the rest of the simplification)."""
    if m.num_range_vars or m.num_rt_vars:
        return None
    counts = [_nonlinear_nodes(r) for r in m.results]
    if not any(counts) and not m.constraints and not any(v.bounds.is_point() for v in m.dims):
        return None
    table = _late("verified_indexing.engines.points", "table_for")(m)
    fitted = _affine_fits(m, table, counts) if table is not None else None
    base = m if fitted is None else fitted
    # isl is asked with no table (or a value beyond int64), on a constrained domain (isl uses its
    # equalities and bounds: d0 + d1 with d0 + d1 in [2, 2] is 2) and for two divisions in a result
    # (a result the fit replaced is linear: 0)
    if fitted is None or m.constraints or any(n >= 2 and r == m.results[i] for i, (n, r) in
                                              enumerate(zip(counts, fitted.results))):
        alt = _isl_candidate_of(base)
        if alt is not None:
            return alt, "isl_quasi_affine"
    return None if base is m else (base, "affine_on_domain")


def _isl_candidate_of(m: IndexingMap) -> IndexingMap | None:
    """isl's quasi-affine form of ``m``'s results, polished by the rewriter, kept per result where
    cheaper (``None``: no result is)."""
    # (equal maps print the same text: the map is the key, with isl's limit: a lower one may give no candidate)
    key = (m, _late("verified_indexing.engines.isl", "get_max_operations")())
    hit = _ISL_CANDIDATES.get(key, _NO_CANDIDATE)
    if hit is not _NO_CANDIDATE:
        return hit  # type: ignore[no-any-return]
    try:
        from verified_indexing.engines.deadline import risky_maps, run_bounded

        # under isl's operation limit, and (for risky maps) a deadline in the worker process: never a hang
        alt = run_bounded(_isl_quasi_affine, risky_maps([m]), args=(m,))
    except Exception:
        return None
    out = _polish_isl_candidate(m, alt)
    if len(_ISL_CANDIDATES) >= 4096:
        _ISL_CANDIDATES.clear()
    _ISL_CANDIDATES[key] = out
    return out


def _polish_isl_candidate(m: IndexingMap, alt: IndexingMap | None) -> IndexingMap | None:
    if alt is None or alt.state != "ok" or alt.num_dims != m.num_dims or alt.num_results != m.num_results:
        return None
    if alt.num_range_vars or alt.num_rt_vars:
        return None
    # isl's form, polished by our own rules with the domain's exact ranges, as the results were (box ranges
    # left ((d0 mod 16) mod 3) * 7 on d0 in [15, 16] as it was; exact ones give 0); kept per result only
    # where cheaper.
    rw = Rewriter(m, exact=True)
    results = []
    for mine, theirs in zip(m.results, alt.results):
        theirs = rw.simplify(theirs)
        results.append(theirs if cost(theirs) < cost(mine) else mine)
    if tuple(results) == m.results:
        return None
    return m.replace(results=results)


def simplify(m: IndexingMap, *, verify: bool = True, timeout: float = 10.0) -> IndexingMap:
    """The simplified map, proven equal to ``m`` when ``verify`` (otherwise ``m``
    itself is returned when nothing can be proven)."""
    return simplify_with_report(m, verify=verify, timeout=timeout).map


def simplify_expr(
    expr: AffineExpr, domain_map: IndexingMap, *, verify: bool = True, timeout: float = 10.0
) -> AffineExpr:
    """``expr`` simplified using the bounds of ``domain_map``'s domain; with
    ``verify``, the result is proven equal to ``expr`` on that domain (else
    ``expr`` is returned)."""
    if domain_map.state != "ok":
        return expr
    rw = Rewriter(domain_map, exact=verify)
    out = rw.simplify(expr)
    if verify and out != expr:
        from verified_indexing.engines import prove_expr_equal

        if not prove_expr_equal(expr, out, domain_map, timeout=timeout).proved:
            return expr
    return out


def expr_cost(e: AffineExpr) -> int:
    """Alias of :func:`verified_indexing.simplify.cost.cost`."""
    return cost(e)
