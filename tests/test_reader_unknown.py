"""Reader-level refusals state a true reason (issue 23 item 6): a well-formed construct
that is only not modelled is ``unknown`` (NotModelledError, exit 2) naming it; malformed
input is bad input (exit 3). Never a false ``illegal``/``refused``."""

from __future__ import annotations

import pytest

from verified_indexing.cli import main
from verified_indexing.errors import NotModelledError, ParseError
from verified_indexing.legality.cinn_ir import parse_program
from verified_indexing.legality.tvmscript import parse_tvmscript

CINN = """ScheduleBlock(root)
{
  serial for (i, 0, 8)
  {
    ScheduleBlock(B)
    {
      i0 = axis.bind(i)
      STMT
    }
  }
}
"""


@pytest.mark.parametrize(("stmt", "named"), [
    ("if ((i0 < 2) || (i0 > 5)) {\n B[i0] = A[i0]\n }", "'||'"),
    ("if ((i0 != 2)) {\n B[i0] = A[i0]\n }", "'!='"),
    ("if ((i0 < 2)) {\n B[i0] = A[i0]\n } else {\n B[i0] = 0\n }", "'else'"),
    ("B[i0 * i0] = A[i0]", "non-affine"),
    ("B[i0 floordiv i0] = A[i0]", "divisor"),
    ("B[(i0 - 3) / 2] = A[i0]", "truncates toward zero"),
])
def test_cinn_not_modelled_is_unknown(stmt: str, named: str) -> None:
    with pytest.raises(NotModelledError) as info:
        parse_program(CINN.replace("STMT", stmt))
    assert named.strip("'") in info.value.message or named in info.value.message, info.value.message
    assert "not modelled" in str(info.value)


@pytest.mark.parametrize("stmt", ["B[i0] = A[zz]", "B[i0 = A[i0]", "B[i0 floordiv 0] = A[i0]"])
def test_cinn_bad_input_stays_bad_input(stmt: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_program(CINN.replace("STMT", stmt))
    assert not isinstance(info.value, NotModelledError)


TVM = '''@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            STMT
'''


@pytest.mark.parametrize(("stmt", "named"), [
    ("B[vi * vi] = A[vi]", "quasi-affine"),
    ("T.where(i != 3)\n            B[vi] = A[vi]", "comparison"),
    ("T.where(i < 2 or i > 5)\n            B[vi] = A[vi]", "conjunction"),
    ("B[vi] = T.call_extern(\"float32\", \"f\", A[vi])", "unsupported value"),
    ("T.evaluate(T.call_extern(\"int32\", \"g\", A.access_ptr(\"r\")))\n            B[vi] = A[vi]", "access_ptr"),
    ("B[vi] //= A[vi]", "augmented"),
    ("B[vi] = B[T.Cast(\"int32\", A[vi])] + A[vi]", "depends on the data"),
])
def test_tvmscript_not_modelled_is_unknown_exit_2(stmt: str, named: str, tmp_path: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    text = TVM.replace("STMT", stmt)
    with pytest.raises(NotModelledError) as info:
        parse_tvmscript(text)
    assert named in info.value.message, info.value.message
    f = Path(str(tmp_path)) / "f.py"
    f.write_text(text)
    assert main(["inline", str(f), "--block", "B"]) == 2
    assert capsys.readouterr().err.startswith("unknown: ")


@pytest.mark.parametrize("stmt", ["B[vi] = A[zz]", "vj = T.axis.remap(\"SS\", [i])\n            B[vi] = A[vi]"])
def test_tvmscript_bad_input_is_exit_3(stmt: str, tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    f = Path(str(tmp_path)) / "f.py"
    f.write_text(TVM.replace("STMT", stmt))
    assert main(["inline", str(f), "--block", "B"]) == 3
    assert "Traceback" not in capsys.readouterr().err
