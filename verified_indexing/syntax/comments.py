"""Comment lines in map and rule texts (lit-style test files).

A line whose first non-blank characters are ``//`` is a comment (as in MLIR files
and lit tests: ``// RUN: ...``, ``// CHECK: ...``, ``// -----``). The parsers read
the text with every comment line blanked out (replaced by as many spaces), so the
positions, lines and columns of the rest, and of every error, are those of the
file. ``//`` after other text on a line is not a comment: it is refused with a
hint (``d0 // 4`` is Python's floor division, spelt ``floordiv`` here), never read
as the end of the line (which would silently drop ``4``).
"""

from __future__ import annotations

import re

from verified_indexing.errors import ParseError

__all__ = ["blank_comments", "double_slash_error"]

_COMMENT_RE = re.compile(r"^[ \t]*//[^\n]*", re.MULTILINE)


def blank_comments(text: str) -> str:
    """``text`` with every ``//`` comment line replaced by spaces of the same length."""
    if "//" not in text:
        return text
    return _COMMENT_RE.sub(lambda m: " " * len(m.group()), text)


def double_slash_error(text: str, offset: int, source: str) -> ParseError:
    """The error for ``//`` at ``offset`` that does not start its line."""
    return ParseError(
        "'//' is not an operator here: write 'floordiv' (or '/') for floor division; a '//' comment must "
        "start its line",
        text,
        offset,
        2,
        source,
    )
