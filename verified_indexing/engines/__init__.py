"""Proof engines: isl, z3 and enumeration behind one API of four-valued verdicts.

Every question returns a :class:`Verdict` (``proved``, ``refuted``, ``unknown``,
``error``) naming the engine and the time taken; a refutation carries a
:class:`Counterexample` confirmed by the plain evaluator. See ``docs/engines.md``
for the semantics of each question (map equality treats range variables as
existentially quantified, runtime variables as inputs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verified_indexing._lazy import lazy_names

_LAZY = {
    "Counterexample": "verified_indexing.engines.verdict",
    "DEFAULT_MAX_OPERATIONS": "verified_indexing.engines.isl",
    "ENGINES": "verified_indexing.engines.api",
    "IslLimitExceeded": "verified_indexing.engines.isl",
    "ProofCache": "verified_indexing.engines.cache",
    "SEMANTICS_VERSION": "verified_indexing.engines.cache",
    "SIZE_MAX": "verified_indexing.engines.sizes",
    "SUBSET_KINDS": "verified_indexing.engines.subset",
    "SizeCondition": "verified_indexing.engines.sizes",
    "Verdict": "verified_indexing.engines.verdict",
    "Z3Encoder": "verified_indexing.engines.z3",
    "compose_relation": "verified_indexing.engines.isl",
    "default_cache": "verified_indexing.engines.cache",
    "exact_range": "verified_indexing.engines.api",
    "get_max_operations": "verified_indexing.engines.isl",
    "image": "verified_indexing.engines.isl",
    "indexing_map_from_isl": "verified_indexing.engines.isl",
    "is_bijective_onto": "verified_indexing.engines.api",
    "is_empty": "verified_indexing.engines.api",
    "is_injective": "verified_indexing.engines.api",
    "is_subset": "verified_indexing.engines.subset",
    "loop_constraint": "verified_indexing.engines.sizes",
    "prove_equal": "verified_indexing.engines.api",
    "prove_expr_equal": "verified_indexing.engines.api",
    "prove_implies": "verified_indexing.engines.api",
    "prove_pointwise_equal": "verified_indexing.engines.subset",
    "prove_relation_equal": "verified_indexing.engines.subset",
    "prove_subset": "verified_indexing.engines.subset",
    "set_max_operations": "verified_indexing.engines.isl",
    "size_condition": "verified_indexing.engines.sizes",
    "to_isl_domain": "verified_indexing.engines.isl",
    "to_isl_map": "verified_indexing.engines.isl",
    "violating_sizes_injective": "verified_indexing.engines.sizes",
    "violating_sizes_subset": "verified_indexing.engines.sizes",
    "with_sizes_in_results": "verified_indexing.engines.sizes",
}
__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from verified_indexing.engines.api import (
        ENGINES,
        exact_range,
        is_bijective_onto,
        is_empty,
        is_injective,
        prove_equal,
        prove_expr_equal,
        prove_implies,
    )
    from verified_indexing.engines.cache import SEMANTICS_VERSION, ProofCache, default_cache
    from verified_indexing.engines.isl import (
        DEFAULT_MAX_OPERATIONS,
        IslLimitExceeded,
        compose_relation,
        get_max_operations,
        image,
        indexing_map_from_isl,
        set_max_operations,
        to_isl_domain,
        to_isl_map,
    )
    from verified_indexing.engines.sizes import (
        SIZE_MAX,
        SizeCondition,
        loop_constraint,
        size_condition,
        violating_sizes_injective,
        violating_sizes_subset,
        with_sizes_in_results,
    )
    from verified_indexing.engines.subset import (
        SUBSET_KINDS,
        is_subset,
        prove_pointwise_equal,
        prove_relation_equal,
        prove_subset,
    )
    from verified_indexing.engines.verdict import Counterexample, Verdict
    from verified_indexing.engines.z3 import Z3Encoder

__all__ = [
    "DEFAULT_MAX_OPERATIONS",
    "ENGINES",
    "IslLimitExceeded",
    "SEMANTICS_VERSION",
    "SIZE_MAX",
    "SizeCondition",
    "SUBSET_KINDS",
    "Counterexample",
    "ProofCache",
    "Verdict",
    "Z3Encoder",
    "compose_relation",
    "default_cache",
    "exact_range",
    "get_max_operations",
    "image",
    "indexing_map_from_isl",
    "is_bijective_onto",
    "is_empty",
    "is_injective",
    "is_subset",
    "prove_equal",
    "prove_expr_equal",
    "prove_implies",
    "prove_pointwise_equal",
    "prove_relation_equal",
    "prove_subset",
    "loop_constraint",
    "set_max_operations",
    "size_condition",
    "to_isl_domain",
    "to_isl_map",
    "violating_sizes_injective",
    "violating_sizes_subset",
    "with_sizes_in_results",
]
