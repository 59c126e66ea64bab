"""Legality of index-space transformations, decided semantically and proven.

* :mod:`~verified_indexing.legality.permutation` -- MLIR's syntactic predicates
  (``isPermutation``, ``isProjectedPermutation``, ``inversePermutation``, ``compose``);
* :mod:`~verified_indexing.legality.inverse` -- injectivity, bijectivity and exact
  inverses of indexing maps, with both identities proven;
* :mod:`~verified_indexing.legality.linalg` -- ``linalg`` elementwise fusion
  (generics, and named ops read as their equivalent generics): MLIR's verdict
  and ours, with proof obligations and fused maps;
* :mod:`~verified_indexing.legality.inline` -- CINN's ComputeInline on its
  loop-nest IR, legality checked and the rewrite proven.
"""

from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.inline import InlineCheck, InlineReport, compute_inline, inline_all, inline_candidates
from verified_indexing.legality.inverse import InverseResult, inverse, is_bijective, is_injective
from verified_indexing.legality.linalg import (
    FusionReport,
    MlirVerdict,
    check_fusion,
    fused_generic_text,
    fusion_candidates,
    fusion_pairs,
    mlir_fusable,
)
from verified_indexing.legality.linalg_ir import GenericOp, LinalgModule, SkippedOp, parse_linalg, parse_linalg_module
from verified_indexing.legality.permutation import (
    compose,
    inverse_permutation,
    is_permutation,
    is_projected_permutation,
)

__all__ = [
    "FusionReport",
    "GenericOp",
    "InlineCheck",
    "InlineReport",
    "InverseResult",
    "LinalgModule",
    "MlirVerdict",
    "SkippedOp",
    "check_fusion",
    "compose",
    "compute_inline",
    "format_program",
    "fused_generic_text",
    "fusion_candidates",
    "fusion_pairs",
    "inline_all",
    "inline_candidates",
    "inverse",
    "inverse_permutation",
    "is_bijective",
    "is_injective",
    "is_permutation",
    "is_projected_permutation",
    "mlir_fusable",
    "parse_linalg",
    "parse_linalg_module",
    "parse_program",
]
