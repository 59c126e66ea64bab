"""TVM itself, driven and validated (translation validation of TVM's schedule primitives).

* :mod:`~verified_indexing.tvm.equivalence` -- whether one loop-nest program
  computes every output of another (proved for every size, refuted with an
  interpreter-checked witness, or unknown with the reason); needs no TVM;
* :mod:`~verified_indexing.tvm.driver` -- TVM's own primitives applied through
  ``tvm.s_tir.Schedule`` and their results validated (TVM is the optional ``tvm``
  extra, imported lazily).

TVM is imported only when a driver function runs (``import verified_indexing.tvm``
works without it).
"""

from verified_indexing.tvm.driver import (
    PRIMITIVES,
    StepValidation,
    TvmNotInstalled,
    tvm_available,
    validate,
    validate_primitive,
)
from verified_indexing.tvm.equivalence import EquivalenceReport, check_equivalence

__all__ = ["PRIMITIVES", "EquivalenceReport", "StepValidation", "TvmNotInstalled", "check_equivalence",
           "tvm_available", "validate", "validate_primitive"]
