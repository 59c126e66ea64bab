"""Errors a person can act on (issue 28 item 6): "did you mean" for a mistyped command, option, choice
or map/rule keyword; --operand out of range is bad input with the range; a binary file is named as such."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.hlo.report import load_hlo
from verified_indexing.proofs.user_rule import parse_rule
from verified_indexing.syntax import parse_map

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "examples" / "jax_hlo" / "softmax.post.hlo"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# -- commands, options, choices ---------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "hint"), [
    (["simplfy", "-e", "x"], "did you mean 'simplify' instead of 'simplfy'?"),
    (["chek-rule", "x -> x"], "did you mean 'check-rule' instead of 'chek-rule'?"),
    (["simplify", "--explian", "-e", "(d0) -> (d0), domain: d0 in [0, 3]"],
     "did you mean '--explain' instead of '--explian'?"),
    (["show", "--mlri", "-e", "(d0) -> (d0)"], "did you mean '--mlir' instead of '--mlri'?"),
    (["check-rule", "--batch", "x", "--backend", "rae"], "did you mean 'ray' instead of 'rae'?"),
    (["analyze", "x.hlo", "--direction", "output-to-inptu"], "did you mean 'output-to-input'"),
])
def test_a_misspelt_word_of_the_command_line_gets_a_hint(argv: list[str], hint: str) -> None:
    code, _, err = _run(argv)
    assert code == 3
    assert hint in err, err


@pytest.mark.parametrize("argv", [
    ["frobnicate"],  # nothing close
    ["show", "--explian", "-e", "(d0) -> (d0)"],  # --explain is simplify's, not show's
    ["show", "--zzzzzz", "-e", "(d0) -> (d0)"],
])
def test_no_hint_when_nothing_of_the_command_is_close(argv: list[str]) -> None:
    code, _, err = _run(argv)
    assert code == 3 and "did you mean" not in err, err


def test_the_hint_in_json_errors_too() -> None:
    code, out, _ = _run(["simplify", "--json", "--explian", "-e", "(d0) -> (d0), domain: d0 in [0, 3]"])
    assert code == 3 and "did you mean '--explain'" in out


# -- keywords in maps and rules ---------------------------------------------------------------------


@pytest.mark.parametrize(("parse", "text", "word", "meant"), [
    (parse_map, "(d0) -> (d0 floordvi 4), domain: d0 in [0, 9]", "floordvi", "floordiv"),
    (parse_map, "(d0) -> (d0 flordiv 4), domain: d0 in [0, 9]", "flordiv", "floordiv"),
    (parse_map, "(d0) -> (d0 ceildvi 4), domain: d0 in [0, 9]", "ceildvi", "ceildiv"),
    (parse_map, "(d0) -> (d0 modd 4), domain: d0 in [0, 9]", "modd", "mod"),
    (parse_map, "(d0) -> (mni(d0, 4)), domain: d0 in [0, 9]", "mni", "min"),
    (parse_map, "(d0) -> (d0), domian: d0 in [0, 9]", "domian", "domain"),
    (parse_map, "(d0) -> (d0), domain: d0 inn [0, 9]", "inn", "in"),
    (parse_rule, "x floordvi c0 -> x", "floordvi", "floordiv"),
    (parse_rule, "mni(x, 3) -> x", "mni", "min"),
    (parse_rule, "x -> x modd 3", "modd", "mod"),
])
def test_a_misspelt_keyword_gets_a_hint(parse: Callable[[str], object], text: str, word: str, meant: str) -> None:
    """A misspelt keyword of a map or of a rule."""
    with pytest.raises(ParseError) as exc:
        parse(text)
    assert f"did you mean {meant!r} instead of {word!r}?" in str(exc.value)
    # the corrected text parses: the hint is right
    parse(text.replace(word, meant, 1))


@pytest.mark.parametrize("text", [
    "(d0)[s0] -> (d0 + s1), domain: d0 in [0, 9], s0 in [0, 2]",  # an undeclared variable, no keyword near
    "(d0) -> (d0 + ), domain: d0 in [0, 9]",
])
def test_no_keyword_hint_for_other_errors(text: str) -> None:
    with pytest.raises(ParseError) as exc:
        parse_map(text)
    assert "did you mean" not in str(exc.value)


def test_rule_names_are_not_corrected() -> None:
    with pytest.raises(ParseError) as exc:
        parse_rule("x y -> x")  # two names in a row: no keyword is close to 'y'
    assert "did you mean" not in str(exc.value)


# -- --operand ------------------------------------------------------------------------------------------


def test_operand_out_of_range_is_bad_input_with_the_range() -> None:
    module = load_hlo(SOFTMAX.read_text(encoding="utf-8"), str(SOFTMAX))
    counts = [len(called.parameters()) for _, called in module.fusions()]
    most = max(counts)
    code, out, err = _run(["analyze", str(SOFTMAX), "--operand", str(most), "--no-verify"])
    assert code == 3 and out == ""
    assert f"--operand {most} is out of range (no parameter {most})" in err and f"(valid: 0 to {most - 1})" in err
    code, _, err = _run(["analyze", str(SOFTMAX), "--operand", "7", "--direction", "input-to-output", "--no-verify"])
    assert code == 3 and "--operand 7 is out of range" in err
    # the largest valid operand: only the fusions that have it, maps shown
    code, out, _ = _run(["analyze", str(SOFTMAX), "--operand", str(most - 1), "--no-verify"])
    assert code == 0 and "->" in out
    # one computation: its own count
    name, called = next((inst.name, c) for inst, c in module.fusions() if len(c.parameters()) == most)
    code, _, err = _run(["analyze", str(SOFTMAX), "--computation", called.name, "--operand", str(most)])
    assert code == 3 and f"{called.name!r} has {most} operands (valid: 0 to {most - 1})" in err, (name, err)


# -- binary files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00", b"(d0) -> (d0)\x00", bytes(range(256))])
@pytest.mark.parametrize("command", [["show"], ["simplify"], ["analyze"], ["fuse"], ["check-rule"]])
def test_a_binary_file_is_named_as_such(tmp_path: Path, data: bytes, command: list[str]) -> None:
    path = tmp_path / "input.bin"
    path.write_bytes(data)
    code, _, err = _run([*command, str(path)])
    assert code == 3, err
    assert err.startswith(f"{path}: a binary file, not text: "), err
    assert "codec" not in err and "Traceback" not in err


def test_line_ends_of_a_file_are_read_as_before(tmp_path: Path) -> None:
    text = "(d0, d1) -> (d0 + d1 floordiv 16),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]\n"
    outputs = []
    for name, ending in (("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")):
        path = tmp_path / name
        path.write_bytes(text.replace("\n", ending).encode())
        code, out, err = _run(["show", str(path)])
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1] == outputs[2]
