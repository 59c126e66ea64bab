"""ComputeInline, ReverseComputeInline and epilogue fusion on the programs issue 23 (items 5, 6) and
issue 26 (item 8) name: every verdict checked against the plain interpreter (tests/cinn_interpreter.py)
or enumeration, never against the engine that produced it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cinn_interpreter import run

from verified_indexing.cli import main
from verified_indexing.legality.cinn_ir import Stmt, at_sizes, cond_holds, parse_program

ROOT = Path(__file__).resolve().parent.parent
CINN = ROOT / "examples" / "cinn"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


def _outcome(p: Stmt, sizes: dict[str, int], inputs: set[str], tensor: str) -> object:
    """``tensor`` as the interpreter computes it at ``sizes``, or ``"unwritten"`` when the program reads an
    element nothing wrote."""
    try:
        return run(at_sizes(p, sizes), inputs).get(tensor)
    except KeyError:
        return "unwritten"


# ---------------------------------------------------------------------------
# issue 26 item 8: `inline --all` carries the condition of every conditional step
# ---------------------------------------------------------------------------


def test_inline_all_text_and_json_carry_the_condition(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CINN / "symbolic_collision.txt")
    code, one = _cli(capsys, "inline", "--block", "B", path)
    assert code == 0 and one.splitlines()[0] == "inline B: inlined when N <= 1 and N >= 1"
    code, out = _cli(capsys, "inline", "--all", path)
    assert code == 0
    assert out.splitlines()[0] == "inline B: inlined when N <= 1 and N >= 1"  # was "inline B: inlined"
    code, out = _cli(capsys, "inline", "--all", "--json", path)
    data = json.loads(out)
    assert data["legal_when"] == "N <= 1 and N >= 1"
    assert data["steps"][0]["legal_when"] == "N <= 1 and N >= 1"
    # The oracle: the guarded result computes what the original computes exactly where the condition holds.
    original = parse_program(Path(path).read_text())
    result = parse_program(data["program"])
    guard = result.body[0]  # type: ignore[union-attr]
    for n in range(5):
        holds = cond_holds(guard.conds, [n])  # type: ignore[union-attr]
        same = _outcome(original, {"N": n}, {"A"}, "C") == _outcome(result, {"N": n}, {"A"}, "C")
        assert holds == (n == 1)
        if holds:
            assert same
