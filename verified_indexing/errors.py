"""The project's exceptions. Every error a user can cause is one of these."""

from __future__ import annotations

__all__ = [
    "IslLimitExceeded",
    "VerifiedIndexingError",
    "ParseError",
    "SemiAffineError",
    "ZeroDivisorError",
    "MapError",
    "UnsupportedError",
    "NotModelledError",
]


class VerifiedIndexingError(Exception):
    """Base class of every error the project raises on bad input."""


class SemiAffineError(VerifiedIndexingError, ValueError):
    """A product of two non-constants, or a division by a non-constant."""


class ZeroDivisorError(VerifiedIndexingError, ValueError):
    """A floordiv, ceildiv or mod by the constant zero."""


class MapError(VerifiedIndexingError, ValueError):
    """An ill-formed indexing map (unknown variable, wrong arity, bad bounds)."""


class UnsupportedError(VerifiedIndexingError):
    """An operation the project does not model ("unknown indexing")."""


class ParseError(VerifiedIndexingError, ValueError):
    """Malformed text, with the position and the offending text.

    ``str(error)`` gives ``<source>:<line>:<column>: <message>``, the offending
    line, and a caret under the offending text.
    """

    def __init__(
        self,
        message: str,
        text: str = "",
        offset: int = 0,
        length: int = 1,
        source: str = "<input>",
    ) -> None:
        self.message = message
        self.text = text
        self.offset = max(0, min(offset, len(text)))
        self.length = max(1, length)
        self.source = source
        line_start = text.rfind("\n", 0, self.offset) + 1
        line_end = text.find("\n", self.offset)
        if line_end < 0:
            line_end = len(text)
        self.line = text.count("\n", 0, self.offset) + 1
        self.column = self.offset - line_start + 1
        self.line_text = text[line_start:line_end]
        super().__init__(self._render())

    def _render(self) -> str:
        caret_len = max(1, min(self.length, len(self.line_text) - self.column + 1))
        pad = "".join("\t" if ch == "\t" else " " for ch in self.line_text[: self.column - 1])
        return (
            f"{self.source}:{self.line}:{self.column}: error: {self.message}\n"
            f"  {self.line_text}\n"
            f"  {pad}{'^' * caret_len}"
        )


class IslLimitExceeded(VerifiedIndexingError):
    """isl exceeded the operation limit (or a deadline) in a function that has no
    ``unknown`` answer (e.g. ``exact_range(..., limited=True)``). Defined here so
    that modules raising or catching it need not load isl; ``engines.isl``
    re-exports it."""


class NotModelledError(ParseError):
    """A well-formed construct of the input that the project does not model (an
    opaque use, a data-dependent index...): the answer is ``unknown`` (exit 2)
    naming what is missing, never bad input and never a false verdict. A
    :class:`ParseError` (with the position and the offending text), so callers
    that catch parse errors keep working."""

    def _render(self) -> str:
        return super()._render().replace(": error: ", ": not modelled: ", 1)
