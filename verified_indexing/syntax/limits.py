"""The one nesting and size limit of every parser (maps, rules, HLO, MLIR, CINN).

Each parser's entry point calls :func:`check_limits` on its text before reading
it: a linear scan that refuses (with a :class:`~verified_indexing.errors.ParseError`
at the offending position, exit code 3 on the command line) text longer than
:data:`MAX_INPUT_CHARS`, brackets ``( [ {`` nested deeper than :data:`MAX_NESTING`,
and runs of more than :data:`MAX_NESTING` unary signs. Inputs within these limits
never reach Python's recursion limit in the recursive-descent parsers or in the
walks over the parsed expressions.
"""

from __future__ import annotations

from verified_indexing.errors import ParseError

__all__ = ["MAX_NESTING", "MAX_INPUT_CHARS", "check_limits"]

MAX_NESTING = 100
"""Deepest nesting of brackets (and longest run of unary signs) any parser accepts."""

MAX_INPUT_CHARS = 64 * 1024 * 1024
"""Longest text any parser accepts (64 Mi characters)."""

_OPEN = "([{"
_CLOSE = ")]}"


def check_limits(text: str, source: str = "<input>", max_nesting: int = MAX_NESTING) -> None:
    """Raise :class:`ParseError` (with the position) when ``text`` exceeds the size
    or nesting limit; otherwise return at once (one pass over the text)."""
    if len(text) > MAX_INPUT_CHARS:
        raise ParseError(
            f"input of {len(text)} characters is longer than the limit of {MAX_INPUT_CHARS}",
            text[:200], 0, 1, source,
        )
    depth = 0
    signs = 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
            if depth > max_nesting:
                raise ParseError(f"input nested more than {max_nesting} levels deep", text, i, 1, source)
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        if ch == "-" or ch == "+":
            if ch == "-" and text.startswith("->", i):
                signs = 0
                continue
            signs += 1
            if signs > max_nesting:
                why = f"input nested more than {max_nesting} levels deep (a run of signs)"
                raise ParseError(why, text, i, 1, source)
        elif not ch.isspace():
            signs = 0
