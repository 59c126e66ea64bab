"""Many questions in one command: ``--batch FILE`` (JSONL) and ``--split-input-file``.

Both print one JSON record per question, in input order (JSONL; the text form of
``--split-input-file`` prints each chunk's usual output between ``// -----``
lines). A record is ``{"schema", "command", "line", "exit_code", "result"}``, or
``"error"`` instead of ``"result"`` when the question is bad input or failed; a bad
question never stops the others. The command's exit code is the worst of the
records' (4, then 3, 1, 2, else 0).

A batch question is answered by :func:`answer_argv`, a pure function of the
command line it builds (the question's text and the options): the same unit runs
in this process (``--jobs 1``), on a spawn process pool, or on Ray
(:mod:`verified_indexing.parallel`).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
from collections.abc import Callable
from typing import Any

from verified_indexing.cli._common import (
    OUTPUT,
    SCHEMA_ID,
    error_json,
    input_args,
    jobs,
    json_line,
    read_input,
    split_chunks,
)
from verified_indexing.errors import VerifiedIndexingError

__all__ = ["add_batch", "run_batch", "run_split", "answer_argv", "FIELDS", "worst"]

#: The fields of a batch line per command: (required, optional).
FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "simplify": (("map",), ()),
    "prove-equal": (("a", "b"), ("domain",)),
    "check-rule": (("rule",), ("where", "domain", "lemmas")),
    "audit": (("module", "claims"), ()),
}

#: Options of the batch command line that are not passed on to each question.
_NOT_FORWARDED = {
    "help", "inputs", "expr", "rule", "batch", "jobs", "backend", "output_file", "json", "no_timing",
    "split_input_file", "explain", "expr_source",
}


def add_batch(p: argparse.ArgumentParser) -> None:
    """``--batch FILE``, ``--jobs N`` and ``--backend`` for a command of :data:`FIELDS`."""
    p.add_argument(
        "--batch",
        metavar="FILE",
        help="answer every question of a JSONL file (one JSON object a line; - for standard input) and print "
        "one JSON record a line, in order (see docs/cli.md, 'Batch')",
    )
    p.add_argument("--jobs", metavar="N", type=jobs, help="with --batch: worker processes (default: the cores)")
    p.add_argument(
        "--backend",
        choices=("process", "ray"),
        default="process",
        help="with --batch: a process pool (default) or a local Ray runtime (extra 'distributed')",
    )
    p.set_defaults(batch_parser=p)


def worst(codes: list[int]) -> int:
    """The exit code of many answers: 4, then 3, 1, 2 if any, else 0 (130 first)."""
    for code in (130, 4, 3, 1, 2):
        if code in codes:
            return code
    return max(codes, default=0)


def record(output: str, code: int, command: str, **where: Any) -> dict[str, Any]:
    """The JSONL record of one question from the JSON its command printed."""
    head: dict[str, Any] = {"schema": SCHEMA_ID, "command": command, **where, "exit_code": code}
    try:
        data = json.loads(output)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        message = "the command printed no JSON" + (f": {output.strip()[:200]}" if output.strip() else "")
        return {**head, "error": error_json("internal", message)}
    if "error" in data and set(data) <= {"schema", "command", "error"}:
        return {**head, "error": data["error"]}
    return {**head, "result": {k: v for k, v in data.items() if k not in ("schema", "command")}}


def versions() -> str:
    """The versions an answer depends on: this package, z3, isl."""
    import islpy
    import z3

    from verified_indexing import __version__

    return f"verified-indexing {__version__}; z3 {z3.get_version_string()}; isl {islpy.version.VERSION_TEXT}"


def answer_argv(task: tuple[list[str], str]) -> tuple[int, str]:
    """The unit of work of a batch: ``(argv, versions)`` -> ``(exit code, stdout)``
    of ``verified-indexing ARGV`` run in this process (stderr is dropped: under
    ``--json`` errors are on stdout). A worker whose :func:`versions` differ from
    the caller's (a Ray node with another install) answers with an internal error
    instead of a verdict of other code."""
    from verified_indexing.cli import build_parser, main

    argv, expected = task
    here = versions()
    if here != expected:
        message = f"internal error: the worker runs {here}, the batch was started with {expected}"
        error = {"schema": SCHEMA_ID, "command": argv[0], "error": error_json("internal", message)}
        return 4, json.dumps(error)
    out, err = io.StringIO(), io.StringIO()
    if not _PARSER:  # one parser per process, for every question it answers
        _PARSER.append(build_parser())
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv, parser=_PARSER[0])
    return code, out.getvalue()


_PARSER: list[argparse.ArgumentParser] = []
"""The command-line parser :func:`answer_argv` reuses (argparse keeps no state between parses)."""


def worker_died(task: tuple[list[str], str], exc: BaseException) -> tuple[int, str]:
    """The answer to a question whose worker process died (see ``run_ordered``'s ``on_crash``):
    an internal error (exit 4) for that line; the other lines are still answered."""
    argv, _ = task
    message = f"internal error: the worker process answering this question died ({type(exc).__name__}: {exc})"
    return 4, json.dumps({"schema": SCHEMA_ID, "command": argv[0], "error": error_json("internal", message)})


def _forwarded(args: argparse.Namespace) -> list[str]:
    """The options of the batch command line, as arguments for each question."""
    parser: argparse.ArgumentParser = args.batch_parser
    argv: list[str] = []
    for action in parser._actions:
        if action.dest in _NOT_FORWARDED or not action.option_strings or action.dest.startswith("input"):
            continue
        value = getattr(args, action.dest, None)
        if value is None or value == action.default:
            continue
        flag = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[-1])
        if isinstance(action, argparse._StoreTrueAction):
            argv.append(flag)
        elif isinstance(action, argparse._AppendAction):
            for v in value:
                argv += _option(flag, v)
        else:
            argv += _option(flag, value)
    return argv


def _option(flag: str, value: Any) -> list[str]:
    """``--flag=VALUE`` (``-fVALUE`` for a short-only option): one argument, so a value that
    starts with ``-`` is not read as an option."""
    return [f"{flag}={value}" if flag.startswith("--") else f"{flag}{value}"]


def _text(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    if name == "claims" and isinstance(value, (dict, list)):
        return json.dumps(value if isinstance(value, dict) else {"claims": value})
    raise VerifiedIndexingError(f"field {name!r}: expected a string, got {type(value).__name__}")


def question_argv(command: str, question: Any, options: list[str], where: str = "") -> list[str]:
    """The command line answering one batch question (a JSON object of :data:`FIELDS`);
    ``where`` (e.g. ``line 3 of q.jsonl``) names the fields' texts in error messages."""
    required, optional = FIELDS[command]
    if not isinstance(question, dict):
        raise VerifiedIndexingError(f"expected a JSON object with {', '.join(required)}, got {type(question).__name__}")
    unknown = sorted(set(question) - set(required) - set(optional))
    if unknown:
        raise VerifiedIndexingError(
            f"unknown field {unknown[0]!r} (a {command} question has {', '.join(required + optional)})"
        )
    missing = [k for k in required if k not in question]
    if missing:
        raise VerifiedIndexingError(f"missing field {missing[0]!r} (a {command} question has {', '.join(required)})")
    argv = [command, *options]
    for k in optional:
        if k not in question or question[k] is None:
            continue
        if k == "lemmas":
            lemmas = question[k]
            if not isinstance(lemmas, list):
                raise VerifiedIndexingError("field 'lemmas': expected a list of strings")
            for x in lemmas:
                argv += _option("--lemma", _text(x, "lemmas"))
        else:
            argv += _option(f"--{k}", _text(question[k], k))
    argv += ["--json"]
    if command == "check-rule":
        return [*argv, "--", _text(question["rule"], "rule")]
    for k in required:
        argv += _option("--expr", _text(question[k], k))
        if where:
            argv += _option("--expr-source", f"{k} ({where})")
    return argv


def run_batch(args: argparse.Namespace, runner: Callable[[argparse.Namespace], int]) -> int:
    """``--batch FILE``: every line's question, answered on the pool, one record a line."""
    from verified_indexing.parallel import run_ordered

    command: str = args.command
    if input_args(args) or getattr(args, "rule", None) is not None:
        raise VerifiedIndexingError("--batch reads every question from the JSONL file: give no other input")
    if getattr(args, "smt2", None) is not None:
        raise VerifiedIndexingError("--smt2 writes the query of one question: not with --batch")
    data, source = _read_stdin_bytes() if args.batch == "-" else _read_path(args.batch)
    data = data.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark some editors write is not part of line 1
    options = _forwarded(args) + (["--no-timing"] if OUTPUT.no_timing else [])
    tasks: list[tuple[list[str], str]] = []
    expected = versions()
    slots: list[tuple[int, dict[str, Any] | int]] = []  # (line, a ready record or the task's index)
    # lines end at "\n" only: JSON strings may hold U+2028 and other characters str.splitlines() splits at;
    # each line is decoded alone, so a byte that is not UTF-8 makes its own line bad input, not the file
    for number, raw in enumerate((ln.removesuffix(b"\r") for ln in data.split(b"\n")), 1):
        line = raw.decode("utf-8", errors="replace")
        if not line.strip() or line.lstrip().startswith(("//", "#")):  # blank and comment lines (no JSON starts so)
            continue
        column = 1
        try:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                column += len(raw[: exc.start].decode("utf-8", errors="replace"))
                raise VerifiedIndexingError(
                    f"{source}:{number}:{column}: not UTF-8: byte 0x{raw[exc.start]:02x} cannot be decoded"
                ) from None
            try:
                question = json.loads(line)
            except ValueError as exc:
                raise VerifiedIndexingError(f"{source}:{number}: not JSON: {exc}") from None
            argv = question_argv(command, question, options, f"line {number} of {source}")
        except VerifiedIndexingError as exc:
            message = str(exc) if str(exc).startswith(f"{source}:") else f"{source}:{number}: {exc}"
            bad = {"schema": SCHEMA_ID, "command": command, "line": number, "exit_code": 3,
                   "error": {**error_json("bad-input", message), "position": {"source": source, "line": number,
                                                                           "column": column, "text": line[:200]}}}
            slots.append((number, bad))
            continue
        slots.append((number, len(tasks)))
        tasks.append((argv, expected))
    answers = run_ordered(answer_argv, tasks, jobs=args.jobs, backend=args.backend, what=command,
                          on_crash=worker_died)
    codes: list[int] = []
    for number, slot in slots:
        if isinstance(slot, dict):
            rec = slot
        else:
            code, output = next(answers)
            rec = record(output, code, command, line=number)
        codes.append(int(rec["exit_code"]))
        print(json_line(rec), flush=True)
    return worst(codes)


def _read_stdin_bytes() -> tuple[bytes, str]:
    """Standard input's bytes (its text, encoded back, when it has no byte stream: a test's StringIO)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return buffer.read(), "<stdin>"
    return sys.stdin.read().encode("utf-8", errors="surrogateescape"), "<stdin>"


def _read_path(path: str) -> tuple[bytes, str]:
    import os

    if os.path.isdir(path):
        raise VerifiedIndexingError(f"--batch {path}: is a directory (expected a JSONL file)")
    if not os.path.exists(path):
        raise VerifiedIndexingError(f"--batch {path}: no such file")
    try:
        with open(path, "rb") as f:
            return f.read(), path
    except OSError as exc:
        raise VerifiedIndexingError(f"--batch {path}: cannot read: {exc.strerror or exc}") from None


def _empty_chunk(chunk: str, source: str, first: int) -> Callable[[argparse.Namespace], int]:
    """The command run on a chunk that holds nothing but blanks: bad input at the chunk's first line."""
    from verified_indexing.errors import ParseError

    def run(args: argparse.Namespace) -> int:
        raise ParseError("empty chunk: nothing between '// -----' lines", chunk, first - 1, 1, source)

    return run


def run_split(args: argparse.Namespace, runner: Callable[[argparse.Namespace], int]) -> int:
    """``--split-input-file``: the command on each ``// -----`` chunk of its input."""
    given = input_args(args)
    if len(given) != 1:
        raise VerifiedIndexingError(f"--split-input-file reads one input, got {len(given)}")
    text, source = given[0] if isinstance(given[0], tuple) else read_input(given[0])
    codes: list[int] = []
    for k, (first, chunk) in enumerate(split_chunks(text), 1):
        one = copy.copy(args)
        one.split_input_file = False
        one.input_override = (chunk, source)
        if not chunk.strip():  # nothing to read: the error is at the chunk's line, not the parser's 1:1
            one.run = _empty_chunk(chunk, source, first)
        OUTPUT.where = f"{source}: chunk {k} (line {first}): "
        if args.json:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = runner(one)
            print(json_line(record(out.getvalue(), code, args.command, chunk=k, line=first)), flush=True)
        else:
            if k > 1:
                print("// -----", flush=True)
            sys.stdout.flush()
            code = runner(one)
        codes.append(code)
    OUTPUT.where = ""
    return worst(codes)
