"""Domain simplification: constraints and variable bounds.

Each transformation here keeps the domain exactly the same set of points. Most are domain rules
(:mod:`verified_indexing.simplify.domain_rules`): stated once, proven for all integers in ``proofs/``,
and applied with the rule's own interval and side condition, decided per map with sound ranges; a map
whose every step is such a rule or a catalogue rule needs no whole-map proof (the ``mod`` merge, point
dimensions and an empty domain still get one). "Exact" below
means isl, or on a small domain every point (:mod:`verified_indexing.engines.points`):

* ``e + k in [l, u]`` becomes ``e in [l - k, u - k]``;
* ``g*e in [l, u]`` (``g`` the gcd of the coefficients, either sign) becomes
  ``e in [ceil(l/g), floor(u/g)]`` (bounds swapped for a negative ``g``);
* ``x floordiv d in [l, u]`` becomes ``x in [l*d, u*d + d - 1]`` for ``d > 0`` and
  ``x in [u*d + d + 1, l*d]`` for ``d < 0``;
* a constraint on a bare variable tightens the variable's bounds;
* a constraint whose expression always lies in its interval is dropped (interval
  bounds first, then the exact range over the rest of the domain);
* ``x mod a in [r, r]`` and ``x mod b in [r, r]`` merge into ``x mod L in [r, r]``
  (``L = lcm(|a|, |b|)``, signed like ``r``'s residue range);
* a constraint that can never hold, or an empty domain (exact), gives KNOWN EMPTY;
* variable bounds shrink to the exact feasible range, optionally point
  dimensions are replaced by their value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from verified_indexing.expr import AffineExpr, Const, Dim, FloorDiv, Mod, RtSym, Sum, Sym, _Var
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval
from verified_indexing.simplify.domain_rules import domain_rule, holds, new_interval
from verified_indexing.simplify.engine import Step

__all__ = ["normalize_constraint", "settled_domain", "simplify_domain"]

Simplifier = Callable[[AffineExpr], AffineExpr]

_SHIFT = domain_rule("constraint_shift")
_SCALE = domain_rule("constraint_scale")
_SCALE_NEG = domain_rule("constraint_scale_negative")
_FLOORDIV = domain_rule("constraint_floordiv")
_FLOORDIV_NEG = domain_rule("constraint_floordiv_negative")
_ALWAYS = domain_rule("constraint_always_true")
_NEVER = domain_rule("constraint_never_true")
_IMPLIED = domain_rule("constraint_implied")
_EXACT_BOUNDS = domain_rule("bounds_exact")


def _fdiv(a: int, b: int) -> int:
    return a // b


def _cdiv(a: int, b: int) -> int:
    return -((-a) // b)


def normalize_constraint(e: AffineExpr, iv: Interval) -> tuple[str, AffineExpr, Interval] | None:
    """One normalization step of ``e in iv`` (``(rule name, e', iv')``), or None. The new interval is the
    domain rule's own (:mod:`verified_indexing.simplify.domain_rules`, proven in general in ``proofs/``)."""
    if isinstance(e, Sum) and e.constant != 0:
        c = e.constant
        return "constraint_shift", e - c, Interval(*new_interval(_SHIFT, c=c, l=iv.lo, u=iv.hi))
    if isinstance(e, Sum):
        g = 0
        for _, c in e.terms:
            g = math.gcd(g, c)
        if e.terms[0][1] < 0:
            g = -g
        if g != 1:
            inner = Sum(tuple((t, c // g) for t, c in e.terms), 0)  # (g divides every coefficient: e = g*inner)
            inner_e = inner if len(inner.terms) > 1 or inner.terms[0][1] != 1 else inner.terms[0][0]
            rule = _SCALE if g > 0 else _SCALE_NEG
            return "constraint_scale", inner_e, Interval(*new_interval(rule, g=g, l=iv.lo, u=iv.hi))
    if isinstance(e, FloorDiv):
        d = e.divisor
        rule = _FLOORDIV if d > 0 else _FLOORDIV_NEG
        return "constraint_floordiv", e.lhs, Interval(*new_interval(rule, d=d, l=iv.lo, u=iv.hi))
    return None


def _merge_mods(cons: list[tuple[AffineExpr, Interval]]) -> tuple[list[tuple[AffineExpr, Interval]], list[Step]]:
    steps: list[Step] = []
    changed = True
    while changed:
        changed = False
        for i, (e1, iv1) in enumerate(cons):
            if not (isinstance(e1, Mod) and iv1.is_point()):
                continue
            for j in range(i + 1, len(cons)):
                e2, iv2 = cons[j]
                if not (isinstance(e2, Mod) and e2.lhs == e1.lhs and iv2 == iv1):
                    continue
                r = iv1.lo
                a, b = e1.divisor, e2.divisor
                in_a = (0 <= r < a) if a > 0 else (a < r <= 0)
                in_b = (0 <= r < b) if b > 0 else (b < r <= 0)
                if not (in_a and in_b):
                    continue
                lcm = abs(a * b) // math.gcd(a, b)
                merged = e1.lhs.mod(lcm if r >= 0 else -lcm)
                new = [c for k, c in enumerate(cons) if k not in (i, j)] + [(merged, iv1)]
                before = f"{e1} in {iv1}, {e2} in {iv2}"
                steps.append(Step("constraint_mod_merge", "domain", before, f"{merged} in {iv1}"))
                cons = new
                changed = True
                break
            if changed:
                break
    return cons, steps


def _with_var_bounds(m: IndexingMap, var: _Var, iv: Interval) -> IndexingMap:
    return m.with_constraint(var, iv)


def simplify_domain(
    m: IndexingMap,
    simplify_expr: Simplifier,
    *,
    exact: bool = True,
    replace_point_dims: bool = False,
    name: Callable[[AffineExpr], str] = str,
) -> tuple[IndexingMap, list[Step]]:
    """The map with a simplified domain (same set of points) and the steps taken.

    ``simplify_expr`` must be valid on the whole box of variable bounds (not only
    on the constrained domain), so that rewriting a constraint cannot change the
    set it defines. With ``exact``, isl (or every point of a small domain) decides
    emptiness, always-satisfied constraints and tight variable bounds.
    """
    out, steps, _ = settled_domain(m, lambda _: simplify_expr, exact=exact, replace_point_dims=replace_point_dims,
                                   name=name)
    return out, steps


DOMAIN_PASSES = 4
"""Passes of :func:`settled_domain` before it stops short of a fixpoint."""


def settled_domain(
    m: IndexingMap,
    simplifier_for: Callable[[IndexingMap], Simplifier],
    *,
    exact: bool = True,
    replace_point_dims: bool = False,
    name: Callable[[AffineExpr], str] = str,
) -> tuple[IndexingMap, list[Step], bool]:
    """:func:`simplify_domain`, each pass rewriting constraints with ``simplifier_for(current
    map)`` (valid on that map's box: the bounds a pass tightens serve the next one), and whether
    the result is settled: with ``exact``, the last pass changed nothing and no point dimension
    was replaced, so simplifying the result's domain again gives it back."""
    steps: list[Step] = []
    settled = False
    for _ in range(DOMAIN_PASSES):
        before = m
        if m.state == "ok" and m.constraints:  # a box alone is already tight and not empty
            m = _interval_domain(m, simplifier_for(m), steps, name)
            if exact and m.state == "ok":
                m, more = _exact_domain(m, name)
                steps += more
        if m == before or not exact:
            settled = m == before and exact
            break
    if replace_point_dims and m.state == "ok":
        values = [Const(v.bounds.lo) if v.bounds.is_point() else Dim(i) for i, v in enumerate(m.dims)]
        if any(isinstance(v, Const) for v in values):
            new = m.replace(
                results=[r.substitute(dims=values) for r in m.results],
                constraints=[(e.substitute(dims=values), iv) for e, iv in m.constraints],
            )
            if new != m:
                steps.append(Step("point_dims", "domain", "dims with one value", "replaced by constants"))
                m = new
                settled = False
    return m, steps, settled


def _said(name: Callable[[AffineExpr], str], e: AffineExpr, iv: Interval | None) -> Callable[[], str]:
    """A function printing ``e in iv`` (``bounds of e`` when ``iv`` is None), for a step's text."""
    if iv is None:
        return lambda: f"bounds of {name(e)}"
    return lambda: f"{name(e)} in {iv}"


def _interval_domain(
    m: IndexingMap, simplify_expr: Simplifier, steps: list[Step], name: Callable[[AffineExpr], str]
) -> IndexingMap:
    if m.state != "ok":
        return m
    for _ in range(20):
        before = m
        cons: list[tuple[AffineExpr, Interval]] = []
        for e, iv in m.constraints:
            e2 = simplify_expr(e)
            while True:
                step = normalize_constraint(e2, iv)
                if step is None:
                    break
                rule, e3, iv3 = step
                steps.append(Step.deferred(rule, "domain", _said(name, e2, iv), _said(name, e3, iv3)))
                e2, iv = simplify_expr(e3), iv3
            cons.append((e2, iv))
        cons, merged = _merge_mods(cons)
        steps += merged
        # Bare variables tighten bounds; constant constraints fold; the rest stays.
        m = m.replace(constraints=[])
        kept: list[tuple[AffineExpr, Interval]] = []
        for e, iv in cons:
            if isinstance(e, _Var):
                steps.append(Step.deferred("constraint_to_bounds", "domain", _said(name, e, iv), _said(name, e, None)))
                m = _with_var_bounds(m, e, iv)
            else:
                kept.append((e, iv))
        if m.state != "ok":
            return m
        final: list[tuple[AffineExpr, Interval]] = []
        for e, iv in kept:
            r = m.range_of(e)  # (interval evaluation over the box: a sound range of e on the domain)
            if holds(_ALWAYS, a=r.lo, b=r.hi, l=iv.lo, u=iv.hi):
                steps.append(Step.deferred("constraint_always_true", "domain", _said(name, e, iv), "(dropped)"))
                continue
            if holds(_NEVER, a=r.lo, b=r.hi, l=iv.lo, u=iv.hi):
                steps.append(Step.deferred("constraint_never_true", "domain", _said(name, e, iv), "KNOWN EMPTY"))
                return IndexingMap.known_empty()
            final.append((e, iv))
        m = m.replace(constraints=final)
        if m.state != "ok" or m == before:
            break
    return m


def _exact_domain(m: IndexingMap, name: Callable[[AffineExpr], str]) -> tuple[IndexingMap, list[Step]]:
    """Exact emptiness, always-satisfied constraints and tight bounds: from every point of a small
    domain (:mod:`verified_indexing.engines.points`), else via isl."""
    if not m.constraints:
        return m, []
    from verified_indexing.engines import Verdict
    from verified_indexing.engines.points import table_for

    table = table_for(m)
    if table is not None:
        def empty_points() -> Verdict | None:
            return Verdict("proved", "enum", 0.0, f"empty: {m.format(one_line=True)}") if table.is_empty() else None

        return _exact_domain_with(m, empty_points, lambda e, without: table.range(e, without=without), name)
    try:
        return _exact_domain_with(m, lambda: _isl_empty(m), lambda e, without: _isl_range(m, e, without), name)
    except Exception:  # isl could not answer: the interval result stands
        return m, []


def _isl_empty(m: IndexingMap) -> Any:
    from verified_indexing.engines import is_empty

    return is_empty(m)


def _isl_range(m: IndexingMap, e: AffineExpr, without: set[int]) -> Interval | None:
    """The exact range of ``e`` over ``m``'s domain less the constraints numbered in ``without``,
    under isl's operation limit; ``None`` (nothing concluded) when isl gives up."""
    from verified_indexing.engines import IslLimitExceeded, exact_range

    rest = m.replace(constraints=[c for k, c in enumerate(m.constraints) if k not in without])
    try:
        return exact_range(e, rest, limited=True)
    except IslLimitExceeded:
        return None


def _exact_domain_with(
    m: IndexingMap,
    empty: Callable[[], Any],
    range_without: Callable[[AffineExpr, set[int]], Interval | None],
    name: Callable[[AffineExpr], str],
) -> tuple[IndexingMap, list[Step]]:
    """The exact domain steps, asked of one exact engine: ``empty()`` (a verdict, proved when the
    domain is empty) and ``range_without(e, numbers)`` (the exact range of ``e`` over the domain
    less the constraints with those numbers; ``None`` when nothing is concluded)."""
    steps: list[Step] = []
    v = empty()
    if v is not None and v.proved:
        steps.append(Step("domain_empty", "domain", "domain", "KNOWN EMPTY", v))
        return IndexingMap.known_empty(), steps
    # Drop constraints implied by the rest of the domain (``dropped``: the ones already gone).
    dropped: set[int] = set()
    for i, (e, iv) in enumerate(m.constraints):
        r = range_without(e, dropped | {i})
        if r is not None and holds(_IMPLIED, a=r.lo, b=r.hi, l=iv.lo, u=iv.hi):
            steps.append(Step.deferred("constraint_implied", "domain", _said(name, e, iv), "(dropped)"))
            dropped.add(i)
    out = m.replace(constraints=[c for k, c in enumerate(m.constraints) if k not in dropped])
    # Tighten every variable's bounds to its feasible range (the domain is the same set).
    if out.constraints:
        for kind, index, var in list(out.variables()):
            x: _Var = {"d": Dim, "s": Sym, "rt": RtSym}[kind](index)
            r = range_without(x, dropped)
            if r is not None and r != var.bounds and holds(_EXACT_BOUNDS, a=r.lo, b=r.hi, lo=var.bounds.lo,
                                                           hi=var.bounds.hi):
                steps.append(Step.deferred("bounds_exact", "domain", _said(name, x, var.bounds), _said(name, x, r)))
                out = out.with_constraint(x, r)
    return out, steps
