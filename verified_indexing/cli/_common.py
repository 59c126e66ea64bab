"""Helpers shared by the subcommands: reading inputs, printing JSON, options.

Inputs (see docs/cli.md, "Inputs"): a positional argument is a path (``-`` is
standard input; a directory is an XLA dump directory for the commands that read
HLO); ``-e/--expr TEXT`` gives the text itself. The old spelling, text as a
positional argument, still works when the argument cannot be a path (it has no
such file and contains ``->``, ``(``, ``=``, ``[``, ``<``, ``{``, ``+``, ``*``,
``,``, a newline or the word ``mod``, ``floordiv`` or ``ceildiv``, or reads as the
command's syntax), with a one-line note on stderr.

JSON: every object printed by :func:`print_json` goes through :func:`envelope`:
the ``"schema"`` and ``"command"`` keys first, ``""`` written as ``null``, and with
``--no-timing`` every run-dependent field (``seconds``, ``cached``) left out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from verified_indexing.errors import VerifiedIndexingError

__all__ = [
    "read_input",
    "read_inputs",
    "add_inputs",
    "looks_like_map",
    "split_chunks",
    "print_json",
    "envelope",
    "error_json",
    "json_line",
    "seconds",
    "count",
    "add_timeout",
    "TIMEOUT_SLACK",
    "SCHEMA_ID",
    "OUTPUT",
]

SCHEMA_ID = "verified-indexing/1"
"""The ``"schema"`` value of every JSON object the command line prints; the JSON
Schema describing them ships as ``verified_indexing/schema/verified-indexing-1.json``."""

TIMING_KEYS = frozenset({"seconds", "cached"})
"""Fields that differ from run to run; ``--no-timing`` leaves them out (and every
key that starts with ``seconds_`` or ends with ``_seconds``)."""


def is_timing_key(key: str) -> bool:
    """A run-dependent field (see :data:`TIMING_KEYS`)."""
    return key in TIMING_KEYS or key.startswith("seconds_") or key.endswith(("_seconds", "_ms"))


TIMEOUT_SLACK = 1.0
"""Seconds a command may run past ``--timeout``, counted from the interpreter's
start: start-up before the budget begins (0.1-0.5 s here), the backstop's grace
(0.25 s after the deadline, ``cli.HARD_GRACE``), then printing and stopping a
worker process (about 0.1 s; see docs/cli.md, measured by tests/test_cli_budget.py)."""


class OutputOptions:
    """How the running command prints JSON (set by ``cli.main`` from the options).

    ``where``: with --split-input-file, the chunk, prefixed to an error that has no
    position. (A plain class: ``dataclasses`` costs a fifth of ``--help``'s start-up.)"""

    def __init__(self, command: str | None = None, no_timing: bool = False, where: str = "") -> None:
        self.command = command
        self.no_timing = no_timing
        self.where = where


OUTPUT = OutputOptions()


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r} (not a number)")
    return value


def seconds(text: str) -> float:
    """argparse type of every time option: a positive number of seconds, or ``inf``
    (no limit); NaN, zero and negative values are bad input (exit 3)."""
    value = _number(text, "a positive number of seconds (or inf)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds (or inf), got {text!r}")
    return value


def count(text: str) -> int:
    """argparse type of every count option: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def jobs(text: str) -> int:
    """argparse type of ``--jobs``: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of worker processes, got {text!r}")
    return value


def add_timeout(p: argparse.ArgumentParser, default: float = 10.0) -> None:
    """The ``--timeout`` option: the wall-clock budget of the whole command."""
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=default,
        help=f"wall-clock budget of the whole command in seconds, every engine included (default {default:g}; "
        f"inf: none); the command returns within it plus about {TIMEOUT_SLACK:g} s",
    )


# ---------------------------------------------------------------------------------------------------------------
# Inputs

_TEXT_RE = re.compile(r"->|[(\[<{=+*,\n]|\b(?:mod|floordiv|ceildiv)\b")
"""What a path does not hold and the maps, rules, HLO and IR texts do."""
_NOTE = (
    "note: reading {what} as text, not as a file; write -e/--expr TEXT for inline text (positional arguments "
    "are files)"
)


def _note_old_spelling(arg: str) -> None:
    shown = arg if len(arg) <= 40 and "\n" not in arg else arg.split("\n", 1)[0][:37] + "..."
    print(_NOTE.format(what=repr(shown)), file=sys.stderr)


def _read_file(path: str) -> tuple[str, str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise VerifiedIndexingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VerifiedIndexingError(f"{path}: a binary file, not text: byte 0x{data[exc.start]:02x} at offset "
                                    f"{exc.start} is not UTF-8 (expected a UTF-8 text file)") from None
    if "\0" in text:
        raise VerifiedIndexingError(f"{path}: a binary file, not text: a NUL byte at offset {text.index(chr(0))} "
                                    "(expected a UTF-8 text file)")
    return text.replace("\r\n", "\n").replace("\r", "\n"), path  # universal newlines, as open() in text mode


def read_input(arg: str, looks_like: Callable[[str], bool] | None = None) -> tuple[str, str]:
    """``(text, source)`` of one positional argument: ``-`` reads standard input,
    an existing file is read; a directory or a missing file is bad input
    ("<path>: no such file") unless the argument cannot be a path (see the module
    docstring: then it is the text itself, with a note on stderr)."""
    if arg == "-":
        return sys.stdin.read(), "<stdin>"
    could_be_path = "\n" not in arg and 0 < len(arg) < 4096 and "\0" not in arg
    if could_be_path and os.path.isdir(arg):
        raise VerifiedIndexingError(f"{arg}: is a directory (this command reads one file)")
    if could_be_path and os.path.exists(arg):
        return _read_file(arg)
    if _TEXT_RE.search(arg) or not arg.strip() or (looks_like is not None and _looks(looks_like, arg)):
        _note_old_spelling(arg)
        return arg, "<argument>"
    raise VerifiedIndexingError(f"{arg}: no such file (give inline text with -e/--expr TEXT)")


def _looks(looks_like: Callable[[str], bool], arg: str) -> bool:
    try:
        return looks_like(arg)
    except (VerifiedIndexingError, RecursionError, ValueError):
        return False


def looks_like_map(text: str) -> bool:
    """The old spelling of a map: the text parses as one (``KNOWN EMPTY``...)."""
    from verified_indexing.syntax import parse_map

    parse_map(text, "<argument>")
    return True


def add_inputs(
    p: argparse.ArgumentParser,
    names: Sequence[str],
    help: str,
    *,
    dirs: bool = False,
    split: bool = True,
) -> None:
    """The input arguments of a command that reads ``len(names)`` texts: positional
    paths (``-``: standard input) and ``-e/--expr TEXT`` (repeatable; the inputs are
    the paths, in order, then the ``-e`` texts). ``dirs``: a directory is an XLA
    dump directory. ``split``: the command takes ``--split-input-file``."""
    metavar = names[0] if len(names) == 1 else "FILE"
    p.add_argument("inputs", metavar=metavar, nargs="*", help=help)
    p.add_argument(
        "-e",
        "--expr",
        action="append",
        default=[],
        metavar="TEXT",
        help="the input text itself instead of a file"
        + ("" if len(names) == 1 else f" (repeatable: {', '.join(names)} in order, after any paths)"),
    )
    p.add_argument("--expr-source", action="append", default=[], help=argparse.SUPPRESS)  # names of -e texts
    if split and len(names) == 1:
        p.add_argument(
            "--split-input-file",
            action="store_true",
            help="split the input at '// -----' lines and answer each chunk separately, in order (as mlir-opt); "
            "errors give the chunk's line numbers in the whole file",
        )
    p.set_defaults(input_names=tuple(names), input_dirs=dirs, input_override=None, input_parser=p)


def input_args(args: argparse.Namespace) -> list[str | tuple[str, str]]:
    """The command's inputs as given: paths (str) and ``-e`` texts ((text, "<argument>"))."""
    override = getattr(args, "input_override", None)
    if override is not None:
        return [override]
    out: list[str | tuple[str, str]] = list(getattr(args, "inputs", []))
    names = getattr(args, "expr_source", [])
    out += [(t, names[i] if i < len(names) else "<argument>") for i, t in enumerate(getattr(args, "expr", []))]
    return out


def read_inputs(
    args: argparse.Namespace,
    looks_like: Callable[[str], bool] | None = None,
    *,
    minimum: int | None = None,
) -> list[tuple[str, str]]:
    """``(text, source)`` of each input of the command (see :func:`add_inputs`);
    exactly as many as the command's input names (at least ``minimum`` if given).
    Directories are refused here: commands that read dump directories call
    :func:`dump_directory_files` first."""
    names: tuple[str, ...] = args.input_names
    given = input_args(args)
    low = len(names) if minimum is None else minimum
    if not low <= len(given) <= len(names):
        want = " ".join(names)
        parser: argparse.ArgumentParser | None = getattr(args, "input_parser", None)
        usage = f"{parser.format_usage()}{parser.prog}: error: " if parser is not None else ""
        raise VerifiedIndexingError(
            f"{usage}expected {want} ({len(names)} input{'s' if len(names) > 1 else ''}: paths, - for standard "
            f"input, or -e TEXT), got {len(given)}"
        )
    if sum(1 for g in given if g == "-") > 1:
        raise VerifiedIndexingError("standard input (-) can be read only once")
    return [g if isinstance(g, tuple) else read_input(g, looks_like) for g in given]


def dump_directory_files(path: str) -> list[str]:
    """The HLO files an XLA dump directory holds (see :func:`verified_indexing.hlo.loader.dump_modules`);
    the note saying what was picked goes to stderr."""
    from verified_indexing.hlo.loader import dump_modules

    selection = dump_modules(path)
    print(selection.note, file=sys.stderr)
    return [str(f) for f in selection.files]


def read_hlo_inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The HLO texts of a command whose one input may be a dump directory (each
    picked file is one text)."""
    given = input_args(args)
    one = given[0] if len(given) == 1 else None
    if args.input_dirs and isinstance(one, str) and one != "-" and os.path.isdir(one):
        return [read_hlo_file(f) for f in dump_directory_files(one)]
    if isinstance(one, str) and one != "-" and os.path.isfile(one) and len(args.input_names) == 1:
        return [read_hlo_file(one)]
    return read_inputs(args, _looks_like_hlo)


def read_hlo_file(path: str) -> tuple[str, str]:
    """``(text, path)`` of an HLO file: a text file, or a serialized ``HloModuleProto`` (``*.hlo.pb``) read
    through jaxlib (:func:`verified_indexing.hlo.loader.read_hlo_proto`)."""
    from verified_indexing.hlo.loader import is_hlo_proto_path, read_hlo_proto

    if is_hlo_proto_path(path):
        return read_hlo_proto(path), path
    return _read_file(path)


def _looks_like_hlo(text: str) -> bool:
    return "HloModule" in text or " = " in text


def read_one_hlo(args: argparse.Namespace, what: str = "this command") -> tuple[str, str]:
    """One HLO text: a file, standard input, ``-e`` text, or a dump directory that
    holds exactly one module."""
    texts = read_hlo_inputs(args)
    if len(texts) != 1:
        raise VerifiedIndexingError(
            f"the dump directory holds {len(texts)} modules and {what} reads one: give one of "
            + ", ".join(s for _, s in texts)
        )
    return texts[0]


_SPLIT_RE = re.compile(r"^[ \t]*// -----[ \t]*\r?$", re.MULTILINE)


def split_chunks(text: str) -> list[tuple[int, str]]:
    """The chunks of a ``// -----``-separated text: ``(first line, chunk)`` where
    the chunk is padded with the newlines before it, so positions in it are
    positions in the whole text (errors name the file's lines)."""
    chunks: list[tuple[int, str]] = []
    start = 0
    for m in [*_SPLIT_RE.finditer(text), None]:
        end = len(text) if m is None else m.start()
        first = text.count("\n", 0, start) + 1
        body = text[start:end]
        chunks.append((first, "\n" * (first - 1) + body))
        if m is not None:
            start = m.end() + 1 if m.end() < len(text) else m.end()
    return chunks


# ---------------------------------------------------------------------------------------------------------------
# JSON


def _clean(value: Any, no_timing: bool) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if no_timing and is_timing_key(str(k)):
                continue
            out[str(k)] = None if v == "" else _clean(v, no_timing)
        return out
    if isinstance(value, (list, tuple)):
        return [_clean(v, no_timing) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def envelope(value: Any, *, command: str | None = None, no_timing: bool | None = None) -> dict[str, Any]:
    """The object printed for a command's JSON result: ``schema`` and ``command``
    first, then the result's fields (a list result goes under ``"results"``); empty
    strings become ``null``; with ``no_timing`` the run-dependent fields are left
    out (see :data:`TIMING_KEYS`)."""
    nt = OUTPUT.no_timing if no_timing is None else no_timing
    body = _clean(value if isinstance(value, dict) else {"results": value}, nt)
    body.pop("schema", None)
    body.pop("command", None)
    return {"schema": SCHEMA_ID, "command": command if command is not None else OUTPUT.command, **body}


def error_json(kind: str, message: str, exc: BaseException | None = None) -> dict[str, Any]:
    """The ``error`` member of a JSON error object (``kind``: bad-input or internal)."""
    from verified_indexing.errors import ParseError

    position = None
    if isinstance(exc, ParseError):
        position = {"source": exc.source, "line": exc.line, "column": exc.column, "text": exc.line_text}
    return {"kind": kind, "message": message, "position": position}


def print_json(value: Any, file: TextIO | None = None) -> None:
    """Print a command's JSON result (see :func:`envelope`), indented: through
    :func:`verified_indexing.serialize.json_text`, the one serializer Python's results use too."""
    from verified_indexing.serialize import json_text

    out = file if file is not None else sys.stdout
    out.write(json_text(value, None))


def json_line(value: dict[str, Any]) -> str:
    """One JSONL line (compact, no newline inside)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=False)
