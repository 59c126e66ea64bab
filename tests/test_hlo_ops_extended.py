"""The ops modeled for issue 15, against the numpy oracle (tests/hlo_oracle.py) in
both directions: sort, scatter (its over-approximations checked as inclusions),
pass-through custom-calls, batch-group convolution (also against XLA's own CPU
result), reduce-window with window reversal; and the over-approximation labels."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hlo_oracle import run
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_hlo_ops_oracle import _ints, _shape, build, check, window_attr

from verified_indexing.errors import UnsupportedError
from verified_indexing.hlo.ops import input_to_output, output_to_input, over_approximation
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module


@settings(max_examples=60)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_sort(dims: list[int], n: int, data: st.DataObject) -> None:
    d = data.draw(st.integers(0, len(dims) - 1))
    out = _shape(dims) if n == 1 else _shape([]).__class__("tuple", tuple_shapes=tuple(_shape(dims) for _ in range(n)))
    check(*build("sort", out, [_shape(dims)] * n, {"dimensions": _ints([d])}))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_topk(dims: list[int], data: st.DataObject) -> None:
    k = data.draw(st.integers(1, dims[-1]))
    out = [*dims[:-1], k]
    shape = _shape([]).__class__("tuple", tuple_shapes=(_shape(out), _shape(out, "s32")))
    check(*build("topk", shape, [_shape(dims)], {"k": str(k), "largest": "true"}))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_topk_custom_call_has_the_topk_maps(dims: list[int], data: st.DataObject) -> None:
    # XLA's CPU/GPU backends lower lax.top_k to custom-call "TopK": the same maps as the
    # topk op (checked against the oracle above), in both directions.
    k = data.draw(st.integers(1, dims[-1]))
    out = [*dims[:-1], k]
    shape = _shape([]).__class__("tuple", tuple_shapes=(_shape(out), _shape(out, "s32")))
    op, comp_op = build("topk", shape, [_shape(dims)], {"k": str(k), "largest": "true"})
    cc, comp_cc = build("custom-call", shape, [_shape(dims)], {"custom_call_target": '"TopK"'})
    for out_k in (0, 1):
        assert output_to_input(cc, comp_cc, out_k) == output_to_input(op, comp_op, out_k)
    assert input_to_output(cc, comp_cc, 0) == input_to_output(op, comp_op, 0)


def test_topk_custom_call_of_a_real_dump_reads_whole_rows() -> None:
    from pathlib import Path

    from verified_indexing.hlo.fusion import analyze_module

    path = Path(__file__).resolve().parent / "hlo_corpus" / "jax" / "topk.post.hlo"
    module = parse_module(path.read_text(), str(path))
    results = analyze_module(module, computation=module.entry_name)
    assert len(results) == 2 and not any(r.unsupported for r in results)  # values and indices
    (param,) = module.computations[module.entry_name].parameters()
    _rows, cols = param.shape.dims
    for target in (t for r in results for t in r.targets):
        # Each output element (i, j) of values and indices reads row i of the operand, all of it.
        for a in target.maps:
            assert a.verdict is not None and a.verdict.proved
            reads: dict[tuple[int, ...], set[tuple[int, ...]]] = defaultdict(set)
            for d, sy, rt in a.map.domain_points():
                reads[d].add(a.map.evaluate(d, sy, rt))
            assert reads and all(r == {(d[0], c) for c in range(cols)} for d, r in reads.items())


@settings(max_examples=60)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=2), st.data())
def test_select_and_scatter(src: list[int], data: st.DataObject) -> None:
    from hlo_oracle import run

    window, out = window_attr(src, data, pad=1, base_dilation=1)
    inst, comp = build("select-and-scatter", _shape(src), [_shape(src), _shape(out), _shape([])], {"window": window})
    operand = np.array(data.draw(st.lists(st.integers(0, 2), min_size=int(np.prod(src)), max_size=int(np.prod(src)))))
    # Operand and init exact; the source maps include what the oracle's selection reads.
    check(inst, comp, {0: operand.reshape(src)}, over=frozenset({1}))
    assert over_approximation(inst, comp, 1) and not over_approximation(inst, comp, 0)
    # ... and no more: with the operand one-hot at p every window holding p chooses p, so
    # the source elements the map names for p are exactly the ones read.
    (o2i_source,) = output_to_input(inst, comp, 0)[1:2]
    for p in np.ndindex(*src):
        hot = np.zeros(src, dtype=int)
        hot[p] = 1
        reads = {x for k, x in run(inst, comp, {0: hot})[0][p] if k == 1}
        named = {o2i_source.evaluate(tuple(p), s, r) for d, s, r in o2i_source.domain_points() if d == tuple(p)}
        assert reads == named, (p, reads, named)


@settings(max_examples=80)
@given(st.data())
def test_scatter(data: st.DataObject) -> None:
    rank = data.draw(st.integers(1, 2))
    operand = [data.draw(st.integers(1, 4)) for _ in range(rank)]
    sdod = data.draw(st.permutations(list(range(rank))))[: data.draw(st.integers(1, rank))]
    inserted = sorted(d for d in sdod if data.draw(st.booleans()))
    window = [1 if d in inserted else data.draw(st.integers(1, operand[d])) for d in range(rank)]
    nu = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 2))
    upd = [nu] + [window[d] for d in range(rank) if d not in inserted]
    uwd = list(range(1, len(upd)))
    attrs = {
        "update_window_dims": _ints(uwd), "inserted_window_dims": _ints(inserted),
        "scatter_dims_to_operand_dims": _ints(sdod), "index_vector_dim": "1", "to_apply": "add",
    }
    idx_shape = [nu, len(sdod)]
    values = np.array(
        data.draw(st.lists(st.integers(-1, max(operand)), min_size=nu * len(sdod), max_size=nu * len(sdod)))
    ).reshape(idx_shape)
    out = _shape(operand) if n == 1 else _shape([]).__class__("tuple", tuple_shapes=(_shape(operand),) * n)
    inst, comp = build("scatter", out, [_shape(operand)] * n + [_shape(idx_shape, "s32")] + [_shape(upd)] * n, attrs)
    # The operand is read exactly (one operand); updates and indices: inclusion.
    over = frozenset(range(n, 2 * n + 1)) | (frozenset(range(n)) if n > 1 else frozenset())
    check(inst, comp, {n: values}, over=over)
    assert all(over_approximation(inst, comp, k) for k in range(n, 2 * n + 1))


@given(st.lists(st.integers(1, 4), min_size=0, max_size=3), st.sampled_from(["Sharding", "xla.sdy.Sharding"]))
def test_pass_through_custom_calls(dims: list[int], target: str) -> None:
    check(*build("custom-call", _shape(dims), [_shape(dims)], {"custom_call_target": f'"{target}"'}))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('p = f32[4] parameter(0)\nc = f32[4] custom-call(p), custom_call_target="my_kernel"', "opaque target 'my_kernel'"),
        ('p = f32[8] parameter(0)\nc = f32[4] custom-call(p), custom_call_target="xla.sdy.GlobalToLocalShape"',
         "changes the shape"),
        ('p = f32[4] parameter(0)\nq = f32[4] parameter(1)\nc = f32[4] custom-call(p, q), custom_call_target="Sharding"',
         "2 operands"),
    ],
)
def test_other_custom_calls_are_named(text: str, needle: str) -> None:
    comp = parse_hlo_snippet(text)
    with pytest.raises(UnsupportedError, match=needle):
        output_to_input(comp.root, comp)
    with pytest.raises(UnsupportedError, match=needle):
        input_to_output(comp.root, comp, 0)


@settings(max_examples=40)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=2), st.data())
def test_reduce_window_with_reversal(src: list[int], data: st.DataObject) -> None:
    fields: dict[str, list[str]] = defaultdict(list)
    out = []
    for n in src:
        size, stride, lo, hi = (data.draw(st.integers(a, b)) for a, b in ((1, 3), (1, 2), (0, 2), (0, 2)))
        assume(lo + hi + n >= size)
        out.append((lo + hi + n - size) // stride + 1)
        fields["size"].append(str(size))
        fields["stride"].append(str(stride))
        fields["pad"].append(f"{lo}_{hi}")
        fields["rhs_reversal"].append("1" if data.draw(st.booleans()) else "0")
    window = "{" + " ".join(f"{k}={'x'.join(v)}" for k, v in fields.items()) + "}"
    check(*build("reduce-window", _shape(out), [_shape(src), _shape([])], {"window": window}))


# XLA's CPU result for lax.conv_general_dilated(lhs f32[4,3,1], rhs f32[6,3,1], batch_group_count=2)
# (tests/hlo_corpus/jax/conv_batch_group.*: recorded with one-hot inputs): output (b, f) reads the lhs
# batch row below, every input feature.
XLA_BATCH_GROUP_READS = {(b, f): (2 if f >= 3 else 0) + b for b in range(2) for f in range(6)}


def test_batch_group_convolution_matches_xla() -> None:
    comp = parse_hlo_snippet(
        "l = f32[4,3,1] parameter(0)\nr = f32[6,3,1] parameter(1)\n"
        "ROOT c = f32[2,6,1] convolution(l, r), window={size=1}, dim_labels=bf0_oi0->bf0, batch_group_count=2"
    )
    lhs_map, _rhs_map = output_to_input(comp.root, comp)
    reads: dict[tuple[int, int], set[tuple[int, ...]]] = defaultdict(set)
    for d, s, r in lhs_map.domain_points(10_000):
        reads[(d[0], d[1])].add(lhs_map.evaluate(d, s, r))
    for (b, f), row in XLA_BATCH_GROUP_READS.items():
        assert reads[(b, f)] == {(row, c, 0) for c in range(3)}
    check(comp.root, comp)


def test_over_approximation_labels_use_the_computation() -> None:
    module = parse_module((__import__("pathlib").Path(__file__).parent / "hlo_corpus/jax/argsort.pre.hlo").read_text())
    sort = next(i for c in module.computations.values() for i in c.instructions if i.opcode == "sort")
    comp = next(c for c in module.computations.values() if sort in c.instructions)
    cmp = module.computations[sort.called_computation() or ""]
    assert over_approximation(sort, comp, 0, cmp) is None  # the keys: the comparator reads them
    assert "payload" in (over_approximation(sort, comp, 1, cmp) or "")
    assert "not known" in (over_approximation(sort, comp, 1) or "")
    add = parse_module((__import__("pathlib").Path(__file__).parent / "hlo_corpus/jax/scatter_add.pre.hlo").read_text())
    setm = parse_module((__import__("pathlib").Path(__file__).parent / "hlo_corpus/jax/scatter_set.pre.hlo").read_text())
    for module, exact in ((add, True), (setm, False)):
        sc = next(i for c in module.computations.values() for i in c.instructions if i.opcode == "scatter")
        comp = next(c for c in module.computations.values() if sc in c.instructions)
        combiner = module.computations[sc.called_computation() or ""]
        assert (over_approximation(sc, comp, 0, combiner) is None) == exact
        assert over_approximation(sc, comp, 2, combiner)


COND = """HloModule cond
branch_t {
  a = f32[4,6] parameter(0)
  ROOT t = f32[6,4] transpose(a), dimensions={1,0}
}
branch_r {
  b = f32[4,6] parameter(0)
  s = f32[4,6] reverse(b), dimensions={0}
  ROOT r = f32[6,4] reshape(s)
}
branch_c {
  c = f32[4,6] parameter(0)
  ROOT k = f32[6,4] broadcast(f32[] constant(0)), dimensions={}
}
ENTRY main {
  i = s32[] parameter(0)
  x = f32[4,6] parameter(1)
  y = f32[4,6] parameter(2)
  ROOT c = f32[6,4] conditional(i, x, y, x), branch_computations={branch_t, branch_r, branch_c}
}
"""


def test_conditional_reads_the_union_of_its_branches_marked() -> None:
    from test_hlo_fusion import _reads_from_maps, _run_computation

    from verified_indexing.hlo.fusion import analyze_module

    module = parse_module(COND)
    (result,) = analyze_module(module, computation="main")
    assert not result.unsupported
    reads = _reads_from_maps(result)
    # The oracle: each branch run on its operand (tagged with the conditional's operand number).
    want: dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]] = defaultdict(set)
    operand_of = {"branch_t": 1, "branch_r": 2, "branch_c": 1}
    for name, k in operand_of.items():
        comp = module.computations[name]
        values = _run_computation(comp)[comp.root.name]
        for idx in np.ndindex(*values.shape):
            want[tuple(idx)] |= {(k, x) for _, x in values[idx]}
            want[tuple(idx)].add((0, ()))  # the selector is read by every element
    assert {o: s for o, s in reads.items()} == dict(want)
    for t in result.targets[1:]:
        assert all(a.over_approximation and "only one branch runs" in a.over_approximation[0] for a in t.maps)
    assert all(not a.over_approximation for a in result.targets[0].maps)  # the selector: exact


def test_opt_barrier_passes_its_tuple_through() -> None:
    from verified_indexing.hlo.fusion import output_to_input_maps

    module = parse_module(
        "HloModule ob\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[3] parameter(1)\n  t = tuple(p, q)\n"
        "  o = (f32[4], f32[3]) opt-barrier(t)\n  ROOT g = f32[3] get-tuple-element(o), index=1\n}\n"
    )
    result = output_to_input_maps(module.entry, module=module)
    assert not result.unsupported
    assert result.targets[0].maps == []
    (a,) = result.targets[1].maps
    assert a.map.format(one_line=True) == "(d0) -> (d0), domain: d0 in [0, 2]" and not a.over_approximation


def test_the_docs_table_names_every_opcode() -> None:
    import re
    from pathlib import Path

    from verified_indexing.hlo.ops import UNSUPPORTED_OPCODES, supported_opcodes

    text = (Path(__file__).resolve().parent.parent / "docs" / "hlo-ops.md").read_text()
    section = text[text.index("## Every opcode"): text.index("## Unsupported ops and bad input")]
    named = set(re.findall(r"`([a-z][a-z0-9\-]*)`", section))
    assert (supported_opcodes() | set(UNSUPPORTED_OPCODES)) <= named


def test_physical_maps_and_from_instruction_against_the_oracle() -> None:
    from pathlib import Path

    from test_hlo_fusion import _reads_from_maps, _run_computation

    from verified_indexing.hlo.fusion import analyze_module

    path = Path(__file__).resolve().parent / "hlo_corpus" / "handwritten" / "physical_layouts.hlo"
    module = parse_module(path.read_text())
    comp = module.computations["fused"]

    def physical(index: tuple[int, ...], layout: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(index[d] for d in reversed(layout))  # major to minor

    for start in ("s", "e", "t"):
        (result,) = analyze_module(module, from_instruction=start, physical=True)
        assert all(a.verdict is not None and a.verdict.proved for t in result.targets for a in t.maps)
        inst = comp.by_name[start]
        values = _run_computation(comp)[start]
        want = {
            physical(tuple(int(i) for i in idx), inst.shape.minor_to_major()): {
                (k, physical(x, comp.by_name["p0"].shape.minor_to_major())) for k, x in values[idx]
            }
            for idx in np.ndindex(*values.shape)
        }
        assert _reads_from_maps(result) == want, start
    # A tiled layout has no plain physical order: named, no map.
    tiled = parse_hlo_snippet("p = f32[8,128]{1,0:T(8,128)} parameter(0)\nROOT n = f32[8,128] negate(p)")
    from verified_indexing.hlo.fusion import output_to_input_maps, to_physical

    r = to_physical(output_to_input_maps(tiled), tiled)
    assert r.targets[0].maps == [] and "tiled layout" in r.unsupported[-1].reason


WHILE = """HloModule loop
cond {
  s = (s32[], f32[4], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT
}
body {
  s = (s32[], f32[4], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  w = f32[3] get-tuple-element(s), index=2
  n = s32[] add(i, s32[] constant(1))
  y = f32[4] exponential(x)
  ROOT t = (s32[], f32[4], f32[3]) tuple(n, y, w)
}
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[3] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[3]) tuple(z, a, b)
  l = (s32[], f32[4], f32[3]) while(init), condition=cond, body=body
  g = f32[3] get-tuple-element(l), index=2
  h = f32[4] get-tuple-element(l), index=1
  ROOT r = (f32[3], f32[4]) tuple(g, h)
}
"""


def test_while_passes_loop_invariant_elements_through() -> None:
    from verified_indexing.hlo.fusion import output_to_input_maps

    module = parse_module(WHILE)
    invariant = output_to_input_maps(module.entry, output_index=0, module=module)
    assert not invariant.unsupported
    assert invariant.targets[0].maps == []
    (a,) = invariant.targets[1].maps
    assert a.map.format(one_line=True) == "(d0) -> (d0), domain: d0 in [0, 2]" and not a.over_approximation
    # element 1 changes in the body, element for element (y = exp(x)), under an affine counter (0, +1, < 5):
    # exact, h[i] computed from a[i] (verified_indexing.hlo.loops)
    counted = output_to_input_maps(module.entry, output_index=1, module=module)
    (exact,) = counted.targets[0].maps
    assert exact.map.format(one_line=True) == "(d0) -> (d0), domain: d0 in [0, 3]" and not exact.over_approximation
    # a counter that is not affine (doubled): a sound whole-loop over-approximation, marked (every element of
    # the initial state taken as read)
    module = parse_module(WHILE.replace("n = s32[] add(i, s32[] constant(1))",
                                        "n = s32[] multiply(i, s32[] constant(2))"))
    changing = output_to_input_maps(module.entry, output_index=1, module=module)
    assert not changing.unsupported
    (whole,) = changing.targets[0].maps
    assert any("element 1 of the loop state changes in the body body" in r for r in whole.over_approximation)
    from verified_indexing import parse_indexing_map
    from verified_indexing.engines import prove_subset

    # the truth by the numpy interpreter: one iteration's y[i] reads x[i] (state element 1, a at first), so
    # after any number of iterations h[i] is computed from a[i]
    body = module.computations["body"]
    (y,) = run(body.by_name["y"], body)
    assert all(y[i] == {(0, (i,))} for i in range(4))
    truth = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 3]")
    assert prove_subset(truth, whole.map).proved  # sound: the reads are inside the map
    assert whole.map.num_range_vars == 1  # and over-approximate: every element


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('p = f32[4] parameter(0)\nc = f32[4] custom-call(p), custom_call_target="xla.sdy.ManualComputation", '
         "called_computations={body}", "calls a computation"),
        ('p = f32[4] parameter(0)\nc = s32[4] custom-call(p), custom_call_target="Sharding"', "element type"),
    ],
)
def test_pass_through_needs_the_same_values(text: str, needle: str) -> None:
    comp = parse_hlo_snippet(text)
    with pytest.raises(UnsupportedError, match=needle):
        output_to_input(comp.root, comp)


def test_shapes_that_cannot_be_inferred_are_asked_for() -> None:
    from verified_indexing.errors import ParseError

    for rhs in ("bitcast(a)", "map(a), to_apply=f", "convert(a)", "reshape(a)"):
        with pytest.raises(ParseError, match="cannot infer the shape"):
            parse_hlo_snippet(f"a = f32[4,2] parameter(0)\nROOT b = {rhs}")


def test_conditional_input_to_output_is_the_inverse_of_the_reads() -> None:
    from verified_indexing.hlo.fusion import analyze_module

    module = parse_module(COND)
    (back,) = analyze_module(module, computation="main", direction="output-to-input")
    forward = {
        o: s for o, s in
        ((r.source, r) for r in analyze_module(module, computation="main", direction="input-to-output"))
    }
    pairs = set()
    for t in back.targets:
        for a in t.maps:
            for d, s, r in a.map.domain_points():
                pairs.add((t.index, a.map.evaluate(d, s, r), d))
    got = set()
    for n, res in forward.items():
        assert not res.unsupported
        for t in res.targets:
            for a in t.maps:
                assert a.verdict is not None and a.verdict.proved
                assert (n == 0) == (not a.over_approximation)
                for d, s, r in a.map.domain_points():
                    got.add((n, d, a.map.evaluate(d, s, r)))
    assert got == pairs
