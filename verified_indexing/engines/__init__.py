"""Proof engines: isl, z3 and enumeration behind one API of four-valued verdicts.

Every question returns a :class:`Verdict` (``proved``, ``refuted``, ``unknown``,
``error``) naming the engine and the time taken; a refutation carries a
:class:`Counterexample` confirmed by the plain evaluator. See ``docs/engines.md``
for the semantics of each question (map equality treats range variables as
existentially quantified, runtime variables as inputs).
"""

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
