"""validate-mlir (issue 24 item 4): MLIR's own linalg-fuse-elementwise-ops, run by
iree-opt, validated. Skipped without IREE (``iree-base-compiler``), except the
test that the command says IREE is missing.

Oracles independent of the proof: numpy evaluates the functions directly (the
transposes, sums and products written out by hand), and MLIR's own output is
parsed by iree-opt.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verified_indexing import mlir_driver
from verified_indexing.cli import main
from verified_indexing.mlir_driver import PRINT_FLAGS, find_iree_opt, run_iree_opt, validate_mlir, validate_output

ROOT = Path(__file__).resolve().parent.parent
needs_iree = pytest.mark.skipif(find_iree_opt() is None, reason="iree-opt (iree-base-compiler) is not installed")
np = pytest.importorskip("numpy")

PAIR = """#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @f(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %cst = arith.constant 2.0 : f32
  %1 = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%1, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
"""


def _run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@needs_iree
def test_pair_proved_and_the_output_computes_the_numpy_function() -> None:
    r = validate_mlir(PAIR)
    assert [(f.op, f.replaced, f.status) for f in r.fused] == [("%2", ("%1",), "proved")]
    assert r.exit_code == 0
    # independent: the pass's output (as MLIR printed it) run by the interpreter is 2 * y^T + x
    from verified_indexing.legality.linalg_interpreter import run_ops
    from verified_indexing.legality.linalg_ir import parse_linalg

    (op,) = parse_linalg(r.after)
    x, y = np.arange(16.0).reshape(4, 4), np.arange(16.0).reshape(4, 4) * 3 - 7
    env = run_ops([op], {"%arg0": x, "%arg1": y, "%cst_f1": 2.0, "%0": np.zeros((4, 4))})
    assert np.array_equal(env["%2"], 2 * y.T + x)


@needs_iree
def test_planted_wrong_map_refuted_with_the_element_and_both_values() -> None:
    before = run_iree_opt(PAIR, PRINT_FLAGS)
    after = run_iree_opt(before, ["--linalg-fuse-elementwise-ops", *PRINT_FLAGS])
    # plant a bug: the fused op reads %y untransposed
    planted = after.replace("indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, ",
                            "indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, ", 1)
    assert planted != after
    r = validate_output(before, planted)
    (f,) = r.fused
    assert f.status == "refuted" and r.exit_code == 1
    w = f.witness
    assert w is not None
    # independent: numpy at the witness's seed gives both values
    env, _ = mlir_driver._inputs([before], int(w["seed"]))
    x, y = env["%arg0"], env["%arg1"]
    i, j = w["element"]
    assert w["before"] == (2 * y.T + x)[i, j] and w["after"] == (2 * y + x)[i, j]
    assert w["before"] != w["after"]


@needs_iree
def test_chain_proved_and_two_use_producer_reported_as_a_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "examples" / "mlir" / "validate_mlir_chain.mlir"
    code, out, _ = _run_cli(capsys, "validate-mlir", str(path))
    assert code == 0, out
    assert "1 proved, 0 refuted, 0 unknown" in out
    assert "the chain of 3 ops" in out
    assert "has 2 uses" in out and "the project proves it legal" in out
    # independent: MLIR's output keeps one generic in @chain and both in @two_uses
    r = validate_mlir(path.read_text())
    assert r.after.count("linalg.generic") == 3
    (rf,) = r.refusals
    assert "exactly one use" in rf.why_refused


@needs_iree
def test_pass_output_that_makes_a_returned_element_undefined_is_refuted() -> None:
    """The pass swaps the producer's init for a tensor.empty although the producer
    writes through (d0 + d1, d0), not every element; the consumer returns them all."""
    r = validate_mlir((ROOT / "examples" / "mlir" / "skew_illegal.mlir").read_text())
    (f,) = r.fused
    assert f.status == "refuted", f
    w = f.witness
    assert w is not None and np.isnan(w["after"])
    i, j = w["element"]
    # independent: element (i, j) is written by no producer iteration (d0 + d1 = i, d0 = j)
    assert not any(d0 + d1 == i and d0 == j for d0 in range(4) for d1 in range(4))
    env, _ = mlir_driver._inputs([r.before], int(w["seed"]))
    assert w["before"] == -env["%arg1"][i, j]


@needs_iree
def test_json_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, _ = _run_cli(capsys, "validate-mlir", "-e", PAIR, "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["fused"][0]["status"] == "proved"
    code, out, err = _run_cli(capsys, "validate-mlir", "-e", PAIR.replace("arith.addf %a, %b", "arith.addf %a, %zz"))
    assert code == 3
    assert "MLIR rejected" in err and "%zz" in err and "Traceback" not in err
    code, _, err = _run_cli(capsys, "validate-mlir", "-e", PAIR, "--pass", "no such pass")
    assert code == 3 and "--pass" in err


def test_without_iree_the_command_says_so(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mlir_driver, "find_iree_opt", lambda: None)
    code, _, err = _run_cli(capsys, "validate-mlir", "-e", PAIR)
    assert code == 3
    assert "iree-opt" in err and "not installed" in err and "Traceback" not in err


@needs_iree
def test_mlir_fuses_an_outs_reading_producer_into_a_reduction_wrongly() -> None:
    """Found by the fuzz area (seed 0, job 1): the producer reads its init; MLIR
    fuses it into a consumer with a reduction loop, and the fused op keeps the
    producer's result as an output it updates at every reduction step, so the
    producer's value it feeds the consumer changes from one step to the next."""
    r = validate_mlir((ROOT / "examples" / "mlir" / "validate_mlir_outs_reduction.mlir").read_text())
    (f,) = r.fused
    assert f.status == "refuted" and f.replaced and r.exit_code == 1
    w = f.witness
    assert w is not None
    # independent: the function written out with numpy
    env, _ = mlir_driver._inputs([r.before], int(w["seed"]))
    a0, a1, a2, a3, a4 = (env[f"%arg{i}"] for i in range(5))
    p = a0 - a1 + np.arange(3) + a2
    q = a4 + (p[None, :] + a3).sum(axis=0)
    (j,) = w["element"]
    assert w["before"] == -q[j]
    assert w["after"] != w["before"]


@needs_iree
def test_mlir_fuses_an_outs_reading_producer_into_a_broadcast_wrongly() -> None:
    """Found by the fuzz area (seed 7, job 1): the fused op's result is the
    consumer's second result (%2#1); the returned values are matched by position."""
    r = validate_mlir((ROOT / "examples" / "mlir" / "validate_mlir_outs_broadcast.mlir").read_text())
    (f,) = r.fused
    assert f.status == "refuted" and f.replaced
    w = f.witness
    assert w is not None
    env, _ = mlir_driver._inputs([r.before], int(w["seed"]))
    a0, a1, a2, a3 = (env[f"%arg{i}"] for i in range(4))
    q = (a0 - a1 + a2)[None, :] * a3  # the input function, written out
    i, j = w["element"]
    assert w["before"] == q[i, j] and w["after"] != q[i, j]
    # and what MLIR's output computes at d0 = 1: the producer re-reads its own output
    assert i == 1 and w["after"] == (a0 - a1 + (a0 - a1 + a2))[j] * a3[i, j]


@needs_iree
def test_the_model_of_the_pass_decision_agrees_with_the_pass() -> None:
    """Issue 24 item 3: areElementwiseOpsFusable, the one-use control function and
    fill folding, against what MLIR's pass did (its output)."""
    text = (ROOT / "examples" / "mlir" / "validate_mlir_chain.mlir").read_text()
    text += """
func.func @fill(%x: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                       affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%f, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""
    r = validate_mlir(text)
    got = {(d.predicted, d.fused) for d in r.decisions}
    assert got == {(True, True), (False, False)}, r.decisions
    # independent: the pass's output has no linalg.fill left, and 4 generics (chain 1, two_uses 2, fill 1)
    assert "linalg.fill" not in r.after and r.after.count("linalg.generic") == 4
    assert any("FoldFillWithGenericOp" in d.why and d.fused for d in r.decisions)
    fill = next(f for f in r.fused if any("FoldFill" in d.why and d.consumer == f.op for d in r.decisions))
    assert fill.status in ("proved", "unknown") and fill.status != "refuted"


@needs_iree
def test_fuzz_area_job_is_seeded_and_its_findings_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzz/mlir_area.py: the same seed draws the same functions; a refuted pass
    output is kept with its function, which validate-mlir refutes again alone."""
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("fuzz_mlir_area_t", ROOT / "fuzz" / "mlir_area.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = [mod.random_function(random.Random("0/mlir/1"), f"f{i}")[0] for i in range(3)]
    b = [mod.random_function(random.Random("0/mlir/1"), f"f{i}")[0] for i in range(3)]
    assert a == b
    monkeypatch.setattr(mod, "BATCH", 11)  # job 1 of seed 0 holds a refuted pass output in its first 11 functions
    res = mod.check_mlir(random.Random("0/mlir/1"))
    t = res["tally"]
    assert res["outcome"] == "ok" and t["pairs"] >= 11 and t["refuted"] >= 1
    f = res["findings"][0]
    again = validate_mlir(f["input"] + "\n")
    assert any(x.status == "refuted" for x in again.fused)


@needs_iree
def test_jax_function_through_iree_util_func_arguments_matched() -> None:
    """validate_jax: JAX -> StableHLO -> iree-compile --compile-to=input (util.func,
    whose arguments MLIR prints without locations: matched by position) -> the
    pass. The six-op elementwise chain is one fused op, proved; numpy agrees with
    the pass's output."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from verified_indexing.legality.linalg_interpreter import run_ops
    from verified_indexing.legality.linalg_ir import parse_linalg
    from verified_indexing.mlir_driver import validate_jax

    def f(x: object, b: object) -> object:
        return jnp.maximum(jnp.tanh(x * 2.0 + b), 0.0) * x  # type: ignore[operator]

    r = validate_jax(f, jnp.ones((4, 8), jnp.float32), jnp.ones((8,), jnp.float32))
    (fc,) = r.fused
    assert fc.status == "proved" and len(fc.replaced) == 5
    assert all(d.predicted == d.fused for d in r.decisions)
    (op,) = parse_linalg(r.after)
    x = np.arange(32.0).reshape(4, 8) / 8 - 2
    b = np.arange(8.0) / 4 - 1
    env = {o.value: np.zeros((4, 8)) for o in op.outputs}
    env.update({"%arg0": x, "%arg1": b, "%cst_f1": 0.0, "%cst_0_f1": 2.0})
    out = run_ops([op], env)[op.name]
    assert np.allclose(out, np.maximum(np.tanh(x * 2.0 + b), 0.0) * x)


@needs_iree
def test_producer_read_through_two_operands_is_fused_twice_and_proved() -> None:
    """x * b[None, :] + b: IREE's input broadcasts b once and the consumer reads it
    twice; the pass fuses it operand by operand (after the first fusion it has one
    use): folded the same way through the project's own fused op, then proved."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from verified_indexing.mlir_driver import validate_jax

    r = validate_jax(lambda x, b: x * b[None, :] + b, jnp.ones((4, 8), jnp.float32), jnp.ones((8,), jnp.float32))
    (fc,) = r.fused
    assert fc.status == "proved", fc.reason
    # independent: MLIR's output has a single generic reading the function's two arguments
    assert r.after.count("linalg.generic") == 1 and "ins(%arg0, %arg1" in r.after


INIT_READ = """func.func @g(%a: tensor<3x2xf32>, %i: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%a : tensor<3x2xf32>) outs(%i : tensor<2x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%p : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  return %q : tensor<2x3xf32>
}
"""


@needs_iree
def test_a_kept_init_read_once_per_element_is_proved() -> None:
    """The producer reads its init; MLIR keeps it as an output of the fused op
    (returned first) and reads its block argument. The map is injective over the
    fused loops, so the read is the init: proved (the outputs and block arguments
    moved after the consumer's together). Numpy agrees with MLIR's output."""
    from verified_indexing.legality.linalg_interpreter import run_ops
    from verified_indexing.legality.linalg_ir import parse_linalg

    r = validate_mlir(INIT_READ)
    (f,) = r.fused
    assert f.status == "proved", f.reason
    assert "written once per element" in f.reason
    (op,) = parse_linalg(r.after)
    assert len(op.outputs) == 2  # the kept init first, as MLIR orders them
    a = np.arange(6.0).reshape(3, 2) - 2
    i = np.arange(6.0).reshape(2, 3) * 3
    env = {"%arg0": a, "%arg1": i, **{o.value: np.zeros((2, 3)) for o in op.outputs if o.value != "%arg1"}}
    outs = run_ops([op], env)
    assert np.array_equal(outs[op.results[1]], -(a.T + i))


@needs_iree
def test_an_op_the_pass_changed_without_fusing_is_not_passed_silently() -> None:
    """skew_legal: the pass gives the producer a tensor.empty init although its map
    (d0 + d1, d0) writes only part of it; the consumer reads only written elements,
    so no returned value differs -- the changed op is unknown (exit 2), not silently
    accepted, and the intermediate difference is a note."""
    from verified_indexing.legality.linalg_ir import parse_linalg

    r = validate_mlir((ROOT / "examples" / "mlir" / "skew_legal.mlir").read_text())
    (f,) = r.fused
    assert f.status == "unknown" and "changed this op's init" in f.reason and r.exit_code == 2
    assert any("not returned" in n for n in r.notes)
    # independent: MLIR's output gives the producer a tensor.empty init ...
    (prod, _) = parse_linalg(r.after)
    assert re.search(re.escape(prod.outputs[0].value) + r" = tensor\.empty\(\)", r.after)
    # ... and (d0 + d1, d0) over 4x4 leaves elements of the 7x4 result unwritten
    written = {(d0 + d1, d0) for d0 in range(4) for d1 in range(4)}
    assert len(written) < 7 * 4


def test_iree_opt_past_the_budget_is_unknown_not_bad_input(tmp_path: Path) -> None:
    """iree-opt still running when the command's budget ends is the budget's unknown (BudgetExpired, exit 2),
    never 'MLIR rejected the input' (exit 3); the same call without a budget answers."""
    from verified_indexing.engines.deadline import BudgetExpired, command_budget
    from verified_indexing.mlir_driver import PRINT_FLAGS, run_iree_opt

    with command_budget(0.001), pytest.raises(BudgetExpired):
        run_iree_opt(PAIR, PRINT_FLAGS)
    assert "linalg.generic" in run_iree_opt(PAIR, PRINT_FLAGS)


@pytest.mark.parametrize(("flag", "cap"), [("inf", 30.0), ("7", 7.0)])
def test_each_engine_query_is_capped_when_the_budget_is_infinite(monkeypatch: pytest.MonkeyPatch, flag: str,
                                                                 cap: float) -> None:
    """Issue 24 item 5: --timeout inf gives every engine query a 30 s cap (one query
    cannot hang the command); a finite --timeout is the cap. Runs without IREE."""
    from verified_indexing.cli.validate_mlir import ENGINE_CAP_S

    seen: list[float] = []

    def fake(text: str, source: str, *, pass_name: str, timeout: float, seeds: int) -> mlir_driver.MlirValidation:
        seen.append(timeout)
        return mlir_driver.MlirValidation(pass_name)

    monkeypatch.setattr(mlir_driver, "validate_mlir", fake)
    assert main(["validate-mlir", "-e", "func.func @f() { return }", "--timeout", flag]) == 0
    assert seen == [cap] and ENGINE_CAP_S == 30.0
