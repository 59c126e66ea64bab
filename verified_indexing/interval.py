"""Inclusive integer intervals and sound interval evaluation of expressions.

:class:`Interval` ``[lo, hi]`` holds every integer ``x`` with ``lo <= x <= hi``; it is
empty when ``lo > hi``. Every operation returns an interval that contains every
value the operation can take on its inputs (a sound over-approximation; exact for
``+``, ``-``, multiplication by a constant, ``floordiv`` by a constant, ``min`` and
``max`` of independent operands). Exact ranges over a correlated domain come from
the isl engine, not from here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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

__all__ = ["Interval", "range_of"]


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
        o = _iv(other)
        return Interval(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __sub__(self, other: Interval | int) -> Interval:
        return self + (-_iv(other))

    def __mul__(self, other: Interval | int) -> Interval:
        o = _iv(other)
        if self.is_empty() or o.is_empty():
            return _EMPTY
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(products), max(products))

    __rmul__ = __mul__

    def floordiv(self, c: int) -> Interval:
        """``x floordiv c`` for x in the interval (exact)."""
        if c == 0:
            raise ZeroDivisorError("interval floordiv by zero")
        if self.is_empty():
            return _EMPTY
        a, b = self.lo // c, self.hi // c
        return Interval(min(a, b), max(a, b))

    def ceildiv(self, c: int) -> Interval:
        """``x ceildiv c`` for x in the interval (exact)."""
        return -((-self).floordiv(c))

    def mod(self, c: int) -> Interval:
        """``x mod c`` for x in the interval (exact when the interval fits one
        period, else the full residue range)."""
        if c == 0:
            raise ZeroDivisorError("interval mod by zero")
        if self.is_empty():
            return _EMPTY
        if self.lo // c == self.hi // c:
            a, b = self.lo - c * (self.lo // c), self.hi - c * (self.hi // c)
            return Interval(min(a, b), max(a, b))
        return Interval(0, c - 1) if c > 0 else Interval(c + 1, 0)

    def min(self, other: Interval) -> Interval:
        if self.is_empty() or other.is_empty():
            return _EMPTY
        return Interval(min(self.lo, other.lo), min(self.hi, other.hi))

    def max(self, other: Interval) -> Interval:
        if self.is_empty() or other.is_empty():
            return _EMPTY
        return Interval(max(self.lo, other.lo), max(self.hi, other.hi))


_EMPTY = Interval(1, 0)


def _iv(v: Interval | int) -> Interval:
    return v if isinstance(v, Interval) else Interval(v, v)


def range_of(
    expr: AffineExpr,
    dims: Sequence[Interval] = (),
    syms: Sequence[Interval] = (),
    rts: Sequence[Interval] = (),
) -> Interval:
    """A sound interval for ``expr`` when each variable ranges over its interval
    independently (interval evaluation)."""
    if isinstance(expr, Const):
        return Interval(expr.value, expr.value)
    if isinstance(expr, Dim):
        return dims[expr.index]
    if isinstance(expr, Sym):
        return syms[expr.index]
    if isinstance(expr, RtSym):
        return rts[expr.index]
    if isinstance(expr, Sum):
        total = Interval(expr.constant, expr.constant)
        for t, c in expr.terms:
            total = total + range_of(t, dims, syms, rts) * c
        return total
    if isinstance(expr, FloorDiv):
        return range_of(expr.lhs, dims, syms, rts).floordiv(expr.divisor)
    if isinstance(expr, CeilDiv):
        return range_of(expr.lhs, dims, syms, rts).ceildiv(expr.divisor)
    if isinstance(expr, Mod):
        return range_of(expr.lhs, dims, syms, rts).mod(expr.divisor)
    if isinstance(expr, Min):
        return range_of(expr.lhs, dims, syms, rts).min(range_of(expr.rhs, dims, syms, rts))
    if isinstance(expr, Max):
        return range_of(expr.lhs, dims, syms, rts).max(range_of(expr.rhs, dims, syms, rts))
    raise TypeError(f"unknown expression node {type(expr).__name__}")
