"""The fuse / inline / invert subcommands: exit codes, JSON, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verified_indexing.cli import main

ROOT = Path(__file__).resolve().parent.parent
MLIR = ROOT / "examples" / "mlir"
CINN = ROOT / "examples" / "cinn"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("file", "code"),
    [("transpose.mlir", 0), ("broadcast.mlir", 0), ("skew_legal.mlir", 0), ("skew_illegal.mlir", 1),
     ("broadcast_rejected.mlir", 1)],
)
def test_fuse_exit_codes(capsys: pytest.CaptureFixture[str], file: str, code: int) -> None:
    got, out, _ = _run(capsys, "fuse", str(MLIR / file))
    assert got == code
    assert ("ours: legal" in out) == (code == 0)


def test_fuse_json_and_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "fuse", str(MLIR / "skew_legal.mlir"), "--producer", "producer",
                        "--consumer", "%consumer", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["mlir"]["rejected_by"] == "producer result map is a permutation"
    assert data["status"] == "legal"
    assert [o["verdict"]["status"] for o in data["obligations"]] == ["proved"] * 3
    a = next(o for o in data["fused"]["operands"] if o["value"] == "%A")
    assert a["map"] == "affine_map<(d0, d1) -> (d1, d0)>" and a["proof"]["status"] == "proved"


def test_fuse_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "fuse", str(MLIR / "transpose.mlir"), "--producer", "%nope")
    assert code == 3 and "no linalg op named %nope" in err
    bad = tmp_path / "bad.mlir"
    bad.write_text('%0 = linalg.generic {indexing_maps = [#x], iterator_types = []} outs(%o : tensor<f32>) {\n}\n')
    code, _, err = _run(capsys, "fuse", str(bad))
    assert code == 3 and "unknown affine map alias" in err and "^" in err
    code, _, err = _run(capsys, "fuse", str(MLIR / "transpose.mlir"), "--producer", "%consumer")
    assert code == 3


@pytest.mark.parametrize(
    ("file", "code", "first"),
    [
        ("compute_inline.txt", 0, "inline B: inlined"),
        ("shifted_store.txt", 0, "inline B: inlined"),
        ("split_store.txt", 0, "inline B: inlined"),
        ("collision.txt", 1, "inline B: refused: iterations (i = 0) and (i = 1) both write B[0]"),
        ("out_of_region.txt", 1, "inline B: refused: C's iteration (i = 0) reads B[0], which B never writes"),
    ],
)
def test_inline_exit_codes(capsys: pytest.CaptureFixture[str], file: str, code: int, first: str) -> None:
    got, out, _ = _run(capsys, "inline", str(CINN / file))
    assert got == code
    assert out.splitlines()[0] == first


def test_inline_json_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "inline", str(CINN / "compute_inline.txt"), "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "inlined"
    assert "C[i0, i1, i2] = (2 * (1 + A[i1, i0, i2]))" in data["program"]
    code, out, _ = _run(capsys, "inline", str(CINN / "compute_inline.txt"), "--output", "B")
    assert code == 1 and "program output" in out
    code, _, err = _run(capsys, "inline", str(CINN / "compute_inline.txt"), "--block", "Q")
    assert code == 3 and "no ScheduleBlock named 'Q'" in err
    code, _, err = _run(capsys, "inline", "ScheduleBlock(root)\n{\n  serial for (i, 0, 4)\n  {\n    B[(i - 1) % 2] = 1\n  }\n}")
    # C's truncating '%' where it differs from floor semantics: well-formed, not modelled (unknown, exit 2)
    assert code == 2 and "truncates toward zero" in err and "at (i = 0)" in err and "unknown: " in err


def test_invert(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "invert", "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert code == 0 and "inverse: (d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]" in out
    code, out, _ = _run(capsys, "invert", "(d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 7], d1 in [0, 0]", "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "refuted"
    first, second = data["collision"]["first"], data["collision"]["second"]
    assert first != second and first[0] // 2 == second[0] // 2 == data["collision"]["image"][0]
    code, _, err = _run(capsys, "invert", "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 3]")
    assert code == 3 and "range or runtime variables" in err
    code, _, err = _run(capsys, "invert", "(d0) -> (d0 +), domain: d0 in [0, 3]")
    assert code == 3 and "error" in err
    code, out, _ = _run(capsys, "invert", "affine_map<(d0, d1) -> (d0 + d1, d0)>", "--json")
    assert code == 0 and json.loads(out)["mlir"] == {"is_permutation": False, "inverse_permutation": None}


def test_inline_all_and_real_mlir_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "inline", str(CINN / "reduction.txt"), "--all", "--json")
    data = json.loads(out)
    assert code == 0 and data["inlined"] == ["B"]
    assert [s["status"] for s in data["steps"]] == ["inlined", "refused"]  # C is a reduction
    assert "ScheduleBlock(B)" not in data["program"] and "exp(A[i0_1, k0])" in data["program"]
    code, _, err = _run(capsys, "inline", str(CINN / "reduction.txt"), "--all", "--block", "B")
    assert code == 3 and "exclusive" in err
    code, out, err = _run(capsys, "fuse", str(MLIR / "real_module.mlir"), "--producer", "transposed", "--json")
    data = json.loads(out)
    assert code == 0 and data["producer_op"] == "linalg.transpose" and data["status"] == "legal"
    assert "skipped linalg.softmax" in err  # notes go to stderr with --json
