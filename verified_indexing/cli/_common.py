"""Helpers shared by the subcommands: reading inputs, printing JSON."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["read_input", "print_json"]


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
