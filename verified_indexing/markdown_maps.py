"""Finding the indexing maps printed in a Markdown document (such as XLA's
indexing-analysis document): fenced code blocks whose text is a map."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MapBlock", "extract_map_blocks"]

_FENCE_RE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_MAP_START_RE = re.compile(r"^\s*(\(|KNOWN EMPTY|UNDEFINED|#xla)")


@dataclass(frozen=True)
class MapBlock:
    """A fenced block holding one map: its first line number (1-based) and text."""

    line: int
    text: str


def extract_map_blocks(markdown: str) -> list[MapBlock]:
    """Every fenced block with no language tag whose text starts like a map and
    contains ``->`` (HLO blocks carry a language tag or do not start with ``(``)."""
    out = []
    for m in _FENCE_RE.finditer(markdown):
        lang, body = m.group(1).strip(), m.group(2)
        if lang or not _MAP_START_RE.match(body) or "->" not in body:
            continue
        line = markdown.count("\n", 0, m.start(2)) + 1
        out.append(MapBlock(line, body.rstrip("\n")))
    return out
