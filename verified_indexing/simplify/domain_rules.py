"""The domain steps of the simplifier as rules, each stated once and proven in general by ``proofs/``.

A domain step replaces one constraint (or a variable's bounds) by another that defines the same set of
points. Each is stated here as a :class:`DomainRule` over a *value* ``x`` (the constraint's expression
at a point of the domain) and integer constants (the constraint's interval, a shift, a scale, a divisor,
a sound range of ``x`` over the domain): under its side condition (on the constants) and its hypothesis
(what the engine establishes per map about ``x``: that every value of ``x`` on the domain lies in the
range it computed), the constraint before holds exactly when the constraint after holds::

    for all integers x, k...:  condition(k) and hypothesis(x, k)  ->  (before(x, k) <-> after(x, k))

``proofs/`` proves each theorem by z3 for all integers (``verified_indexing.proofs.domain``); the engine
(:mod:`verified_indexing.simplify.constraints`) computes the new interval and decides the side
condition with these same functions, on plain integers (:data:`INT`). A step whose condition does not
hold is not taken. What is checked per map is thus only the side condition, with sound ranges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from verified_indexing.simplify.rules import INT_ALGEBRA, Algebra

__all__ = ["DomainRule", "DOMAIN_RULES", "INT", "STEP_THEOREMS", "domain_rule", "new_interval", "holds"]


INT = INT_ALGEBRA
"""The engine's algebra for domain rules: plain integers."""

Cond = Callable[[Algebra, Any, Any], Any]
"""``fn(A, v, k)``: a condition over the value ``v.x`` and constants ``k.*``."""
Bounds = Callable[[Algebra, Any], tuple[Any, Any]]
"""``fn(A, k)``: the new interval ``(lo, hi)`` from the constants."""


@dataclass(frozen=True)
class DomainRule:
    """One domain step: ``before`` holds exactly when ``after`` holds, under ``condition`` and ``hypothesis``.

    Attributes:
        name: the theorem's name (a step's name maps to its theorems by :data:`STEP_THEOREMS`).
        text: the step in one line, for people.
        where: the side condition and hypothesis in words.
        constants: the constants (each an integer the engine knows per map).
        before, after: the memberships before and after the step (``v.x`` is the value).
        condition: the side condition on the constants (``fn(A, k)``), checked per map.
        hypothesis: what the engine establishes per map about the value (default: nothing).
        bounds: the new interval ``fn(A, k) -> (lo, hi)``, when the step computes one; ``after`` is then
            ``lo <= x <= hi`` with these very bounds.
    """

    name: str
    text: str
    where: str
    constants: tuple[str, ...]
    before: Cond
    after: Cond
    condition: Callable[[Algebra, Any], Any]
    hypothesis: Cond | None = None
    bounds: Bounds | None = None


def _within(A: Algebra, x: Any, lo: Any, hi: Any) -> Any:
    return A.all(lo <= x, x <= hi)


def _after_bounds(bounds: Bounds) -> Cond:
    def after(A: Algebra, v: Any, k: Any) -> Any:
        lo, hi = bounds(A, k)
        return _within(A, v.x, lo, hi)

    return after


def _rule(name: str, text: str, where: str, constants: tuple[str, ...], before: Cond, *,
          condition: Callable[[Algebra, Any], Any], bounds: Bounds | None = None, after: Cond | None = None,
          hypothesis: Cond | None = None) -> DomainRule:
    if after is None:
        assert bounds is not None
        after = _after_bounds(bounds)
    return DomainRule(name, text, where, constants, before, after, condition, hypothesis, bounds)


def _in_range(A: Algebra, v: Any, k: Any) -> Any:
    """The hypothesis of the range steps: the value lies in its sound range ``[a, b]``."""
    return _within(A, v.x, k.a, k.b)


_SHIFT_BOUNDS: Bounds = lambda A, k: (k.l - k.c, k.u - k.c)  # noqa: E731
_SCALE_BOUNDS: Bounds = lambda A, k: (A.cdiv(A.const(k.l), k.g), A.fdiv(A.const(k.u), k.g))  # noqa: E731
_SCALE_NEG_BOUNDS: Bounds = lambda A, k: (A.cdiv(A.const(k.u), k.g), A.fdiv(A.const(k.l), k.g))  # noqa: E731
_FLOORDIV_BOUNDS: Bounds = lambda A, k: (k.l * k.d, k.u * k.d + k.d - 1)  # noqa: E731
_FLOORDIV_NEG_BOUNDS: Bounds = lambda A, k: (k.u * k.d + k.d + 1, k.l * k.d)  # noqa: E731
_TO_BOUNDS: Bounds = lambda A, k: (A.max(k.lo, k.l), A.min(k.hi, k.u))  # noqa: E731
_TRUE: Cond = lambda A, v, k: True  # noqa: E731
_FALSE: Cond = lambda A, v, k: False  # noqa: E731

DOMAIN_RULES: tuple[DomainRule, ...] = (
    _rule("constraint_shift", "x + c in [l, u]  <->  x in [l - c, u - c]", "",
          ("c", "l", "u"), lambda A, v, k: _within(A, A.add(v.x, A.const(k.c)), k.l, k.u),
          condition=lambda A, k: True, bounds=_SHIFT_BOUNDS),
    _rule("constraint_scale", "g*x in [l, u]  <->  x in [l ceildiv g, u floordiv g]", "g > 0",
          ("g", "l", "u"), lambda A, v, k: _within(A, A.scale(v.x, k.g), k.l, k.u),
          condition=lambda A, k: k.g > 0, bounds=_SCALE_BOUNDS),
    _rule("constraint_scale_negative", "g*x in [l, u]  <->  x in [u ceildiv g, l floordiv g]", "g < 0",
          ("g", "l", "u"), lambda A, v, k: _within(A, A.scale(v.x, k.g), k.l, k.u),
          condition=lambda A, k: k.g < 0, bounds=_SCALE_NEG_BOUNDS),
    _rule("constraint_floordiv", "x floordiv d in [l, u]  <->  x in [l*d, u*d + d - 1]", "d > 0",
          ("d", "l", "u"), lambda A, v, k: _within(A, A.fdiv(v.x, k.d), k.l, k.u),
          condition=lambda A, k: k.d > 0, bounds=_FLOORDIV_BOUNDS),
    _rule("constraint_floordiv_negative", "x floordiv d in [l, u]  <->  x in [u*d + d + 1, l*d]", "d < 0",
          ("d", "l", "u"), lambda A, v, k: _within(A, A.fdiv(v.x, k.d), k.l, k.u),
          condition=lambda A, k: k.d < 0, bounds=_FLOORDIV_NEG_BOUNDS),
    _rule("constraint_to_bounds", "x in [lo, hi] and x in [l, u]  <->  x in [max(lo, l), min(hi, u)]", "",
          ("lo", "hi", "l", "u"), lambda A, v, k: A.all(_within(A, v.x, k.lo, k.hi), _within(A, v.x, k.l, k.u)),
          condition=lambda A, k: True, bounds=_TO_BOUNDS),
    _rule("constraint_always_true", "x in [l, u]  <->  true",
          "l <= a and b <= u, where [a, b] holds every value of x on the box", ("a", "b", "l", "u"),
          lambda A, v, k: _within(A, v.x, k.l, k.u), after=_TRUE,
          condition=lambda A, k: A.any(k.a > k.b, A.all(k.l <= k.a, k.b <= k.u)), hypothesis=_in_range),
    _rule("constraint_never_true", "x in [l, u]  <->  false",
          "[a, b] and [l, u] are disjoint, where [a, b] holds every value of x on the box", ("a", "b", "l", "u"),
          lambda A, v, k: _within(A, v.x, k.l, k.u), after=_FALSE,
          condition=lambda A, k: A.any(k.a > k.b, k.l > k.u, k.b < k.l, k.u < k.a), hypothesis=_in_range),
    _rule("constraint_implied", "x in [l, u]  <->  true",
          "l <= a and b <= u, where [a, b] holds every value of x on the rest of the domain (exact range)",
          ("a", "b", "l", "u"), lambda A, v, k: _within(A, v.x, k.l, k.u), after=_TRUE,
          condition=lambda A, k: A.any(k.a > k.b, A.all(k.l <= k.a, k.b <= k.u)), hypothesis=_in_range),
    _rule("bounds_exact", "x in [lo, hi]  <->  x in [a, b]",
          "lo <= a and b <= hi, where [a, b] holds every value of x on the domain (exact range)",
          ("a", "b", "lo", "hi"), lambda A, v, k: _within(A, v.x, k.lo, k.hi),
          condition=lambda A, k: A.all(k.a <= k.b, k.lo <= k.a, k.b <= k.hi), hypothesis=_in_range,
          bounds=lambda A, k: (k.a, k.b)),
)
"""Every domain step with a general theorem (``constraint_mod_merge``, ``point_dims`` and
``domain_empty`` have none: a map with one of them is proven whole)."""

_BY_NAME = {r.name: r for r in DOMAIN_RULES}

STEP_THEOREMS: dict[str, tuple[DomainRule, ...]] = {
    "constraint_shift": (_BY_NAME["constraint_shift"],),
    "constraint_scale": (_BY_NAME["constraint_scale"], _BY_NAME["constraint_scale_negative"]),
    "constraint_floordiv": (_BY_NAME["constraint_floordiv"], _BY_NAME["constraint_floordiv_negative"]),
    "constraint_to_bounds": (_BY_NAME["constraint_to_bounds"],),
    "constraint_always_true": (_BY_NAME["constraint_always_true"],),
    "constraint_never_true": (_BY_NAME["constraint_never_true"],),
    "constraint_implied": (_BY_NAME["constraint_implied"],),
    "bounds_exact": (_BY_NAME["bounds_exact"],),
}
"""A domain step's name (as :class:`~verified_indexing.simplify.engine.Step` records it) to the theorems
that cover it (both signs of a scale or a divisor)."""


def domain_rule(name: str) -> DomainRule:
    """The domain rule named ``name`` (``KeyError`` when there is none)."""
    return _BY_NAME[name]


def holds(rule: DomainRule, **constants: int) -> bool:
    """Whether ``rule``'s side condition holds for these constants (plain integers)."""
    return bool(rule.condition(INT, SimpleNamespace(**constants)))


def new_interval(rule: DomainRule, **constants: int) -> tuple[int, int]:
    """The interval after ``rule`` (its ``bounds``, on plain integers)."""
    assert rule.bounds is not None
    lo, hi = rule.bounds(INT, SimpleNamespace(**constants))
    return int(lo), int(hi)
