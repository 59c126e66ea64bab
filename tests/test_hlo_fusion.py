"""Fusion analysis: the spec's fusion examples, runtime-variable origins, dedup
proofs, unsupported ops, and the composed maps against an independent oracle
(a numpy interpreter run through the whole computation, tests/hlo_oracle.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import hlo_oracle
import numpy as np
import pytest

from verified_indexing.hlo.fusion import (
    ComputationIndexing,
    input_to_output_maps,
    output_to_input_maps,
    topological_order,
)
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.ops import RuntimeOrigin
from verified_indexing.hlo.parser import parse_hlo_snippet
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.syntax import parse_indexing_map

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT.parent / "shared" / "spec" / "xla-indexing-analysis.md"


def _spec_section(title: str) -> str:
    text = SPEC.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    nxt = text.find("\n### ", start + 1)
    stops = [p for p in (end, nxt) if p > 0]
    return text[start : min(stops) if stops else len(text)]


def _code_blocks(section: str, tag: str) -> list[str]:
    return re.findall(r"```" + tag + r"\n(.*?)```", section, re.DOTALL)


def _maps_of(result: ComputationIndexing, param: int) -> list[IndexingMap]:
    return [a.map for a in result.targets[param].maps]


def _all_proved(result: ComputationIndexing) -> None:
    for t in result.targets:
        for a in t.maps:
            assert a.verdict is not None and a.verdict.proved, a.verdict


# -- the spec's fusion examples (HLO and expected maps read from the document) ----------------------


def test_spec_p0_plus_transpose_gives_two_maps() -> None:
    section = _spec_section("### One input, several indexing maps")
    comp = parse_hlo_snippet(_code_blocks(section, "c")[0])
    for verify in (True, False):
        result = output_to_input_maps(comp, verify=verify)
        got = {m.format(one_line=True).split(", domain")[0] for m in _maps_of(result, 0)}
        # The document: "`(d0, d1) -> (d0, d1)` and `(d0, d1) -> (d1, d0)`".
        assert got == {"(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1, d0)"}
        assert all(m.dims[0].bounds.hi == 999 and m.dims[1].bounds.hi == 999 for m in _maps_of(result, 0))
    _all_proved(output_to_input_maps(comp))


def test_spec_transpose_chain_gives_one_map() -> None:
    section = _spec_section("### One input, deduplicated indexing map")
    comp = parse_hlo_snippet(_code_blocks(section, "c")[0])
    result = output_to_input_maps(comp)
    maps = _maps_of(result, 0)
    assert len(maps) == 1
    assert maps[0].format(one_line=True).startswith("(d0, d1, d2) -> (d2, d0, d1), domain:")
    assert result.targets[0].maps[0].paths == 2
    _all_proved(result)


SOFTMAX = """
max_computation {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_computation {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY softmax {
  p0 = f32[2,65,125] parameter(0)
  neg_inf = f32[] constant(-inf)
  max = f32[2,65] reduce(p0, neg_inf), dimensions={2}, to_apply=max_computation
  max_bc = f32[2,65,125] broadcast(max), dimensions={0,1}
  shifted = f32[2,65,125] subtract(p0, max_bc)
  exp = f32[2,65,125] exponential(shifted)
  zero = f32[] constant(0)
  sum = f32[2,65] reduce(exp, zero), dimensions={2}, to_apply=add_computation
  sum_bc = f32[2,65,125] broadcast(sum), dimensions={0,1}
  ROOT out = f32[2,65,125] divide(exp, sum_bc)
}
"""


def test_spec_softmax_gives_the_two_listed_maps() -> None:
    section = _spec_section("### Softmax")
    expected = {parse_indexing_map(block) for block in _code_blocks(section, "")}
    assert len(expected) == 2
    comp = parse_hlo_snippet(SOFTMAX)
    result = output_to_input_maps(comp)
    assert set(_maps_of(result, 0)) == expected
    _all_proved(result)
    assert sum(a.paths for a in result.targets[0].maps) == 4  # exp via 2 uses, the max path, the sum path


def test_spec_reshape_chain_is_the_identity() -> None:
    section = _spec_section("## Indexing Map Simplifier")
    block = next(b for b in _code_blocks(section, "c") if "reshape1" in b)
    result = output_to_input_maps(parse_hlo_snippet(block))
    assert _maps_of(result, 0) == [IndexingMap.identity((10, 10, 10))]
    _all_proved(result)


# -- runtime variables through composition ------------------------------------------------------------

TWO_DYNAMIC_SLICES = """
p = f32[20,30] parameter(0)
a = s32[] parameter(1)
b = s32[] parameter(2)
c = s32[] parameter(3)
e = s32[] parameter(4)
ds1 = f32[10,12] dynamic-slice(p, a, b), dynamic_slice_sizes={10,12}
ROOT ds2 = f32[4,5] dynamic-slice(ds1, c, e), dynamic_slice_sizes={4,5}
"""


def test_two_dynamic_slices_bind_each_rt_to_its_offset() -> None:
    comp = parse_hlo_snippet(TWO_DYNAMIC_SLICES)
    result = output_to_input_maps(comp)
    _all_proved(result)
    (access,) = result.targets[0].maps
    m = access.map
    names = [str(getattr(v.origin, "operand_name", "")) for v in m.rt_vars]
    assert sorted(names) == ["a", "b", "c", "e"]
    bounds = {n: (v.bounds.lo, v.bounds.hi) for n, v in zip(names, m.rt_vars)}
    assert bounds == {"a": (0, 10), "b": (0, 18), "c": (0, 6), "e": (0, 7)}
    # Independent check: out[i, j] = p[a + c + i, b + e + j] for in-range offsets.
    rng = np.random.default_rng(0)
    for _ in range(20):
        offs = {"a": int(rng.integers(0, 11)), "b": int(rng.integers(0, 19)),
                "c": int(rng.integers(0, 7)), "e": int(rng.integers(0, 8))}
        rts = [offs[n] for n in names]
        for i in range(4):
            for j in range(5):
                assert m.evaluate((i, j), (), rts) == (offs["a"] + offs["c"] + i, offs["b"] + offs["e"] + j)
    # The offsets themselves are scalars read by every output element.
    for k in range(1, 5):
        assert [a.map.num_results for a in result.targets[k].maps] == [0]


GATHER_AFTER_SLICE = """
table = f32[50,6] parameter(0)
idx = s32[10,1] parameter(1)
sl = s32[4,1] slice(idx), slice={[3:10:2], [0:1]}
ROOT g = f32[4,6] gather(table, sl), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
"""


def test_collapsed_gather_after_slice_reads_the_rows_and_traces_the_index() -> None:
    # collapsed_slice_dims={0} (JAX's form) was outside the first model and reported
    # unsupported; it is modeled now. out[i, j] = table[clamp(idx[2 i + 3, 0], 0, 49), j].
    comp = parse_hlo_snippet(GATHER_AFTER_SLICE)
    result = output_to_input_maps(comp)
    _all_proved(result)
    assert not result.unsupported
    (table,) = result.targets[0].maps
    m = table.map
    origin = m.rt_vars[0].origin
    # The start index is traced back through the slice to the parameter holding it.
    assert isinstance(origin, RuntimeOrigin) and (origin.operand_name, origin.via) == ("idx", ("sl",))
    rng = np.random.default_rng(1)
    idx = rng.integers(-5, 60, size=(10, 1))
    for i in range(4):
        for j in range(6):
            at = origin.map.evaluate((i, j), (), (0,))
            rt = min(max(int(idx[at]), 0), 49)
            assert at == (2 * i + 3, 0)
            assert m.evaluate((i, j), (), (rt,)) == (min(max(int(idx[2 * i + 3, 0]), 0), 49), j)


DS_AFTER_RESHAPE = """
p = f32[8,6] parameter(0)
o = s32[] parameter(1)
r = f32[48] reshape(p)
ROOT ds = f32[5] dynamic-slice(r, o), dynamic_slice_sizes={5}
"""


def test_rt_origin_map_is_expressed_from_the_root() -> None:
    comp = parse_hlo_snippet(DS_AFTER_RESHAPE)
    result = output_to_input_maps(comp)
    _all_proved(result)
    (access,) = result.targets[0].maps
    m = access.map
    assert m.num_rt_vars == 1
    origin = m.rt_vars[0].origin
    assert isinstance(origin, RuntimeOrigin) and origin.operand_name == "o"
    om = origin.map
    assert (om.num_dims, om.num_range_vars, om.num_rt_vars, om.results) == (1, 0, 1, ())
    # p[(i + rt) floordiv 6, (i + rt) mod 6] for every offset and output index.
    for rt in range(0, 44):
        for i in range(5):
            assert m.evaluate((i,), (), (rt,)) == ((i + rt) // 6, (i + rt) % 6)


# -- merging by proof, unsupported ops, multiple outputs ------------------------------------------------

REDUCE_AND_REVERSED = """
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY f {
  p = f32[4,10] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(p, z), dimensions={1}, to_apply=add
  rev = f32[4,10] reverse(p), dimensions={1}
  r2 = f32[4] reduce(rev, z), dimensions={1}, to_apply=add
  ROOT out = f32[4] add(r1, r2)
}
"""


def test_equal_maps_are_merged_only_with_a_proof() -> None:
    comp = parse_hlo_snippet(REDUCE_AND_REVERSED)
    verified = output_to_input_maps(comp)
    (access,) = verified.targets[0].maps
    assert access.paths == 2 and len(access.merges) == 1 and access.merges[0].proved
    # Without proofs only identical maps are merged: (d0)[s0] -> (d0, s0) and (d0, -s0 + 9).
    unverified = output_to_input_maps(comp, verify=False)
    assert len(unverified.targets[0].maps) == 2
    assert all(a.verdict is None for a in unverified.targets[0].maps)


WITH_UNSUPPORTED = """
p0 = f32[8] parameter(0)
p1 = f32[8] parameter(1)
p2 = f32[8] parameter(2)
s = f32[8] custom-call(p1), custom_call_target="my_kernel"
n = f32[8] negate(p2)
a = f32[8] add(p0, s)
ROOT r = f32[8] add(a, n)
"""


def test_unsupported_op_is_named_never_guessed() -> None:
    comp = parse_hlo_snippet(WITH_UNSUPPORTED)
    result = output_to_input_maps(comp)
    assert [(u.instruction, u.opcode, u.hides) for u in result.unsupported] == [("s", "custom-call", ("p1",))]
    by_name = {t.name: t for t in result.targets}
    assert by_name["p1"].maps == [] and by_name["p1"].unsupported == ["s"]
    assert [a.map for a in by_name["p0"].maps] == [IndexingMap.identity((8,))]
    assert [a.map for a in by_name["p2"].maps] == [IndexingMap.identity((8,))]
    backwards = input_to_output_maps(comp, 1)
    assert backwards.unsupported and backwards.unsupported[0].instruction == "s"
    assert backwards.targets[0].maps == []


MULTI_OUTPUT = """
p0 = f32[4,6] parameter(0)
t = f32[6,4] transpose(p0), dimensions={1,0}
e = f32[4,6] exponential(p0)
tup = (f32[6,4], f32[4,6]) tuple(t, e)
g = f32[6,4] get-tuple-element(tup), index=0
ROOT out = (f32[6,4], f32[4,6]) tuple(g, e)
"""


def test_tuple_root_and_get_tuple_element() -> None:
    comp = parse_hlo_snippet(MULTI_OUTPUT)
    out0 = output_to_input_maps(comp, output_index=0)
    out1 = output_to_input_maps(comp, output_index=1)
    assert [str(a.map).splitlines()[0] for a in out0.targets[0].maps] == ["(d0, d1) -> (d1, d0),"]
    assert [a.map for a in out1.targets[0].maps] == [IndexingMap.identity((4, 6))]
    fwd = input_to_output_maps(comp, 0)
    assert [len(t.maps) for t in fwd.targets] == [1, 1]
    assert str(fwd.targets[0].maps[0].map).splitlines()[0] == "(d0, d1) -> (d1, d0),"


def test_topological_order_ignores_dead_code() -> None:
    comp = parse_hlo_snippet("p = f32[2] parameter(0)\ndead = f32[2] negate(p)\nROOT r = f32[2] abs(p)\n")
    assert [i.name for i in topological_order(comp)] == ["p", "r"]


# -- the independent oracle: tagged numpy evaluation of the whole computation ------------------------------

_ELEMENTWISE = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "exponential", "negate", "abs", "tanh",
    "rsqrt", "sqrt", "log", "convert", "copy", "select", "compare", "and", "or", "not", "clamp", "power",
}


def _run_computation(comp: Computation) -> dict[str, np.ndarray]:
    """Every instruction's tagged value: element -> set of (parameter number, index)."""
    values: dict[str, np.ndarray] = {}
    for inst in topological_order(comp):
        dims = inst.shape.dims
        if inst.opcode == "parameter":
            values[inst.name] = hlo_oracle.tagged(dims, inst.parameter_number or 0)
            continue
        if inst.opcode in ("constant", "iota"):
            values[inst.name] = np.full(dims, None, dtype=object)
            for idx in np.ndindex(*dims):
                values[inst.name][idx] = frozenset()
            continue
        operands = [values[n] for n in inst.operands]
        if inst.opcode in _ELEMENTWISE:
            res = np.empty(dims, dtype=object)
            for idx in np.ndindex(*dims):
                acc: frozenset[tuple[int, tuple[int, ...]]] = frozenset()
                for a in operands:
                    acc |= a[()] if a.ndim == 0 else a[idx]
                res[idx] = acc
            values[inst.name] = res
            continue
        local = hlo_oracle.run(inst, comp)[0]  # tags (operand k, index in operand k)
        values[inst.name] = hlo_oracle.compose_tags(local, operands)
    return values


def _reads_from_maps(result: ComputationIndexing) -> dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]]:
    reads: dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]] = {}
    for t in result.targets:
        for a in t.maps:
            for d, s, r in a.map.domain_points(limit=2_000_000):
                reads.setdefault(d, set()).add((t.index, a.map.evaluate(d, s, r)))
    return reads


ORACLE_CASES = {
    "transpose_reverse_slice": """
p0 = f32[6,8] parameter(0)
t = f32[8,6] transpose(p0), dimensions={1,0}
r = f32[8,6] reverse(t), dimensions={0}
s = f32[3,6] slice(r), slice={[1:8:3], [0:6]}
ROOT e = f32[3,6] exponential(s)
""",
    "reshape_bitcast_broadcast": """
p0 = f32[4,6] parameter(0)
p1 = f32[3] parameter(1)
r = f32[2,12] reshape(p0)
b = f32[12,2]{0,1} bitcast(r)
c = f32[12,2,3] broadcast(p1), dimensions={2}
d = f32[12,2,3] broadcast(b), dimensions={0,1}
ROOT m = f32[12,2,3] multiply(c, d)
""",
    "concat_reduce_dot": """
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY f {
  p0 = f32[3,4] parameter(0)
  p1 = f32[2,4] parameter(1)
  p2 = f32[4,5] parameter(2)
  z = f32[] parameter(3)
  c = f32[5,4] concatenate(p0, p1), dimensions={0}
  d = f32[5,5] dot(c, p2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[5] reduce(c, z), dimensions={1}, to_apply=add
  b = f32[5,5] broadcast(r), dimensions={1}
  ROOT o = f32[5,5] add(d, b)
}
""",
    "reduce_window_reshape": """
max { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b) }
ENTRY f {
  p0 = f32[2,9] parameter(0)
  z = f32[] parameter(1)
  rw = f32[2,4] reduce-window(p0, z), window={size=1x3 stride=1x2}, to_apply=max
  ROOT r = f32[8] reshape(rw)
}
""",
}


def _oracle_cases() -> Iterator[tuple[str, str]]:
    yield from ORACLE_CASES.items()


@pytest.mark.parametrize(("name", "text"), list(_oracle_cases()), ids=[n for n, _ in _oracle_cases()])
def test_composed_maps_match_the_numpy_oracle(name: str, text: str) -> None:
    comp = parse_hlo_snippet(text)
    result = output_to_input_maps(comp)
    _all_proved(result)
    values = _run_computation(comp)[comp.root.name]
    reads = _reads_from_maps(result)
    for idx in np.ndindex(*comp.root.shape.dims):
        assert reads.get(tuple(idx), set()) == set(values[idx]), (name, idx)


@pytest.mark.parametrize(("name", "text"), list(_oracle_cases()), ids=[n for n, _ in _oracle_cases()])
def test_input_to_output_is_the_inverse_relation(name: str, text: str) -> None:
    comp = parse_hlo_snippet(text)
    forward = output_to_input_maps(comp)
    pairs = {(t.index, d, a.map.evaluate(d, s, r)) for t in forward.targets for a in t.maps
             for d, s, r in a.map.domain_points(limit=2_000_000)}
    for param in comp.parameters():
        back = input_to_output_maps(comp, param.parameter_number or 0)
        assert not back.unsupported
        got = {(param.parameter_number, a.map.evaluate(d, s, r), d) for a in back.targets[0].maps
               for d, s, r in a.map.domain_points(limit=2_000_000)}
        expected = {p for p in pairs if p[0] == param.parameter_number}
        assert got == expected, (name, param.name)
        for a in back.targets[0].maps:
            assert a.verdict is not None and a.verdict.proved


def test_a_wrong_simplification_is_caught_not_reported_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    from verified_indexing.expr import Const
    from verified_indexing.hlo import fusion

    def wrong(m: IndexingMap) -> IndexingMap:  # a planted simplifier bug: the first result becomes 0
        if m.num_results and m.results[0] != Const(0):
            return m.replace(results=[Const(0), *m.results[1:]])
        return m

    original = fusion._simplifier
    monkeypatch.setattr(fusion, "_simplifier", lambda: wrong)
    comp = parse_hlo_snippet("p = f32[4,6] parameter(0)\nROOT t = f32[6,4] transpose(p), dimensions={1,0}\n")
    result = output_to_input_maps(comp)
    (access,) = result.targets[0].maps
    assert access.verdict is not None and access.verdict.status == "error"
    assert "not equal to the exact composition" in access.verdict.reason
    assert "differ at" in access.verdict.reason
    from verified_indexing.hlo.report import exit_code

    assert exit_code([result]) == 4
    # Without the planted bug the same analysis is proven.
    monkeypatch.setattr(fusion, "_simplifier", original)
    assert output_to_input_maps(comp).targets[0].maps[0].verdict.proved  # type: ignore[union-attr]


TUPLE_PARAMETER = """HloModule m
body {
  p = (s32[], f32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4,3] get-tuple-element(p), index=1
  t = f32[3,4] transpose(x), dimensions={1,0}
  ROOT r = (s32[], f32[3,4]) tuple(i, t)
}
ENTRY e {
  a = (s32[], f32[4,3]) parameter(0)
  ROOT c = (s32[], f32[3,4]) call(a), to_apply=body
}
"""


def test_tuple_shaped_parameters_and_calls() -> None:
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    module = parse_module(TUPLE_PARAMETER)
    for computation in ("body", "e"):
        out0, out1 = analyze_module(module, computation=computation)
        assert [(t.name.split("[")[1], t.element, len(t.maps)) for t in out0.targets] == [("0]", 0, 1), ("1]", 1, 0)]
        assert [len(t.maps) for t in out1.targets] == [0, 1]
        transpose = out1.targets[1].maps[0]
        assert str(transpose.map).splitlines()[0] == "(d0, d1) -> (d1, d0),"
        assert transpose.verdict is not None and transpose.verdict.proved
    (backwards,) = analyze_module(module, computation="body", direction="input-to-output")
    assert [u.reason for u in backwards.unsupported] == ["p: input-to-output from a tuple-shaped parameter"]


def test_final_maps_drop_redundant_range_variables() -> None:
    """The softmax dump's whole-program map from x: every output of the row, with no leftover range variable
    or constraint from the 32-wide reduce-window (the final simplification is proven by isl)."""
    from verified_indexing.hlo.parser import parse_module

    root = Path(__file__).resolve().parent.parent / "examples" / "jax_hlo" / "softmax.post.hlo"
    module = parse_module(root.read_text(encoding="utf-8"))
    result = input_to_output_maps(module.computations["main.3"], 0, module=module)
    maps = sorted((a.map for a in result.targets[0].maps), key=str)
    assert maps == sorted(
        [
            parse_indexing_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 127]"),
            parse_indexing_map("(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 7], d1 in [0, 127], s0 in [0, 127]"),
        ],
        key=str,
    )
    assert all(a.verdict is not None and a.verdict.proved for a in result.targets[0].maps)
