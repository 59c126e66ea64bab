"""lit-style tests (issue 28 item 5): the files in tests/lit/ hold their RUN lines and their ``// CHECK:``
comments; the map, rule and batch readers skip ``//`` comment lines, so each file is both the input and
the expectation. The small FileCheck in tests/filecheck.py is itself checked against outputs it must
refuse. ``--no-timing`` leaves every time out of the text output too."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from filecheck import CheckFailure, filecheck, run_lit_file

from verified_indexing.cli import build_parser, main
from verified_indexing.errors import ParseError
from verified_indexing.syntax import parse_indexing_map, parse_map

LIT = Path(__file__).resolve().parent / "lit"


@pytest.mark.parametrize("path", sorted(LIT.iterdir()), ids=lambda p: p.name)
def test_lit_file(path: Path) -> None:
    assert run_lit_file(path) >= 1


# -- the checker refuses what it must -------------------------------------------------------------


OUT = "a: 1\nb: 2\n\nc: 3 ms\n"


@pytest.mark.parametrize("checks", [
    "// CHECK: a: 1\n// CHECK-NEXT: b: 2\n// CHECK-EMPTY:\n// CHECK-NEXT: c: {{[0-9]+}}",
    "// CHECK: b\n// CHECK-SAME: 2\n// CHECK-NOT: zzz\n// CHECK: c",
    "// CHECK:   a:    1",  # white space runs match any run
])
def test_filecheck_accepts(checks: str) -> None:
    filecheck(OUT, checks)


@pytest.mark.parametrize("checks", [
    "// CHECK: a: 2",  # absent
    "// CHECK: a: 1\n// CHECK-NEXT: c: 3",  # not on the next line
    "// CHECK: b\n// CHECK: a",  # out of order
    "// CHECK: a\n// CHECK-NOT: b\n// CHECK: c",  # b between a and c
    "// CHECK: c\n// CHECK-NOT: ms",  # after the last match
    "// CHECK: a\n// CHECK-EMPTY:",  # the line after a is not empty
    "// CHECK: b\n// CHECK-SAME: 1",  # not on b's line
    "// nothing to check",
])
def test_filecheck_refuses(checks: str) -> None:
    with pytest.raises(CheckFailure):
        filecheck(OUT, checks)


def test_a_lit_file_whose_check_is_wrong_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.map"
    bad.write_text("// RUN: verified-indexing show %s | FileCheck %s\n(d0) -> (d0 * 2), domain: d0 in [0, 3]\n"
                   "// CHECK: (d0) -> (d0 * 3)\n", encoding="utf-8")
    with pytest.raises(CheckFailure, match=r"\(d0\) -> \(d0 \* 3\)"):
        run_lit_file(bad)


# -- comment lines in maps and rules ----------------------------------------------------------------


def test_comment_lines_are_blank_and_positions_stay() -> None:
    plain = "(d0, d1) -> (d0 + d1 floordiv 4),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]"
    commented = ("// RUN: x -> y, domain: #xla\n(d0, d1) -> (d0 + d1 floordiv 4),\n  // a comment, domain\n"
                 "domain:\nd0 in [0, 6],\n\t// CHECK: (d0) -> (d0)\nd1 in [0, 14]\n// end")
    a, b = parse_indexing_map(plain), parse_indexing_map(commented)
    assert a == b
    assert all(a.evaluate(d, s, r) == b.evaluate(d, s, r) for d, s, r in a.domain_points())
    bad = "(d0) -> (d0 ++), domain: d0 in [0, 3]"
    with pytest.raises(ParseError) as plain_error:
        parse_indexing_map(bad)
    with pytest.raises(ParseError) as exc:
        parse_indexing_map("// one\n  // two\n" + bad)
    assert (exc.value.line, exc.value.column) == (plain_error.value.line + 2, plain_error.value.column)
    assert exc.value.line_text == bad


def test_a_comment_does_not_change_what_kind_of_map_is_read() -> None:
    from verified_indexing.affine_map import AffineMap

    # 'domain' in a comment does not make an affine map an indexing map, nor a comment before the wrapper
    assert isinstance(parse_map("// domain: d0 in [0, 3]\n(d0) -> (d0 + 1)"), AffineMap)
    assert isinstance(parse_map("// RUN: show %s\n#map = affine_map<(d0) -> (d0 + 1)>"), AffineMap)
    wrapped = parse_map('// RUN: show %s\n#xla.indexing_map<"(d0) -> (d0), domain: d0 in [0, 3]">')
    assert not isinstance(wrapped, AffineMap)


@pytest.mark.parametrize("text", ["(d0) -> (d0 // 4), domain: d0 in [0, 9]", "(d0) -> (d0) // identity"])
def test_double_slash_inside_a_line_is_refused_with_a_hint(text: str) -> None:
    with pytest.raises(ParseError, match="'//' is not an operator here: write 'floordiv'") as exc:
        parse_map(text)
    assert text[exc.value.column - 1 : exc.value.column + 1] == "//"


def test_rule_file_with_comments_and_its_errors(tmp_path: Path) -> None:
    from verified_indexing.proofs.user_rule import check_user_rule

    v = check_user_rule("// nested floor division\n(x floordiv c0) floordiv c1\n// ->\n-> x floordiv (c0 * c1)",
                        where="// positive\nc0 > 0, c1 > 0")
    assert v.proved and v.question == "rule (x floordiv c0) floordiv c1 -> x floordiv (c0 * c1) where " \
                                      "// positive\nc0 > 0, c1 > 0"
    rule = tmp_path / "r.rule"
    rule.write_text("// a comment\nx // 2 -> x\n", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["check-rule", str(rule)])
    assert code == 3
    assert f"{rule}:2:3: error: '//' is not an operator here" in err.getvalue()


# -- --no-timing in the text ------------------------------------------------------------------------


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


TIME = re.compile(r"\d ?(ms|s)\b|Time:|cached")


def test_every_command_takes_no_timing() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():  # type: ignore[union-attr]
        assert "--no-timing" in p._option_string_actions, name


@pytest.mark.parametrize("argv", [
    ["check-rule", "x floordiv 2 -> x", "--where", "x >= 0"],
    ["prove-equal", "-e", "(d0) -> (d0), domain: d0 in [0, 9]", "-e", "(d0) -> (d0 mod 10), domain: d0 in [0, 9]"],
    ["analyze", str(Path(__file__).resolve().parent.parent / "examples" / "jax_hlo" / "softmax.post.hlo")],
])
def test_no_timing_removes_the_times_from_the_text(argv: list[str]) -> None:
    code, timed = _run(argv)
    assert TIME.search(timed), timed  # the times are there by default (else this test could not fail)
    code2, untimed = _run([*argv, "--no-timing"])
    assert code2 == code and not TIME.search(untimed), untimed
    # the same text otherwise: the timed output with its times taken out
    assert untimed.splitlines() == [
        re.sub(r"(, \d+(\.\d+)? ms| \(cached\))$", "", ln) for ln in timed.splitlines() if not ln.startswith("Time:")
    ]


def test_no_timing_demo_and_prove_rules_tables() -> None:
    from verified_indexing._timing import set_show_timing, show_timing
    from verified_indexing.proofs import format_table, prove_all
    from verified_indexing.simplify.rules import RULES

    results = prove_all(RULES[:2])
    assert re.search(r"; \d+\.\d+ s$", format_table(results))
    before = set_show_timing(False)
    try:
        assert not show_timing()
        table = format_table(results)
    finally:
        set_show_timing(before)
    assert not re.search(r"\d+\.\d+", table), table


# -- analyze --format=xla, read back by audit ---------------------------------------------------------

XLA_MODULE = """HloModule m
ENTRY e {
  p0 = f32[20] parameter(0)
  p1 = f32[10,20] parameter(1)
  p2 = f32[4,6] parameter(2)
  bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
  t = f32[20,10] transpose(p1), dimensions={1,0}
  rs = f32[24] reshape(p2)
  sl = f32[2,3] slice(p2), slice={[1:3], [0:6:2]}
  ROOT r = (f32[10,20,30], f32[20,10], f32[24], f32[2,3]) tuple(bc0, t, rs, sl)
}
"""


@pytest.mark.parametrize("instruction", ["bc0", "t", "rs", "sl"])
def test_xla_format_is_what_audit_reads_and_proves(tmp_path: Path, instruction: str) -> None:
    """An independent reader: audit parses XLA's printed form and proves each claim against the analysis
    (isl); the same text with one index changed is refuted."""
    hlo = tmp_path / "m.hlo"
    hlo.write_text(XLA_MODULE, encoding="utf-8")
    code, printed = _run(["analyze", str(hlo), "--instruction", instruction, "--format=xla"])
    assert code == 0 and printed.startswith("operand id = 0 ("), printed
    claims = tmp_path / "claims.txt"
    claims.write_text(f"instruction {instruction}\n{printed}", encoding="utf-8")
    code, out = _run(["audit", str(hlo), str(claims), "--no-timing"])
    assert code == 0 and re.search(r"summary: (\d+) proved$", out.strip()), out
    lines = printed.splitlines()
    head = lines[0]
    arrow = head.index("-> (") + 4
    mutated = head[:arrow] + "1 + " + head[arrow:]
    claims.write_text(f"instruction {instruction}\n" + "\n".join([mutated, *lines[1:]]) + "\n", encoding="utf-8")
    code, out = _run(["audit", str(hlo), str(claims), "--no-timing"])
    assert "refuted" in out.splitlines()[-1], out


def test_xla_format_needs_one_instruction() -> None:
    code, _ = _run(["analyze", "-e", XLA_MODULE, "--format=xla"])
    assert code == 3


BETWEEN = """ScheduleBlock(root)
{
  {
    serial for (i, 0, 8)
    {
      ScheduleBlock(B)
      {
        i0 = axis.bind(i)
        B[i0] = (1 + A[i0])
      }
    }
    serial for (i, 0, 8)
    {
      ScheduleBlock(W)
      {
        i0 = axis.bind(i)
        A[(i0 + 8)] = 0
      }
    }
    serial for (i, 0, 8)
    {
      ScheduleBlock(C)
      {
        i0 = axis.bind(i)
        C[i0] = (2 * B[i0])
      }
    }
  }
}
"""


def test_no_timing_inline_json_is_the_same_on_every_run(tmp_path: Path) -> None:
    """The between-writes check of ComputeInline said how long z3 took in its detail ('0.025 s'), in the JSON
    under --no-timing too."""
    program = tmp_path / "between.cinn"
    program.write_text(BETWEEN, encoding="utf-8")
    runs = [_run(["inline", str(program), "--block", "B", "--json", "--no-timing"]) for _ in range(2)]
    assert runs[0][0] == 0 and runs[0] == runs[1]
    assert "W (between B and C) writes nothing B read for C" in runs[0][1]
    assert not re.search(r'"detail": "[0-9.]+ s"', runs[0][1])
