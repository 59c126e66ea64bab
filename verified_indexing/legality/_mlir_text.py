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
from verified_indexing.legality._scanner import Scanner
from verified_indexing.syntax import parse_affine_map

__all__ = ["Cursor", "ShapedType", "parse_type"]


@dataclass(frozen=True)
class ShapedType:
    """``tensor<4x?xf32>``, ``memref<4x8xf32>`` or a scalar ``f32``: ``shape`` has
    ``None`` for ``?`` (a scalar has kind ``scalar`` and shape ``()``)."""

    kind: str  # "tensor", "memref" or "scalar"
    shape: tuple[int | None, ...]
    element: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(s is not None for s in self.shape)

    def __str__(self) -> str:
        if self.kind == "scalar":
            return self.element
        dims = "".join(f"{'?' if s is None else s}x" for s in self.shape)
        return f"{self.kind}<{dims}{self.element}>"


_TYPE_RE = re.compile(r"(tensor|memref)<(.*)>", re.DOTALL)


def _split_top_commas(s: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    cur = 0
    for i, ch in enumerate(s):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(s[cur:i])
            cur = i + 1
    parts.append(s[cur:])
    return parts


def parse_type(text: str, offset: int, source: str, full: str) -> ShapedType:
    """A shaped type from ``text`` (which starts at ``offset`` of ``full``).

    ``tensor<4x?xf32>``, ``tensor<f32>`` (rank 0), ``memref<4x8xf32, strided<[8, 1]>>``
    (layouts and encodings after the first top-level comma are ignored), and a
    bare scalar type such as ``f32``, ``i64`` or ``index`` (kind ``scalar``, rank 0).
    """
    t = text.strip()
    offset += len(text) - len(text.lstrip())
    if re.fullmatch(r"(?:[fiu]\d+|bf16|tf32|index|f8\w*)", t):
        return ShapedType("scalar", (), t)
    m = _TYPE_RE.fullmatch(t)
    if m is None:
        raise ParseError(
            f"expected a tensor<...> or memref<...> type, found {t!r}", full, offset, max(1, len(t)), source
        )
    body = _split_top_commas(m.group(2))[0].strip()
    element = body
    shape: list[int | None] = []
    while True:
        dm = re.match(r"\s*(\?|\d+)\s*x", element)
        if dm is None:
            break
        shape.append(None if dm.group(1) == "?" else int(dm.group(1)))
        element = element[dm.end() :]
    element = element.strip()
    if not re.fullmatch(r"[A-Za-z!][\w.<>!, ?\[\]]*", element):
        raise ParseError(f"bad element type {element!r} in type {t!r}", full, offset, max(1, len(t)), source)
    return ShapedType(m.group(1), tuple(shape), element)


class Cursor(Scanner):
    """A :class:`Scanner` with MLIR-aware skipping (balanced brackets, strings)."""

    def regex(self, pattern: re.Pattern[str], what: str) -> re.Match[str]:
        self.skip_ws()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}, found {self.found()}")
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
