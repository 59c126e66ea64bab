"""Per-op indexing: unsupported ops are named, malformed instructions get positioned
errors, and the small ops (tuple, get-tuple-element, bitcast layouts, reshape
corner cases) give the maps their definitions imply."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.errors import ParseError, UnsupportedError
from verified_indexing.hlo.ir import Computation, Instruction, Shape
from verified_indexing.hlo.ops import input_to_output, output_to_input, supported_opcodes
from verified_indexing.hlo.parser import parse_hlo_snippet
from verified_indexing.hlo.reshape import reshape_exprs


def _root(text: str) -> tuple[Instruction, Computation]:
    comp = parse_hlo_snippet(text)
    return comp.root, comp


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # sort, scatter, batch-group convolution, reduce-window reversal and pass-through custom-calls
        # are modeled now: tests/test_hlo_ops_extended.py.
        # select-and-scatter is modeled too (test_hlo_ops_extended.py::test_select_and_scatter).
        # Every gather form (collapsed dims, batching dims, implicit index vector) is modeled now:
        # test_hlo_ops_oracle.py::test_general_gather and ::test_gather_with_batching_dims.
        ("p0 = f32[<=8,16] parameter(0)\nn = f32[<=8,16] negate(p0)", "dynamic shape"),
        ("p0 = f32[4,4] parameter(0)\nb = bf16[4,8] bitcast(p0)", "element widths"),
        ("p0 = f32[4] parameter(0)\nb = x7[4,4] bitcast-convert(p0)", "unknown width"),
        ("p0 = f32[8] parameter(0)\ns = (f32[8], u32[]) custom-call(p0), custom_call_target=\"x\"", "custom-call"),
    ],
)
def test_unsupported_ops_are_named(text: str, needle: str) -> None:
    inst, comp = _root(text)
    with pytest.raises(UnsupportedError) as info:
        output_to_input(inst, comp)
    assert inst.opcode in str(info.value) and needle in str(info.value)
    with pytest.raises(UnsupportedError):
        input_to_output(inst, comp, 0)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("p0 = f32[2,3] parameter(0)\nt = f32[3,2] transpose(p0), dimensions={0,0}", "permutation"),
        ("p0 = f32[8] parameter(0)\ns = f32[8] select-and-scatter(p0), window={size=2}", "the source and the init"),
        ("p0 = f32[10] parameter(0)\ns = f32[4] slice(p0), slice={[0:10:2]}", "output dimension"),
        # [3:32:2] takes 3, 5, ..., 31: 15 elements (rounded up, not down)
        ("p0 = f32[32] parameter(0)\ns = f32[14] slice(p0), slice={[3:32:2]}", "is 14, the slice gives 15"),
        ("p0 = f32[4,8] parameter(0)\nr = f32[30] reshape(p0)", "element counts"),
        ("p0 = f32[4] parameter(0)\nb = f32[4,3] broadcast(p0), dimensions={1}", "does not match"),
        ("p0 = f32[4] parameter(0)\nv = f32[] parameter(1)\np = f32[9] pad(p0, v), padding=1_1_2", "padding gives"),
        ("p0 = f32[4,5] parameter(0)\np1 = f32[4,5] parameter(1)\nc = f32[4,9] concatenate(p0, p1), dimensions={1}",
         "operands give"),
        ("p0 = f32[4,5] parameter(0)\np1 = f32[6,7] parameter(1)\nd = f32[4,6] dot(p0, p1), "
         "lhs_contracting_dims={1}, rhs_contracting_dims={1}", "differ"),
        ("p0 = f32[4,5] parameter(0)\np1 = f32[4,6] parameter(1)\na = f32[4,5] add(p0, p1)", "operand 1"),
        # Repeated dimensions: XLA's verifier rejects them; no reading is guessed.
        ("p0 = f32[4,3] parameter(0)\nr = f32[4,3] reverse(p0), dimensions={0,0}", "distinct"),
        ("p0 = f32[4,3] parameter(0)\nc = f32[] constant(0)\nr = f32[3] reduce(p0, c), dimensions={0,0}, "
         "to_apply=add", "distinct"),
    ],
)
def test_malformed_instructions_get_positioned_errors(text: str, needle: str) -> None:
    inst, comp = _root(text)
    with pytest.raises(ParseError) as info:
        output_to_input(inst, comp)
    err = info.value
    assert needle in err.message and inst.name in err.message
    # The error points at the instruction's line.
    assert err.line == text.count("\n", 0, text.index(f"{inst.name} =")) + 1


def test_bad_indices_are_errors_not_tracebacks() -> None:
    inst, comp = _root("p0 = f32[4] parameter(0)\nn = f32[4] negate(p0)")
    with pytest.raises(ParseError):
        output_to_input(inst, comp, 1)
    with pytest.raises(ParseError):
        input_to_output(inst, comp, 1)
    param = comp.by_name["p0"]
    assert output_to_input(param, comp) == []
    with pytest.raises(ParseError):
        input_to_output(param, comp, 0)


def test_tuple_and_get_tuple_element() -> None:
    comp = parse_hlo_snippet(
        "p0 = f32[3] parameter(0)\np1 = s32[2,2] parameter(1)\nt = (f32[3], s32[2,2]) tuple(p0, p1)\n"
        "g = s32[2,2] get-tuple-element(t), index=1"
    )
    t, g = comp.by_name["t"], comp.by_name["g"]
    ident = parse_indexing_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 1]")
    assert output_to_input(g, comp) == [ident]
    assert input_to_output(g, comp, 0) == [ident]
    # Tuple element 1 reads operand 1 only; operand 0 goes to element 0 only.
    assert output_to_input(t, comp, 1) == [IndexingMap.known_empty(), ident]
    assert input_to_output(t, comp, 0) == [IndexingMap.identity([3]), IndexingMap.known_empty()]


def test_bitcast_follows_the_layouts() -> None:
    # f32[3,4]{0,1} is stored column-major: physical element p holds logical
    # (p mod 3, p floordiv 3); a bitcast to f32[12] reads exactly that.
    inst, comp = _root("p0 = f32[3,4]{0,1} parameter(0)\nb = f32[12]{0} bitcast(p0)")
    assert output_to_input(inst, comp) == [
        parse_indexing_map("(d0) -> (d0 mod 3, d0 floordiv 3), domain: d0 in [0, 11]")
    ]
    assert input_to_output(inst, comp, 0) == [
        parse_indexing_map("(d0, d1) -> (d0 + d1 * 3), domain: d0 in [0, 2], d1 in [0, 3]")
    ]
    # A pure layout change with the same physical order is a transpose.
    inst, comp = _root("p0 = f32[2,5]{1,0} parameter(0)\nb = f32[5,2]{0,1} bitcast(p0)")
    assert output_to_input(inst, comp) == [parse_indexing_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 4], d1 in [0, 1]")]


@pytest.mark.parametrize(
    ("src", "dst"),
    [([6, 35, 4], [10, 21, 4]), ([2, 3, 5, 7], [7, 5, 3, 2]), ([12, 10], [4, 30]), ([1, 24, 1], [2, 1, 12]),
     ([8, 9], [72]), ([72], [3, 4, 6]), ([5, 1, 1], [1, 5])],
)
def test_reshape_exprs_agree_with_numpy(src: list[int], dst: list[int]) -> None:
    exprs = reshape_exprs(src, dst)
    flat = np.arange(int(np.prod(src))).reshape(src)
    moved = flat.reshape(dst)
    for idx in itertools.product(*(range(n) for n in dst)):
        at = tuple(e.evaluate(idx) for e in exprs)
        assert flat[at] == moved[idx]


def test_zero_element_reshape_is_known_empty() -> None:
    inst, comp = _root("p0 = f32[0,4] parameter(0)\nr = f32[0] reshape(p0)")
    assert output_to_input(inst, comp) == [IndexingMap.known_empty()]


def test_supported_opcodes_cover_the_issue() -> None:
    need = {
        "add", "select", "compare", "exponential", "convert", "copy", "broadcast", "iota", "constant", "parameter",
        "dynamic-slice", "dynamic-update-slice", "gather", "transpose", "reverse", "reduce", "slice", "reshape",
        "bitcast", "concatenate", "dot", "pad", "reduce-window", "get-tuple-element", "tuple", "convolution",
    }
    assert need <= supported_opcodes()


def test_spec_layout_instructions_parse_and_map() -> None:
    # Unused-shape instructions with layouts: the spec fusion's transpose.
    inst, comp = _root("p0 = f32[1000, 1000] parameter(0)\nt = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}")
    assert output_to_input(inst, comp) == [
        parse_indexing_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]")
    ]


def test_reduce_window_with_padding_keeps_the_bounds_constraint() -> None:
    # maxpool from the corpus: size 3, stride 2, pad 1_1 on a 10-wide input.
    inst, comp = _root(
        "x = f32[10] parameter(0)\ni = f32[] constant(0)\n"
        "r = f32[5] reduce-window(x, i), window={size=3 stride=2 pad=1_1}, to_apply=max"
    )
    m = output_to_input(inst, comp)[0]
    reads = {o: {m.evaluate(d, s)[0] for d, s, _ in m.domain_points() if d == (o,)} for o in range(5)}
    assert reads == {o: {x for x in range(2 * o - 1, 2 * o + 2) if 0 <= x < 10} for o in range(5)}


def test_output_shapes_from_instruction_list() -> None:
    # Building IR by hand (no parser) works the same.
    p0 = Instruction("p0", "parameter", Shape("f32", (4,)), parameter_number=0)
    r = Instruction("r", "reverse", Shape("f32", (4,)), ["p0"], {"dimensions": "{0}"}, is_root=True)
    comp = Computation("c", [p0, r])
    assert output_to_input(r, comp) == [parse_indexing_map("(d0) -> (-d0 + 3), domain: d0 in [0, 3]")]
