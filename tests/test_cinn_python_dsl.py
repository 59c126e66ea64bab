"""CINN's Python DSL (``@to_cinn_llir``) read like TVMScript (issue 23 item 2), every
answer re-checked by the plain interpreter of the source (tests/tvmscript_interpreter.py,
Python running the function with a stand-in ``ir``)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from cinn_interpreter import run
from tvmscript_interpreter import run_tvmscript

from verified_indexing.cli import main
from verified_indexing.errors import NotModelledError
from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.epilogue import fuse_reduction_epilogue
from verified_indexing.legality.inline import compute_inline
from verified_indexing.legality.reverse_inline import reverse_compute_inline
from verified_indexing.legality.tvmscript import is_tvmscript, parse_tvmscript

EX = Path(__file__).resolve().parent.parent / "examples" / "cinn" / "python_dsl_elementwise.py"

REDUCE = '''from paddle.cinn import ir, to_cinn_llir
from paddle.cinn.runtime.data_array import DataArray


@to_cinn_llir
def reduce_sum(A: DataArray((2, 3, 4)), B: DataArray((2, 3)), C: DataArray((2, 3))):
    for i in range(2):
        for j in range(3):
            with ir.ScheduleBlockContext("init") as init:
                vi, vj = ir.AxisMap("SS", [i, j])
                B[vi, vj] = 0.0
            for k in range(4):
                with ir.ScheduleBlockContext("B"):
                    vi1, vj1, vk1 = ir.AxisMap("SSR", [i, j, k])
                    B[vi1, vj1] = B[vi1, vj1] + A[vi1, vj1, vk1]
    for i in range(2):
        for j in range(3):
            with ir.ScheduleBlockContext("C"):
                i1, j1 = ir.AxisMap("SS", [i, j])
                C[i1, j1] = B[i1, j1] * 0.5
'''


def test_python_dsl_is_detected_and_read() -> None:
    text = EX.read_text()
    assert is_tvmscript(text) and is_tvmscript(REDUCE)
    p = parse_tvmscript(text)
    assert parse_program(format_program(p)) == p  # printed as CINN IR, read back
    assert run(p, {"X"}) == run_tvmscript(text)


def test_python_dsl_inline_and_reverse_inline_rechecked() -> None:
    text = EX.read_text()
    p = parse_tvmscript(text)
    expected = run_tvmscript(text)
    assert compute_inline(p, "A").status == "refused"  # A is a parameter: a program output
    rep = compute_inline(p, "A", outputs=["Y"])
    assert rep.status == "inlined" and rep.program is not None
    assert run(rep.program, {"X"})["Y"] == expected["Y"]
    rev = reverse_compute_inline(p, "Y", outputs=["Y"])
    assert rev.status == "inlined" and rev.program is not None
    assert run(rev.program, {"X"})["Y"] == expected["Y"]


def test_python_dsl_reduction_with_separate_init_block() -> None:
    p = parse_tvmscript(REDUCE)
    expected = run_tvmscript(REDUCE)
    assert run(p, {"A"}) == expected
    rep = fuse_reduction_epilogue(p, "C", outputs=["C"])
    if rep.status == "fused":
        assert rep.program is not None
        assert run(rep.program, {"A"})["C"] == expected["C"]
    else:
        assert rep.status in ("unknown", "refused", "illegal")


def test_python_dsl_cli(tmp_path: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["reverse-inline", str(EX), "--block", "Y", "--output", "Y"])
    assert code == 0 and out.getvalue().startswith("reverse-inline Y into A: inlined")
    bad = tmp_path / "bad.py"
    bad.write_text(EX.read_text().replace("A[i1, j1] = X[i1, j1] * 2.0", "A[i1, j1] = X[i1 * j1, j1] * 2.0"))
    with pytest.raises(NotModelledError, match="quasi-affine"):
        parse_tvmscript(bad.read_text())
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["inline", str(bad), "--block", "A"])
    assert code == 2 and "Traceback" not in err.getvalue()
