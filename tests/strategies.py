"""Moved to :mod:`verified_indexing.testing.strategies` (public, documented in docs/testing.md).

This alias keeps tests written against the old location (e.g. on branches made before the move)
working; new tests import from the package."""

from verified_indexing.testing.strategies import Ref, affine_exprs, build, indexing_maps, ref_eval, ref_exprs

__all__ = ["Ref", "affine_exprs", "build", "indexing_maps", "ref_eval", "ref_exprs"]
