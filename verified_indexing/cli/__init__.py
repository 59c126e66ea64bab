"""The ``verified-indexing`` command line.

Subcommands live in the modules of this package: each module that defines
``register(subparsers)`` adds its subcommands (with ``set_defaults(run=...)``,
a function taking the parsed arguments and returning the exit code).

Exit codes, shared by every subcommand: 0 success / proved, 1 refuted,
2 unknown, 3 bad input, 4 internal error.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import pkgutil
import sys
from collections.abc import Callable, Sequence

from verified_indexing.engines.deadline import command_budget, prewarm
from verified_indexing.errors import VerifiedIndexingError

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_REFUTED", "EXIT_UNKNOWN", "EXIT_BAD_INPUT", "EXIT_INTERNAL"]

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_UNKNOWN = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4

_EPILOG = """exit codes: 0 success or proved, 1 refuted, 2 unknown, 3 bad input, 4 internal error.
Run 'verified-indexing COMMAND --help' for a command's options and examples."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="verified-indexing",
        description="Indexing maps for tensor compilers: computed, simplified and proven (isl, z3).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from verified_indexing import __version__

    parser.add_argument("--version", action="version", version=f"verified-indexing {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used as the entry point)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
        if argv is None:
            raise
        return code
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        budget = getattr(args, "timeout", math.inf)
        with command_budget(budget):  # --timeout bounds the whole command, every engine inside
            if budget != math.inf:
                prewarm()  # the worker for risky isl calls starts while the inputs are parsed
            code = run(args)
    except VerifiedIndexingError as exc:
        print(str(exc), file=sys.stderr)
        code = EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = EXIT_OK
    except RecursionError:  # a parser or a walk too deep for Python: the input is too large, not a bug
        print("bad input: the input is nested too deeply to be processed", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except Exception as exc:  # the last line of defence: never a traceback for the user
        if os.environ.get("VERIFIED_INDEXING_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc}\n(set VERIFIED_INDEXING_DEBUG=1 for the traceback; "
            "please report it)",
            file=sys.stderr,
        )
        code = EXIT_INTERNAL
    if argv is None:
        sys.exit(code)
    return code
