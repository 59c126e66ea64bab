"""A small FileCheck (LLVM's) and lit RUN-line runner for the tests in ``tests/lit/``.

Enough of FileCheck for the project's lit-style tests: ``CHECK:``, ``CHECK-NEXT:``,
``CHECK-SAME:``, ``CHECK-NOT:``, ``CHECK-EMPTY:``, ``CHECK-LABEL:`` (read as ``CHECK:``),
``{{regex}}`` inside a pattern, ``--check-prefix=P``; horizontal white space runs
match any run of spaces and tabs (FileCheck's default canonicalization). A RUN line
is ``[not] verified-indexing ARGS [2>&1] [| FileCheck %s [--check-prefix=P]]``, ``%s``
the test file; ``verified-indexing`` runs in this process (``cli.main``), so a lit
file costs no interpreter start-up.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CheckFailure", "filecheck", "run_lit_file"]

KINDS = ("NEXT", "SAME", "NOT", "EMPTY", "LABEL")


class CheckFailure(AssertionError):
    """A directive that did not match, with the directive and the output near where it looked."""


@dataclass(frozen=True)
class Directive:
    kind: str  # "", "NEXT", "SAME", "NOT", "EMPTY", "LABEL"
    pattern: str
    line: int  # in the check file

    def regex(self) -> re.Pattern[str]:
        parts = re.split(r"\{\{(.*?)\}\}", self.pattern.strip())
        out = []
        for i, part in enumerate(parts):
            if i % 2:
                out.append(f"(?:{part})")
            else:
                out.append(r"[ \t]+".join(re.escape(w) for w in re.split(r"[ \t]+", part)))
        return re.compile("".join(out))


def directives(check_text: str, prefix: str = "CHECK") -> list[Directive]:
    """The check file's directives, in order."""
    rx = re.compile(rf"\b{re.escape(prefix)}(?:-({'|'.join(KINDS)}))?:(.*)$")
    out = []
    for number, line in enumerate(check_text.splitlines(), 1):
        m = rx.search(line)
        if m is not None:
            out.append(Directive(m.group(1) or "", m.group(2), number))
    if not out:
        raise CheckFailure(f"no {prefix}: directive in the check file")
    return out


def filecheck(output: str, check_text: str, prefix: str = "CHECK") -> None:
    """Raise :class:`CheckFailure` unless ``output`` satisfies the directives of ``check_text``."""
    lines = output.splitlines()
    line, col = 0, 0  # where the next match may start (0-based line, column)
    nots: list[Directive] = []
    last_line = -1  # the line of the previous positive match

    def fail(d: Directive, why: str) -> CheckFailure:
        near = "\n".join(f"  {i + 1:>4} | {lines[i]}" for i in range(max(0, line - 1), min(len(lines), line + 4)))
        return CheckFailure(f"check file line {d.line}: {d.kind or 'CHECK'}: {d.pattern.strip()!r}: {why}\n"
                            f"output near line {line + 1}:\n{near}")

    def check_nots(until_line: int, until_col: int) -> None:
        for d in nots:
            rx = d.regex()
            for i in range(line, min(until_line, len(lines) - 1) + 1):
                text = lines[i]
                lo = col if i == line else 0
                hi = until_col if i == until_line else len(text)
                if rx.search(text, lo, hi):
                    raise fail(d, f"found on output line {i + 1} where it must not be")
        nots.clear()

    for d in directives(check_text, prefix):
        if d.kind == "NOT":
            nots.append(d)
            continue
        rx = d.regex()
        if d.kind == "EMPTY":
            target = last_line + 1
            if target >= len(lines) or lines[target].strip():
                raise fail(d, "the next line is not empty")
            check_nots(target, 0)
            line, col, last_line = target + 1, 0, target
            continue
        if d.kind == "SAME":
            m = rx.search(lines[last_line], col) if 0 <= last_line < len(lines) and line == last_line else None
            if m is None:
                raise fail(d, "not found on the same line after the previous match")
            check_nots(last_line, m.start())
            col = m.end()
            continue
        if d.kind == "NEXT":
            target = last_line + 1
            m = rx.search(lines[target]) if target < len(lines) else None
            if m is None:
                raise fail(d, f"not found on the next line ({target + 1})")
            check_nots(target, m.start())
            line, col, last_line = target, m.end(), target
            continue
        for i in range(line, len(lines)):
            m = rx.search(lines[i], col if i == line else 0)
            if m is not None:
                check_nots(i, m.start())
                line, col, last_line = i, m.end(), i
                break
        else:
            raise fail(d, "not found in the rest of the output")
    check_nots(len(lines) - 1, len(lines[-1]) if lines else 0)


def _run_cli(argv: list[str], merge_stderr: bool) -> tuple[int, str]:
    from verified_indexing.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out if merge_stderr else err):
        code = main(argv)
    return code, out.getvalue()


def run_lit_file(path: Path) -> int:
    """Run every ``RUN:`` line of ``path``; raise :class:`CheckFailure` on the first failure; return the
    number of RUN lines run."""
    text = path.read_text(encoding="utf-8")
    runs = [m.group(1).strip() for m in re.finditer(r"\bRUN:(.*)$", text, re.MULTILINE)]
    if not runs:
        raise CheckFailure(f"{path}: no RUN: line")
    for run in runs:
        command, _, check = run.partition("|")
        words = [str(path) if w == "%s" else w for w in shlex.split(command)]
        expect_failure = words[:1] == ["not"]
        words = words[1:] if expect_failure else words
        merge = "2>&1" in words
        words = [w for w in words if w != "2>&1"]
        if words[:1] != ["verified-indexing"]:
            raise CheckFailure(f"{path}: RUN: {run}: only verified-indexing commands run here")
        code, output = _run_cli(words[1:], merge)
        if (code != 0) != expect_failure:
            raise CheckFailure(f"{path}: RUN: {run}: exit {code}\n{output}")
        if check.strip():
            tool = shlex.split(check)
            if tool[:2] != ["FileCheck", "%s"]:
                raise CheckFailure(f"{path}: RUN: {run}: expected '| FileCheck %s [--check-prefix=P]'")
            prefix = "CHECK"
            for option in tool[2:]:
                if option.startswith("--check-prefix="):
                    prefix = option.split("=", 1)[1]
            try:
                filecheck(output, text, prefix)
            except CheckFailure as exc:
                raise CheckFailure(f"{path}: RUN: {run}:\n{exc}") from None
    return len(runs)
