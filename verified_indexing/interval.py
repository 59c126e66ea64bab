"""Inclusive integer intervals and sound interval evaluation of expressions.

:class:`Interval` ``[lo, hi]`` holds every integer ``x`` with ``lo <= x <= hi``; it is
empty when ``lo > hi``. Every operation returns an interval that contains every
value the operation can take on its inputs (a sound over-approximation; exact for
``+``, ``-``, multiplication by a constant, ``floordiv`` by a constant, ``min`` and
``max`` of independent operands). Exact ranges over a correlated domain come from
the isl engine, not from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from verified_indexing.errors import ZeroDivisorError
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
)

__all__ = ["Interval", "node_range", "range_of"]


@dataclass(frozen=True, order=True)
class Interval:
    """The integers ``lo..hi`` inclusive (empty when ``lo > hi``)."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        for v in (self.lo, self.hi):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"interval bounds must be ints, got {v!r}")

    # -- queries -----------------------------------------------------------
    @staticmethod
    def point(value: int) -> Interval:
        return Interval(value, value)

    def is_empty(self) -> bool:
        return self.lo > self.hi

    def is_point(self) -> bool:
        return self.lo == self.hi

    def size(self) -> int:
        """The number of integers in the interval."""
        return max(0, self.hi - self.lo + 1)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.lo <= value <= self.hi

    def contains_interval(self, other: Interval) -> bool:
        return other.is_empty() or (self.lo <= other.lo and other.hi <= self.hi)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.lo, self.hi + 1))

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"

    # -- lattice -----------------------------------------------------------
    def intersect(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def union(self, other: Interval) -> Interval:
        """The smallest interval containing both (the hull)."""
        if self.is_empty():
            return other
        if other.is_empty():
            return self
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    # -- arithmetic ----------------------------------------------------------
    def __add__(self, other: Interval | int) -> Interval:
        if type(other) is int:
            return _mk(self.lo + other, self.hi + other)
        o = _iv(other)
        return _mk(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> Interval:
        return _mk(-self.hi, -self.lo)

    def __sub__(self, other: Interval | int) -> Interval:
        return self + (-_iv(other))

    def __mul__(self, other: Interval | int) -> Interval:
        if type(other) is int:  # (the common case: a constant; the same interval as the general one)
            lo, hi = self.lo, self.hi
            if lo > hi:
                return _EMPTY
            return _mk(lo * other, hi * other) if other >= 0 else _mk(hi * other, lo * other)
        o = _iv(other)
        if self.is_empty() or o.is_empty():
            return _EMPTY
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return _mk(min(products), max(products))

    __rmul__ = __mul__

    def floordiv(self, c: int) -> Interval:
        """``x floordiv c`` for x in the interval (exact)."""
        if c == 0:
            raise ZeroDivisorError("interval floordiv by zero")
        lo, hi = _floordiv(self.lo, self.hi, c)
        return _mk(lo, hi)

    def ceildiv(self, c: int) -> Interval:
        """``x ceildiv c`` for x in the interval (exact)."""
        return -((-self).floordiv(c))

    def mod(self, c: int) -> Interval:
        """``x mod c`` for x in the interval (exact when the interval fits one
        period, else the full residue range)."""
        if c == 0:
            raise ZeroDivisorError("interval mod by zero")
        lo, hi = _mod(self.lo, self.hi, c)
        return _mk(lo, hi)

    def min(self, other: Interval) -> Interval:
        if self.is_empty() or other.is_empty():
            return _EMPTY
        return _mk(min(self.lo, other.lo), min(self.hi, other.hi))

    def max(self, other: Interval) -> Interval:
        if self.is_empty() or other.is_empty():
            return _EMPTY
        return _mk(max(self.lo, other.lo), max(self.hi, other.hi))


_EMPTY = Interval(1, 0)
_new = object.__new__


def _mk(lo: int, hi: int) -> Interval:
    """``Interval(lo, hi)`` from two ints, without the constructor's type checks (the same object:
    the same fields, equality, hash and repr; used where the bounds are ints by construction)."""
    iv = _new(Interval)
    d = iv.__dict__
    d["lo"] = lo
    d["hi"] = hi
    return iv


def _iv(v: Interval | int) -> Interval:
    return v if isinstance(v, Interval) else Interval(v, v)


def _floordiv(lo: int, hi: int, c: int) -> tuple[int, int]:
    """:meth:`Interval.floordiv` on bounds (``c != 0``): ``(1, 0)`` when empty."""
    if lo > hi:
        return 1, 0
    a, b = lo // c, hi // c
    return (a, b) if a <= b else (b, a)


def _mod(lo: int, hi: int, c: int) -> tuple[int, int]:
    """:meth:`Interval.mod` on bounds (``c != 0``): ``(1, 0)`` when empty."""
    if lo > hi:
        return 1, 0
    q = lo // c
    if q == hi // c:
        a, b = lo - c * q, hi - c * q
        return (a, b) if a <= b else (b, a)
    return (0, c - 1) if c > 0 else (c + 1, 0)


def range_of(
    expr: AffineExpr,
    dims: Sequence[Interval] = (),
    syms: Sequence[Interval] = (),
    rts: Sequence[Interval] = (),
) -> Interval:
    """A sound interval for ``expr`` when each variable ranges over its interval
    independently (interval evaluation)."""
    t = type(expr)
    if t is Dim:
        return dims[expr.index]  # type: ignore[attr-defined]
    if t is Sym:
        return syms[expr.index]  # type: ignore[attr-defined]
    if t is RtSym:
        return rts[expr.index]  # type: ignore[attr-defined]
    return node_range(expr, lambda e: range_of(e, dims, syms, rts))


def node_range(expr: AffineExpr, sub: Callable[[AffineExpr], Interval]) -> Interval:
    """The interval of ``expr`` from the intervals ``sub`` gives its direct subexpressions (one step of
    :func:`range_of`, which is this with ``sub`` the recursion: a caller with a memo of subexpressions'
    intervals, the simplifier's rewriter, gets the same intervals). ``expr`` is not a variable."""
    t = type(expr)
    if t is Sum:
        lo = hi = expr.constant  # type: ignore[attr-defined]
        for term, c in expr.terms:  # type: ignore[attr-defined]
            # (Interval + Interval * c, in the same order: an empty term's interval counts as (1, 0))
            r = sub(term)
            a, b = r.lo, r.hi
            if a > b:
                a, b = 1, 0
            elif c >= 0:
                a, b = a * c, b * c
            else:
                a, b = b * c, a * c
            lo += a
            hi += b
        return _mk(lo, hi)
    if t is FloorDiv:
        c = expr.divisor  # type: ignore[attr-defined]
        if c == 0:
            raise ZeroDivisorError("interval floordiv by zero")
        r = sub(expr.lhs)  # type: ignore[attr-defined]
        return _mk(*_floordiv(r.lo, r.hi, c))
    if t is Mod:
        c = expr.divisor  # type: ignore[attr-defined]
        if c == 0:
            raise ZeroDivisorError("interval mod by zero")
        r = sub(expr.lhs)  # type: ignore[attr-defined]
        return _mk(*_mod(r.lo, r.hi, c))
    if t is Const:
        v = expr.value  # type: ignore[attr-defined]
        return _mk(v, v)
    if t is CeilDiv:
        return sub(expr.lhs).ceildiv(expr.divisor)  # type: ignore[attr-defined]
    if t is Min:
        return sub(expr.lhs).min(sub(expr.rhs))  # type: ignore[attr-defined]
    if t is Max:
        return sub(expr.lhs).max(sub(expr.rhs))  # type: ignore[attr-defined]
    raise TypeError(f"unknown expression node {type(expr).__name__}")
