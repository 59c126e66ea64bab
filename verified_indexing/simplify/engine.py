"""The rewriting engine: applies the catalogue bottom-up, with bounds, to a fixpoint.

Promises:

* a rewrite is applied only when the instantiated rule's left-hand side is exactly
  the subexpression, its side condition holds for the subexpression's ranges
  (interval evaluation first, isl's exact range when intervals are too coarse), and
  the result strictly decreases :func:`~verified_indexing.simplify.cost.measure`
  (so rewriting terminates and never increases the cost);
* with a ``check`` callback, each rewrite is also proven equal under the domain
  before it is applied; a rewrite whose proof is not ``proved`` is recorded as
  rejected and never applied.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from verified_indexing.deferred_text import Text, deferred_text
from verified_indexing.engines.deadline import budget_exhausted, remaining
from verified_indexing.expr import AffineExpr, Const, Dim, RtSym, Sum, Sym
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval, node_range
from verified_indexing.simplify.cost import measure
from verified_indexing.simplify.rules import _TERMS, EXPR_ALGEBRA, RULES, Rule, rule_heads
from verified_indexing.syntax.printer import format_expr

__all__ = ["Step", "Rewriter", "CheckFn"]

CheckFn = Callable[[AffineExpr, AffineExpr], Any]
"""``check(before, after) -> Verdict``: proves one rewrite under the domain."""


@dataclass(frozen=True)
class Step:
    """One applied (or rejected) transformation.

    ``rule`` is a catalogue rule name or a domain step name (``constraint_shift``,
    ``known_empty``, ...); ``where`` says which part of the map it touched;
    ``before``/``after`` are the texts of the subexpression (or constraint);
    ``verdict`` is the proof verdict of this step when it was proven on its own
    (``None`` when the whole result was proven at once).
    """

    rule: str
    where: str
    before: str
    after: str
    verdict: Any = None

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "where": self.where,
            "before": self.before,
            "after": self.after,
            "verdict": self.verdict.to_json() if self.verdict is not None else None,
        }

    @staticmethod
    def deferred(rule: str, where: str, before: Text, after: Text, verdict: Any = None) -> Step:
        """A step whose texts may be functions building them on first read
        (:mod:`verified_indexing.deferred_text`); otherwise the same step."""
        # (Step(rule, where, "", "", verdict) with the two texts then stored: the same fields, filled directly)
        s = _new_object(Step)
        d = s.__dict__
        d["rule"] = rule
        d["where"] = where
        d[_BEFORE] = before
        d[_AFTER] = after
        d["verdict"] = verdict
        return s

    def __reduce__(self) -> tuple[Any, ...]:
        return (Step, (self.rule, self.where, self.before, self.after, self.verdict))


# ``before`` and ``after`` are dataclass fields read through properties (Step.deferred).
Step.before = deferred_text("before")  # type: ignore[assignment]
Step.after = deferred_text("after")  # type: ignore[assignment]
_BEFORE, _AFTER = "_before_text", "_after_text"  # (where deferred_text keeps them)
_new_object = object.__new__


@dataclass
class Rewriter:
    """Simplifies expressions over one domain.

    Args:
        domain: the map whose variable bounds (and, for exact ranges, whose full
            domain) bound the subexpressions.
        exact: ask isl for the exact range when interval bounds fail a condition.
        check: prove each rewrite before applying it (per-rewrite discipline).
        rules: the catalogue to use (tests pass modified copies).
        names: variable names for the texts of the steps.
    """

    domain: IndexingMap
    exact: bool = False
    check: CheckFn | None = None
    rules: Sequence[Rule] = RULES
    names: Callable[[Any, int], str] | None = None
    where: str = ""
    _log: list[tuple[str, str, AffineExpr, AffineExpr, Any]] = field(default_factory=list)
    rejected: list[Step] = field(default_factory=list)
    max_steps: int = 2000
    truncated: bool = False
    """Some node was left as it was because the step cap or the time budget was reached (its output
    may not be a fixpoint)."""
    _memo: dict[AffineExpr, AffineExpr] = field(default_factory=dict)
    _ivs: dict[AffineExpr, Interval] = field(default_factory=dict)
    _exact: dict[AffineExpr, Interval] = field(default_factory=dict)
    _banned: set[tuple[AffineExpr, AffineExpr]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._points: Any = False  # the domain's point table, built on the first exact question
        self._candidates: Callable[[AffineExpr], Sequence[Rule] | None]
        if not COMPILED_MATCHER:
            self._candidates = _every_rule
        elif self.rules is RULES:  # (the catalogue's compiled matcher, looked up once per process)
            self._candidates = _catalogue_matcher()
        else:
            self._candidates = _candidates(self.rules)
        self._leaves = _leaf_shortcut(self._candidates) if LEAF_SHORTCUT else 0
        # no command budget when the rewriter is made (a budget is a context around the whole command):
        # no clock to read at each node
        self._budget = remaining() != math.inf
        if len(_TERMS) > 1 << 15:
            _TERMS.clear()
        d = self.domain
        self._box = (
            [v.bounds for v in d.dims],
            [v.bounds for v in d.range_vars],
            [v.bounds for v in d.rt_vars],
        )

    @property
    def steps(self) -> list[Step]:
        """The rewrites applied so far, in order (their texts are formatted when asked for)."""
        return [Step.deferred(rule, where, self._texter(e), self._texter(after), verdict)
                for rule, where, e, after, verdict in self._log]

    # -- ranges -----------------------------------------------------------
    def interval(self, e: AffineExpr) -> Interval:
        """A sound interval of ``e`` over the box of variable bounds (:func:`~verified_indexing.interval.range_of`,
        each subexpression's interval remembered: the rewriter asks for a node's and then its parts')."""
        hit = self._ivs.get(e)
        if hit is None:
            t = type(e)
            if t is Dim:
                hit = self._box[0][e.index]  # type: ignore[attr-defined]
            elif t is Sym:
                hit = self._box[1][e.index]  # type: ignore[attr-defined]
            elif t is RtSym:
                hit = self._box[2][e.index]  # type: ignore[attr-defined]
            else:
                hit = node_range(e, self.interval)
            self._ivs[e] = hit
        return hit

    def exact_range(self, e: AffineExpr) -> Interval:
        """The exact range of ``e`` over the domain (isl), or the interval when isl
        cannot say."""
        hit = self._exact.get(e)
        if hit is None:
            hit = self.interval(e)
            if not self.domain.constraints and e.is_pure_affine():
                # a sum of distinct variables over a box: each term reaches its ends independently, so
                # the interval is the exact range (no engine asked)
                self._exact[e] = hit
                return hit
            try:
                ex = self._exact_range(e)
            except Exception:  # an engine failure only costs precision
                ex = None
            if ex is not None and not ex.is_empty():
                hit = hit.intersect(ex)
            self._exact[e] = hit
        return hit

    def _exact_range(self, e: AffineExpr) -> Interval | None:
        """Every point of a small domain (enumeration), else isl."""
        if self._points is False:
            from verified_indexing.engines.points import table_for

            self._points = table_for(self.domain)
        if self._points is not None:
            try:
                got: Interval | None = self._points.range(e)
                return got
            except ValueError:  # int64 could overflow: isl decides
                pass
        from verified_indexing.engines import exact_range

        return exact_range(e, self.domain, limited=True)

    # -- rewriting -----------------------------------------------------------
    def _texter(self, e: AffineExpr) -> Callable[[], str]:
        """A function printing ``e`` (it holds the names, not the rewriter)."""
        names = self.names
        return functools.partial(format_expr, e) if names is None else functools.partial(format_expr, e, names)

    def _text(self, e: AffineExpr) -> str:
        if self.names is None:
            return format_expr(e)
        return format_expr(e, self.names)

    def simplify(self, e: AffineExpr) -> AffineExpr:
        """The simplified form of ``e`` (memoized per rewriter)."""
        memo = self._memo
        hit = memo.get(e)
        if hit is not None:
            return e if hit is _ACTIVE else hit  # (a node being simplified: a rewrite cycle, stop here)
        if self._budget and budget_exhausted():  # the command's time is up: no more rewriting (what is done is proven)
            self.truncated = True
            return e
        t = type(e)
        if self._leaves and (t is Const or (t in _VAR_TYPES and self._leaves == 2)):
            # A constant is offered no rule, a variable only point_value, which has no binding unless the
            # variable's interval is one value: decided here without the matcher (the same answer).
            if t is Const or not self.interval(e).is_point():
                if len(self._log) >= self.max_steps:
                    self.truncated = True
                memo[e] = e
                return e
        memo[e] = _ACTIVE  # (the memo marks the nodes being simplified: no separate set to keep)
        try:
            # (map_children, by node kind: no tuple of children built for a sum)
            if t is Sum:
                terms = e.terms  # type: ignore[attr-defined]
                kids = [self.simplify(u) for u, _ in terms]
                cur = e
                for (u, _), k in zip(terms, kids):
                    if u is not k:
                        cur = e.rebuild(kids)
                        break
            else:
                cur = e.map_children(self.simplify)
            if len(self._log) < self.max_steps:
                new = self._step(cur)
            else:
                new, self.truncated = None, True
            out = cur if new is None else self.simplify(new)
        except BaseException:
            del memo[e]
            raise
        memo[e] = out
        return out

    def _try(self, rule: Rule, e: AffineExpr, rng: Callable[[AffineExpr], Interval]) -> tuple[AffineExpr | None, bool]:
        """(rewritten, whether some binding matched but failed its condition)."""
        failed = False
        base: tuple[int, int, int] | None = None
        uses_ranges = rule.uses_ranges
        lo = hi = _NO_RANGES  # (a condition that reads no range reads nothing from them)
        for b in rule.match(e, rng):
            # (Rule.holds then Rule.sides, inlined: the namespaces are built once per binding)
            k = SimpleNamespace(**b.constants)
            if uses_ranges:
                lo = SimpleNamespace()
                hi = SimpleNamespace()
                empty = False
                for n, x in b.variables.items():
                    iv = rng(x)
                    if iv.lo > iv.hi:  # (empty)
                        empty = True
                        break
                    lo.__dict__[n] = iv.lo
                    hi.__dict__[n] = iv.hi
                if empty:
                    continue
            try:
                if not rule.condition(EXPR_ALGEBRA, k, lo, hi):
                    # (the binding is not checked against e here: at worst an exact-range pass more)
                    failed = True
                    continue
                v = SimpleNamespace(**b.variables)
                lhs = rule.lhs(EXPR_ALGEBRA, v, k)
                if lhs != e:
                    continue
                rhs = rule.rhs(EXPR_ALGEBRA, v, k)
            except (ArithmeticError, ValueError):
                continue
            if self._banned and (e, rhs) in self._banned:
                continue
            mark = len(self._log)
            if base is None:
                base = measure(e)
            if measure(rhs) >= base:
                # Not cheaper by itself: keep it only if simplifying it further pays.
                if not rule.explore:
                    continue
                if len(self._log) >= self.max_steps:
                    self.truncated = True
                    continue
                self._log.append((rule.name, self.where, e, rhs, None))
                further = self.simplify(rhs)
                if measure(further) >= base:
                    del self._log[mark:]
                    continue
                if self.check is not None:
                    del self._log[mark:]
                    verdict = self.check(e, further)
                    if verdict is None or not verdict.proved:
                        self._banned.add((e, rhs))
                        self.rejected.append(Step(rule.name, self.where, self._text(e), self._text(further), verdict))
                        continue
                    self._log.append((rule.name + "+", self.where, e, further, verdict))
                return further, failed
            verdict = None
            if self.check is not None:
                verdict = self.check(e, rhs)
                if verdict is None or not verdict.proved:
                    self._banned.add((e, rhs))
                    self.rejected.append(Step(rule.name, self.where, self._text(e), self._text(rhs), verdict))
                    continue
            self._log.append((rule.name, self.where, e, rhs, verdict))
            return rhs, failed
        return None, failed

    def _step(self, e: AffineExpr) -> AffineExpr | None:
        cands = self._candidates(e)
        for rule in _rules_for(self.rules, type(e)) if cands is None else cands:
            new, failed = self._try(rule, e, self.interval)
            if new is None and failed and self.exact and rule.uses_ranges and not self._same_ranges(rule, e):
                new, _ = self._try(rule, e, self.exact_range)
            if new is not None:
                return new
        return None

    def _same_ranges(self, rule: Rule, e: AffineExpr) -> bool:
        """Whether matching ``rule`` on ``e`` with exact ranges is the same as with intervals, so a second
        try is not needed: a catalogue rule (its matcher and bindings ask ranges only of ``e``'s children and
        of linear combinations of their parts) on a node whose children are linear, over a domain with no
        constraint (then :meth:`exact_range` is :meth:`interval` on every linear expression)."""
        if self.domain.constraints or id(rule) not in _CATALOGUE_IDS:
            return False
        for c in e.children():
            t = type(c)
            if t is Sum:
                if any(type(x) not in _VAR_TYPES for x, _ in c.terms):  # type: ignore[attr-defined]
                    return False
            elif t is not Const and t not in _VAR_TYPES:
                return False
        return True


COMPILED_MATCHER = True
"""Offer each node the rules selected by the decision tree compiled from the catalogue
(:mod:`verified_indexing.simplify.matcher`); ``False``: every rule for the node's class, one by one
(the same rewrites, slower; the benchmark and the differential test use both)."""


def _every_rule(e: AffineExpr) -> None:
    return None


_OF_RULES: list[Callable[[AffineExpr], Sequence[Rule] | None]] = []
"""The catalogue's :func:`_candidates`, made on first use."""


def _catalogue_matcher() -> Callable[[AffineExpr], Sequence[Rule] | None]:
    if not _OF_RULES:
        _OF_RULES.append(_candidates(RULES))
    return _OF_RULES[0]


LEAF_SHORTCUT = True
"""Decide constants and variables in :meth:`Rewriter.simplify` without the matcher when the candidates
allow it (:func:`_leaf_shortcut`); ``False``: every node through the matcher (the benchmark's before)."""

_VAR_TYPES = (Dim, Sym, RtSym)
_ACTIVE: Any = object()
"""The memo's mark of a node being simplified (not an expression: no simplification returns it)."""
_NO_RANGES = SimpleNamespace()
"""The ranges given to the condition of a rule that reads none (``uses_ranges=False``): never written."""
_CATALOGUE_IDS = frozenset(map(id, RULES))
"""The catalogue's rules (kept alive by ``RULES``: their ids are theirs)."""
_POINT_VALUE = next(r for r in RULES if r.name == "point_value")


def _leaf_shortcut(candidates: Callable[[AffineExpr], Sequence[Rule] | None]) -> int:
    """2 when constants are offered no rule and variables only the catalogue's ``point_value`` (whose
    matcher binds a variable only when its range is one value); 1 when only the constants' part holds;
    0 otherwise (a catalogue with other rules on leaves: every node goes through the matcher)."""
    hit = _LEAVES.get(candidates)
    if hit is None:
        if candidates(Const(0)) != ():
            hit = 0
        else:
            var_rules = {tuple(candidates(t(0)) or (None,)) for t in _VAR_TYPES}
            hit = 2 if var_rules == {(_POINT_VALUE,)} else 1
        if len(_LEAVES) > 64:
            _LEAVES.clear()
        _LEAVES[candidates] = hit
    return hit


_LEAVES: dict[Callable[[AffineExpr], Sequence[Rule] | None], int] = {}
""":func:`_leaf_shortcut` per candidates function (the functions are kept by the matcher's cache)."""


def _candidates(rules: Sequence[Rule]) -> Callable[[AffineExpr], Sequence[Rule] | None]:
    """The compiled matcher's ``candidates`` for ``rules`` (``None`` for each node when the catalogue
    cannot be compiled: its rules are then offered by class)."""
    try:
        from verified_indexing.simplify.matcher import compiled_candidates

        return compiled_candidates(rules)
    except Exception:  # a catalogue whose shapes cannot be traced (a test's copy): rule by rule
        return _every_rule


_BY_HEAD: dict[tuple[int, type], tuple[Sequence[Rule], list[Rule]]] = {}
"""``(id(catalogue), node class) -> (catalogue, its rules for that class)``; the catalogue is kept
so its id cannot be reused while the entry lives."""


def _rules_for(rules: Sequence[Rule], cls: type) -> list[Rule]:
    """The rules of ``rules`` whose matcher can fire on a node of class ``cls``, in catalogue order."""
    hit = _BY_HEAD.get((id(rules), cls))
    if hit is not None and hit[0] is rules:
        return hit[1]
    out = [r for r in rules if (h := rule_heads(r)) is None or issubclass(cls, h)]
    if len(_BY_HEAD) > 256:
        _BY_HEAD.clear()
    _BY_HEAD[(id(rules), cls)] = (rules, out)
    return out
