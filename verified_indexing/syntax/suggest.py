""""Did you mean" hints for misspelt keywords, commands and options (difflib)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "MAP_WORDS"]

MAP_WORDS = ("floordiv", "ceildiv", "mod", "min", "max", "in", "domain", "truncdiv", "truncmod")
"""The keywords of maps and rules, as a hint offers them."""


def did_you_mean(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean 'X' instead of 'word'?"`` for the candidate closest to ``word`` (difflib's ratio
    at least ``cutoff``), or ``""`` when none is close or ``word`` is one of them."""
    options = list(candidates)
    if word in options:
        return ""
    close = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r} instead of {word!r}?" if close else ""
