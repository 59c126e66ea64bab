"""Legality of index-space transformations, decided semantically and proven.

* :mod:`~verified_indexing.legality.permutation` -- MLIR's syntactic predicates
  (``isPermutation``, ``isProjectedPermutation``, ``inversePermutation``, ``compose``);
* :mod:`~verified_indexing.legality.inverse` -- injectivity, bijectivity and exact
  inverses of indexing maps, with both identities proven;
* :mod:`~verified_indexing.legality.linalg` -- ``linalg`` elementwise fusion
  (generics, and named ops read as their equivalent generics): MLIR's verdict
  and ours, with proof obligations and fused maps;
* :mod:`~verified_indexing.legality.inline` -- CINN's ComputeInline on its
  loop-nest IR, legality checked and the rewrite proven;
* :mod:`~verified_indexing.legality.epilogue` -- reduction epilogue fusion, the
  fused reduction proven by induction, wrong fusions refuted with values;
* :mod:`~verified_indexing.legality.reverse_inline` -- TVM's ReverseComputeInline;
* :mod:`~verified_indexing.legality.tvmscript` -- TVMScript read with ``ast`` as the CINN IR.
"""

from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.epilogue import EpilogueReport, fuse_reduction_epilogue
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
from verified_indexing.legality.reverse_inline import reverse_compute_inline
from verified_indexing.legality.tvmscript import is_tvmscript, parse_tvmscript

__all__ = [
    "EpilogueReport",
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
    "fuse_reduction_epilogue",
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
    "is_tvmscript",
    "mlir_fusable",
    "parse_linalg",
    "parse_linalg_module",
    "parse_program",
    "parse_tvmscript",
    "reverse_compute_inline",
]
