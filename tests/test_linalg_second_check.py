"""The second, independent check of every ``legal`` Linalg fusion (issue 26 item
12): the pair and the fused op run by the package's interpreter at several sizes.
It agrees on the examples, says it did not run without numpy, and a disagreement
with the whole-op proof is an internal error (exit 4), never a silent pass."""

from __future__ import annotations

from pathlib import Path

import pytest

import verified_indexing.legality.linalg as linalg
import verified_indexing.legality.linalg_interpreter as interp
from verified_indexing.cli import main
from verified_indexing.engines import Verdict
from verified_indexing.legality.linalg import check_fusion, fusion_candidates, parse_linalg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mlir"

PAIR = """
func.func @f(%a: tensor<?x?xf32>, %i: tensor<?x?xf32>, %j: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xf32>) outs(%i : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%j : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.subf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
"""


def _report() -> linalg.FusionReport:
    ((p, c, k),) = fusion_candidates(parse_linalg(PAIR))
    return check_fusion(p, c, operand_index=k)


@pytest.mark.parametrize("name", sorted(f.name for f in EXAMPLES.glob("*.mlir")))
def test_every_legal_example_is_checked_twice(name: str) -> None:
    ops = parse_linalg((EXAMPLES / name).read_text())
    for p, c, k in fusion_candidates(ops):
        rep = check_fusion(p, c, operand_index=k)
        if rep.status == "legal":
            assert rep.second_check is not None
            v = rep.second_check.verdict
            assert v.proved and v.engine == "interpreter" and "equal results at" in v.reason, v
        else:
            assert rep.second_check is None


def test_sizes_tried_satisfy_the_condition() -> None:
    from test_linalg_bounds import PAIR as BOUNDS

    # Legal when N0 <= 1 (the program writes out of bounds from N0 = 2 on): run at N0 = 1 only.
    ((p, c, k),) = fusion_candidates(parse_linalg(BOUNDS.format(w="d0 * 2", init="%A", r="d0", out="%B")))
    rep = check_fusion(p, c, operand_index=k)
    assert rep.condition == "N0 <= 1" and rep.second_check is not None
    assert rep.second_check.verdict.proved and rep.second_check.verdict.reason == "equal results at N0 = 1 (2 runs)"


def test_without_numpy_the_check_says_it_did_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interp, "HAVE_NUMPY", False)
    rep = _report()
    assert rep.status == "legal" and rep.second_check is not None
    v = rep.second_check.verdict
    assert v.status == "unknown" and "numpy is not installed" in v.reason and "did not run" in v.reason
    assert rep.to_json()["second_check"]["verdict"]["status"] == "unknown"


def _lying_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-op proof that calls a wrong fused op equal (what the second check is for)."""
    real = linalg.build_fused_text

    def wrong(rep: linalg.FusionReport) -> tuple[str | None, str]:
        text, why = real(rep)
        return (None if text is None else text.replace("arith.subf", "arith.addf")), why

    monkeypatch.setattr(linalg, "build_fused_text", wrong)
    monkeypatch.setattr(linalg, "prove_fused_equivalent",
                        lambda sem, fop, timeout=10.0: (Verdict("proved", "z3", 0.0, "lie"), None))


def test_a_disagreement_is_an_internal_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _lying_proof(monkeypatch)
    with pytest.raises(interp.Disagreement, match=r"differs from the fused op's %fused, element \[\d+, \d+\]"):
        _report()
    f = tmp_path / "pair.mlir"
    f.write_text(PAIR)
    monkeypatch.setenv("VERIFIED_INDEXING_DEBUG", "")
    assert main(["fuse", str(f)]) == 4
    assert "internal error: Disagreement" in capsys.readouterr().err


def test_a_fused_op_failing_where_the_pair_runs_is_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    real = linalg.build_fused_text

    def out_of_bounds(rep: linalg.FusionReport) -> tuple[str | None, str]:
        text, why = real(rep)
        assert text is not None
        return text.replace("affine_map<(d0, d1) -> (d1, d0)>", "affine_map<(d0, d1) -> (d1 + 1, d0)>", 1), why

    monkeypatch.setattr(linalg, "build_fused_text", out_of_bounds)
    monkeypatch.setattr(linalg, "prove_fused_equivalent",
                        lambda sem, fop, timeout=10.0: (Verdict("proved", "z3", 0.0, "lie"), None))
    with pytest.raises(interp.Disagreement, match="the fused op fails under the interpreter"):
        _report()


def test_an_operation_the_interpreter_does_not_know_is_reported() -> None:
    rep_text = PAIR.replace("%m = arith.subf %x, %y : f32", "%m = math.erf %x : f32")
    ((p, c, k),) = fusion_candidates(parse_linalg(rep_text))
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal" and rep.second_check is not None
    assert rep.second_check.verdict.status == "unknown" and "math.erf" in rep.second_check.verdict.reason


def test_the_text_report_shows_the_second_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "pair.mlir"
    f.write_text(PAIR)
    assert main(["fuse", str(f)]) == 0
    out = capsys.readouterr().out
    assert "[proved] the fused op, run by the Linalg interpreter" in out and "equal results at N0 = 1, N1 = 1" in out


def test_over_the_budget_the_check_says_it_did_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interp, "ITERATION_BUDGET", 10)
    text = (EXAMPLES / "transpose.mlir").read_text()
    ((p, c, k),) = fusion_candidates(parse_linalg(text))
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal" and rep.second_check is not None
    v = rep.second_check.verdict
    assert v.status == "unknown" and "over the interpreter's budget (10)" in v.reason and "did not run" in v.reason


def test_the_json_report_carries_the_second_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from test_cli_io import assert_valid

    f = tmp_path / "pair.mlir"
    f.write_text(PAIR)
    assert main(["fuse", str(f), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert_valid(obj)
    assert obj["second_check"]["verdict"]["status"] == "proved" and obj["second_check"]["verdict"]["engine"] == "interpreter"
    # No pair: an empty list of results and the line saying so, valid too.
    f.write_text(PAIR.split("  %c = linalg.generic")[0] + "  return %p : tensor<?x?xf32>\n}\n")
    assert main(["fuse", str(f), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert_valid(obj)
    assert obj["results"] == [] and obj["note"].startswith("no producer-consumer pair")
