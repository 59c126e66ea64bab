"""The ``verified-indexing`` command line.

Subcommands live in the modules of this package: each module that defines
``register(subparsers)`` adds its subcommands (with ``set_defaults(run=...)``,
a function taking the parsed arguments and returning the exit code).

Exit codes, shared by every subcommand: 0 success / proved, 1 refuted,
2 unknown, 3 bad input, 4 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_REFUTED", "EXIT_UNKNOWN", "EXIT_BAD_INPUT", "EXIT_INTERNAL"]

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_UNKNOWN = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4

COMMAND_MODULES = ("analyze", "audit", "cache", "demo", "legality", "prove", "show", "simplify", "utilization")
"""The modules of this package that register subcommands, in help order (a test checks
it lists every public module; walking the package with ``pkgutil`` costs ``inspect``'s import)."""

_EPILOG = """exit codes: 0 success or proved, 1 refuted, 2 unknown, 3 bad input, 4 internal error.
Run 'verified-indexing COMMAND --help' for a command's options and examples."""


class _UsageError(SystemExit):
    """A command-line error from argparse (exit 3), with its message."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_BAD_INPUT)
        self.message = message


class _Parser(argparse.ArgumentParser):
    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Python 3.11's argparse drops the value of `-o--` / `--timeout=--` (it takes "--" for the end of
        # the options) and stores [], unchecked by the option's type: the value is the text "--".
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise _UsageError(f"{self.prog}: {message}")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """``-o FILE`` (``--output`` unless the command uses it for something else,
    ``--output-file`` always) and, with ``--json``, ``--no-timing``."""
    taken = p._option_string_actions
    names = ["-o", "--output-file"] if "--output" in taken else ["-o", "--output", "--output-file"]
    p.add_argument(*names, dest="output_file", metavar="FILE", help="write the results to FILE instead of stdout")
    if "--json" in taken:
        p.add_argument(
            "--no-timing",
            action="store_true",
            help="leave the run-dependent fields (seconds, cached) out of the JSON: two runs print the same bytes",
        )


class _Version(argparse.Action):
    """``--version``: the version is read only when asked for (it costs a file read)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from verified_indexing._version import package_version

        print(f"verified-indexing {package_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="verified-indexing",
        description="Indexing maps for tensor compilers: computed, simplified and proven (isl, z3).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    for p in sub.choices.values():
        _add_output_options(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used as the entry point)."""
    from verified_indexing.cli._common import OUTPUT, OutputOptions

    parser = build_parser()
    tokens = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(tokens)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
        if isinstance(exc, _UsageError) and "--json" in tokens:
            command = next((t for t in tokens if t in _commands(parser)), None)
            _print_error_json("bad-input", exc.message, None, command=command)
        if argv is None:
            raise
        return code
    from verified_indexing.engines import points

    saved = OUTPUT.__dict__.copy()
    OUTPUT.__dict__.update(OutputOptions(command=args.command, no_timing=getattr(args, "no_timing", False)).__dict__)
    # A command answers small domains with isl as before: numpy's import (about 0.2 s) would cost more than
    # enumeration saves on a command's few questions (library callers keep it: see docs/simplifier.md).
    enumerate_small = points.set_enabled(False)
    try:
        with _output_to(getattr(args, "output_file", None)):
            code = _dispatch(args)
    except VerifiedIndexingError as exc:  # -o FILE cannot be written
        print(str(exc), file=sys.stderr)
        code = EXIT_BAD_INPUT
    finally:
        OUTPUT.__dict__.update(saved)
        points.set_enabled(enumerate_small)
    if argv is None:
        sys.exit(code)
    return code


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


@contextlib.contextmanager
def _output_to(path: str | None) -> Iterator[None]:
    if path is None:
        yield
        return
    try:
        f = open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise VerifiedIndexingError(f"-o {path}: cannot write: {exc.strerror}") from None
    with f, contextlib.redirect_stdout(f):
        yield


def _dispatch(args: argparse.Namespace) -> int:
    """Batch (``--batch``), split (``--split-input-file``) or one run of the command."""
    if getattr(args, "batch", None) is not None:
        from verified_indexing.cli._batch import run_batch

        return _guarded(args, lambda a: run_batch(a, runner=_run_one), json_mode=True)
    if getattr(args, "split_input_file", False):
        from verified_indexing.cli._batch import run_split

        return _guarded(args, lambda a: run_split(a, runner=_run_one), json_mode=bool(getattr(args, "json", False)))
    return _run_one(args)


def _run_one(args: argparse.Namespace) -> int:
    """One run of the command under its ``--timeout`` budget, errors reported (JSON
    on stdout under ``--json``)."""
    run: Callable[[argparse.Namespace], int] = args.run

    def budgeted(a: argparse.Namespace) -> int:
        budget = getattr(a, "timeout", math.inf)
        from verified_indexing.engines.deadline import command_budget, prewarm

        with command_budget(budget):  # --timeout bounds the whole command, every engine inside
            if budget != math.inf:
                prewarm()  # the worker for risky isl calls starts while the inputs are parsed
            return run(a)

    return _guarded(args, budgeted, json_mode=bool(getattr(args, "json", False)))


def _guarded(args: argparse.Namespace, body: Callable[[argparse.Namespace], int], *, json_mode: bool) -> int:
    def report(kind: str, message: str, exc: BaseException | None) -> None:
        if json_mode:
            _print_error_json(kind, message, exc)
        else:
            print(message, file=sys.stderr)

    try:
        return body(args)
    except VerifiedIndexingError as exc:
        from verified_indexing.cli._common import OUTPUT
        from verified_indexing.errors import ParseError

        where = "" if isinstance(exc, ParseError) else OUTPUT.where
        report("bad-input", f"{where}{exc}", exc)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except RecursionError:  # a parser or a walk too deep for Python: the input is too large, not a bug
        report("bad-input", "bad input: the input is nested too deeply to be processed", None)
        return EXIT_BAD_INPUT
    except Exception as exc:  # the last line of defence: never a traceback for the user
        if os.environ.get("VERIFIED_INDEXING_DEBUG"):
            raise
        report(
            "internal",
            f"internal error: {type(exc).__name__}: {exc}\n(set VERIFIED_INDEXING_DEBUG=1 for the traceback; "
            "please report it)",
            exc,
        )
        return EXIT_INTERNAL


def _print_error_json(kind: str, message: str, exc: BaseException | None, command: str | None = None) -> None:
    from verified_indexing.cli._common import envelope, error_json

    print(json.dumps(envelope({"error": error_json(kind, message, exc)}, command=command), indent=2))
