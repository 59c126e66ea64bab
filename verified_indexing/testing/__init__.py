"""Helpers for testing code that produces indexing maps.

* :func:`assert_maps_equal` proves two maps equal with the engines and raises
  :class:`AssertionError` otherwise, with the counterexample (re-checked by the
  plain evaluator) or the reason the engines could not decide. ``unknown`` fails
  the assertion: it is never a pass.
* Hypothesis strategies (:mod:`verified_indexing.testing.strategies`):
  ``affine_exprs``, ``indexing_maps``, and the reference trees ``ref_exprs`` with
  their independent evaluator ``ref_eval``. They need ``hypothesis``
  (``pip install 'verified-indexing[test]'``); importing this package does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verified_indexing._lazy import lazy_names

_LAZY = {
    "affine_exprs": "verified_indexing.testing.strategies",
    "assert_maps_equal": "verified_indexing.testing.assertions",
    "build": "verified_indexing.testing.strategies",
    "indexing_maps": "verified_indexing.testing.strategies",
    "ref_eval": "verified_indexing.testing.strategies",
    "ref_exprs": "verified_indexing.testing.strategies",
}
__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from verified_indexing.testing.assertions import assert_maps_equal
    from verified_indexing.testing.strategies import affine_exprs, build, indexing_maps, ref_eval, ref_exprs

__all__ = ["affine_exprs", "assert_maps_equal", "build", "indexing_maps", "ref_eval", "ref_exprs"]
