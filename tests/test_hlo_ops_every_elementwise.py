"""Every elementwise opcode of XLA (its HloOpcode list: the element-wise unary, binary and ternary
functions of operation_semantics, ``map``, ``stochastic-convert``, ``reduce-precision``,
``bitcast-convert`` at every width) against the numpy interpreter of HLO (tests/hlo_oracle.py), both
directions, with array and scalar operands; exact (no over-approximation). The list is written here
from XLA's opcode list, not taken from the project's table, so an opcode the table forgets fails."""

from __future__ import annotations

import pytest
from test_hlo_ops_oracle import _shape, build, check

from verified_indexing.hlo.ops import over_approximation

UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "ceil", "clz", "convert", "copy", "cosh", "cosine",
         "count-leading-zeros", "erf", "exponential", "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one",
         "logistic", "negate", "not", "popcnt", "real", "round-nearest-afz", "round-nearest-even", "rsqrt", "sign",
         "sine", "sinh", "sqrt", "tan", "tanh")
BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "or", "power", "remainder",
          "shift-left", "shift-right-arithmetic", "shift-right-logical", "stochastic-convert", "subtract", "xor")
TERNARY = ("clamp", "select")


def _attrs(opcode: str) -> dict[str, str]:
    return {"compare": {"direction": "LT"}, "reduce-precision": {"exponent_bits": "5", "mantissa_bits": "10"},
            "map": {"dimensions": "{0,1}", "to_apply": "f"}}.get(opcode, {})


@pytest.mark.parametrize(("opcode", "arity"), [*((o, 1) for o in (*UNARY, "reduce-precision")),
                                                 *((o, 2) for o in (*BINARY, "compare")), *((o, 3) for o in TERNARY),
                                                 ("map", 1), ("map", 2), ("map", 3)])
def test_every_elementwise_opcode_reads_its_element(opcode: str, arity: int) -> None:
    for scalars in range(arity):  # the first ``scalars`` operands scalar (broadcast), when the op allows it
        if scalars and opcode not in ("select", "clamp", "add", "multiply", "map", "compare"):
            break
        operands = [_shape([]) if k < scalars else _shape([2, 3]) for k in range(arity)]
        inst, comp = build(opcode, _shape([2, 3]), operands, _attrs(opcode))
        check(inst, comp)
        assert all(over_approximation(inst, comp, k) is None for k in range(arity)), opcode


@pytest.mark.parametrize(("src", "out", "src_dims", "out_dims"), [
    ("u32", "f32", [2, 3], [2, 3]),  # equal widths: elementwise
    ("f32", "u8", [2, 3], [2, 3, 4]),  # narrower: a minor dimension of 4 parts
    ("u8", "f32", [2, 3, 4], [2, 3]),  # wider: each element made of 4
    ("f64", "s16", [3], [3, 4]),
])
def test_bitcast_convert_at_every_width(src: str, out: str, src_dims: list[int], out_dims: list[int]) -> None:
    inst, comp = build("bitcast-convert", _shape(out_dims, out), [_shape(src_dims, src)])
    check(inst, comp)
    assert over_approximation(inst, comp, 0) is None
