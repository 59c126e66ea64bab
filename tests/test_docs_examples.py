"""Every example in docs/ and README.md runs and prints what the docs say.

* Console examples: in a fenced block tagged ``console``, a line
  ``$ verified-indexing ARGS`` runs the CLI (in-process, ``shlex`` splitting,
  the working directory the repository root); the lines after it, up to the next
  ``$`` line or the block's end, are the expected output (stdout then stderr),
  compared after stripping trailing whitespace. A line ``...`` matches any run of
  lines. A line ``[exit N]`` right after the output states the exit code
  (default 0).
* Python examples: fenced blocks tagged ``python`` that contain ``>>>`` run as
  doctests.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from verified_indexing.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_BLOCK_RE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks(kind: str) -> list[tuple[str, int, str]]:
    out = []
    for path in DOC_FILES:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for m in _BLOCK_RE.finditer(text):
            if m.group(1) == kind:
                line = text.count("\n", 0, m.start(2)) + 1
                out.append((str(path.relative_to(ROOT)), line, m.group(2)))
    return out


def _console_cases() -> list[tuple[str, list[str], list[str], int]]:
    cases = []
    for path, line, body in _blocks("console"):
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ verified-indexing"):
                i += 1
                continue
            cmd = lines[i][2:]
            expected: list[str] = []
            i += 1
            code = 0
            while i < len(lines) and not lines[i].startswith("$ "):
                m = re.fullmatch(r"\[exit (\d+)\]", lines[i].strip())
                if m:
                    code = int(m.group(1))
                else:
                    expected.append(lines[i].rstrip())
                i += 1
            cases.append((f"{path}:{line}", shlex.split(cmd)[1:], expected, code))
    return cases


def _matches(expected: list[str], actual: list[str]) -> bool:
    pattern = "\n".join(".*?" if e == "..." else re.escape(e) for e in expected)
    return re.fullmatch(pattern, "\n".join(actual), re.DOTALL) is not None


@pytest.mark.parametrize(("where", "argv", "expected", "code"), _console_cases(), ids=lambda v: str(v)[:60])
def test_console_example(where: str, argv: list[str], expected: list[str], code: int) -> None:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            got = main(argv)
    finally:
        os.chdir(cwd)
    actual = [ln.rstrip() for ln in (out.getvalue() + err.getvalue()).splitlines()]
    while actual and not actual[-1]:
        actual.pop()
    while expected and not expected[-1]:
        expected = expected[:-1]
    assert got == code, f"{where}: exit {got}, expected {code}\n" + "\n".join(actual)
    assert _matches(expected, actual), f"{where}: output differs\n--- expected\n" + "\n".join(
        expected
    ) + "\n--- actual\n" + "\n".join(actual)


@pytest.mark.parametrize(("where", "body"), [(f"{p}:{n}", b) for p, n, b in _blocks("python") if ">>>" in b])
def test_python_example(where: str, body: str) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(body, {}, where, where, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
