"""The HLO text parser: real dumps, the spec's fragments, every attribute form, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verified_indexing.errors import ParseError
from verified_indexing.hlo.ir import Shape
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module, parse_shape

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT.parent / "shared" / "corpus" / "jax_hlo").glob("*.hlo")) or sorted(
    (ROOT / "examples" / "jax_hlo").glob("*.hlo")
)
SPEC = ROOT.parent / "shared" / "spec" / "xla-indexing-analysis.md"


def test_corpus_is_present() -> None:
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_module_parses(path: Path) -> None:
    text = path.read_text()
    module = parse_module(text, str(path))
    # The header's name and the number of computations, counted independently in the text.
    assert module.name == re.match(r"HloModule (\S+?),", text).group(1)  # type: ignore[union-attr]
    heads = re.findall(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", text, re.MULTILINE)
    assert sorted(module.computations) == sorted(heads)
    assert module.entry.is_entry
    # Every instruction line of the text is an instruction of the module.
    lines = [ln for ln in text.splitlines() if re.match(r"\s+(ROOT )?%?[\w.\-]+ = ", ln)]
    assert sum(len(c.instructions) for c in module.computations.values()) == len(lines)
    for comp in module.computations.values():
        assert sum(i.is_root for i in comp.instructions) == 1
        for inst in comp.instructions:
            # offset points at the instruction's name in the text
            assert text.startswith(inst.name, inst.offset) or text.startswith("%" + inst.name, inst.offset)
            for op in inst.operands:
                assert op in comp.by_name
    if path.name.endswith(".post.hlo"):
        assert module.fusions(), "an optimized dump has fusions"


def test_softmax_post_details() -> None:
    text = (ROOT.parent / "shared" / "corpus" / "jax_hlo" / "softmax.post.hlo").read_text()
    module = parse_module(text)
    assert module.attributes["entry_computation_layout"] == "{(f32[8,128]{1,0})->f32[8,128]{1,0}}"
    assert module.attributes["is_scheduled"] == "true"
    assert module.entry_name == "main.3"
    rw = module.computations["wrapped_reduce-window_computation"].root
    assert rw.opcode == "reduce-window"
    assert rw.operands == ["param_0.5", "param_1.7"]
    assert rw.attributes["window"] == "{size=1x32 stride=1x32}"
    assert rw.attributes["to_apply"] == "%region_0.1"
    assert [(w.size, w.stride) for w in rw.window()] == [(1, 1), (32, 32)]
    c5 = module.entry.by_name["constant.5"]
    assert c5.literal == "-inf" and c5.shape == Shape("f32", ())
    fusion = module.entry.by_name["subtract_exponential_fusion"]
    assert fusion.attributes["kind"] == "kLoop"
    assert fusion.called_computation() == "fused_computation.2"
    assert fusion.attributes["metadata"] == '{op_name="jit(softmax)/exp" stack_frame_id=3}'
    p = module.computations["fused_computation"].parameters()
    assert [(i.name, i.parameter_number, i.shape.dims, i.shape.layout) for i in p] == [
        ("param_0", 0, (8, 128), (1, 0)),
        ("param_1.1", 1, (8,), (0,)),
    ]


EVERY_FORM = """HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)})->(f32[8]{0}, s32[])}, x={a={b}}

region (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY %main (p: f32[8,128]) -> (f32[8], s32[]) {
  %p = f32[8,128]{1,0:T(8,128)} parameter(0), sharding={devices=[2,1]0,1}, frontend_attributes={_x="a,b}c"}
  %c = f32[2,2]{1,0} constant({ {1,2}, {3,4} })
  %c2 = f32[2]{0} constant({1, 2})
  %c3 = pred[] constant(true)
  %c4 = f32[] constant(-inf)
  %u = u64[3]{0} constant({1, 2, 3})
  %h = bf16[2,3]{0,1} parameter(1)
  %t = (f32[8]{0}, s32[], /*index=2*/f32[]) tuple(%c4, %c4, %c4), backend_config="{\\"a\\": 1}"
  %g = s32[] get-tuple-element(%t), index=1
  %i = s32[4,5]{1,0} iota(), iota_dimension=1
  %s = f32[5,3]{1,0} slice(%p), slice={[0:5], [3:128:50]}
  %pd = f32[12,16]{1,0} pad(%c, %c4), padding=1_4_1x4_8_0
  %rw = f32[8,4]{1,0} reduce-window(%p, %c4), window={size=1x32 stride=1x32 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x2},
      to_apply=region
  %cv = f32[1,2]{1,0} convolution(%p, %p), window={size=3}, dim_labels=b01f_01io->b01f, feature_group_count=1
  %d = f32[8,8]{1,0} dot(%p, %p), lhs_contracting_dims={1}, rhs_contracting_dims={1}, backend_config={"x":{"y":[1,2]}}
  %ds = f32[2,3]{1,0} dynamic-slice(%p, %g, %g), dynamic_slice_sizes={2,3}
  %ga = f32[8,1,16]{2,1,0} gather(%p, %g), offset_dims={1,2}, collapsed_slice_dims={},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  ROOT %r = (f32[8]{0}, s32[]) tuple(%c4, %g), metadata={op_name="x{,}" source_file="a.py" source_line=3}
}
"""


def test_every_attribute_form() -> None:
    module = parse_module(EVERY_FORM)
    assert module.attributes["x"] == "{a={b}}"
    assert module.entry_name == "main"
    e = module.entry.by_name
    assert e["p"].shape == Shape("f32", (8, 128), (1, 0))
    assert e["p"].attributes == {"sharding": "{devices=[2,1]0,1}", "frontend_attributes": '{_x="a,b}c"}'}
    assert e["c"].literal == "{ {1,2}, {3,4} }"
    assert e["c2"].literal == "{1, 2}"
    assert e["c3"].literal == "true"
    assert e["c4"].literal == "-inf"
    assert e["u"].shape.element_type == "u64"
    assert e["h"].shape == Shape("bf16", (2, 3), (0, 1)) and e["h"].parameter_number == 1
    t = e["t"].shape
    assert t.is_tuple and [str(s) for s in t.tuple_shapes] == ["f32[8]{0}", "s32[]", "f32[]"]
    assert e["t"].attributes["backend_config"] == '"{\\"a\\": 1}"'
    assert e["g"].tuple_index == 1
    assert e["i"].iota_dimension == 1
    assert [(x.start, x.limit, x.stride) for x in e["s"].slice_dims()] == [(0, 5, 1), (3, 128, 50)]
    assert [(x.low, x.high, x.interior) for x in e["pd"].padding()] == [(1, 4, 1), (4, 8, 0)]
    assert [x.window_dilation for x in e["rw"].window()] == [1, 2]
    assert e["rw"].called_computation() == "region"
    assert e["cv"].attributes["dim_labels"] == "b01f_01io->b01f"
    assert e["cv"].attributes["feature_group_count"] == "1"
    assert e["d"].dot_dims().lhs_contracting == (1,)
    assert e["d"].attributes["backend_config"] == '{"x":{"y":[1,2]}}'
    assert e["ds"].ints("dynamic_slice_sizes") == (2, 3)
    gd = e["ga"].gather_dims()
    assert (gd.offset_dims, gd.start_index_map, gd.index_vector_dim, gd.slice_sizes) == ((1, 2), (0,), 1, (1, 16))
    assert e["r"].is_root and module.entry.root.name == "r"
    assert e["r"].attributes["metadata"] == '{op_name="x{,}" source_file="a.py" source_line=3}'
    assert module.computations["region"].root.opcode == "maximum"


def test_shapes() -> None:
    assert parse_shape("f32[]") == Shape("f32", ())
    assert parse_shape("pred[2, 3]") == Shape("pred", (2, 3))
    assert parse_shape("s32[4,5]{0,1}").minor_to_major() == (0, 1)
    assert parse_shape("f32[4,5]").minor_to_major() == (1, 0)
    assert parse_shape("f32[<=7]").dims == (7,)
    assert parse_shape("()").is_tuple
    nested = parse_shape("((f32[1]), s8[2]{0})")
    assert nested.tuple_shapes[0].tuple_shapes[0] == Shape("f32", (1,))


def _spec_fragments() -> list[str]:
    text = SPEC.read_text()
    return [m.group(1) for m in re.finditer(r"```c\n(.*?)```", text, re.DOTALL) if "parameter(" in m.group(1)]


def test_spec_fragments_parse() -> None:
    fragments = _spec_fragments()
    assert len(fragments) >= 20
    for body in fragments:
        comp = parse_hlo_snippet(body)
        # One instruction per `name = ` in the fragment (multi-line instructions included).
        assert len(comp.instructions) == len(re.findall(r"^\s*(?:ROOT )?\w+ = ", body, re.MULTILINE))


def test_spec_snippet_forms() -> None:
    dus = parse_hlo_snippet(
        "src = s32[20,30] parameter(0)\nupd = s32[5,10] parameter(1)\nof1 = s32[] parameter(2)\n"
        "of2 = s32[] parameter(3)\ndus = s32[20,30] dynamic-update-slice(\n"
        "    s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)\n"
    )
    assert dus.root.name == "dus" and dus.root.operands == ["src", "upd", "of1", "of2"]
    gather = parse_hlo_snippet(
        "operand = f32[33,76,70] parameter(0)\nindices = s32[1806,2] parameter(1)\n"
        "gather = f32[1806,7,8,4] gather(operand, indices),\n  offset_dims={1,2,3},\n"
        "  collapsed_slice_dims={},\n  start_index_map={0,1},\n  index_vector_dim=1,\n  slice_sizes={7,8,4}\n"
    )
    assert gather.root.gather_dims().slice_sizes == (7, 8, 4)
    block = parse_hlo_snippet(
        "f {\n  p0 = f32[1000, 1000] parameter(0)\n"
        "  transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}\n"
        "  ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)\n}\n"
    )
    assert block.name == "f" and block.root.name == "a0"
    assert block.by_name["transpose_p0"].shape.layout == (0, 1)
    rooted = parse_hlo_snippet("p = f32[2] parameter(0)\nROOT n = f32[2] negate(p)\nq = f32[2] abs(p)\n")
    assert rooted.root.name == "n"
    iota = parse_hlo_snippet("iota = f32[2,4] iota(), dimensions={1}")
    assert iota.root.iota_dimension == 1


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("ENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] add(a, c)\n}\n", 3, 21, "operand 'c'"),
        ("ENTRY e {\n  a = f32[2 parameter(0)\n}\n", 2, 13, "',' or ']'"),
        ("ENTRY e {\n  a = f32[2] parameter(0), dims={1\n", 2, 33, "unclosed '{'"),
        # XLA continues a value over lines: the '}' closes dims={1 and the computation stays open.
        ("ENTRY e {\n  a = f32[2] parameter(0), dims={1\n}\n", 2, 33, "unclosed?"),
        ("ENTRY e {\n  a = f32[2] parameter(0) junk\n}\n", 2, 27, "junk"),
        ("ENTRY e {\n  a = f32[2]{0,1} parameter(0)\n}\n", 2, 13, "layout"),
        ("HloModule x\n\nENTRY e {\n  a = f32[2] parameter(0)\n", 3, 1, "not closed"),
        ("HloModule x\nENTRY e {\n  a = f32[2] fusion(), calls=nope\n}\n", 3, 3, "unknown computation"),
        ("HloModule x\nENTRY e {\n  a = f32[2] parameter(0)\n  a = f32[2] parameter(1)\n}\n", 4, 3, "twice"),
        ("HloModule x\nENTRY e {\n  a = f32[2] parameter(0)\n  a f32[2] parameter(1)\n}\n", 4, 5, "'='"),
        ("HloModule x\nENTRY e {\n  a = f32[2] 7op(x)\n}\n", 3, 14, "opcode"),
        ("HloModule x\nENTRY e {\n  a = f32[2] parameter(0), metadata={op_name=\"x}\n}\n", 3, 46, "unterminated"),
        ("HloModule x, =1\n", 1, 14, "attribute name"),
        ("HloModule x\nwhat is this\n", 2, 1, "expected a computation"),
    ],
)
def test_error_positions(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(text, "t.hlo")
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert message in err.message
    assert str(err).startswith(f"t.hlo:{line}:{column}: error:")
    assert "^" in str(err).splitlines()[-1]


def test_snippet_errors() -> None:
    with pytest.raises(ParseError) as info:
        parse_hlo_snippet("a = f32[2] parameter(x)\n")
    assert (info.value.line, info.value.column) == (1, 22)
    with pytest.raises(ParseError):
        parse_hlo_snippet("a = f32[2] broadcast(b c)\n")
    with pytest.raises(ParseError):
        parse_hlo_snippet("   \n")


def test_typed_accessor_errors_are_positioned() -> None:
    comp = parse_hlo_snippet("p = f32[4] parameter(0)\nq = f32[2] pad(p, p), padding=1_x\n")
    with pytest.raises(ParseError) as info:
        comp.root.padding()
    assert info.value.line == 2 and info.value.column == 1


WHILE_LOOP = """HloModule m, frontend_attributes={a="b"}

// a comment line
%cond (p: (s32[], f32[4])) -> pred[] {
  %p = (s32[], f32[4]{0}) parameter(0), parameter_replication={false}
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}, execution_thread="main"

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[4]{0:T(128)S(1)} get-tuple-element(%p), index=1
  %c = f32[4]{0} custom-call(%x), custom_call_target="foo", api_version=API_VERSION_TYPED_FFI, backend_config={}
  ROOT %t = (s32[], f32[4]{0}) tuple(%i, %c), control-predecessors={%x}
}

ENTRY %main () -> f32[4] {
  %z = s32[] constant(0)
  %v = f32[4]{0} constant({1, 2, 3, 4}), statistics={visualizing_index=1,stat-index-1=0.5}
  %init = (s32[], f32[4]{0}) tuple(%z, %v)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  ROOT %r = f32[4]{0} get-tuple-element(%w), index=1
}
"""


def test_control_flow_custom_calls_and_trailing_attributes() -> None:
    module = parse_module(WHILE_LOOP)
    assert list(module.computations) == ["cond", "body", "main"]
    assert module.entry_name == "main"
    w = module.entry.by_name["w"]
    assert w.attributes == {"condition": "%cond", "body": "%body"}
    body = module.computations["body"]
    assert body.by_name["x"].shape.layout == (0,) and body.by_name["x"].tuple_index == 1
    assert body.by_name["c"].attributes["custom_call_target"] == '"foo"'
    assert body.root.attributes["control-predecessors"] == "{%x}"
    assert module.computations["cond"].by_name["p"].shape.tuple_shapes[1].dims == (4,)
    with pytest.raises(ParseError) as info:
        parse_module(WHILE_LOOP.replace('}, execution_thread="main"', "} junk"))
    assert (info.value.line, info.value.column) == (9, 3)
