"""Reshape propagation by expansion (issue 24 item 2): an op MLIR's
``linalg-fuse-elementwise-ops`` rewrote over an expanded iteration space
(``FoldReshapeWithGenericOpByExpansion``: a ``tensor.expand_shape`` of its result
moved above it) is proven to compute its original's ``expand_shape``, and the op
fused through the reshape is decided.

Oracles: numpy's row-major reshape of the original's values, computed by the
Linalg interpreter, against the expanded op's values; and iree-opt's real pass
(skipped without IREE), with a planted wrong output refuted by the interpreter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verified_indexing.legality.linalg_interpreter import run_ops
from verified_indexing.legality.linalg_ir import GenericOp, Operand, parse_linalg
from verified_indexing.legality.linalg_reshape import check_expanded, expand_shape_facts
from verified_indexing.mlir_driver import PRINT_FLAGS, find_iree_opt, run_iree_opt, validate_mlir, validate_output

np = pytest.importorskip("numpy")
ROOT = Path(__file__).resolve().parent.parent
needs_iree = pytest.mark.skipif(find_iree_opt() is None, reason="iree-opt (iree-base-compiler) is not installed")

BEFORE = """
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%i : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
"""
# as MLIR's pass prints it (names as validate-mlir renames them)
AFTER = """
  %ex = tensor.expand_shape %x [[0, 1], [2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %ei = tensor.expand_shape %i [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
       affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%ex : tensor<4x1x8xf32>) outs(%ei : tensor<4x1xf32>) {
  ^bb0(%h_in: f32, %h_out: f32):
    %h_s = arith.addf %h_out, %h_in : f32
    linalg.yield %h_s : f32
  } -> tensor<4x1xf32>
"""


def _check(after: str) -> tuple[str, str]:
    (b,) = parse_linalg(BEFORE)
    (a,) = parse_linalg(after)
    st, why, _ = check_expanded(a, b, expand_shape_facts(after))
    return st, why


def test_the_expanded_reduction_computes_the_expanded_original() -> None:
    st, why = _check(AFTER)
    assert st == "proved", why
    assert "d0 -> (d0, d1), d1 -> (d2)" in why
    # numpy: the original's result, reshaped row-major, is the expanded op's result
    (b,) = parse_linalg(BEFORE)
    (a,) = parse_linalg(AFTER)
    rng = np.random.default_rng(0)
    x, i = rng.integers(-3, 4, (4, 8)).astype(float), rng.integers(-3, 4, 4).astype(float)
    want = run_ops([b], {"%x": x, "%i": i})["%2"].reshape(4, 1)
    got = run_ops([a], {"%ex": x.reshape(4, 1, 8), "%ei": i.reshape(4, 1)})["%2"]
    assert np.array_equal(want, got)


@pytest.mark.parametrize(("change", "reason"), [
    (("arith.addf %h_out, %h_in", "arith.mulf %h_out, %h_in"), "payload is not"),
    (("affine_map<(d0, d1, d2) -> (d0, d1, d2)>,", "affine_map<(d0, d1, d2) -> (d1, d0, d2)>,"), "loop sizes"),
    (("affine_map<(d0, d1, d2) -> (d0, d1, d2)>,", "affine_map<(d0, d1, d2) -> (d0, d1, 7 - d2)>,"), "loop sizes"),
    (("ins(%ex :", "ins(%x :"), "not shown"),
])
def test_what_is_not_the_expansion_is_unknown(change: tuple[str, str], reason: str) -> None:
    after = AFTER.replace(*change)
    assert after != AFTER
    st, why = _check(after)
    assert st == "unknown" and reason in why, why


def test_the_check_is_semantic_a_unit_dimension_may_group_either_way() -> None:
    # 4x8 into 4x1x8 by [[0], [1, 2]] is the same reshape as by [[0, 1], [2]] (the unit dimension)
    st, why = _check(AFTER.replace("[[0, 1], [2]] output_shape [4, 1, 8]", "[[0], [1, 2]] output_shape [4, 1, 8]"))
    assert st == "proved", why


@needs_iree
def test_validate_mlir_decides_the_fusion_through_an_expand_shape() -> None:
    """The layer-norm shape JAX gives (a row mean, expand_shape to 4x1, broadcast,
    subtract): MLIR propagates the expand_shape above the fill and the reduction
    and fuses the chain; every op is proved (the fused op was unknown)."""
    r = validate_mlir((ROOT / "examples" / "mlir" / "validate_mlir_reshape.mlir").read_text())
    assert [f.status for f in r.fused] == ["proved"] * 3, [f.reason for f in r.fused]
    assert sum("reshape propagation by expansion" in f.reason for f in r.fused) == 2
    assert any(f.replaced for f in r.fused) and r.oracle_runs == 3 and r.exit_code == 0


@needs_iree
def test_a_wrong_expanded_op_is_not_proved_and_its_value_is_refuted() -> None:
    text = (ROOT / "examples" / "mlir" / "validate_mlir_reshape.mlir").read_text()
    from verified_indexing.mlir_driver import _per_function

    before = _per_function(run_iree_opt(text, PRINT_FLAGS))
    after = _per_function(run_iree_opt(before, ["--linalg-fuse-elementwise-ops", *PRINT_FLAGS]))
    bad = after.replace("arith.addf %out_f1, %in_f1", "arith.mulf %out_f1, %in_f1", 1)
    assert bad != after
    r = validate_output(before, bad)
    st = {f.op: f.status for f in r.fused}
    assert st["%2"] == "unknown" and "refuted" in st.values() and r.exit_code == 1
    w = next(f.witness for f in r.fused if f.status == "refuted")
    assert w is not None and w["before"] != w["after"]


def test_a_transposed_read_of_the_expanded_operand_is_not_the_expansion() -> None:
    """16 elements expanded to 4x4: reading the expansion transposed is another
    element at most points (checked point by point: no grouping fits)."""
    b_text = """
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
       iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%o : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.negf %in : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
"""
    a_text = """
  %ex = tensor.expand_shape %x [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %eo = tensor.expand_shape %o [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (MAP)>, affine_map<(d0, d1) -> (d0, d1)>],
       iterator_types = ["parallel", "parallel"]} ins(%ex : tensor<4x4xf32>) outs(%eo : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
"""
    (b,) = parse_linalg(b_text)
    for m, want in (("d0, d1", "proved"), ("d1, d0", "unknown")):
        text = a_text.replace("MAP", m)
        (a,) = parse_linalg(text)
        st, why, _ = check_expanded(a, b, expand_shape_facts(text))
        assert st == want, why
        # numpy agrees: the expanded op's values are the original's reshaped exactly when proved
        x, o = np.arange(16.0), np.zeros(16)
        same = np.array_equal(run_ops([a], {"%ex": x.reshape(4, 4), "%eo": o.reshape(4, 4)})["%2"],
                              run_ops([b], {"%x": x, "%o": o})["%2"].reshape(4, 4))
        assert same == (want == "proved")


RMS = """func.func @rms(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4xf32>) -> tensor<4xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x8xf32>) outs(%3 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %expanded = tensor.expand_shape %4 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<4x8xf32>, tensor<4x1xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}
"""


@needs_iree
def test_an_expanded_op_that_also_absorbed_a_producer_is_proved() -> None:
    """x*x fused into the row sum and the sum expanded (the RMS shape JAX gives):
    the expanded op is the project's own fused op of the pair, expanded."""
    r = validate_mlir(RMS)
    st = {f.op: (f.status, f.reason) for f in r.fused}
    assert st["%4"][0] == "proved" and "the project's fused op of %1 into %4" in st["%4"][1], st
    assert all(s == "proved" for s, _ in st.values()) and r.oracle_runs == 3 and r.exit_code == 0
    # the interpreter oracle compared the returned value: a planted change in the expanded op is refuted
    from verified_indexing.mlir_driver import _per_function

    before = _per_function(run_iree_opt(RMS, PRINT_FLAGS))
    after = _per_function(run_iree_opt(before, ["--linalg-fuse-elementwise-ops", *PRINT_FLAGS]))
    m = re.search(r"arith\.mulf (%[\w]+), %[\w]+", after)
    assert m is not None
    bad = after.replace(m.group(), f"arith.addf {m.group(1)}, {m.group(1)}", 1)
    r2 = validate_output(before, bad)
    assert r2.exit_code == 1 and any(f.status == "refuted" for f in r2.fused)


THROUGH = """func.func @f(%x: tensor<8xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
       iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32> loc("p")
  %ex = tensor.expand_shape %1 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
       affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       ins(%ex, %y : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32> loc("c")
  return %2 : tensor<2x4xf32>
}
"""


def _fused_through(text: str, via: str) -> tuple[GenericOp, Operand]:
    """``fuse --json`` on ``text`` (valid against the schema): its one pair, through ``via``, legal, and MLIR's
    pass deciding it by reshape propagation (it fuses); the project's fused op and its operand reading %x."""
    import json

    from test_cli_io import assert_valid, run

    code, out, err = run("fuse", "-", "--json", stdin=text)
    assert code == 0, err
    data = json.loads(out)
    assert_valid(data)
    assert data["through_reshape"] == via and data["status"] == "legal"
    assert data["mlir"]["pass"]["decided_by"] == "reshape propagation" and data["mlir"]["pass"]["fuses"]
    (fop,) = parse_linalg(data["fused"]["mlir"], strict=True)
    (xin,) = [o for o in fop.inputs if o.value == "%x"]
    return fop, xin


def test_fuse_finds_and_decides_the_pair_through_an_expand_shape() -> None:
    """Issue 24 item 2: the pair %1 -> tensor.expand_shape -> %2 is found (it was
    'no producer-consumer pair') and decided: legal, the fused op reading %x through
    the linearized map. Oracle: numpy (x*x reshaped, minus y) against the fused op
    run by the interpreter."""
    from test_cli_io import run

    fop, xin = _fused_through(THROUGH, "tensor.expand_shape %ex")
    assert "d0 * 4 + d1" in str(xin.map), xin.map
    x, y = np.arange(8.0) - 3, np.arange(8.0).reshape(2, 4) * 2
    got = run_ops([fop], {"%x": x, "%y": y, "%e2": np.zeros((2, 4))})["%fused"]
    assert np.array_equal(got, (x * x).reshape(2, 4) - y)
    _, out, _ = run("fuse", "-", stdin=THROUGH)
    assert "(operand #0: %1 through tensor.expand_shape %ex)" in out


@needs_iree
def test_the_pass_fuses_the_pair_through_the_expand_shape_too() -> None:
    """MLIR's pass propagates the reshape above %1 and fuses: one op is left, at the
    consumer's location, reading %x's expansion (the decision the column states)."""
    after = run_iree_opt(THROUGH, ["--linalg-fuse-elementwise-ops", "--mlir-print-debuginfo",
                                   "--mlir-print-local-scope"])
    assert after.count("linalg.generic") == 1 and 'loc("c")' in after and 'loc("p")' not in after.split(
        "linalg.generic", 1)[1].split("->", 1)[0]
    r = validate_mlir(THROUGH)
    assert [f.status for f in r.fused] == ["proved"] and r.fused[0].replaced, [f.reason for f in r.fused]
    assert [(d.predicted, d.fused, d.decided_by) for d in r.decisions] == [(True, True, "reshape propagation")]


FLATTEN = """func.func @f(%x: tensor<4x8xf32>, %y: tensor<32xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
       iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %c = tensor.collapse_shape %1 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
       iterator_types = ["parallel"]} ins(%c, %y : tensor<32xf32>, tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %2 : tensor<32xf32>
}
"""


def test_fuse_decides_the_pair_through_a_collapse_shape() -> None:
    """The flatten JAX writes (reshape to 1-D): %2 reads %1 through a collapse_shape,
    i.e. %1[d0 floordiv 8, d0 mod 8]; legal, and the fused op computes x*x flattened
    minus y (numpy)."""
    fop, xin = _fused_through(FLATTEN, "tensor.collapse_shape %c")
    assert "d0 floordiv 8" in str(xin.map) and "d0 mod 8" in str(xin.map), xin.map
    x, y = np.arange(32.0).reshape(4, 8) - 5, np.arange(32.0) / 2
    got = run_ops([fop], {"%x": x, "%y": y, "%e2": np.zeros(32)})["%fused"]
    assert np.array_equal(got, (x * x).reshape(32) - y)


@needs_iree
def test_the_pass_through_a_collapse_shape_is_proved() -> None:
    """MLIR expands the consumer to 4x8 (reading %x and an expand_shape of %y), fuses
    %1 and collapses the result: the expanded op is proved against the project's
    fused op of the pair (the undefined inits grouped as the writes require), the
    returned collapse computed by the interpreter; the decision agrees."""
    r = validate_mlir(FLATTEN)
    assert [f.status for f in r.fused] == ["proved"], [f.reason for f in r.fused]
    assert "the project's fused op of %1 into" in r.fused[0].reason and r.oracle_runs == 3
    assert [(d.predicted, d.fused, d.decided_by) for d in r.decisions] == [(True, True, "reshape propagation")]

