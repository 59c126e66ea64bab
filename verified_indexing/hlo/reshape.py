"""Index expressions of a row-major reshape, via minimal subshapes.

A reshape from shape ``src`` to shape ``dst`` (same number of elements) is split
into the smallest groups of consecutive dimensions whose products agree (the
"minimal subshapes": ``[4,8,12] -> [32,3,4]`` is ``[4,8] -> [32]`` and
``[12] -> [3,4]``). Within a group, the index of ``dst`` is linearized and
delinearized into ``src``; the floordiv/mod expressions are built with the
group's dimension bounds, so they come out in the compact form of the spec
(``d0 * 2 + d1 floordiv 2`` rather than ``(d0 * 16 + d1 * 4 + d2) floordiv 8``).

Promise: :func:`reshape_exprs` returns, for every index of ``dst`` inside its
box, the row-major-equivalent index of ``src`` (tests check it pointwise against
numpy's reshape). Only rewrites that hold for every point of the box are used:

* ``(q*D + R) floordiv D = q + R floordiv D`` and ``(q*M + R) mod M = R mod M``;
* ``(g*A + B) floordiv D = A floordiv (D/g)`` and
  ``(g*A + B) mod M = g*(A mod (M/g)) + B`` when ``g`` divides ``D`` (``M``) and
  ``0 <= B < g`` on the box;
* ``R floordiv D = 0`` and ``R mod D = R`` when ``0 <= R < D`` on the box.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from verified_indexing.expr import AffineExpr, Const, Dim

__all__ = ["minimal_subshapes", "reshape_exprs"]

# A nonnegative linear combination: (term, coefficient, max value of the term);
# every term is >= 0 on the box.
_Terms = list[tuple[AffineExpr, int, int]]


def minimal_subshapes(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """The groups ``(src dim ids, dst dim ids)`` of consecutive dimensions with equal
    products, each as small as possible. Requires equal, nonzero element counts."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        gs: list[int] = []
        gd: list[int] = []
        ps = pd = 1
        if i < len(src):
            gs.append(i)
            ps *= src[i]
            i += 1
        if j < len(dst):
            gd.append(j)
            pd *= dst[j]
            j += 1
        while ps != pd:
            if ps < pd and i < len(src):
                gs.append(i)
                ps *= src[i]
                i += 1
            elif j < len(dst):
                gd.append(j)
                pd *= dst[j]
                j += 1
            else:  # unreachable when the element counts agree
                raise ValueError(f"reshape {list(src)} -> {list(dst)}: element counts differ")
        # Trailing size-1 dimensions belong to the group that precedes them.
        while i < len(src) and src[i] == 1 and (j >= len(dst) or dst[j] != 1):
            gs.append(i)
            i += 1
        while j < len(dst) and dst[j] == 1 and (i >= len(src) or src[i] != 1):
            gd.append(j)
            j += 1
        groups.append((gs, gd))
    return groups


def _linear(terms: _Terms) -> AffineExpr:
    total: AffineExpr = Const(0)
    for t, c, _ in terms:
        total = total + t * c
    return total


def _max(terms: _Terms) -> int:
    return sum(c * hi for _, c, hi in terms)


def _split(terms: _Terms, divisor: int) -> tuple[_Terms, _Terms, int]:
    """``(big, small, g)``: the largest set of small-coefficient terms whose
    total range stays below ``g = gcd(divisor, coefficients of the rest)``."""
    ordered = sorted(terms, key=lambda t: t[1])
    for p in range(len(ordered), 0, -1):
        small, big = ordered[:p], ordered[p:]
        g = math.gcd(divisor, *(c for _, c, _ in big)) if big else divisor
        if _max(small) < g:
            return big, small, g
    return ordered, [], math.gcd(divisor, *(c for _, c, _ in ordered))


def _floordiv(terms: _Terms, divisor: int) -> _Terms:
    """``(sum of terms) floordiv divisor`` as terms (divisor > 0)."""
    if divisor == 1:
        return terms
    out: _Terms = [(t, c // divisor, hi) for t, c, hi in terms if c % divisor == 0]
    rest = [(t, c, hi) for t, c, hi in terms if c % divisor != 0]
    if _max(rest) < divisor:
        return out
    big, _small, g = _split(rest, divisor)
    scaled = [(t, c // g, hi) for t, c, hi in big]
    d = divisor // g
    if d == 1:
        return out + scaled
    lin = _linear(scaled)
    return [*out, (lin.floordiv(d), 1, _max(scaled) // d)]


def _mod(terms: _Terms, modulus: int) -> _Terms:
    """``(sum of terms) mod modulus`` as terms (modulus > 0)."""
    rest = [(t, c, hi) for t, c, hi in terms if c % modulus != 0]
    if _max(rest) < modulus:
        return rest
    big, small, g = _split(rest, modulus)
    if g == 1:
        return [(_linear(rest).mod(modulus), 1, modulus - 1)]
    inner = _mod([(t, c // g, hi) for t, c, hi in big], modulus // g)
    return [(t, c * g, hi) for t, c, hi in inner] + small


def reshape_exprs(src: Sequence[int], dst: Sequence[int]) -> list[AffineExpr]:
    """The index of ``src`` (one expression per ``src`` dimension) in terms of the
    index ``d0, d1, ...`` of ``dst``, for a row-major reshape ``src -> dst``.

    Both shapes must have the same, nonzero number of elements.
    """
    out: list[AffineExpr] = [Const(0)] * len(src)
    for gs, gd in minimal_subshapes(src, dst):
        # Linear index of the dst group; dimensions of size 1 contribute nothing.
        terms: _Terms = []
        stride = 1
        for j in reversed(gd):
            if dst[j] > 1:
                terms.append((Dim(j), stride, dst[j] - 1))
            stride *= dst[j]
        # Delinearize into the src group, outermost first.
        strides: dict[int, int] = {}
        stride = 1
        for i in reversed(gs):
            strides[i] = stride
            stride *= src[i]
        for pos, i in enumerate(gs):
            if src[i] == 1:
                continue
            part = terms if pos == 0 else _mod(terms, strides[i] * src[i])
            out[i] = _linear(_floordiv(part, strides[i]))
    return out
