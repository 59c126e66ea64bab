"""Reading HLO from what XLA and JAX leave on disk: files holding one module or
several (lit tests split by ``// -----``), ``--xla_dump_to`` directories, and a
pointed message for the files that are not HLO text (StableHLO/MLIR, buffer
assignments, live ranges, LLVM IR, ...).

Promises:

* :func:`split_modules` keeps every offset: each piece is the whole text with
  the other pieces blanked (newlines kept), so errors keep their line and column;
* :func:`dump_modules` reads the after-optimization modules of a dump directory
  (the before-optimization ones when there are none) and says which it picked;
* :func:`not_hlo_reason` recognizes a non-HLO file only from markers that never
  start HLO text, so it never turns valid HLO into an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["split_modules", "not_hlo_reason", "dump_modules", "DumpSelection"]

_SEPARATOR_RE = re.compile(r"^[ \t]*//[ \t]*-----[ \t]*$", re.MULTILINE)
_HEADER_RE = re.compile(r"^[ \t]*HloModule\b", re.MULTILINE)


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with everything outside ``[start, end)`` blanked (newlines kept)."""
    def spaces(part: str) -> str:
        return re.sub(r"[^\n]", " ", part)

    return spaces(text[:start]) + text[start:end] + spaces(text[end:])


def split_modules(text: str) -> list[str]:
    """The modules of a file: pieces separated by ``// -----`` lines (XLA's
    ``--split-input-file`` lit tests) or by a second ``HloModule`` line. Each
    piece keeps the positions of the whole text. Pieces holding no instruction
    (only comments) are dropped."""
    cuts = [0]
    cuts += [m.start() for m in _SEPARATOR_RE.finditer(text)]
    pieces = [(a, b) for a, b in zip(cuts, [*cuts[1:], len(text)])]
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        headers = [m.start() for m in _HEADER_RE.finditer(text, a, b)]
        starts = [a, *headers[1:]]
        for s, e in zip(starts, [*starts[1:], b]):
            out.append((s, e))
    kept = [(a, b) for a, b in out if re.search(r"=|\{", _strip_comments(text[a:b]))]
    if len(kept) <= 1:
        return [text]
    return [_blank(text, a, b) for a, b in kept]


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


_NOT_HLO: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"\A\s*(#loc\d*\s*=[^\n]*\n\s*)*(module\b|func\.func\b|\"builtin\.module\")|\bstablehlo\.\w|\bmhlo\.\w"),
        "this is StableHLO/MLIR, not HLO text; print HLO instead: jax.jit(f).lower(*args).as_text(dialect='hlo') "
        "(before optimization) or jax.jit(f).lower(*args).compile().as_text() (after), or dump with "
        "XLA_FLAGS=--xla_dump_to=DIR and analyze DIR; the linalg commands (legality) read MLIR linalg",
    ),
    (
        re.compile(r"\A\s*BufferAssignment:|\A\s*allocation \d+: size"),
        "this is a buffer-assignment file of an XLA dump; the module is the *after_optimizations.txt file next "
        "to it (or analyze the dump directory)",
    ),
    (
        re.compile(r"\A\s*HloLiveRange\b"),
        "this is a live-range file of an XLA dump; the module is the *after_optimizations.txt file next to it",
    ),
    (
        re.compile(r"\A\s*(Memory Space:|Total bytes used:)"),
        "this is a memory-usage file of an XLA dump; the module is the *after_optimizations.txt file next to it",
    ),
    (
        re.compile(r"\A\s*(; ModuleID =|source_filename =|target datalayout)"),
        "this is LLVM IR (an XLA dump's .ll file), not HLO text; the module is the *after_optimizations.txt file",
    ),
    (
        re.compile(r"\A\s*xla_\w+:"),
        "this is an XLA dump's debug_options file, not HLO text",
    ),
]


def not_hlo_reason(text: str) -> str | None:
    """What the text is when it is recognizably not HLO text (None otherwise)."""
    if re.match(r"\s*HloModule\b", text):
        return None
    for pattern, reason in _NOT_HLO:
        if pattern.search(text[:4096]):
            return reason
    return None


@dataclass(frozen=True)
class DumpSelection:
    """The HLO files picked from a dump directory, and what was picked."""

    files: tuple[str, ...]
    note: str


_AFTER_RE = re.compile(r"after_optimizations\.txt$")
_BEFORE_RE = re.compile(r"before_optimizations\.txt$")


def dump_modules(directory: str) -> DumpSelection:
    """The modules of an ``--xla_dump_to`` directory: the ``*after_optimizations.txt``
    files (the optimized modules XLA runs; fusions are there), else the
    ``*before_optimizations.txt`` ones, else every ``*.hlo``/``*.txt`` holding an
    ``HloModule``."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise VerifiedIndexingError(f"{directory}: cannot read the directory: {exc}") from None
    after = [n for n in names if _AFTER_RE.search(n)]
    before = [n for n in names if _BEFORE_RE.search(n)]
    if after:
        picked, note = after, f"{len(after)} after-optimization modules (*after_optimizations.txt)"
        if before:
            note += f"; {len(before)} before-optimization modules not read"
    elif before:
        picked = before
        note = f"{len(before)} before-optimization modules (*before_optimizations.txt; no optimized ones)"
    else:
        picked = []
        for n in names:
            if n.endswith((".hlo", ".txt")):
                try:
                    with open(os.path.join(directory, n), encoding="utf-8") as f:
                        if re.match(r"\s*HloModule\b", f.read(4096)):
                            picked.append(n)
                except (OSError, UnicodeDecodeError):
                    continue
        note = f"{len(picked)} HLO files (*.hlo, *.txt starting with HloModule)"
    if not picked:
        raise VerifiedIndexingError(
            f"{directory}: no HLO module in the directory (expected an XLA dump: *after_optimizations.txt files)"
        )
    return DumpSelection(tuple(os.path.join(directory, n) for n in picked), f"{directory}: {note}")
