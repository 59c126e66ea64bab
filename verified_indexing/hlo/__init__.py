"""HLO indexing analysis: text parser, per-op indexing maps, fusion composition.

* :func:`parse_module`, :func:`parse_hlo_snippet` -- HLO text as XLA and JAX print it;
* :func:`output_to_input`, :func:`input_to_output` -- one op's maps (:mod:`.ops`);
* :func:`output_to_input_maps`, :func:`input_to_output_maps`, :func:`analyze_module` --
  a computation's maps composed along every path, simplified and proven (:mod:`.fusion`).
"""

from verified_indexing.hlo.fusion import (
    AccessMap,
    ComputationIndexing,
    TargetIndexing,
    UnsupportedOp,
    analyze_module,
    input_to_output_maps,
    lift_origins,
    output_to_input_maps,
    trace_origins,
)
from verified_indexing.hlo.ir import Computation, Instruction, Module, Shape
from verified_indexing.hlo.ops import (
    UNSUPPORTED_OPCODES,
    RuntimeOrigin,
    constant_scalar,
    input_to_output,
    output_to_input,
    supported_opcodes,
)
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module, parse_shape

__all__ = [
    "AccessMap",
    "Computation",
    "ComputationIndexing",
    "Instruction",
    "Module",
    "RuntimeOrigin",
    "Shape",
    "TargetIndexing",
    "UNSUPPORTED_OPCODES",
    "UnsupportedOp",
    "analyze_module",
    "constant_scalar",
    "input_to_output",
    "input_to_output_maps",
    "lift_origins",
    "output_to_input",
    "output_to_input_maps",
    "parse_hlo_snippet",
    "parse_module",
    "parse_shape",
    "supported_opcodes",
    "trace_origins",
]
