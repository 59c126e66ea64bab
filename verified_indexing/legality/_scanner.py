"""The one small text scanner shared by the MLIR and CINN readers.

A :class:`Scanner` is a position in a text with the operations both readers
need: whitespace and ``//`` comment skipping, literal matching, positioned
:class:`ParseError` construction. The MLIR reader adds bracket matching on top
(:class:`verified_indexing.legality._mlir_text.Cursor`), the CINN reader its
statement grammar (:mod:`verified_indexing.legality.cinn_ir`).
"""

from __future__ import annotations

import re

from verified_indexing.errors import ParseError

__all__ = ["Scanner", "mask_mlir_noise"]


class Scanner:
    """A position in ``text``; every error it builds is positioned in ``text``."""

    def __init__(self, text: str, pos: int = 0, source: str = "<input>") -> None:
        self.text = text
        self.pos = pos
        self.source = source

    def error(self, message: str, pos: int | None = None, length: int = 1) -> ParseError:
        """A :class:`ParseError` at ``pos`` (default: the current position)."""
        return ParseError(message, self.text, self.pos if pos is None else pos, length, self.source)

    def skip_ws(self) -> None:
        """Skip whitespace and ``//`` comments."""
        text = self.text
        while self.pos < len(text):
            if text[self.pos].isspace():
                self.pos += 1
            elif text.startswith("//", self.pos):
                nl = text.find("\n", self.pos)
                self.pos = len(text) if nl < 0 else nl
            else:
                return

    def found(self) -> str:
        """What is at the current position, for messages (``'text'`` or ``end of input``)."""
        t = self.text[self.pos : self.pos + 16].split("\n")[0]
        return repr(t) if t else "end of input"

    def at(self, s: str) -> bool:
        """Whether ``s`` comes next (after whitespace)."""
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        """Consume ``s`` if it comes next."""
        if self.at(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> None:
        """Consume ``s`` or raise a positioned error naming ``what`` (default ``s``)."""
        if not self.accept(s):
            raise self.error(f"expected {what or repr(s)}, found {self.found()}")

    def line_end(self) -> int:
        """The offset of the end of the current line."""
        nl = self.text.find("\n", self.pos)
        return len(self.text) if nl < 0 else nl


_LOC_RE = re.compile(r"\bloc\s*\(")


def mask_mlir_noise(text: str) -> str:
    """``text`` with ``//`` comments and ``loc(...)`` annotations (balanced
    parentheses, strings respected) replaced by spaces, and ``#loc... = loc(...)``
    alias lines blanked. Offsets and line numbers are unchanged, so errors found
    in the masked text are positioned in the original."""
    out = list(text)
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
            continue
        starts_word = i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.#")
        m = _LOC_RE.match(text, i) if ch == "l" and starts_word else None
        if m is not None:
            depth = 0
            j = m.end() - 1
            while j < n:
                c = text[j]
                if c == '"':
                    k = j + 1
                    while k < n and text[k] != '"':
                        k += 2 if text[k] == "\\" else 1
                    j = k + 1
                    continue
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:  # unbalanced: leave it for the parser to report
                i = m.end()
                continue
            for k in range(i, j + 1):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
            continue
        i += 1
    masked = "".join(out)
    # ``#loc = loc(...)`` / ``#loc3 = loc(...)``: the loc part is already blank.
    return re.sub(r"(?m)^[ \t]*#loc[\w.$-]*[ \t]*=[ \t]*$", lambda mm: " " * len(mm.group()), masked)
