"""Real MLIR text: module/func wrappers, comments, loc(...), aliases, named ops
read as their equivalent generics (checked against numpy's definition of each
op), skipped ops, and random chains of generics fused pairwise vs numpy."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.legality.linalg import check_fusion, fused_generic_text, fusion_pairs
from verified_indexing.legality.linalg_ir import GenericOp, loop_bounds, parse_linalg, parse_linalg_module
from verified_indexing.syntax import format_affine_map, parse_affine_map

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mlir"

Payload = Callable[[Sequence[float]], float]


def _am(text: str) -> AffineMap:
    return parse_affine_map(f"affine_map<{text}>")


# ---------------------------------------------------------------------------
# An interpreter of (generic-equivalent) ops: the numpy side of every check
# ---------------------------------------------------------------------------


def run_op(op: GenericOp, env: dict[str, np.ndarray], f: Payload, reads_init: bool) -> np.ndarray:
    """Execute ``op`` over its loops: ``out[outmap(p)] = f(ins at their maps [+ current out])``."""
    sizes = [b.hi + 1 for b in loop_bounds(op)]
    out = env[op.outputs[0].value].astype(float).copy()
    for p in itertools.product(*(range(s) for s in sizes)):
        vals = [float(np.asarray(env[o.value])[o.map.evaluate(p)]) for o in op.inputs]
        idx = op.outputs[0].map.evaluate(p)
        if reads_init:
            vals.append(float(out[idx]))
        out[idx] = f(vals)
    return out


def _arr(shape: Sequence[int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-5, 6, size=tuple(shape)).astype(float)


# ---------------------------------------------------------------------------
# The realistic module
# ---------------------------------------------------------------------------


def test_real_module_reads_every_modelled_op() -> None:
    mod = parse_linalg_module((EXAMPLES / "real_module.mlir").read_text(encoding="utf-8"))
    kinds = [(op.kind, op.name) for op in mod.ops]
    assert kinds == [
        ("linalg.transpose", "%transposed"), ("linalg.generic", "%1"), ("linalg.fill", "%3"),
        ("linalg.reduce", "%reduced"), ("linalg.broadcast", "%b"), ("linalg.map", "%m"),
    ]
    by = {op.name: op for op in mod.ops}
    assert by["%transposed"].inputs[0].map == _am("(d0, d1) -> (d1, d0)")
    assert by["%1"].iterator_types == ("parallel", "parallel")
    assert [o.value for o in by["%1"].operands] == ["%transposed", "%arg1", "%0"]
    assert by["%1"].block_args == ("%in", "%in_0", "%out")  # loc("x") inside the block header is ignored
    assert str(by["%3"].inputs[0].type) == "f32" and by["%3"].inputs[0].map == AffineMap(1, 0, [])
    assert by["%reduced"].iterator_types == ("parallel", "reduction")
    assert by["%reduced"].outputs[0].map == _am("(d0, d1) -> (d0)")
    assert by["%b"].inputs[0].map == _am("(d0, d1) -> (d0)")
    assert [s.op for s in mod.skipped] == ["linalg.softmax"] and "not modelled" in mod.skipped[0].reason
    # Every producer-consumer pair of the file, in order.
    pairs = [(p.name, c.name) for p, c in fusion_pairs(list(mod.ops))]
    assert pairs == [("%transposed", "%1"), ("%1", "%reduced"), ("%3", "%reduced"), ("%reduced", "%b"),
                     ("%1", "%m"), ("%b", "%m")]


def test_named_ops_are_not_generics_for_mlir_but_fuse_for_us() -> None:
    mod = parse_linalg_module((EXAMPLES / "real_module.mlir").read_text(encoding="utf-8"))
    by = {op.name: op for op in mod.ops}
    rep = check_fusion(by["%transposed"], by["%1"])
    assert not rep.mlir.fusable and rep.mlir.rejected_by == "producer and consumer are linalg.generic ops"
    assert "linalg.transpose" in rep.mlir.checks[0].detail
    assert rep.status == "legal" and rep.fused is not None
    assert rep.fused[0].value == "%arg0" and rep.fused[0].map == _am("(d0, d1) -> (d1, d0)")
    # The fused op reads A transposed: check against numpy on the real shapes.
    a, bias = _arr((4, 8), 1), _arr((8, 4), 2)
    assert fused_generic_text(rep) is not None
    got = np.zeros((8, 4))
    for i, j in itertools.product(range(8), range(4)):
        got[i, j] = a[rep.fused[0].map.evaluate((i, j))] + bias[rep.fused[1].map.evaluate((i, j))]
    assert np.array_equal(got, a.T + bias)
    # A reduction producer consumed by a broadcast: two iterations write one element.
    rep = check_fusion(by["%reduced"], by["%b"])
    assert rep.status == "illegal" and rep.obligations[0].witness is not None
    (p, q) = rep.obligations[0].witness["producer_iterations"]
    assert p != q and by["%reduced"].outputs[0].map.evaluate(p) == by["%reduced"].outputs[0].map.evaluate(q)
    # A fill feeding the reduction's init: MLIR refuses (named ops); fusing into
    # outs() is modelled now: the fill value replaces the init at the first
    # reduction step (d1 = 0), proven by the whole-op proof.
    rep = check_fusion(by["%3"], by["%reduced"])
    assert rep.mlir.rejected_by == "producer and consumer are linalg.generic ops"
    assert rep.status == "legal" and rep.first_visit == "reduction-zero"
    assert rep.whole_op is not None and rep.whole_op.verdict.proved


def test_comments_and_locations_keep_error_positions() -> None:
    text = (
        "// header comment with linalg.generic inside it\n"
        "#loc1 = loc(\"f.py\":1:2)\n"
        "%0 = linalg.generic {indexing_maps = [#nope], iterator_types = []} outs(%o : tensor<f32>) loc(#loc1) {\n}\n"
    )
    with pytest.raises(ParseError) as info:
        parse_linalg(text)
    err = info.value
    assert "unknown affine map alias" in err.message and err.line == 3
    assert text[err.offset :].startswith("#nope") and "loc(#loc1)" in err.line_text  # the original line is shown


def test_no_modelled_op_names_the_skipped_ones() -> None:
    with pytest.raises(ParseError) as info:
        parse_linalg("%0 = linalg.mmt4d ins(%a, %b : tensor<4x4xf32>, tensor<2x2xf32>) outs(%c : tensor<3x3xf32>)")
    assert "skipped linalg.mmt4d at line 1" in info.value.message
    # The generic form of linalg.generic is read now (examples/mlir/generic_form.mlir);
    # one without its attributes is a positioned error, other quoted linalg ops are skipped.
    with pytest.raises(ParseError) as info:
        parse_linalg_module('%0 = "linalg.generic"(%a, %b) ({\n}) : (tensor<4xf32>) -> tensor<4xf32>\n')
    assert "needs its attributes" in info.value.message and info.value.offset == 5
    # Named ops in the generic form are read too (tests/test_linalg_mlir_reading.py); a malformed one is positioned.
    with pytest.raises(ParseError, match="3 operands but 1 operand types"):
        parse_linalg_module('%0 = "linalg.matmul"(%a, %b, %c) ({\n}) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n')
    mod = parse_linalg_module('%0 = "linalg.mmt4d"(%a, %b, %c) ({\n}) : (tensor<4x4xf32>) -> '
                              'tensor<4x4xf32>\n')
    assert mod.ops == () and "quoted" in mod.skipped[0].reason


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ("%t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>) permutation = [0, 0]",
         "not a permutation", "permutation"),
        ("%t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>)", "needs 'permutation", "linalg"),
        ("%t = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [0, 1]",
         "do not add the missing dims", "dimensions"),
        ("%t = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [3]\n"
         "  (%x: f32, %y: f32) {\n  linalg.yield %x : f32\n}", "do not reduce", "dimensions"),
        ("%t = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2x1xf32>)",
         "has rank 3", "%c"),
        ("%t = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4x?>)", "bad element type", "tensor<4x?>"),
    ],
)
def test_named_op_errors_are_positioned(text: str, message: str, where: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_linalg(text)
    assert message in info.value.message
    assert text[info.value.offset :].startswith(where)


# ---------------------------------------------------------------------------
# Named ops against numpy's definition of each op
# ---------------------------------------------------------------------------


@settings(max_examples=20)
@given(st.permutations([0, 1, 2]), st.lists(st.integers(1, 3), min_size=3, max_size=3), st.integers(0, 99))
def test_transpose_matches_numpy(perm: list[int], shape: list[int], seed: int) -> None:
    out_shape = [shape[p] for p in perm]  # dim(out, i) = dim(in, perm[i])
    t = "x".join(map(str, shape))
    o = "x".join(map(str, out_shape))
    (op,) = parse_linalg(f"%t = linalg.transpose ins(%a : tensor<{t}xf32>) outs(%e : tensor<{o}xf32>) "
                         f"permutation = [{', '.join(map(str, perm))}]")
    a = _arr(shape, seed)
    got = run_op(op, {"%a": a, "%e": np.zeros(out_shape)}, lambda v: v[0], False)
    assert np.array_equal(got, np.transpose(a, perm))


@pytest.mark.parametrize(("dims", "out"), [([1], [3, 2]), ([0], [2, 3]), ([0, 2], [2, 3, 4])])
def test_broadcast_matches_numpy(dims: list[int], out: list[int]) -> None:
    in_shape = [s for i, s in enumerate(out) if i not in dims]
    i_t = "x".join(map(str, in_shape))
    (op,) = parse_linalg(f"%t = linalg.broadcast ins(%a : tensor<{i_t}xf32>) outs(%e : tensor<{'x'.join(map(str, out))}"
                         f"xf32>) dimensions = [{', '.join(map(str, dims))}]")
    a = _arr(in_shape, 3)
    got = run_op(op, {"%a": a, "%e": np.zeros(out)}, lambda v: v[0], False)
    assert np.array_equal(got, np.broadcast_to(np.expand_dims(a, tuple(dims)), out))


@pytest.mark.parametrize(
    ("op_text", "shapes", "oracle"),
    [
        ("linalg.matmul", [(3, 4), (4, 2), (3, 2)], lambda a, b: a @ b),
        ("linalg.batch_matmul", [(2, 3, 4), (2, 4, 2), (2, 3, 2)], lambda a, b: np.einsum("bmk,bkn->bmn", a, b)),
        ("linalg.matvec", [(3, 4), (4,), (3,)], lambda a, b: a @ b),
        ("linalg.vecmat", [(4,), (4, 3), (3,)], lambda a, b: a @ b),
        ("linalg.dot", [(5,), (5,), ()], lambda a, b: np.dot(a, b)),
        ("linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>,"
         " affine_map<(d0, d1, d2) -> (d0, d1)>]", [(4, 3), (4, 2), (3, 2)], lambda a, b: a.T @ b),
    ],
)
def test_contractions_match_numpy(op_text: str, shapes: list[tuple[int, ...]],
                                  oracle: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    def ty(s: tuple[int, ...]) -> str:
        return "tensor<" + "".join(f"{x}x" for x in s) + "f32>"

    text = (f"%r = {op_text} ins(%a, %b : {ty(shapes[0])}, {ty(shapes[1])}) outs(%c : {ty(shapes[2])}) "
            f"-> {ty(shapes[2])}")
    (op,) = parse_linalg(text)
    assert "arith.mulf" in op.payload and "arith.addf" in op.payload
    a, b = _arr(shapes[0], 4), _arr(shapes[1], 5)
    got = run_op(op, {"%a": a, "%b": b, "%c": np.zeros(shapes[2])}, lambda v: v[0] * v[1] + v[2], True)
    assert np.array_equal(got, oracle(a, b))


def test_reduce_map_fill_copy_and_elementwise_match_numpy() -> None:
    a, b = _arr((3, 4, 2), 6), _arr((3, 4, 2), 7)
    (red,) = parse_linalg("%r = linalg.reduce { arith.addf } ins(%a : tensor<3x4x2xf32>) outs(%i : tensor<4xf32>) "
                          "dimensions = [0, 2]")
    assert red.iterator_types == ("reduction", "parallel", "reduction")
    got = run_op(red, {"%a": a, "%i": np.zeros(4)}, lambda v: v[0] + v[1], True)
    assert np.array_equal(got, a.sum(axis=(0, 2)))
    (mp,) = parse_linalg("%m = linalg.map ins(%a, %b : tensor<3x4x2xf32>, tensor<3x4x2xf32>) "
                         "outs(%i : tensor<3x4x2xf32>)\n  (%x: f32, %y: f32) {\n    %0 = arith.subf %x, %y : f32\n"
                         "    linalg.yield %0 : f32\n  }")
    assert mp.block_args == ("%x", "%y", "%out") and mp.payload_uses(0) and not mp.payload_uses(2)
    got = run_op(mp, {"%a": a, "%b": b, "%i": np.zeros(a.shape)}, lambda v: v[0] - v[1], False)
    assert np.array_equal(got, a - b)
    (fill,) = parse_linalg("%f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>")
    got = run_op(fill, {"%cst": np.array(2.5), "%e": np.zeros((3, 4))}, lambda v: v[0], False)
    assert np.array_equal(got, np.full((3, 4), 2.5))
    (cp,) = parse_linalg("linalg.copy ins(%a : memref<3x4x2xf32, strided<[8, 2, 1]>>) outs(%e : memref<3x4x2xf32>)")
    assert cp.name == "copy@1" and not cp.has_pure_tensor_semantics
    assert np.array_equal(run_op(cp, {"%a": a, "%e": np.zeros(a.shape)}, lambda v: v[0], False), a)
    (mx,) = parse_linalg("%x = linalg.max ins(%a, %b : tensor<3x4x2xf32>, tensor<3x4x2xf32>) "
                         "outs(%e : tensor<3x4x2xf32>) -> tensor<3x4x2xf32>")
    assert "arith.maximumf" in mx.payload
    assert np.array_equal(run_op(mx, {"%a": a, "%b": b, "%e": np.zeros(a.shape)}, max, False), np.maximum(a, b))


# ---------------------------------------------------------------------------
# Random chains of generics, every pair fused, vs numpy
# ---------------------------------------------------------------------------


def _payload(rng: random.Random, arity: int) -> Payload:
    coeffs = [rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0]) for _ in range(arity)]
    shift = rng.choice([0.0, 1.0, -0.25])
    return lambda xs: sum(c * x for c, x in zip(coeffs, xs)) + shift


def _ty(shape: Sequence[int]) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"


@st.composite
def chain(draw: st.DrawFn) -> tuple[str, int]:
    """2-4 generics; each reads a fresh argument (identity map, fixing its loop
    sizes) and one or two earlier results through projected permutations;
    results are written through a permutation or, sometimes, a stride-2 map
    that leaves half the tensor unwritten (an illegal fusion for a full reader)."""
    n_ops = draw(st.integers(2, 5))
    shapes: list[list[int]] = []
    lines: list[str] = []
    for j in range(n_ops):
        reads: list[tuple[int, list[int]]] = []  # (earlier op, loop of each of its tensor dims)
        if j == 0:
            n = draw(st.integers(1, 2))
            sizes = [draw(st.integers(1, 3)) for _ in range(n)]
        else:
            srcs = draw(st.lists(st.integers(0, j - 1), min_size=1, max_size=2, unique=True))
            first = shapes[srcs[0]]
            n = len(first) + draw(st.integers(0, 1))
            loops = draw(st.permutations(list(range(n))))[: len(first)]
            sizes = [0] * n
            for d, lp in zip(first, loops):
                sizes[lp] = d
            sizes = [s or draw(st.integers(1, 3)) for s in sizes]
            reads.append((srcs[0], list(loops)))
            for extra in srcs[1:]:
                shp = shapes[extra]
                free = list(range(n))
                chosen: list[int] = []
                for d in shp:
                    fit = [lp for lp in free if sizes[lp] == d]
                    if not fit:
                        break
                    lp = draw(st.sampled_from(fit))
                    chosen.append(lp)
                    free.remove(lp)
                if len(chosen) == len(shp):
                    reads.append((extra, chosen))
        perm = draw(st.permutations(list(range(n))))
        stride = draw(st.integers(0, 4)) == 0
        out_shape = [sizes[p] for p in perm]
        out_res = [f"d{p}" for p in perm]
        if stride:
            out_shape[0] *= 2
            out_res[0] = f"d{perm[0]} * 2"
        dims = ", ".join(f"d{i}" for i in range(n))
        maps = [f"affine_map<({dims}) -> ({dims})>"]
        vals = [f"%arg{j}"]
        types = [_ty(sizes)]
        for src, lps in reads:
            maps.append(f"affine_map<({dims}) -> ({', '.join(f'd{lp}' for lp in lps)})>")
            vals.append(f"%r{src}")
            types.append(_ty(shapes[src]))
        maps.append(f"affine_map<({dims}) -> ({', '.join(out_res)})>")
        args = ", ".join(f"%b{i}: f32" for i in range(len(vals) + 1))
        iters = ", ".join(['"parallel"'] * n)
        lines.append(
            f"%r{j} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f"iterator_types = [{iters}]}}\n"
            f"    ins({', '.join(vals)} : {', '.join(types)}) outs(%init{j} : {_ty(out_shape)}) {{\n"
            f"^bb0({args}):\n  %y = \"test.payload\"({', '.join(f'%b{i}' for i in range(len(vals)))}) : f32\n"
            f"  linalg.yield %y : f32\n}} -> {_ty(out_shape)}\n"
        )
        shapes.append(out_shape)
    text = "func.func @chain() {\n" + "".join(lines) + "  return\n}\n"
    return text, draw(st.integers(0, 10**6))


@settings(max_examples=60, deadline=None)
@given(chain())
def test_random_chains_fused_pairwise_agree_with_numpy(case: tuple[str, int]) -> None:
    text, seed = case
    ops = parse_linalg(text)
    rng = random.Random(seed)
    f = {op.name: _payload(rng, len(op.inputs)) for op in ops}
    env: dict[str, np.ndarray] = {}
    for k, op in enumerate(ops):
        shape = tuple(int(s or 0) for s in op.inputs[0].type.shape)
        env[f"%arg{k}"] = _arr(shape, seed + k)
        env[f"%init{k}"] = np.full(tuple(int(s or 0) for s in op.outputs[0].type.shape), -7.0)
        env[op.name] = run_op(op, env, f[op.name], False)  # sequential semantics
    pairs = fusion_pairs(ops)
    assert pairs, text
    for p, c in pairs:
        rep = check_fusion(p, c)
        assert rep.status != "unknown", rep.reason
        write = p.outputs[0].map
        written = {write.evaluate(q) for q in itertools.product(*(range(b.hi + 1) for b in loop_bounds(p)))}
        read = c.operands[rep.operand_index].map
        csizes = [b.hi + 1 for b in loop_bounds(c)]
        all_read_written = all(read.evaluate(q) in written for q in itertools.product(*(range(s) for s in csizes)))
        assert (rep.status == "legal") == all_read_written  # the enumeration oracle decides legality here
        if rep.status == "illegal":
            w = rep.obligations[1].witness
            assert w is not None and tuple(w["element"]) not in written
            assert read.evaluate(tuple(w["consumer_iteration"])) == tuple(w["element"])
            continue
        assert rep.fused is not None
        producer_side = [fo for fo in rep.fused if fo.origin.startswith("producer")]
        consumer_side = {fo.value: fo for fo in rep.fused if fo.origin == "consumer input"}
        got = env[c.outputs[0].value].astype(float).copy()
        for q in itertools.product(*(range(s) for s in csizes)):
            vals = []
            for k, o in enumerate(c.inputs):
                if k == rep.operand_index:
                    vals.append(f[p.name]([float(env[fo.value][fo.map.evaluate(q)]) for fo in producer_side]))
                else:
                    fo = consumer_side[o.value]
                    vals.append(float(env[fo.value][fo.map.evaluate(q)]))
            got[c.outputs[0].map.evaluate(q)] = f[c.name](vals)
        assert np.array_equal(got, env[c.name]), (p.name, c.name)


def test_chain_file_reports_every_pair(capsys: pytest.CaptureFixture[str]) -> None:
    from verified_indexing.cli import main

    code = main(["fuse", str(EXAMPLES / "real_module.mlir")])
    out = capsys.readouterr().out
    assert out.startswith("skipped linalg.softmax (%s, line 24)")
    assert out.count("\nfuse ") + out.startswith("fuse ") == 6
    assert code == 1  # the reduce -> broadcast pair is illegal (the fill -> outs pair fuses now)


def test_format_helpers_are_consistent() -> None:
    # Sanity for the helpers above: a 2-op chain text parses into generics with the intended maps.
    m: list[AffineExpr] = [Dim(1), Dim(0)]
    assert format_affine_map(2, 0, tuple(m)) == "affine_map<(d0, d1) -> (d1, d0)>"


def test_consumer_reading_the_producer_through_two_operands() -> None:
    from verified_indexing.legality.linalg import fusion_candidates

    text = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
%p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%a : tensor<3x3xf32>) outs(%i : tensor<3x3xf32>) {
^bb0(%x: f32, %o: f32):
  %e = math.exp %x : f32
  linalg.yield %e : f32
} -> tensor<3x3xf32>
%c = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
    ins(%p, %p : tensor<3x3xf32>, tensor<3x3xf32>) outs(%j : tensor<3x3xf32>) {
^bb0(%x: f32, %y: f32, %o: f32):
  %s = arith.subf %x, %y : f32
  linalg.yield %s : f32
} -> tensor<3x3xf32>
"""
    ops = parse_linalg(text)
    cands = fusion_candidates(ops)
    assert [(p.name, c.name, k) for p, c, k in cands] == [("%p", "%c", 0), ("%p", "%c", 1)]
    a = _arr((3, 3), 11)
    pval = np.exp(a)
    want = pval - pval.T
    for p, c, k in cands:
        rep = check_fusion(p, c, operand_index=k)
        assert rep.status == "legal" and rep.fused is not None and rep.operand_index == k
        # The fused op: the producer's payload at the fused map of %a, the other operand still reads %p.
        got = np.zeros((3, 3))
        for q in itertools.product(range(3), range(3)):
            vals = []
            for fo in rep.fused:
                if fo.value == "%a":
                    vals.append(float(np.exp(a[fo.map.evaluate(q)])))
                elif fo.value == "%p":
                    vals.append(float(pval[fo.map.evaluate(q)]))
            got[q] = vals[0] - vals[1]
        assert np.allclose(got, want)
    with pytest.raises(VerifiedIndexingError):
        check_fusion(ops[0], ops[1], operand_index=2)  # the outs operand is not a result of %p


def test_ssa_names_are_per_function() -> None:
    one = (EXAMPLES / "transpose.mlir").read_text(encoding="utf-8")
    two = one.replace("@transpose_then_square", "@again")
    text = "module attributes {x.y = 1} {\n" + one + "\nfunc.func private @decl(%a: i32) -> i32\n" + two + "\n}\n"
    ops = parse_linalg(text)
    assert [op.function for op in ops] == ["@transpose_then_square"] * 2 + ["@again"] * 2
    pairs = [(p.function, c.function) for p, c in fusion_pairs(ops)]
    assert pairs == [("@transpose_then_square", "@transpose_then_square"), ("@again", "@again")]


def test_fill_producer_fuses_with_its_scalar() -> None:
    text = """func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.add ins(%f, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}"""
    (p, c) = fusion_pairs(parse_linalg(text))[0]
    rep = check_fusion(p, c)
    assert rep.status == "legal" and rep.fused is not None
    assert rep.fused[0].value == "%cst" and rep.fused[0].map == AffineMap(2, 0, [])
    fused = fused_generic_text(rep)
    assert fused is not None and "^bb0(%fa0: f32, %fa1: f32, %fa2: f32):" in fused
    (op,) = parse_linalg(fused, strict=True)  # the fused text reads back with the same maps
    assert [o.map for o in op.operands] == [f.map for f in rep.fused]


def test_producer_payload_with_linalg_index_is_remapped_through_the_inverse() -> None:
    # Once not copied as text; now the producer's `linalg.index 0` becomes an
    # affine.apply of the fused op's loops through the proven inverse, and the
    # whole-op proof reads the fused op back and proves it.
    text = (EXAMPLES / "transpose.mlir").read_text(encoding="utf-8").replace(
        "    linalg.yield %in : f32\n  } -> tensor<8x4xf32>\n  %consumer",
        "    %i = linalg.index 0 : index\n    %c = arith.index_cast %i : index to i32\n"
        "    %f = arith.sitofp %c : i32 to f32\n    %s = arith.addf %in, %f : f32\n"
        "    linalg.yield %s : f32\n  } -> tensor<8x4xf32>\n  %consumer", 1)
    ops = parse_linalg(text)
    assert [op.name for op in ops] == ["%producer", "%consumer"]  # linalg.index is not an op of the module
    rep = check_fusion(ops[0], ops[1])
    fused = fused_generic_text(rep)
    assert rep.status == "legal" and fused is not None
    assert "%p_i = affine.apply affine_map<(d0, d1) -> (d1)>(%fi0, %fi1)" in fused
    assert rep.whole_op is not None and rep.whole_op.verdict.proved
    assert rep.to_json()["producer_op"] == "linalg.generic"


def test_linalg_names_inside_strings_are_not_ops() -> None:
    text = ('module attributes {x.note = "see linalg.matmul and linalg.generic"} {\n'
            + (EXAMPLES / "transpose.mlir").read_text(encoding="utf-8") + "\n}\n")
    mod = parse_linalg_module(text)
    assert [op.name for op in mod.ops] == ["%producer", "%consumer"] and mod.skipped == ()


def test_named_op_with_a_leading_attribute_dictionary() -> None:
    (op,) = parse_linalg("%r = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<3x4xi32>, "
                         "tensor<4x2xi32>) outs(%c : tensor<3x2xi32>) -> tensor<3x2xi32>")
    assert op.iterator_types == ("parallel", "parallel", "reduction") and "arith.muli" in op.payload
