"""MLIR's syntactic predicates on plain affine maps, with MLIR's exact behaviour.

These answer "what does MLIR decide here?" so a user can compare it with the
semantic answers of :mod:`verified_indexing.legality.inverse`. Each function
follows the definition in MLIR's ``AffineMap.cpp``:

* :func:`is_projected_permutation` (``AffineMap::isProjectedPermutation``): no
  symbols, at most as many results as inputs, every result a distinct dimension
  (or, with ``allow_zero_in_results``, the constant ``0``);
* :func:`is_permutation` (``AffineMap::isPermutation``): as many results as dims,
  and a projected permutation (zeros not allowed);
* :func:`inverse_permutation` (``mlir::inversePermutation``): for each dimension,
  the position of the *first* result that is exactly that dimension; results
  that are not a bare dimension (constants, sums, repeated dims) are skipped; if
  some dimension is never seen the inverse is null (``None`` here). On a map with
  more results than dims (``(d0, d1) -> (d1, 0, d0)``) this gives a left inverse
  (``(d0, d1, d2) -> (d2, d0)``). The empty map ``() -> ()`` is its own inverse.
* :func:`compose` (``AffineMap::compose``): ``outer ∘ inner``.

They are purely syntactic: ``(d0 + d1, d0)`` is not a permutation here even
though it is a bijection of Z^2 (see :func:`verified_indexing.legality.inverse`).
"""

from __future__ import annotations

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import UnsupportedError
from verified_indexing.expr import AffineExpr, Const, Dim

__all__ = ["is_permutation", "is_projected_permutation", "inverse_permutation", "compose", "permutation_of"]


def is_projected_permutation(m: AffineMap, allow_zero_in_results: bool = False) -> bool:
    """MLIR's ``isProjectedPermutation(allowZeroInResults)``.

    True when the map has no symbols, no more results than inputs, and every
    result is a dimension used at most once; with ``allow_zero_in_results`` a
    result may also be the constant ``0`` (any other constant is rejected).
    """
    if m.num_symbols > 0:
        return False
    if m.num_results > m.num_dims + m.num_symbols:
        return False
    seen = [False] * m.num_dims
    for r in m.results:
        if isinstance(r, Dim):
            if seen[r.index]:
                return False
            seen[r.index] = True
        elif not (allow_zero_in_results and isinstance(r, Const) and r.value == 0):
            return False
    return True


def is_permutation(m: AffineMap) -> bool:
    """MLIR's ``isPermutation``: as many results as dims, each dim exactly once, no symbols."""
    if m.num_dims != m.num_results:
        return False
    return is_projected_permutation(m)


def permutation_of(m: AffineMap) -> tuple[int, ...] | None:
    """``(p0, p1, ...)`` with result ``i`` equal to ``d{p_i}`` when ``m`` is a
    permutation (MLIR's sense), else ``None``."""
    if not is_permutation(m):
        return None
    return tuple(r.index for r in m.results if isinstance(r, Dim))


def inverse_permutation(m: AffineMap) -> AffineMap | None:
    """MLIR's ``inversePermutation``; ``None`` where MLIR returns the null map.

    The result has ``m.num_results`` dims and ``m.num_dims`` results: result
    ``k`` is ``d{j}`` for the first ``j`` with ``m.results[j] == d{k}``. Results
    that are not bare dimensions are skipped. MLIR asserts on maps with
    symbols; here they raise :class:`UnsupportedError`.
    """
    if m.num_dims == 0 and m.num_symbols == 0 and m.num_results == 0:
        return m
    if m.num_symbols:
        raise UnsupportedError("inversePermutation: MLIR requires a map without symbols")
    exprs: list[AffineExpr | None] = [None] * m.num_dims
    for j, r in enumerate(m.results):
        if isinstance(r, Dim):
            if exprs[r.index] is not None:
                continue
            exprs[r.index] = Dim(j)
    seen = [e for e in exprs if e is not None]
    if len(seen) != m.num_dims + m.num_symbols:
        return None
    return AffineMap(m.num_results, 0, seen)


def compose(outer: AffineMap, inner: AffineMap) -> AffineMap:
    """MLIR's ``outer.compose(inner)``: ``outer ∘ inner`` (``inner``'s results feed
    ``outer``'s dims; symbols are ``outer``'s then ``inner``'s)."""
    return outer.compose(inner)
