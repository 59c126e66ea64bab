"""A small reader for the subset of MLIR text that ``linalg.generic`` needs.

Only what :mod:`verified_indexing.legality.linalg` uses: affine map aliases,
``linalg.generic`` ops in MLIR's pretty form, tensor and memref types. Every
malformed input raises :class:`ParseError` with its position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.syntax import parse_affine_map

__all__ = ["Cursor", "ShapedType", "parse_type"]


@dataclass(frozen=True)
class ShapedType:
    """``tensor<4x?xf32>`` or ``memref<4x8xf32>``: ``shape`` has ``None`` for ``?``."""

    kind: str  # "tensor" or "memref"
    shape: tuple[int | None, ...]
    element: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(s is not None for s in self.shape)

    def __str__(self) -> str:
        dims = "".join(f"{'?' if s is None else s}x" for s in self.shape)
        return f"{self.kind}<{dims}{self.element}>"


_TYPE_RE = re.compile(r"(tensor|memref)<([^<>]*)>")


def parse_type(text: str, offset: int, source: str, full: str) -> ShapedType:
    """A shaped type from ``text`` (which starts at ``offset`` of ``full``)."""
    t = text.strip()
    m = _TYPE_RE.fullmatch(t)
    if m is None:
        raise ParseError(
            f"expected a tensor<...> or memref<...> type, found {t!r}", full, offset, max(1, len(t)), source
        )
    parts = m.group(2).split(",")[0].strip().split("x")
    element = parts[-1].strip()
    shape: list[int | None] = []
    for p in parts[:-1]:
        p = p.strip()
        if p == "?":
            shape.append(None)
        elif p.isdigit():
            shape.append(int(p))
        else:
            raise ParseError(f"bad dimension {p!r} in type {t!r}", full, offset, max(1, len(t)), source)
    if not element:
        raise ParseError(f"missing element type in {t!r}", full, offset, max(1, len(t)), source)
    return ShapedType(m.group(1), tuple(shape), element)


class Cursor:
    """A position in a text with MLIR-aware skipping (balanced brackets, strings)."""

    def __init__(self, text: str, pos: int = 0, source: str = "<input>") -> None:
        self.text = text
        self.pos = pos
        self.source = source

    def error(self, message: str, pos: int | None = None, length: int = 1) -> ParseError:
        p = self.pos if pos is None else pos
        return ParseError(message, self.text, p, length, self.source)

    def skip_ws(self) -> None:
        while self.pos < len(self.text):
            if self.text[self.pos].isspace():
                self.pos += 1
            elif self.text.startswith("//", self.pos):
                nl = self.text.find("\n", self.pos)
                self.pos = len(self.text) if nl < 0 else nl
            else:
                break

    def at(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        if self.at(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.accept(s):
            found = self.text[self.pos : self.pos + 12].split("\n")[0] or "end of input"
            raise self.error(f"expected {what or repr(s)}, found {found!r}")

    def regex(self, pattern: re.Pattern[str], what: str) -> re.Match[str]:
        self.skip_ws()
        m = pattern.match(self.text, self.pos)
        if m is None:
            found = self.text[self.pos : self.pos + 12].split("\n")[0] or "end of input"
            raise self.error(f"expected {what}, found {found!r}")
        self.pos = m.end()
        return m

    def balanced(self, open_: str, close: str) -> tuple[int, int]:
        """At ``open_``: skip to the matching ``close``; returns the inner span."""
        self.skip_ws()
        if not self.text.startswith(open_, self.pos):
            raise self.error(f"expected {open_!r}")
        start = self.pos
        depth = 0
        i = self.pos
        while i < len(self.text):
            ch = self.text[i]
            if ch == '"':
                j = self.text.find('"', i + 1)
                if j < 0:
                    break
                i = j + 1
                continue
            if ch == ">" and open_ == "<" and i > 0 and self.text[i - 1] == "-":
                i += 1
                continue
            if ch == open_:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return start + 1, i
            i += 1
        raise self.error(f"no matching {close!r} for this {open_!r}", start)

    def split_top(self, start: int, stop: int, sep: str = ",") -> list[tuple[int, int]]:
        """Spans of ``text[start:stop]`` split at top-level ``sep`` (outside brackets)."""
        spans: list[tuple[int, int]] = []
        depth = 0
        s = start
        i = start
        while i < stop:
            ch = self.text[i]
            if ch in "([{<" :
                depth += 1
            elif ch in ")]}" or (ch == ">" and self.text[i - 1] != "-"):
                depth -= 1
            elif ch == sep and depth == 0:
                spans.append((s, i))
                s = i + 1
            i += 1
        if self.text[s:stop].strip():
            spans.append((s, stop))
        return spans


def parse_affine_span(text: str, start: int, stop: int, source: str) -> AffineMap:
    """An ``affine_map<...>`` occupying ``text[start:stop]``, errors positioned in ``text``."""
    inner = text[start:stop]
    lead = len(inner) - len(inner.lstrip())
    try:
        return parse_affine_map(inner, source)
    except ParseError as exc:
        raise ParseError(exc.message, text, start + exc.offset, exc.length, source) from None
    except VerifiedIndexingError as exc:
        raise ParseError(str(exc), text, start + lead, max(1, len(inner.strip())), source) from None
