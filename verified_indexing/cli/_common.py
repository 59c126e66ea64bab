"""Helpers shared by the subcommands: reading inputs, printing JSON."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["read_input", "print_json", "seconds", "count", "add_timeout", "TIMEOUT_SLACK"]

TIMEOUT_SLACK = 1.0
"""Seconds a command may run past ``--timeout``, counted from the interpreter's
start: start-up before the budget begins (0.5-0.9 s here), then printing and
stopping a worker process (about 0.2 s; see docs/cli.md)."""


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r} (not a number)")
    return value


def seconds(text: str) -> float:
    """argparse type of every time option: a positive number of seconds, or ``inf``
    (no limit); NaN, zero and negative values are bad input (exit 3)."""
    value = _number(text, "a positive number of seconds (or inf)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds (or inf), got {text!r}")
    return value


def count(text: str) -> int:
    """argparse type of every count option: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def add_timeout(p: argparse.ArgumentParser, default: float = 10.0) -> None:
    """The ``--timeout`` option: the wall-clock budget of the whole command."""
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=default,
        help=f"wall-clock budget of the whole command in seconds, every engine included (default {default:g}; "
        f"inf: none); the command returns within it plus about {TIMEOUT_SLACK:g} s",
    )


def read_input(arg: str) -> tuple[str, str]:
    """``(text, source)``: ``-`` reads standard input, an existing file is read,
    anything else is taken as the text itself."""
    if arg == "-":
        return sys.stdin.read(), "<stdin>"
    if "\n" not in arg and len(arg) < 4096 and os.path.isfile(arg):
        try:
            with open(arg, encoding="utf-8") as f:
                return f.read(), arg
        except (OSError, UnicodeDecodeError) as exc:
            raise VerifiedIndexingError(f"{arg}: cannot read: {exc}") from None
    return arg, "<argument>"


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
