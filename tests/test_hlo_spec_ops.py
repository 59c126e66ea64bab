"""Every per-op example of spec/xla-indexing-analysis.md gives exactly the document's maps.

The HLO fragments and the map texts below are copied from the document (layout
typos included: a trailing comma in the transpose map, missing commas in the
iota map and in reshape example 2). Each fragment is parsed with the HLO parser;
the maps are compared with ``==`` (structural equality of canonical maps).
"""

from __future__ import annotations

import pytest

from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.ops import (
    RuntimeOrigin,
    from_scalar_map,
    input_to_output,
    output_to_input,
    to_scalar_map,
)
from verified_indexing.hlo.parser import parse_hlo_snippet

ELEMENTWISE = """
  p0 = f32[10, 20] parameter(0)
  p1 = f32[10, 20] parameter(1)
  output = f32[10, 20] add(p0, p1)
"""

BROADCAST = """
p0 = f32[20] parameter(0)
bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
"""

IOTA = """
iota = f32[2,4] iota(), dimensions={1}
"""

DYNAMIC_SLICE = """
src = s32[2, 2, 258] parameter(0)
of1 = s32[] parameter(1)
of2 = s32[] parameter(2)
of3 = s32[] parameter(3)
ds = s32[1, 2, 32] dynamic-slice(src, of1, of2, of3), dynamic_slice_sizes={1, 2, 32}
"""

DYNAMIC_UPDATE_SLICE = """
src = s32[20,30] parameter(0)
upd = s32[5,10] parameter(1)
of1 = s32[] parameter(2)
of2 = s32[] parameter(3)
dus = s32[20,30] dynamic-update-slice(
    s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)
"""

GATHER = """
operand = f32[33,76,70] parameter(0)
indices = s32[1806,2] parameter(1)
gather = f32[1806,7,8,4] gather(operand, indices),
  offset_dims={1,2,3},
  collapsed_slice_dims={},
  start_index_map={0,1},
  index_vector_dim=1,
  slice_sizes={7,8,4}
"""

TRANSPOSE = """
p0 = f32[3, 12288, 6, 128] parameter(0)
transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}
"""

REVERSE = """
p0 = f32[1, 17, 9, 9] parameter(0)
reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}
"""

REDUCE = """
p0 = f32[256,10] parameter(0)
p0_init = f32[] constant(-inf)
p1 = s32[256,10] parameter(1)
p1_init = s32[] constant(0)
out = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init),
  dimensions={0}, to_apply=max
"""

SLICE = """
p0 = f32[10, 20, 50] parameter(0)
slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0),
  slice={[5:10:1], [3:20:7], [0:50:2]}
"""

COLLAPSE = """
p0 = f32[4,8] parameter(0)
reshape = f32[32] reshape(p0)
"""

EXPAND = """
p0 = f32[32] parameter(0)
reshape = f32[4, 8] reshape(p0)
"""

GENERIC_1 = """
p0 = f32[4,8] parameter(0)
reshape = f32[2, 4, 4] reshape(p0)
"""

GENERIC_2 = """
p0 = f32[4, 8, 12] parameter(0)
reshape = f32[32, 3, 4] reshape(p0)
"""

CONCATENATE = """
p0 = f32[2, 5, 7] parameter(0)
p1 = f32[2, 11, 7] parameter(1)
p2 = f32[2, 17, 7] parameter(2)
ROOT output = f32[2, 33, 7] concatenate(f32[2, 5, 7] p0, f32[2, 11, 7] p1, f32[2, 17, 7] p2), dimensions={1}
"""

DOT = """
p0 = f32[4, 128, 256] parameter(0)
p1 = f32[4, 256, 64] parameter(1)
output = f32[4, 128, 64] dot(p0, p1),
  lhs_batch_dims={0}, rhs_batch_dims={0},
  lhs_contracting_dims={2}, rhs_contracting_dims={1}
"""

PAD = """
p0 = f32[4, 4] parameter(0)
p1 = f32[] parameter(1)
pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
"""

REDUCE_WINDOW = """
c_inf = f32[] constant(-inf)
p0 = f32[1024, 514] parameter(0)
outpu = f32[1024, 3] reduce-window(p0, c_inf),
  window={size=1x512 pad=0_0x0_0}, to_apply=max
"""

# (fragment, direction, output or operand index, position in the returned list, the document's map)
CASES: list[tuple[str, str, str, int, int, str]] = [
    ("elementwise out->p0", ELEMENTWISE, "o2i", 0, 0, """
(d0, d1) -> (d0, d1),
domain:
d0 in [0, 9],
d1 in [0, 19]
"""),
    ("elementwise p0->out", ELEMENTWISE, "i2o", 0, 0, """
(d0, d1) -> (d0, d1),
domain:
d0 in [0, 9],
d1 in [0, 19]
"""),
    ("broadcast out->in", BROADCAST, "o2i", 0, 0, """
(d0, d1, d2) -> (d1),
domain:
d0 in [0, 9],
d1 in [0, 19],
d2 in [0, 29]
"""),
    ("broadcast in->out", BROADCAST, "i2o", 0, 0, """
(d0)[s0, s1] -> (s0, d0, s1),
domain:
d0 in [0, 19],
s0 in [0, 9],
s1 in [0, 29]
"""),
    ("dynamic-slice ds->src", DYNAMIC_SLICE, "o2i", 0, 0, """
(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2),
domain:
d0 in [0, 0],
d1 in [0, 1],
d2 in [0, 31],
rt0 in [0, 1],
rt1 in [0, 0],
rt2 in [0, 226]
"""),
    *[
        (f"dynamic-slice ds->of{k}", DYNAMIC_SLICE, "o2i", 0, k, """
(d0, d1, d2) -> (),
domain:
d0 in [0, 0],
d1 in [0, 1],
d2 in [0, 31]
""")
        for k in (1, 2, 3)
    ],
    ("dynamic-update-slice dus->src", DYNAMIC_UPDATE_SLICE, "o2i", 0, 0, """
(d0, d1) -> (d0, d1),
domain:
d0 in [0, 19],
d1 in [0, 29]
"""),
    ("dynamic-update-slice dus->upd", DYNAMIC_UPDATE_SLICE, "o2i", 0, 1, """
(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1),
domain:
d0 in [0, 19],
d1 in [0, 29],
rt0 in [0, 15],
rt1 in [0, 20]
"""),
    *[
        (f"dynamic-update-slice dus->of{k - 1}", DYNAMIC_UPDATE_SLICE, "o2i", 0, k, """
(d0, d1) -> (),
domain:
d0 in [0, 19],
d1 in [0, 29]
""")
        for k in (2, 3)
    ],
    ("gather ->operand", GATHER, "o2i", 0, 0, """
(d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3),
domain:
d0 in [0, 1805],
d1 in [0, 6],
d2 in [0, 7],
d3 in [0, 3],
rt0 in [0, 26],
rt1 in [0, 68]
"""),
    ("gather ->indices", GATHER, "o2i", 0, 1, """
(d0, d1, d2, d3)[s0] -> (d0, s0),
domain:
d0 in [0, 1805],
d1 in [0, 6],
d2 in [0, 7],
d3 in [0, 3],
s0 in [0, 1]
"""),
    ("transpose out->in", TRANSPOSE, "o2i", 0, 0, """
(d0, d1, d2, d3) -> (d0, d3, d1, d2),
domain:
d0 in [0, 2],
d1 in [0, 5],
d2 in [0, 127],
d3 in [0, 12287],
"""),
    ("transpose in->out", TRANSPOSE, "i2o", 0, 0, """
(d0, d1, d2, d3) -> (d0, d2, d3, d1),
domain:
d0 in [0, 2],
d1 in [0, 12287],
d2 in [0, 5],
d3 in [0, 127]
"""),
    ("reverse out->in", REVERSE, "o2i", 0, 0, """
(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3),
domain:
d0 in [0, 0],
d1 in [0, 16],
d2 in [0, 8],
d3 in [0, 8]
"""),
    ("reverse in->out", REVERSE, "i2o", 0, 0, """
(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3),
domain:
d0 in [0, 0],
d1 in [0, 16],
d2 in [0, 8],
d3 in [0, 8]
"""),
    ("reduce out[0]->p0", REDUCE, "o2i", 0, 0, """
(d0)[s0] -> (s0, d0),
domain:
d0 in [0, 9],
s0 in [0, 255]
"""),
    ("reduce out[0]->p0_init", REDUCE, "o2i", 0, 2, """
(d0) -> (),
domain:
d0 in [0, 9]
"""),
    ("reduce p0->out[0]", REDUCE, "i2o", 0, 0, """
(d0, d1) -> (d1),
domain:
d0 in [0, 255],
d1 in [0, 9]
"""),
    ("reduce p0_init->out[0]", REDUCE, "i2o", 2, 0, """
()[s0] -> (s0),
domain:
s0 in [0, 9]
"""),
    ("slice out->in", SLICE, "o2i", 0, 0, """
(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2),
domain:
d0 in [0, 4],
d1 in [0, 2],
d2 in [0, 24]
"""),
    ("slice in->out", SLICE, "i2o", 0, 0, """
(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2),
domain:
d0 in [5, 9],
d1 in [3, 17],
d2 in [0, 48],
(d1 - 3) mod 7 in [0, 0],
d2 mod 2 in [0, 0]
"""),
    ("collapse out->in", COLLAPSE, "o2i", 0, 0, """
(d0) -> (d0 floordiv 8, d0 mod 8),
domain:
d0 in [0, 31]
"""),
    ("collapse in->out", COLLAPSE, "i2o", 0, 0, """
(d0, d1) -> (d0 * 8 + d1),
domain:
d0 in [0, 3],
d1 in [0, 7]
"""),
    ("expand out->in", EXPAND, "o2i", 0, 0, """
(d0, d1) -> (d0 * 8 + d1),
domain:
d0 in [0, 3],
d1 in [0, 7]
"""),
    ("expand in->out", EXPAND, "i2o", 0, 0, """
(d0) -> (d0 floordiv 8, d0 mod 8),
domain:
d0 in [0, 31]
"""),
    ("generic reshape 1 out->in", GENERIC_1, "o2i", 0, 0, """
(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4),
domain:
d0 in [0, 1],
d1 in [0, 3],
d2 in [0, 3]
"""),
    ("generic reshape 1 in->out", GENERIC_1, "i2o", 0, 0, """
(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4),
domain:
d0 in [0, 3],
d1 in [0, 7]
"""),
    ("generic reshape 2 out->in", GENERIC_2, "o2i", 0, 0, """
(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2),
domain:
d0 in [0, 31],
d1 in [0, 2]
d2 in [0, 3]
"""),
    ("generic reshape 2 in->out", GENERIC_2, "i2o", 0, 0, """
(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4),
domain:
d0 in [0, 3],
d1 in [0, 7],
d2 in [0, 11]
"""),
    ("concatenate output->p0", CONCATENATE, "o2i", 0, 0, """
(d0, d1, d2) -> (d0, d1, d2),
domain:
d0 in [0, 1],
d1 in [0, 4],
d2 in [0, 6]
"""),
    ("concatenate output->p1", CONCATENATE, "o2i", 0, 1, """
(d0, d1, d2) -> (d0, d1 - 5, d2),
domain:
d0 in [0, 1],
d1 in [5, 15],
d2 in [0, 6]
"""),
    ("concatenate output->p2", CONCATENATE, "o2i", 0, 2, """
(d0, d1, d2) -> (d0, d1 - 16, d2),
domain:
d0 in [0, 1],
d1 in [16, 32],
d2 in [0, 6]
"""),
    ("concatenate p0->output", CONCATENATE, "i2o", 0, 0, """
(d0, d1, d2) -> (d0, d1, d2),
domain:
d0 in [0, 1],
d1 in [0, 4],
d2 in [0, 6]
"""),
    ("concatenate p1->output", CONCATENATE, "i2o", 1, 0, """
(d0, d1, d2) -> (d0, d1 + 5, d2),
domain:
d0 in [0, 1],
d1 in [0, 10],
d2 in [0, 6]
"""),
    ("concatenate p2->output", CONCATENATE, "i2o", 2, 0, """
(d0, d1, d2) -> (d0, d1 + 16, d2),
domain:
d0 in [0, 1],
d1 in [0, 16],
d2 in [0, 6]
"""),
    ("dot output->p0", DOT, "o2i", 0, 0, """
(d0, d1, d2)[s0] -> (d0, d1, s0),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 63],
s0 in [0, 255]
"""),
    ("dot output->p1", DOT, "o2i", 0, 1, """
(d0, d1, d2)[s0] -> (d0, s0, d2),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 63],
s0 in [0, 255]
"""),
    ("dot p0->output", DOT, "i2o", 0, 0, """
(d0, d1, d2)[s0] -> (d0, d1, s0),
domain:
d0 in [0, 3],
d1 in [0, 127],
d2 in [0, 255],
s0 in [0, 63]
"""),
    ("pad output->p0", PAD, "o2i", 0, 0, """
(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4),
domain:
d0 in [1, 7],
d1 in [4, 7],
(d0 - 1) mod 2 in [0, 0]
"""),
    ("pad output->p1", PAD, "o2i", 0, 1, """
(d0, d1) -> (),
domain:
d0 in [0, 11],
d1 in [0, 15]
"""),
    ("reduce-window output->p0", REDUCE_WINDOW, "o2i", 0, 0, """
(d0, d1)[s0] -> (d0, d1 + s0),
domain:
d0 in [0, 1023],
d1 in [0, 2],
s0 in [0, 511]
"""),
    ("reduce-window output->c_inf", REDUCE_WINDOW, "o2i", 0, 1, """
(d0, d1) -> (),
domain:
d0 in [0, 1023],
d1 in [0, 2]
"""),
]


def _maps(comp: Computation, direction: str, index: int) -> list[IndexingMap]:
    root = comp.root
    if direction == "o2i":
        return output_to_input(root, comp, index)
    return input_to_output(root, comp, index)


@pytest.mark.parametrize(("label", "hlo", "direction", "index", "position", "expected"), CASES, ids=[c[0] for c in CASES])
def test_spec_example(label: str, hlo: str, direction: str, index: int, position: int, expected: str) -> None:
    comp = parse_hlo_snippet(hlo)
    maps = _maps(comp, direction, index)
    assert maps[position] == parse_indexing_map(expected.strip())


def test_map_counts_follow_the_operands() -> None:
    # One map per operand (output->input), one per output (input->output).
    assert len(_maps(parse_hlo_snippet(DYNAMIC_SLICE), "o2i", 0)) == 4
    assert len(_maps(parse_hlo_snippet(DYNAMIC_UPDATE_SLICE), "o2i", 0)) == 4
    assert len(_maps(parse_hlo_snippet(REDUCE), "o2i", 1)) == 4
    assert len(_maps(parse_hlo_snippet(REDUCE), "i2o", 1)) == 2
    assert len(_maps(parse_hlo_snippet(CONCATENATE), "o2i", 0)) == 3


def test_reduce_second_output_reads_every_input() -> None:
    # Variadic reduce: out[1] reads p0 and p1 through the same reduction map.
    comp = parse_hlo_snippet(REDUCE)
    maps = output_to_input(comp.root, comp, 1)
    spec_map = parse_indexing_map("(d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]")
    assert maps[0] == maps[1] == spec_map
    assert maps[2] == maps[3] == parse_indexing_map("(d0) -> (), domain: d0 in [0, 9]")


def test_iota_maps() -> None:
    # Iota has no operand (no maps); the document's iota maps are those between
    # the output and an index-free input: to_scalar_map / from_scalar_map.
    comp = parse_hlo_snippet(IOTA)
    assert output_to_input(comp.root, comp) == []
    shape = comp.root.shape.dims
    assert to_scalar_map(shape) == parse_indexing_map("""(d0, d1) -> ()
domain:
d0 in [0, 1]
d1 in [0, 3]""")
    assert from_scalar_map(shape) == parse_indexing_map("""()[s0, s1] -> (s0, s1)
domain:
s0 in [0, 1]
s1 in [0, 3]""")


def test_runtime_variables_name_their_operands() -> None:
    comp = parse_hlo_snippet(DYNAMIC_SLICE)
    m = output_to_input(comp.root, comp)[0]
    origins = [v.origin for v in m.rt_vars]
    assert all(isinstance(o, RuntimeOrigin) for o in origins)
    assert [o.operand_name for o in origins if isinstance(o, RuntimeOrigin)] == ["of1", "of2", "of3"]
    assert [o.operand_index for o in origins if isinstance(o, RuntimeOrigin)] == [1, 2, 3]
    for o in origins:
        assert isinstance(o, RuntimeOrigin)
        assert o.map == parse_indexing_map("(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]")

    comp = parse_hlo_snippet(GATHER)
    m = output_to_input(comp.root, comp)[0]
    expected = ["(d0, d1, d2, d3) -> (d0, 0)", "(d0, d1, d2, d3) -> (d0, 1)"]
    box = ", domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]"
    for v, text in zip(m.rt_vars, expected):
        assert isinstance(v.origin, RuntimeOrigin)
        assert (v.origin.operand_index, v.origin.operand_name) == (1, "indices")
        assert v.origin.map == parse_indexing_map(text + box)


# The document prints `p1 -> output` of the dot example as `(d0, s0, d1)`: d1 is
# p1's contracting dimension (size 256), so that map sends p1[0, 255, 0] to the
# output index (0, 0, 255), outside f32[4, 128, 64]. The rhs element (b, k, n)
# goes to every output (b, m, n): the last result is d2. We keep the correct map.
DOT_P1_TO_OUTPUT_IN_DOCUMENT = """
(d0, d1, d2)[s0] -> (d0, s0, d1),
domain:
d0 in [0, 3],
d1 in [0, 255],
d2 in [0, 63],
s0 in [0, 127]
"""


def test_dot_rhs_input_to_output_corrects_the_document() -> None:
    comp = parse_hlo_snippet(DOT)
    documented = parse_indexing_map(DOT_P1_TO_OUTPUT_IN_DOCUMENT.strip())
    out_shape = comp.root.shape.dims
    # The document's map leaves the output's bounds: it cannot be right.
    assert any(
        not all(0 <= x < n for x, n in zip(documented.evaluate(d, s), out_shape))
        for d, s in [((0, 255, 0), (0,))]
    )
    ours = input_to_output(comp.root, comp, 1)[0]
    assert ours == parse_indexing_map(DOT_P1_TO_OUTPUT_IN_DOCUMENT.replace("(d0, s0, d1)", "(d0, s0, d2)").strip())
