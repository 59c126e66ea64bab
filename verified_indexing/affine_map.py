"""Plain MLIR affine maps: ``(d0, d1)[s0] -> (d0 + s0, d1)`` with no bounds.

Promises: immutable, hashable, structural equality; :meth:`AffineMap.compose`
follows MLIR's ``AffineMap::compose`` (``self.compose(other)`` is
``self ∘ other``: ``other``'s results feed ``self``'s dims; the symbols are
``self``'s then ``other``'s). Results use only ``Dim`` and ``Sym`` variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verified_indexing.errors import MapError
from verified_indexing.expr import AffineExpr, Dim, ExprLike, Sym, as_expr

__all__ = ["AffineMap"]


@dataclass(frozen=True)
class AffineMap:
    """An MLIR affine map: ``num_dims`` dims, ``num_symbols`` symbols, results."""

    num_dims: int
    num_symbols: int
    results: tuple[AffineExpr, ...]

    def __init__(self, num_dims: int, num_symbols: int, results: Sequence[ExprLike]) -> None:
        res = tuple(as_expr(r) for r in results)
        for r in res:
            for kind, index in r.variables():
                if kind == "rt":
                    raise MapError(f"affine maps have no runtime variables: {r}")
                limit = num_dims if kind == "d" else num_symbols
                if index >= limit:
                    raise MapError(f"result {r} uses {kind}{index}, but the map has {limit} {kind} variable(s)")
        object.__setattr__(self, "num_dims", num_dims)
        object.__setattr__(self, "num_symbols", num_symbols)
        object.__setattr__(self, "results", res)

    @property
    def num_results(self) -> int:
        return len(self.results)

    @staticmethod
    def identity(n: int) -> AffineMap:
        return AffineMap(n, 0, [Dim(i) for i in range(n)])

    def evaluate(self, dims: Sequence[int], syms: Sequence[int] = ()) -> tuple[int, ...]:
        return tuple(r.evaluate(dims, syms) for r in self.results)

    def compose(self, other: AffineMap) -> AffineMap:
        """``self ∘ other`` as MLIR composes: dims of ``other``; symbols of
        ``self`` then of ``other``."""
        if other.num_results != self.num_dims:
            raise MapError(f"cannot compose: {other.num_results} results into {self.num_dims} dims")
        shift = [Sym(self.num_symbols + i) for i in range(other.num_symbols)]
        inner = [r.substitute(syms=shift) for r in other.results]
        return AffineMap(
            other.num_dims,
            self.num_symbols + other.num_symbols,
            [r.substitute(dims=inner) for r in self.results],
        )

    def __str__(self) -> str:
        from verified_indexing.syntax.printer import format_affine_map

        return format_affine_map(self.num_dims, self.num_symbols, self.results)
