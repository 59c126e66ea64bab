"""The rule catalogue: every rewrite the simplifier knows, each defined once.

A :class:`Rule` states a rewrite ``lhs -> rhs`` under a side condition, over
*pattern variables* (``x``, ``y``: arbitrary subexpressions, each with a range
``[lo.x, hi.x]``) and *rule constants* (``c``, ``k``, ...: integers). The
statement is written once, as Python functions over an abstract :class:`Algebra`:

* the simplifier evaluates them with :class:`ExprAlgebra` (pattern variables bound
  to :class:`~verified_indexing.expr.AffineExpr` subterms, constants to ints,
  ranges from interval evaluation or isl's exact ranges);
* ``proofs/`` evaluates the very same functions with a z3 algebra (everything
  symbolic) and proves, for all integers, ``condition -> lhs == rhs``.

Each rule also has a ``match`` function (engine only) that proposes bindings for
a node; the engine applies a rule only when the instantiated ``lhs`` is exactly
the node, the side condition holds, and the result is cheaper. A bad matcher can
therefore only miss rewrites, never make a wrong one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from types import SimpleNamespace
from typing import Any, NamedTuple

from verified_indexing.expr import (
    AffineExpr,
    CeilDiv,
    Const,
    Dim,
    FloorDiv,
    Max,
    Min,
    Mod,
    RtSym,
    Sum,
    Sym,
    emax,
    emin,
    floor_div,
    floor_mod,
    linear_sum,
)
from verified_indexing.interval import Interval

__all__ = [
    "Algebra",
    "ExprAlgebra",
    "EXPR_ALGEBRA",
    "IntAlgebra",
    "INT_ALGEBRA",
    "Binding",
    "Lemma",
    "RangeFn",
    "Rule",
    "RULES",
    "rule_by_name",
    "rule_heads",
]

RangeFn = Callable[[AffineExpr], Interval]
"""A sound range oracle: every value the subexpression takes on the domain."""


class Algebra:
    """The operations a rule statement may use. Terms and constants are opaque
    (``Any``): ints and :class:`AffineExpr` in the engine, z3 terms in proofs.

    Constants combine with Python's ``+ - *`` and comparisons (both ints and z3
    terms support them); conditions are combined with :meth:`all`/:meth:`any`.
    """

    def lit(self, value: int) -> Any:
        """The integer ``value`` as a term."""
        raise NotImplementedError

    def const(self, k: Any) -> Any:
        """A rule constant (or constant expression) ``k`` as a term."""
        raise NotImplementedError

    def add(self, *terms: Any) -> Any:
        """The sum of the terms."""
        raise NotImplementedError

    def scale(self, term: Any, k: Any) -> Any:
        """``term * k`` for a rule constant (or constant expression) ``k``."""
        raise NotImplementedError

    def fdiv(self, term: Any, k: Any) -> Any:
        """``term floordiv k``."""
        raise NotImplementedError

    def mod(self, term: Any, k: Any) -> Any:
        """``term mod k``."""
        raise NotImplementedError

    def cdiv(self, term: Any, k: Any) -> Any:
        """``term ceildiv k`` = ``-((-term) floordiv k)`` (the default, so every
        algebra shares the one definition)."""
        return self.scale(self.fdiv(self.scale(term, -1), k), -1)

    def min(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def max(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def all(self, *conds: Any) -> Any:
        """Conjunction of conditions."""
        raise NotImplementedError

    def any(self, *conds: Any) -> Any:
        """Disjunction of conditions."""
        raise NotImplementedError


class ExprAlgebra(Algebra):
    """The engine's algebra: terms are AffineExprs, constants and conditions are
    Python ints and bools."""

    def lit(self, value: int) -> AffineExpr:
        return Const(value)

    def const(self, k: Any) -> AffineExpr:
        return Const(int(k))

    # Terms are built through a memo (the rules for one node build the same sides again and again:
    # ``(x*c + y) mod c`` for each binding of each mod rule); expressions are immutable values, so a
    # remembered term is the term. :func:`forget_terms` empties it.

    def add(self, *terms: Any) -> AffineExpr:
        key = ("+", terms)
        hit = _TERMS.get(key)
        if hit is None:
            hit = _TERMS[key] = linear_sum([(t, 1) for t in terms])
        return hit

    def scale(self, term: Any, k: Any) -> AffineExpr:
        k = int(k)
        if k == 1:
            return term  # type: ignore[no-any-return]
        key = ("*", term, k)
        hit = _TERMS.get(key)
        if hit is None:
            hit = _TERMS[key] = term * k
        return hit

    def fdiv(self, term: Any, k: Any) -> AffineExpr:
        key = ("fdiv", term, int(k))
        hit = _TERMS.get(key)
        if hit is None:
            hit = _TERMS[key] = term.floordiv(int(k))
        return hit

    def mod(self, term: Any, k: Any) -> AffineExpr:
        key = ("mod", term, int(k))
        hit = _TERMS.get(key)
        if hit is None:
            hit = _TERMS[key] = term.mod(int(k))
        return hit

    def cdiv(self, term: Any, k: Any) -> AffineExpr:
        return term.ceildiv(int(k))  # type: ignore[no-any-return]

    def min(self, a: Any, b: Any) -> AffineExpr:
        return emin(a, b)

    def max(self, a: Any, b: Any) -> AffineExpr:
        return emax(a, b)

    def all(self, *conds: Any) -> bool:
        return all(conds)

    def any(self, *conds: Any) -> bool:
        return any(conds)


_TERMS: dict[tuple[Any, ...], AffineExpr] = {}
""":class:`ExprAlgebra`'s memo of built terms (bounded: emptied when it grows past 1 << 15 entries)."""


def forget_terms() -> None:
    """Empty :class:`ExprAlgebra`'s memo of built terms (a benchmark's cold start; also done when it
    grows past its bound)."""
    _TERMS.clear()


EXPR_ALGEBRA = ExprAlgebra()


class IntAlgebra(Algebra):
    """Rule statements on plain integers, with the evaluator's semantics (``floor_div``/``floor_mod``): the
    re-check of a proof's counterexample and the per-map side conditions of the domain steps."""

    def lit(self, value: int) -> int:
        return value

    def const(self, k: Any) -> int:
        return int(k)

    def add(self, *terms: Any) -> int:
        return sum(int(t) for t in terms)

    def scale(self, term: Any, k: Any) -> int:
        return int(term) * int(k)

    def fdiv(self, term: Any, k: Any) -> int:
        return floor_div(int(term), int(k))

    def mod(self, term: Any, k: Any) -> int:
        return floor_mod(int(term), int(k))

    def min(self, a: Any, b: Any) -> int:
        return min(int(a), int(b))

    def max(self, a: Any, b: Any) -> int:
        return max(int(a), int(b))

    def all(self, *conds: Any) -> bool:
        return all(bool(c) for c in conds)

    def any(self, *conds: Any) -> bool:
        return any(bool(c) for c in conds)


INT_ALGEBRA = IntAlgebra()

Statement = Callable[[Algebra, Any, Any], Any]
"""``fn(A, v, k)``: a term built from pattern variables ``v.x`` and constants ``k.c``."""
Condition = Callable[[Algebra, Any, Any, Any], Any]
"""``fn(A, k, lo, hi)``: the side condition over constants and variable ranges."""


@dataclass(frozen=True)
class Lemma:
    """A proof hint: an intermediate fact of a rule's general theorem.

    ``statement(A, v, k)`` is a condition over the rule's pattern variables and
    constants, built with the same algebra as the rule (so its ``floordiv``/``mod``
    terms are the very quotients and remainders of the rule's two sides). ``proofs/``
    proves each lemma under the rule's hypotheses and the lemmas before it, then
    proves the claim with the lemmas as extra hypotheses. Lemmas are never trusted:
    an unproven lemma makes the rule's verdict ``unknown``. The engine ignores them.
    """

    name: str
    text: str
    statement: Callable[[Algebra, Any, Any], Any]


class Binding(NamedTuple):
    """A proposed instance of a rule: subterms for pattern variables, ints for constants (a named
    tuple: matchers make many, most of them rejected)."""

    variables: Mapping[str, AffineExpr]
    constants: Mapping[str, int]


Matcher = Callable[[AffineExpr, RangeFn], Iterator[Binding]]


def _on(*heads: type) -> Callable[[Matcher], Matcher]:
    """Declare the node classes a matcher can propose bindings for (the engine
    tries the rule only on those nodes; :func:`rule_heads` reads it back)."""

    def mark(fn: Matcher) -> Matcher:
        fn.heads = heads  # type: ignore[attr-defined]
        return fn

    return mark


def rule_heads(rule: Rule) -> tuple[type, ...] | None:
    """The node classes ``rule``'s matcher can fire on (``None``: any node)."""
    return getattr(rule.match, "heads", None)


def _not_on_variable(fn: Matcher) -> Matcher:
    """Declare that a division matcher proposes no binding when the dividend is a bare variable (the
    compiled matcher then does not offer the rule there; a test checks the declaration)."""
    fn.on_variable = False  # type: ignore[attr-defined]
    return fn


def _negative_divisor_only(fn: Matcher) -> Matcher:
    """Declare that a division matcher proposes no binding when the divisor is positive."""
    fn.divisor_sign = -1  # type: ignore[attr-defined]
    return fn


def rule_fires_on_variable_dividend(rule: Rule) -> bool:
    """Whether ``rule``'s matcher may propose a binding for a division of a bare variable."""
    return getattr(rule.match, "on_variable", True) is not False


def rule_fires_on_positive_divisor(rule: Rule) -> bool:
    """Whether ``rule``'s matcher may propose a binding for a division by a positive constant."""
    return getattr(rule.match, "divisor_sign", 0) != -1


@dataclass(frozen=True)
class Rule:
    """One rewrite rule: ``lhs -> rhs if condition``, for all integer values of
    the pattern variables (within their ranges) and of the constants.

    Attributes:
        name: a stable identifier (``mod_nowrap``).
        family: the rule family (``mod``, ``floordiv``, ``recombine``, ``minmax``).
        text: the rule in one line, for people (``x mod c -> x - c*k``).
        where: the side condition in words (``c > 0, x in [c*k, c*k + c - 1]``).
        variables: the pattern variables (each has a range ``lo.x..hi.x``).
        constants: the rule constants.
        lhs, rhs: the statement functions.
        condition: the side condition function.
        match: the engine's matcher (proposes bindings; never trusted).
        uses_ranges: True when the condition reads variable ranges.
        lemmas: proof hints for ``proofs/`` (see :class:`Lemma`); the engine
            ignores them.
        explore: whether the engine may keep a rewrite that is not cheaper by itself
            when simplifying its result further pays (``False``: only a rewrite that is
            cheaper at once is kept; the matcher proposes too many that never pay).
    """

    name: str
    family: str
    text: str
    where: str
    variables: tuple[str, ...]
    constants: tuple[str, ...]
    lhs: Statement
    rhs: Statement
    condition: Condition
    match: Matcher
    uses_ranges: bool = True
    lemmas: tuple[Lemma, ...] = ()
    explore: bool = True

    def holds(self, algebra: Algebra, binding: Binding, ranges: Mapping[str, Interval]) -> bool:
        """Whether the side condition holds for a binding (engine algebra), without building either side."""
        k = SimpleNamespace(**binding.constants)
        lo = SimpleNamespace(**{n: iv.lo for n, iv in ranges.items()})
        hi = SimpleNamespace(**{n: iv.hi for n, iv in ranges.items()})
        return bool(self.condition(algebra, k, lo, hi))

    def sides(self, algebra: Algebra, binding: Binding) -> tuple[AffineExpr, AffineExpr]:
        """``(lhs, rhs)`` for a binding (engine algebra), the condition not asked (see :meth:`holds`)."""
        v = SimpleNamespace(**binding.variables)
        k = SimpleNamespace(**binding.constants)
        return self.lhs(algebra, v, k), self.rhs(algebra, v, k)

    def instantiate(
        self, algebra: Algebra, binding: Binding, ranges: Mapping[str, Interval]
    ) -> tuple[AffineExpr, AffineExpr, bool]:
        """``(lhs, rhs, condition holds)`` for a binding (engine algebra); ``rhs`` is ``lhs`` when the
        condition does not hold. (The engine asks :meth:`holds` first, then :meth:`sides`.)"""
        ok = self.holds(algebra, binding, ranges)
        lhs, rhs = self.sides(algebra, binding)
        return lhs, rhs if ok else lhs, ok


# ---------------------------------------------------------------------------
# Matchers (engine only: they propose, the statement decides)
# ---------------------------------------------------------------------------


def _split_multiples(s: AffineExpr, c: int) -> tuple[AffineExpr, AffineExpr] | None:
    """``s = x*c + y`` with every term of ``y`` having a coefficient not divisible by
    ``c`` and ``y``'s constant in ``[0, |c|-1]``; None when ``x`` would be 0."""
    terms = s.terms if isinstance(s, Sum) else ((s, 1),)
    constant = s.constant if isinstance(s, Sum) else 0
    xs = [(t, coef // c) for t, coef in terms if coef % c == 0]
    if not xs and constant // c == 0:
        return None
    x = linear_sum(xs, constant // c)
    y = linear_sum([(t, coef) for t, coef in terms if coef % c != 0], constant - c * (constant // c))
    return x, y


def _split_residues(s: AffineExpr, c: int) -> Iterator[tuple[AffineExpr, AffineExpr]]:
    """``s = x*c + y`` (``c > 0``) with each coefficient and the constant of ``y`` reduced modulo
    ``c``: first to ``[0, c-1]`` (as isl normalises a division), then to ``(-c/2, c/2]`` when that
    differs. Nothing when every coefficient is a multiple of ``c`` or already in ``[0, c-1]``
    (moving multiples of ``c``, of the constant too, is :func:`_split_multiples`' job)."""
    if c <= 1:
        return
    terms = s.terms if isinstance(s, Sum) else ((s, 1),)
    constant = s.constant if isinstance(s, Sum) else 0
    if all(coef % c == 0 or 0 <= coef < c for _, coef in terms):
        return
    seen = set()
    for centred in (False, True):
        rems = [r - c if centred and 2 * r > c else r for r in (coef % c for _, coef in terms)]
        key = tuple(rems)
        if key in seen:
            continue
        seen.add(key)
        x = linear_sum([(t, (coef - r) // c) for (t, coef), r in zip(terms, rems)], (constant - constant % c) // c)
        y = linear_sum([(t, r) for (t, _), r in zip(terms, rems)], constant % c)
        yield x, y


_TRIAL_LIMIT = 1 << 20
"""Trial division finds the prime factors below this; a cofactor left above it is taken whole."""


@lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    """Positive divisors of ``|n|`` greater than 1, largest first, of any size (no table, no cap): from
    the factorization by trial division (prime factors below :data:`_TRIAL_LIMIT`; a cofactor left above
    it is used as one factor, so when it is not prime its own proper divisors are missing here, and
    :func:`_split_divisors` adds those that divide the dividend's coefficients)."""
    n = abs(n)
    factors: dict[int, int] = {}
    p = 2
    while p * p <= n and p < _TRIAL_LIMIT:
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        factors[n] = factors.get(n, 0) + 1
    out = [1]
    for prime, power in factors.items():
        out = [d * prime**k for d in out for k in range(power + 1)]
    return tuple(sorted((d for d in out if d > 1), reverse=True))


def _split_divisors(s: Sum, m: int) -> list[int]:
    """The divisors ``g`` of ``m`` (``1 < g < m``) worth trying for ``s = x*g + y``, largest first: every
    divisor of ``m`` (:func:`_divisors`) and the gcds of ``m`` with the coefficients of ``s`` (each set
    of terms ``x`` can hold is best split at the gcd of their coefficients and ``m``)."""
    found = set(_divisors(m))
    gcds = {m}
    for _, coef in s.terms:
        gcds |= {math.gcd(g, coef) for g in gcds}
    found |= gcds
    return sorted((g for g in found if 1 < g < m), reverse=True)


def _gcd_splits(s: AffineExpr, m: int, rng: RangeFn) -> Iterator[Binding]:
    """``s = x*g + y`` with ``g | m``, ``g < |m|``, ``y`` in ``[0, g-1]``."""
    if not isinstance(s, Sum) or m <= 0:
        return
    # y = (the terms whose coefficient g does not divide) + a constant: the range of y is the range of
    # those terms' sum shifted by the constant (exact for intervals and for exact ranges alike), asked
    # once per set of terms; x and y are built only for a split that passes the range test.
    ranges: dict[tuple[tuple[AffineExpr, int], ...], Interval] = {}
    for g in _split_divisors(s, m):
        if g == m:
            continue
        xs = [(t, coef // g) for t, coef in s.terms if coef % g == 0]
        if not xs and s.constant // g == 0:
            continue
        ys = tuple([(t, coef) for t, coef in s.terms if coef % g != 0])
        k = s.constant - g * (s.constant // g)
        if ys:
            r = ranges.get(ys)
            if r is None:
                r = ranges[ys] = rng(linear_sum(ys))
            lo, hi = r.lo + k, r.hi + k
        elif k == 0:
            continue  # (y would be 0)
        else:
            lo = hi = k
        if lo >= 0 and hi <= g - 1:
            yield Binding({"x": linear_sum(xs, s.constant // g), "y": linear_sum(ys, k)}, {"g": g, "k": m // g})


def _match_point(cls: type) -> Matcher:
    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (FloorDiv, Mod))
            r = rng(e.lhs)
            if not r.is_empty():
                yield Binding({"x": e.lhs}, {"c": e.divisor, "k": r.lo // e.divisor})

    return match


@_not_on_variable  # (x*c + y with x nonzero needs c | 1: never for |c| > 1)
@_on(Mod)
def _match_mod_multiples(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, Mod):
        split = _split_multiples(e.lhs, e.divisor)
        if split is not None:
            yield Binding({"x": split[0], "y": split[1]}, {"c": e.divisor})


@_not_on_variable
@_on(FloorDiv)
def _match_div_multiples(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, FloorDiv):
        split = _split_multiples(e.lhs, e.divisor)
        if split is not None:
            yield Binding({"x": split[0], "y": split[1]}, {"c": e.divisor})


@_not_on_variable  # (a sum only)
@_on(Mod)
def _match_mod_gcd(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, Mod):
        yield from _gcd_splits(e.lhs, e.divisor, rng)


@_not_on_variable
@_on(FloorDiv)
def _match_div_gcd(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, FloorDiv):
        yield from _gcd_splits(e.lhs, e.divisor, rng)


@_on(Mod)
def _match_mod_mod(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, Mod) and isinstance(e.lhs, Mod) and e.lhs.divisor % e.divisor == 0:
        yield Binding({"x": e.lhs.lhs}, {"a": e.lhs.divisor, "b": e.divisor, "k": e.lhs.divisor // e.divisor})


@_on(FloorDiv)
def _match_div_div(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, FloorDiv) and isinstance(e.lhs, FloorDiv):
        yield Binding({"x": e.lhs.lhs}, {"a": e.lhs.divisor, "b": e.divisor})


@_on(FloorDiv)
def _match_div_fold(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, FloorDiv) and isinstance(e.lhs, Sum):
        inner = [(t, c) for t, c in e.lhs.terms if isinstance(t, FloorDiv) and c == 1]
        if len(inner) == 1:
            t = inner[0][0]
            assert isinstance(t, FloorDiv)
            yield Binding({"x": t.lhs, "y": e.lhs - t}, {"a": t.divisor, "b": e.divisor})


@_on(FloorDiv)
def _match_div_of_mod(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, FloorDiv) and isinstance(e.lhs, Mod) and e.divisor != 0 and e.lhs.divisor % e.divisor == 0:
        yield Binding({"x": e.lhs.lhs}, {"a": e.divisor, "b": e.lhs.divisor // e.divisor})


def _sum_terms(e: AffineExpr) -> tuple[tuple[AffineExpr, int], ...]:
    return e.terms if isinstance(e, Sum) else ()


@_on(Sum)
def _match_recombine(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    terms = dict(_sum_terms(e))
    for t, k in terms.items():
        if isinstance(t, Mod):
            fd = FloorDiv(t.lhs, t.divisor)
            if terms.get(fd) == t.divisor * k:
                y = e - t * k - fd * (t.divisor * k)
                yield Binding({"x": t.lhs, "y": y}, {"c": t.divisor, "k": k})


@_on(Sum)
def _match_recombine_sub(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    for t, p in _sum_terms(e):
        if isinstance(t, FloorDiv) and p % t.divisor == 0:
            k = -(p // t.divisor)
            y = e - t.lhs * k - t * p
            yield Binding({"x": t.lhs, "y": y}, {"c": t.divisor, "k": k})


@_on(Sum)
def _match_recombine_sub_mod(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    for t, p in _sum_terms(e):
        if isinstance(t, Mod):
            k = -p
            y = e - t.lhs * k - t * p
            yield Binding({"x": t.lhs, "y": y}, {"c": t.divisor, "k": k})


def _exact_quotient(s: AffineExpr, g: int) -> AffineExpr:
    """``s / g`` for a sum whose coefficients and constant are all multiples of ``g``."""
    terms = s.terms if isinstance(s, Sum) else ((s, 1),)
    constant = s.constant if isinstance(s, Sum) else 0
    return linear_sum([(t, coef // g) for t, coef in terms], constant // g)  # (the same canonical sum)


def _common_factor(s: AffineExpr, divisor: int) -> int:
    """The positive gcd of ``divisor`` and every coefficient and the constant of ``s``."""
    terms = s.terms if isinstance(s, Sum) else ((s, 1),)
    g = abs(divisor)
    for _, coef in terms:
        g = math.gcd(g, coef)
    if isinstance(s, Sum):
        g = math.gcd(g, s.constant)
    return g


def _match_scaled(cls: type) -> Matcher:
    """``(x*g) op (g*k)``: ``g`` the common factor of the dividend and the divisor."""

    @_not_on_variable  # (the common factor of a variable's coefficient 1 and the divisor is 1)
    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (FloorDiv, CeilDiv, Mod))
            g = _common_factor(e.lhs, e.divisor)
            if g > 1:
                yield Binding({"x": _exact_quotient(e.lhs, g)}, {"g": g, "k": e.divisor // g})

    return match


@_on(CeilDiv)
def _match_cdiv_point(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, CeilDiv):
        r = rng(e.lhs)
        if not r.is_empty():
            yield Binding({"x": e.lhs}, {"c": e.divisor, "k": -((-r.lo) // e.divisor)})


@_not_on_variable
@_on(CeilDiv)
def _match_cdiv_multiples(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    if isinstance(e, CeilDiv):
        split = _split_multiples(e.lhs, e.divisor)
        if split is not None:
            yield Binding({"x": split[0], "y": split[1]}, {"c": e.divisor})


def _match_residues(cls: type) -> Matcher:
    """``(x*c + y) op c`` with ``y``'s coefficients reduced modulo ``c > 0`` (:func:`_split_residues`)."""

    @_not_on_variable  # (a variable's coefficient 1 is already in [0, c-1] for c > 1)
    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (FloorDiv, CeilDiv, Mod))
            for x, y in _split_residues(e.lhs, e.divisor):
                yield Binding({"x": x, "y": y}, {"c": e.divisor})

    return match


@_on(Sum)
def _match_residues_in_sum(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    """``y + ((x*c + z) floordiv c)*k``: a floordiv term of a sum with its dividend's coefficients
    reduced modulo ``c > 0`` (:func:`_split_residues`); ``y`` is the rest of the sum."""
    for t, k in _sum_terms(e):
        if isinstance(t, FloorDiv):
            for x, z in _split_residues(t.lhs, t.divisor):
                yield Binding({"x": x, "z": z, "y": e - t * k}, {"c": t.divisor, "k": k})


@_on(Sum)
def _match_mod_gcd_in_sum(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    """``y + (((w*k + z)*g + r) mod (g*k))*c``: a mod term of a sum whose dividend is a multiple of
    ``g`` plus ``r`` in ``[0, g-1]`` (:func:`_gcd_splits`), the multiple's coefficients reduced
    modulo ``k`` into ``z`` (:func:`_split_residues`; or kept whole, ``w = 0``); ``y`` is the rest of
    the sum."""
    for t, c in _sum_terms(e):
        if isinstance(t, Mod):
            for b in _gcd_splits(t.lhs, t.divisor, rng):
                x, k = b.variables["x"], b.constants["k"]
                rest = e - t * c
                for w, z in [(Const(0), x), *_split_residues(x, k)]:
                    yield Binding({"w": w, "z": z, "r": b.variables["y"], "y": rest}, {**b.constants, "c": c})


def _match_negative_divisor(cls: type) -> Matcher:
    """``x op c`` with ``c < 0``."""

    @_negative_divisor_only
    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (FloorDiv, CeilDiv, Mod))
            if e.divisor < 0:
                yield Binding({"x": e.lhs}, {"c": e.divisor})

    return match


@_on(Dim, Sym, RtSym)
def _match_point_value(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
    # on variables (the rewriter works bottom-up: a sum or a product of one-value variables then
    # folds to a constant by itself; a division or min/max with one value has rules of its own)
    r = rng(e)
    if not r.is_empty() and r.lo == r.hi:
        yield Binding({"x": e}, {"k": r.lo})


def _match_minmax_diff(cls: type) -> Matcher:
    """``min(x, x + z)`` / ``max(x, x + z)``: ``z`` the difference of the operands."""

    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (Min, Max))
            yield Binding({"x": e.lhs, "z": e.rhs - e.lhs}, {})
            yield Binding({"x": e.rhs, "z": e.lhs - e.rhs}, {})

    return match


def _match_minmax(cls: type) -> Matcher:
    @_on(cls)
    def match(e: AffineExpr, rng: RangeFn) -> Iterator[Binding]:
        if isinstance(e, cls):
            assert isinstance(e, (Min, Max))
            yield Binding({"x": e.lhs, "y": e.rhs}, {})
            yield Binding({"x": e.rhs, "y": e.lhs}, {})

    return match


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------


def _one_period(A: Algebra, c: Any, k: Any, lo: Any, hi: Any) -> Any:
    """Every value of ``[lo, hi]`` has quotient ``k`` by ``c`` (either sign of ``c``)."""
    return A.any(
        A.all(c > 0, c * k <= lo, hi <= c * k + c - 1),
        A.all(c < 0, c * k + c + 1 <= lo, hi <= c * k),
    )


def _div_of_mod_parts(A: Algebra, v: Any, k: Any) -> tuple[Any, Any, Any, Any]:
    """``x = a*q + r``, ``q = b*t + u``: the decomposition of the ``div_of_mod`` proof
    (``t``, ``u``, ``r`` and ``w = a*u + r``)."""
    q = A.fdiv(v.x, k.a)
    r = A.mod(v.x, k.a)
    t = A.fdiv(q, k.b)
    u = A.mod(q, k.b)
    return t, u, r, A.add(A.scale(u, k.a), r)


_DIV_OF_MOD_LEMMAS = (
    Lemma(
        "decompose",
        "x == (a*b)*t + (a*u + r) where q = x floordiv a, r = x mod a, t = q floordiv b, u = q mod b",
        lambda A, v, k: v.x == A.add(A.scale(_div_of_mod_parts(A, v, k)[0], k.a * k.b), _div_of_mod_parts(A, v, k)[3]),
    ),
    Lemma(
        "remainder_bounds",
        "0 <= a*u + r <= a*b - 1 (u <= b - 1 and r <= a - 1, a > 0)",
        lambda A, v, k: A.all(_div_of_mod_parts(A, v, k)[3] >= 0, _div_of_mod_parts(A, v, k)[3] <= k.a * k.b - 1),
    ),
    Lemma(
        "unique_remainder",
        "x mod (a*b) == a*u + r (the remainder is unique)",
        lambda A, v, k: A.mod(v.x, k.a * k.b) == _div_of_mod_parts(A, v, k)[3],
    ),
    Lemma(
        "unique_quotient",
        "(a*u + r) floordiv a == u (r in [0, a - 1])",
        lambda A, v, k: A.fdiv(_div_of_mod_parts(A, v, k)[3], k.a) == _div_of_mod_parts(A, v, k)[1],
    ),
)


_MOD_DROP_MULTIPLES = Rule(
    name="mod_drop_multiples",
    family="mod",
    text="(x*c + y) mod c -> y mod c",
    where="c != 0",
    variables=("x", "y"),
    constants=("c",),
    lhs=lambda A, v, k: A.mod(A.add(A.scale(v.x, k.c), v.y), k.c),
    rhs=lambda A, v, k: A.mod(v.y, k.c),
    condition=lambda A, k, lo, hi: k.c != 0,
    match=_match_mod_multiples,
    uses_ranges=False,
)

_DIV_PULL_MULTIPLES = Rule(
    name="div_pull_multiples",
    family="floordiv",
    text="(x*c + y) floordiv c -> x + y floordiv c",
    where="c != 0",
    variables=("x", "y"),
    constants=("c",),
    lhs=lambda A, v, k: A.fdiv(A.add(A.scale(v.x, k.c), v.y), k.c),
    rhs=lambda A, v, k: A.add(v.x, A.fdiv(v.y, k.c)),
    condition=lambda A, k, lo, hi: k.c != 0,
    match=_match_div_multiples,
    uses_ranges=False,
)

_CDIV_PULL_MULTIPLES = Rule(
    name="cdiv_pull_multiples",
    family="ceildiv",
    text="(x*c + y) ceildiv c -> x + y ceildiv c",
    where="c != 0",
    variables=("x", "y"),
    constants=("c",),
    lhs=lambda A, v, k: A.cdiv(A.add(A.scale(v.x, k.c), v.y), k.c),
    rhs=lambda A, v, k: A.add(v.x, A.cdiv(v.y, k.c)),
    condition=lambda A, k, lo, hi: k.c != 0,
    match=_match_cdiv_multiples,
    uses_ranges=False,
)


def _residue_variant(base: Rule, name: str, cls: type) -> Rule:
    """``base``'s statement (``(x*c + y) op c -> ...``) with the residue matcher
    (:func:`_split_residues`): one statement, proven once per name, two ways to bind it."""
    return replace(base, name=name, where=f"{base.where} (y: each coefficient of the dividend reduced modulo c)",
                   match=_match_residues(cls), explore=False)


RULES: tuple[Rule, ...] = (
    Rule(
        name="div_point",
        family="floordiv",
        text="x floordiv c -> k",
        where="c != 0 and x floordiv c = k for every x in [lo.x, hi.x] (one period)",
        variables=("x",),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.fdiv(v.x, k.c),
        rhs=lambda A, v, k: A.const(k.k),
        condition=lambda A, k, lo, hi: _one_period(A, k.c, k.k, lo.x, hi.x),
        match=_match_point(FloorDiv),
    ),
    Rule(
        name="mod_nowrap",
        family="mod",
        text="x mod c -> x - c*k",
        where="c != 0 and x floordiv c = k for every x in [lo.x, hi.x] (one period)",
        variables=("x",),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.mod(v.x, k.c),
        rhs=lambda A, v, k: A.add(v.x, A.const(-(k.c * k.k))),
        condition=lambda A, k, lo, hi: _one_period(A, k.c, k.k, lo.x, hi.x),
        match=_match_point(Mod),
    ),
    Rule(
        name="min_ordered",
        family="minmax",
        text="min(x, y) -> x",
        where="hi.x <= lo.y",
        variables=("x", "y"),
        constants=(),
        lhs=lambda A, v, k: A.min(v.x, v.y),
        rhs=lambda A, v, k: v.x,
        condition=lambda A, k, lo, hi: hi.x <= lo.y,
        match=_match_minmax(Min),
    ),
    Rule(
        name="max_ordered",
        family="minmax",
        text="max(x, y) -> x",
        where="lo.x >= hi.y",
        variables=("x", "y"),
        constants=(),
        lhs=lambda A, v, k: A.max(v.x, v.y),
        rhs=lambda A, v, k: v.x,
        condition=lambda A, k, lo, hi: lo.x >= hi.y,
        match=_match_minmax(Max),
    ),
    Rule(
        name="mod_mod",
        family="mod",
        text="(x mod a) mod b -> x mod b",
        where="b != 0, a = b*k (b divides a)",
        variables=("x",),
        constants=("a", "b", "k"),
        lhs=lambda A, v, k: A.mod(A.mod(v.x, k.a), k.b),
        rhs=lambda A, v, k: A.mod(v.x, k.b),
        condition=lambda A, k, lo, hi: A.all(k.b != 0, k.a != 0, k.a == k.b * k.k),
        match=_match_mod_mod,
        uses_ranges=False,
    ),
    Rule(
        name="div_div",
        family="floordiv",
        text="(x floordiv a) floordiv b -> x floordiv (a*b)",
        where="a != 0, b > 0",
        variables=("x",),
        constants=("a", "b"),
        lhs=lambda A, v, k: A.fdiv(A.fdiv(v.x, k.a), k.b),
        rhs=lambda A, v, k: A.fdiv(v.x, k.a * k.b),
        condition=lambda A, k, lo, hi: A.all(k.a != 0, k.b > 0),
        match=_match_div_div,
        uses_ranges=False,
    ),
    _MOD_DROP_MULTIPLES,
    _DIV_PULL_MULTIPLES,
    Rule(
        name="mod_gcd_factor",
        family="mod",
        text="(x*g + y) mod (g*k) -> (x*g) mod (g*k) + y",
        where="g > 0, k > 0, y in [0, g - 1]",
        variables=("x", "y"),
        constants=("g", "k"),
        lhs=lambda A, v, k: A.mod(A.add(A.scale(v.x, k.g), v.y), k.g * k.k),
        rhs=lambda A, v, k: A.add(A.mod(A.scale(v.x, k.g), k.g * k.k), v.y),
        condition=lambda A, k, lo, hi: A.all(k.g > 0, k.k > 0, lo.y >= 0, hi.y <= k.g - 1),
        match=_match_mod_gcd,
    ),
    Rule(
        name="mod_gcd_scale_in_sum",
        family="mod",
        text="y + (((w*k + z)*g + r) mod (g*k))*c -> y + (z mod k)*(g*c) + r*c",
        where="g > 0, k > 0, r in [0, g - 1] (z: the multiple of g's coefficients reduced modulo k; y: the rest "
              "of the sum)",
        variables=("w", "z", "r", "y"),
        constants=("g", "k", "c"),
        lhs=lambda A, v, k: A.add(v.y, A.scale(A.mod(A.add(A.scale(A.add(A.scale(v.w, k.k), v.z), k.g), v.r),
                                                     k.g * k.k), k.c)),
        rhs=lambda A, v, k: A.add(v.y, A.scale(A.mod(v.z, k.k), k.g * k.c), A.scale(v.r, k.c)),
        condition=lambda A, k, lo, hi: A.all(k.g > 0, k.k > 0, lo.r >= 0, hi.r <= k.g - 1),
        match=_match_mod_gcd_in_sum,
        explore=False,
    ),
    Rule(
        name="div_gcd_reduce",
        family="floordiv",
        text="(x*g + y) floordiv (g*k) -> x floordiv k",
        where="g > 0, k > 0, y in [0, g - 1]",
        variables=("x", "y"),
        constants=("g", "k"),
        lhs=lambda A, v, k: A.fdiv(A.add(A.scale(v.x, k.g), v.y), k.g * k.k),
        rhs=lambda A, v, k: A.fdiv(v.x, k.k),
        condition=lambda A, k, lo, hi: A.all(k.g > 0, k.k > 0, lo.y >= 0, hi.y <= k.g - 1),
        match=_match_div_gcd,
    ),
    Rule(
        name="div_fold_inner",
        family="floordiv",
        text="(x floordiv a + y) floordiv b -> (x + y*a) floordiv (a*b)",
        where="a != 0, b > 0",
        variables=("x", "y"),
        constants=("a", "b"),
        lhs=lambda A, v, k: A.fdiv(A.add(A.fdiv(v.x, k.a), v.y), k.b),
        rhs=lambda A, v, k: A.fdiv(A.add(v.x, A.scale(v.y, k.a)), k.a * k.b),
        condition=lambda A, k, lo, hi: A.all(k.a != 0, k.b > 0),
        match=_match_div_fold,
        uses_ranges=False,
    ),
    Rule(
        name="div_of_mod",
        family="floordiv",
        text="(x mod (a*b)) floordiv a -> (x floordiv a) mod b",
        where="a > 0, b > 0",
        variables=("x",),
        constants=("a", "b"),
        lhs=lambda A, v, k: A.fdiv(A.mod(v.x, k.a * k.b), k.a),
        rhs=lambda A, v, k: A.mod(A.fdiv(v.x, k.a), k.b),
        condition=lambda A, k, lo, hi: A.all(k.a > 0, k.b > 0),
        match=_match_div_of_mod,
        uses_ranges=False,
        lemmas=_DIV_OF_MOD_LEMMAS,
    ),
    Rule(
        name="recombine",
        family="recombine",
        text="(x floordiv c)*(c*k) + (x mod c)*k + y -> x*k + y",
        where="c != 0",
        variables=("x", "y"),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.add(A.scale(A.fdiv(v.x, k.c), k.c * k.k), A.scale(A.mod(v.x, k.c), k.k), v.y),
        rhs=lambda A, v, k: A.add(A.scale(v.x, k.k), v.y),
        condition=lambda A, k, lo, hi: k.c != 0,
        match=_match_recombine,
        uses_ranges=False,
    ),
    Rule(
        name="recombine_sub_div",
        family="recombine",
        text="x*k - (x floordiv c)*(c*k) + y -> (x mod c)*k + y",
        where="c != 0",
        variables=("x", "y"),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.add(A.scale(v.x, k.k), A.scale(A.fdiv(v.x, k.c), -(k.c * k.k)), v.y),
        rhs=lambda A, v, k: A.add(A.scale(A.mod(v.x, k.c), k.k), v.y),
        condition=lambda A, k, lo, hi: k.c != 0,
        match=_match_recombine_sub,
        uses_ranges=False,
    ),
    Rule(
        name="recombine_sub_mod",
        family="recombine",
        text="x*k - (x mod c)*k + y -> (x floordiv c)*(c*k) + y",
        where="c != 0",
        variables=("x", "y"),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.add(A.scale(v.x, k.k), A.scale(A.mod(v.x, k.c), -k.k), v.y),
        rhs=lambda A, v, k: A.add(A.scale(A.fdiv(v.x, k.c), k.c * k.k), v.y),
        condition=lambda A, k, lo, hi: k.c != 0,
        match=_match_recombine_sub_mod,
        uses_ranges=False,
    ),
    Rule(
        name="mod_scale",
        family="mod",
        text="(x*g) mod (g*k) -> (x mod k)*g",
        where="g != 0, k != 0",
        variables=("x",),
        constants=("g", "k"),
        lhs=lambda A, v, k: A.mod(A.scale(v.x, k.g), k.g * k.k),
        rhs=lambda A, v, k: A.scale(A.mod(v.x, k.k), k.g),
        condition=lambda A, k, lo, hi: A.all(k.g != 0, k.k != 0),
        match=_match_scaled(Mod),
        uses_ranges=False,
    ),
    Rule(
        name="div_scale",
        family="floordiv",
        text="(x*g) floordiv (g*k) -> x floordiv k",
        where="g != 0, k != 0",
        variables=("x",),
        constants=("g", "k"),
        lhs=lambda A, v, k: A.fdiv(A.scale(v.x, k.g), k.g * k.k),
        rhs=lambda A, v, k: A.fdiv(v.x, k.k),
        condition=lambda A, k, lo, hi: A.all(k.g != 0, k.k != 0),
        match=_match_scaled(FloorDiv),
        uses_ranges=False,
    ),
    Rule(
        name="cdiv_point",
        family="ceildiv",
        text="x ceildiv c -> k",
        where="c != 0 and x ceildiv c = k for every x in [lo.x, hi.x] (one period)",
        variables=("x",),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.cdiv(v.x, k.c),
        rhs=lambda A, v, k: A.const(k.k),
        condition=lambda A, k, lo, hi: A.any(
            A.all(k.c > 0, k.c * k.k - k.c + 1 <= lo.x, hi.x <= k.c * k.k),
            A.all(k.c < 0, k.c * k.k <= lo.x, hi.x <= k.c * k.k - k.c - 1),
        ),
        match=_match_cdiv_point,
    ),
    _CDIV_PULL_MULTIPLES,
    Rule(
        name="cdiv_scale",
        family="ceildiv",
        text="(x*g) ceildiv (g*k) -> x ceildiv k",
        where="g != 0, k != 0",
        variables=("x",),
        constants=("g", "k"),
        lhs=lambda A, v, k: A.cdiv(A.scale(v.x, k.g), k.g * k.k),
        rhs=lambda A, v, k: A.cdiv(v.x, k.k),
        condition=lambda A, k, lo, hi: A.all(k.g != 0, k.k != 0),
        match=_match_scaled(CeilDiv),
        uses_ranges=False,
    ),
    Rule(
        name="min_offset",
        family="minmax",
        text="min(x, x + z) -> x",
        where="lo.z >= 0",
        variables=("x", "z"),
        constants=(),
        lhs=lambda A, v, k: A.min(v.x, A.add(v.x, v.z)),
        rhs=lambda A, v, k: v.x,
        condition=lambda A, k, lo, hi: lo.z >= 0,
        match=_match_minmax_diff(Min),
    ),
    Rule(
        name="max_offset",
        family="minmax",
        text="max(x, x + z) -> x",
        where="hi.z <= 0",
        variables=("x", "z"),
        constants=(),
        lhs=lambda A, v, k: A.max(v.x, A.add(v.x, v.z)),
        rhs=lambda A, v, k: v.x,
        condition=lambda A, k, lo, hi: hi.z <= 0,
        match=_match_minmax_diff(Max),
    ),
    _residue_variant(_MOD_DROP_MULTIPLES, "mod_reduce_coefficients", Mod),
    _residue_variant(_DIV_PULL_MULTIPLES, "div_reduce_coefficients", FloorDiv),
    Rule(
        name="div_reduce_coefficients_in_sum",
        family="floordiv",
        text="y + ((x*c + z) floordiv c)*k -> y + x*k + (z floordiv c)*k",
        where="c != 0 (z: each coefficient of the dividend reduced modulo c; y: the rest of the sum)",
        variables=("x", "y", "z"),
        constants=("c", "k"),
        lhs=lambda A, v, k: A.add(v.y, A.scale(A.fdiv(A.add(A.scale(v.x, k.c), v.z), k.c), k.k)),
        rhs=lambda A, v, k: A.add(v.y, A.scale(v.x, k.k), A.scale(A.fdiv(v.z, k.c), k.k)),
        condition=lambda A, k, lo, hi: k.c != 0,
        match=_match_residues_in_sum,
        uses_ranges=False,
        explore=False,
    ),
    _residue_variant(_CDIV_PULL_MULTIPLES, "cdiv_reduce_coefficients", CeilDiv),
    Rule(
        name="div_negative_divisor",
        family="floordiv",
        text="x floordiv c -> (-x) floordiv (-c)",
        where="c < 0",
        variables=("x",),
        constants=("c",),
        lhs=lambda A, v, k: A.fdiv(v.x, k.c),
        rhs=lambda A, v, k: A.fdiv(A.scale(v.x, -1), -k.c),
        condition=lambda A, k, lo, hi: k.c < 0,
        match=_match_negative_divisor(FloorDiv),
        uses_ranges=False,
    ),
    Rule(
        name="mod_negative_divisor",
        family="mod",
        text="x mod c -> (x - 1) mod (-c) + c + 1",
        where="c < 0",
        variables=("x",),
        constants=("c",),
        lhs=lambda A, v, k: A.mod(v.x, k.c),
        rhs=lambda A, v, k: A.add(A.mod(A.add(v.x, A.lit(-1)), -k.c), A.const(k.c + 1)),
        condition=lambda A, k, lo, hi: k.c < 0,
        match=_match_negative_divisor(Mod),
        uses_ranges=False,
    ),
    Rule(
        name="cdiv_negative_divisor",
        family="ceildiv",
        text="x ceildiv c -> (-x) ceildiv (-c)",
        where="c < 0",
        variables=("x",),
        constants=("c",),
        lhs=lambda A, v, k: A.cdiv(v.x, k.c),
        rhs=lambda A, v, k: A.cdiv(A.scale(v.x, -1), -k.c),
        condition=lambda A, k, lo, hi: k.c < 0,
        match=_match_negative_divisor(CeilDiv),
        uses_ranges=False,
    ),
    Rule(
        name="point_value",
        family="point",
        text="x -> k",
        where="x in [k, k] (one value on the domain)",
        variables=("x",),
        constants=("k",),
        lhs=lambda A, v, k: v.x,
        rhs=lambda A, v, k: A.const(k.k),
        condition=lambda A, k, lo, hi: A.all(lo.x == k.k, hi.x == k.k),
        match=_match_point_value,
    ),
)


def rule_by_name(name: str) -> Rule:
    """The catalogue rule called ``name`` (KeyError if none)."""
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(name)
