"""Reading HLO from what XLA and JAX leave on disk: files holding one module or
several (lit tests split by ``// -----``), ``--xla_dump_to`` directories, and a
pointed message for the files that are not HLO text (StableHLO/MLIR, buffer
assignments, live ranges, LLVM IR, ...).

Promises:

* :func:`split_modules` keeps every offset: each piece is the whole text with
  the other pieces blanked (newlines kept), so errors keep their line and column;
* :func:`dump_modules` reads the after-optimization modules of a dump directory
  (the before-optimization ones when there are none) and says which it picked;
* :func:`stablehlo_to_hlo` turns StableHLO/MHLO text into HLO text with jaxlib's
  own converter (the one ``jax`` uses to hand a module to XLA); the result is the
  *unoptimized* module (no fusion pass has run), errors keep the MLIR position;
* :func:`not_hlo_reason` recognizes a non-HLO file only from markers that never
  start HLO text, so it never turns valid HLO into an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = [
    "split_modules",
    "not_hlo_reason",
    "dump_modules",
    "DumpSelection",
    "JAX_INSTALL_HINT",
    "is_stablehlo",
    "stablehlo_to_hlo",
    "UNOPTIMIZED_NOTE",
    "dump_candidates",
    "is_hlo_proto_path",
    "read_hlo_proto",
]

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


JAX_INSTALL_HINT = "pip install 'verified-indexing[jax]'"
"""How to get jax (the ``jax`` extra), for the messages that need it."""

_NOT_HLO: list[tuple[re.Pattern[str], str]] = [
    (
        # MLIR with Linalg ops (often opening with ``#map = affine_map<...>`` aliases): the fusion commands'.
        re.compile(r"\A\s*(//[^\n]*\n\s*)*#[\w$.-]+\s*=\s*affine_map<|\blinalg\.(generic|map|matmul|fill)\b"),
        "this is MLIR with Linalg ops, not HLO text; `verified-indexing fuse FILE` checks its elementwise "
        "fusions (see docs/legality.md)",
    ),
    (
        # An MLIR module's start, or an MLIR op (``%0 = stablehlo.add``): not a mention of ``mhlo.`` in an
        # HLO attribute (frontend_attributes={mhlo.sharding=...} is valid HLO).
        re.compile(
            r"\A\s*(#loc\d*\s*=[^\n]*\n\s*)*(module\b|func\.func\b|\"builtin\.module\")"
            r"|%[\w.#]+(:\d+)?\s*=\s*\"?(stablehlo|mhlo|chlo)\.\w"
        ),
        "this is StableHLO/MLIR, not HLO text; `verified-indexing analyze` converts StableHLO when jax is "
        f"installed ({JAX_INSTALL_HINT}); or print HLO instead: jax.jit(f).lower(*args).as_text(dialect='hlo') "
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


_COMMENT_LINE_RE = re.compile(r"^[ \t]*//[^\n]*", re.MULTILINE)


def _without_comment_lines(text: str) -> str:
    """The text with every line that is a ``//`` comment blanked (a lit test's ``RUN:`` and ``CHECK:``
    lines quote MLIR, ``%0 = mhlo.add ...``, that the HLO around them is not)."""
    return _COMMENT_LINE_RE.sub("", text)


def not_hlo_reason(text: str) -> str | None:
    """What the text is when it is recognizably not HLO text (None otherwise). Comment lines are not
    looked at (XLA's lit tests of HLO quote the MLIR they expect in ``// CHECK:`` lines)."""
    head = _without_comment_lines(text[:65536])
    if re.match(r"\s*HloModule\b", head):
        return None
    for pattern, reason in _NOT_HLO:
        if pattern.search(head[:4096]):
            return reason
    return None


@dataclass(frozen=True)
class DumpSelection:
    """The HLO files picked from a dump directory, and what was picked."""

    files: tuple[str, ...]
    note: str


_AFTER_RE = re.compile(r"after_optimizations\.(txt|hlo\.pb)$")
_BEFORE_RE = re.compile(r"before_optimizations\.(txt|hlo\.pb)$")


def _prefer_text(names: list[str]) -> list[str]:
    """The names, a ``.hlo.pb`` left out when the same module is there as ``.txt`` (XLA writes both with
    ``--xla_dump_hlo_as_text --xla_dump_hlo_as_proto``: the same module)."""
    present = set(names)
    return [n for n in names if not (n.endswith(".hlo.pb") and n[: -len(".hlo.pb")] + ".txt" in present)]


def dump_modules(directory: str) -> DumpSelection:
    """The modules of an ``--xla_dump_to`` directory: the ``*after_optimizations.txt``
    files (the optimized modules XLA runs; fusions are there), else the
    ``*before_optimizations.txt`` ones, else every ``*.hlo``/``*.txt`` holding an
    ``HloModule``. A module dumped only as an ``HloModuleProto`` (``*.hlo.pb``,
    ``--xla_dump_hlo_as_proto``) is picked like its text (read by :func:`read_hlo_proto`)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise VerifiedIndexingError(f"{directory}: cannot read the directory: {exc}") from None
    after = _prefer_text([n for n in names if _AFTER_RE.search(n)])
    before = _prefer_text([n for n in names if _BEFORE_RE.search(n)])
    if after:
        picked, note = after, f"{len(after)} after-optimization modules (*after_optimizations.txt)"
        if any(n.endswith(".pb") for n in after):
            note = f"{len(after)} after-optimization modules (*after_optimizations.txt, .hlo.pb)"
        if before:
            note += f"; {len(before)} before-optimization modules not read"
    elif before:
        picked = before
        note = f"{len(before)} before-optimization modules (*before_optimizations.txt; no optimized ones)"
    else:
        picked = []
        for n in names:
            if n.endswith(".hlo.pb"):  # a module proto (read through jaxlib)
                picked.append(n)
            elif n.endswith((".hlo", ".txt")):
                try:
                    with open(os.path.join(directory, n), encoding="utf-8") as f:
                        if re.match(r"\s*HloModule\b", f.read(4096)):
                            picked.append(n)
                except (OSError, UnicodeDecodeError):
                    continue
        note = f"{len(picked)} HLO files (*.hlo, *.txt starting with HloModule, *.hlo.pb)"
    if not picked:
        raise VerifiedIndexingError(
            f"{directory}: no HLO module in the directory (expected an XLA dump: *after_optimizations.txt files)"
        )
    return DumpSelection(tuple(os.path.join(directory, n) for n in picked), f"{directory}: {note}")


def dump_candidates(directory: str) -> list[str]:
    """Every HLO module file of a dump directory (after and before optimization, text and proto), for a
    ``--module`` pattern that names modules the default selection leaves out."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    picked = _prefer_text([n for n in names if _AFTER_RE.search(n) or _BEFORE_RE.search(n)])
    return [os.path.join(directory, n) for n in picked]


PROTO_SUFFIXES = (".hlo.pb", ".pb")
"""File names read as a serialized ``HloModuleProto``."""


def is_hlo_proto_path(path: str) -> bool:
    """True for a file named as XLA names an ``HloModuleProto`` dump (``*.hlo.pb``), or any ``*.pb`` that
    is not a memory-usage report."""
    return path.endswith(PROTO_SUFFIXES) and "memory-usage-report" not in os.path.basename(path)


def read_hlo_proto(path: str) -> str:
    """The HLO text of a serialized ``HloModuleProto`` file (``--xla_dump_hlo_as_proto`` writes
    ``*.hlo.pb``), printed by XLA itself through jaxlib (``HloModule.from_serialized_hlo_module_proto``,
    ``to_string``). Raises :class:`VerifiedIndexingError` naming the ``jax`` extra when jaxlib is not
    installed, and naming the file when it is not such a proto."""
    import importlib

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise VerifiedIndexingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        hlo: Any = importlib.import_module("jaxlib._hlo")
    except ImportError:
        raise VerifiedIndexingError(
            f"{path}: an HloModuleProto (binary); reading it needs jaxlib, installed with jax "
            f"({JAX_INSTALL_HINT}); or dump text: XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text'"
        ) from None
    failure: Exception | None = None
    for candidate in _proto_candidates(data):
        try:
            with _quiet_stderr():  # jaxlib's C++ logging writes protobuf's complaints to the process's stderr
                module = hlo.HloModule.from_serialized_hlo_module_proto(candidate)
            text: str = module.to_string()
            return text
        except Exception as exc:  # jaxlib raises RuntimeError (INVALID_ARGUMENT) on a bad proto
            failure = failure or exc
    why = failure or ValueError("empty file")
    first = (str(why).strip().splitlines() or [type(why).__name__])[0]
    raise VerifiedIndexingError(
        f"{path}: not a serialized HloModuleProto ({len(data)} bytes; jaxlib: {first}); an XLA dump's "
        "module protos are named *.hlo.pb"
    )


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while at < len(data):
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at
    raise ValueError("truncated varint")


def _proto_candidates(data: bytes) -> list[bytes]:
    """The bytes to read as an ``HloModuleProto``: XLA's dumps write an ``HloProto`` (the module in field
    1, the buffer assignment in field 3), so field 1 of a well-formed wrapper comes first, then the whole."""
    try:
        key, at = _varint(data, 0)
        if key == (1 << 3) | 2:  # field 1, length-delimited
            size, at = _varint(data, at)
            if at + size <= len(data):
                return [data[at: at + size], data]
    except ValueError:
        pass
    return [data]


class _quiet_stderr:
    """File descriptor 2 sent to /dev/null for the duration (C++ code writes there directly)."""

    def __enter__(self) -> None:
        import sys

        self.saved: int | None = None
        try:
            sys.stderr.flush()
            self.saved = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        except OSError:
            self.saved = None

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)


_MLIR_START_RE = re.compile(r"\A\s*((#loc\d*\s*=|//)[^\n]*\n\s*)*(module\b|func\.func\b|\"builtin\.module\")")
_STABLEHLO_RE = re.compile(r"\b(stablehlo|mhlo|chlo)\.[a-z_]")
_LINALG_RE = re.compile(r"\blinalg\.\w")
_MLIR_DIAG_RE = re.compile(r"(?:^|\s)-:(\d+):(\d+): error: ([^\n]*)")

UNOPTIMIZED_NOTE = (
    "converted from StableHLO by jaxlib: this is the unoptimized HLO (before XLA's fusion passes), analyzed "
    "one instruction at a time (--computation ENTRY: the entry composed); for XLA's fusions analyze "
    "jax.jit(f).lower(*args).compile().as_text() or use analyze --jax"
)
"""What the output says about a module converted from StableHLO."""


def is_stablehlo(text: str) -> bool:
    """True when the text is an MLIR module (it starts with ``module``, ``func.func``
    or ``"builtin.module"``, after ``#loc`` lines and comments) holding StableHLO,
    MHLO or CHLO ops, and no Linalg ops (which the ``legality`` commands read). HLO
    text never starts that way, even when an attribute mentions ``mhlo.``."""
    head = text[:65536]
    if re.match(r"\s*HloModule\b", _without_comment_lines(head)):
        return False
    return (
        _MLIR_START_RE.match(text) is not None
        and _STABLEHLO_RE.search(head) is not None
        and _LINALG_RE.search(head) is None
    )


def stablehlo_to_hlo(text: str, source: str = "<input>") -> str:
    """The HLO text of a StableHLO (or MHLO) module, converted by jaxlib's
    ``mlir_module_to_xla_computation`` (what ``jax`` uses to hand a lowered module
    to XLA): the *unoptimized* module, with the entry's parameters as they are in
    ``main`` (no tuple). Raises :class:`ParseError` (with the MLIR line and column)
    when jaxlib rejects the text, :class:`VerifiedIndexingError` naming the ``jax``
    extra when jax is not installed."""
    import importlib

    from verified_indexing.errors import ParseError

    try:
        xla_client: Any = importlib.import_module("jaxlib.xla_client")  # installed with jax
    except ImportError:
        raise ParseError(
            f"this is StableHLO/MLIR; converting it to HLO needs jax ({JAX_INSTALL_HINT}), or print HLO "
            "instead: jax.jit(f).lower(*args).compile().as_text()",
            text,
            len(text) - len(text.lstrip()),
            1,
            source,
        ) from None
    try:
        computation = xla_client._xla.mlir.mlir_module_to_xla_computation(
            text, use_tuple_args=False, return_tuple=False
        )
    except Exception as exc:  # jaxlib raises JaxRuntimeError (a RuntimeError) with MLIR diagnostics
        message = str(exc)
        m = _MLIR_DIAG_RE.search(message)
        if m is None:
            first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
            raise ParseError(
                f"jaxlib could not convert this StableHLO to HLO: {first}",
                text,
                len(text) - len(text.lstrip()),
                1,
                source,
            ) from None
        line, column = int(m.group(1)), int(m.group(2))
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        offset = starts[min(line, len(starts)) - 1] + column - 1
        raise ParseError(
            f"jaxlib could not convert this StableHLO to HLO: {m.group(3).strip()}", text, offset, 1, source
        ) from None
    hlo: str = computation.as_hlo_text()
    return hlo
