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
import io
import json
import math
import os
import stat
import sys
from collections.abc import Callable, Sequence
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_REFUTED", "EXIT_UNKNOWN", "EXIT_BAD_INPUT", "EXIT_INTERNAL"]

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_UNKNOWN = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4

COMMAND_MODULES = ("analyze", "audit", "cache", "demo", "legality", "prove", "show", "simplify", "utilization",
                   "validate_mlir", "validate_tvm")
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
        message += self._suggestion(message)
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise _UsageError(f"{self.prog}: {message}")

    def _suggestion(self, message: str) -> str:
        """"Did you mean" for a misspelt command, choice or option (difflib; nothing when none is close)."""
        import re

        from verified_indexing.syntax.suggest import did_you_mean

        choice = re.match(r"argument .*?: invalid choice: '(.*?)' \(choose from (.*)\)\Z", message, re.DOTALL)
        if choice is not None:
            return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        if not message.startswith("unrecognized arguments: "):
            return ""
        options = self._options_of(_TOKENS[-1] if _TOKENS else [])
        hints = [did_you_mean(w.split("=", 1)[0], options, cutoff=0.7)
                 for w in message.removeprefix("unrecognized arguments: ").split() if w.startswith("--")]
        return "".join(h for h in hints if h)

    def _options_of(self, tokens: list[str]) -> list[str]:
        """The option strings of the command named in ``tokens`` (every command's when none is)."""
        sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None:
            return [o for a in self._actions for o in a.option_strings]
        chosen = [sub.choices[t] for t in tokens if t in sub.choices][:1] or list(sub.choices.values())
        return sorted({o for p in [self, *chosen] for a in p._actions for o in a.option_strings if o.startswith("--")})


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """``-o FILE`` (``--output`` unless the command uses it for something else,
    ``--output-file`` always) and ``--no-timing``."""
    taken = p._option_string_actions
    names = ["-o", "--output-file"] if "--output" in taken else ["-o", "--output", "--output-file"]
    p.add_argument(*names, dest="output_file", metavar="FILE", help="write the results to FILE instead of stdout")
    if "--no-timing" not in taken:
        p.add_argument(
            "--no-timing",
            action="store_true",
            help="leave every run-dependent time out of the output: the JSON's fields (seconds, cached) and the "
            "times in the text: two runs print the same bytes",
        )


_TOKENS: list[list[str]] = []
"""The command line being parsed by :func:`main` (for the options of the command in a "did you mean")."""


class _Version(argparse.Action):
    """``--version``: the package's version, then z3's and islpy's (and jax's, TVM's, IREE's when installed),
    read from the installed metadata only when asked for (no heavy module is imported)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from verified_indexing._version import version_text

        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="verified-indexing",
        description="Indexing maps for tensor compilers: computed, simplified and proven (isl, z3).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the version (and those of z3, islpy, jax, TVM, IREE when installed) and exit")
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


GC_THRESHOLDS = (50_000, 10, 10)
"""The cyclic garbage collector's thresholds in a command-line process (Python's: 700, 10, 10). A
large input (an HLO module of millions of objects, all alive until the command ends) made the default
collections scan the whole heap again and again: ``analyze`` of a 4.5 MB unoptimized module spent
a third of its time in the collector and its time grew as size^1.4 from 1 MB up; with these, 3.7 s
instead of 5.4 s, linear, the same peak memory (225 MB)."""


def _tune_gc() -> None:
    """:data:`GC_THRESHOLDS` for this process (the command line's entry point only: a library caller
    keeps its own)."""
    import gc

    gc.set_threshold(*GC_THRESHOLDS)


def main(argv: Sequence[str] | None = None, *, parser: argparse.ArgumentParser | None = None) -> int:
    """Run the command line; returns the exit code (also used as the entry point). ``parser``: one
    :func:`build_parser` made earlier (a batch worker answers many questions with one; building it costs
    about 5 ms, more than simplifying a typical map)."""
    from verified_indexing.cli._common import OUTPUT, OutputOptions

    parser = build_parser() if parser is None else parser
    if argv is None:
        _tune_gc()
    tokens = list(sys.argv[1:] if argv is None else argv)
    _TOKENS[:] = [tokens]
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
    from verified_indexing._timing import set_show_timing

    show_timing = set_show_timing(not OUTPUT.no_timing)
    target: _OutputFile | None = None
    guard: _StdoutGuard | None = None
    try:
        path = getattr(args, "output_file", None)
        target = None if path is None else _OutputFile(path, _input_paths(args))
        guard = _StdoutGuard(sys.stdout) if target is None and argv is None else None
        stream: Any = target if target is not None else guard
        with contextlib.nullcontext() if stream is None else contextlib.redirect_stdout(stream):
            code = _dispatch(args)
        if target is not None:
            code = target.commit(code)
        if guard is not None:
            code = guard.finish(code)
    except VerifiedIndexingError as exc:  # -o FILE cannot be written, or names an input
        print(str(exc), file=sys.stderr)
        code = EXIT_BAD_INPUT
    finally:
        if target is not None:
            target.discard()
        OUTPUT.__dict__.update(saved)
        points.set_enabled(enumerate_small)
        set_show_timing(show_timing)
    if argv is None:
        if _SPENT and getattr(args, "batch", None) is None:
            _quick_exit(code)
        sys.exit(code)
    return code


_SPENT: list[float] = []
"""The budgets of the commands of this process that ran until their deadline."""


def _quick_exit(code: int) -> None:
    """End a command that spent its whole budget without the interpreter's teardown (freeing every
    isl and z3 object takes 0.2-0.3 s, more than the budget's slack allows): the output flushed,
    the worker stopped, then ``os._exit``. Not after ``--batch`` (a Ray runtime stops at exit)."""
    from verified_indexing.engines.deadline import stop_worker

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        stop_worker()
    os._exit(code)


HARD_GRACE = 0.25
"""Seconds after the ``--timeout`` deadline at which the backstop
(:func:`verified_indexing.engines.deadline.hard_deadline`) stops a command that has not returned."""


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _input_paths(args: argparse.Namespace) -> list[str]:
    """The files the command reads (positional paths, ``--batch``, ``--fused``) and the other files it
    writes (``--dot``, ``--svg``): ``-o`` may name none of them."""
    from verified_indexing.cli._common import input_args

    paths = [p for p in input_args(args) if isinstance(p, str)]
    paths += [getattr(args, k) for k in ("batch", "fused", "dot", "svg") if isinstance(getattr(args, k, None), str)]
    return [p for p in paths if p != "-"]


class _KeepsFirstError(io.TextIOBase):
    """A text stream writing to :meth:`_sink`: a write that fails (an :class:`OSError`) is remembered in
    ``error`` and the rest of the output dropped."""

    error: OSError | None

    def _sink(self) -> Any:
        raise NotImplementedError

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                self._sink().write(text)
            except OSError as exc:
                self.error = exc
        return len(text)


class _StdoutGuard(_KeepsFirstError):
    """Standard output of the command line process: a write that fails (a full disk, ``/dev/full``) is
    remembered and the rest of the output dropped, so that the command ends with a message and exit 4
    (:meth:`finish`), never a traceback from the error report itself or from the interpreter's last
    flush. A reader that has gone (a closed pipe: ``| head``) is not an error."""

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self.stream = stream
        self.error: OSError | None = None

    def _sink(self) -> Any:
        return self.stream

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as exc:
                self.error = exc

    def finish(self, code: int) -> int:
        """The exit code: the command's, or 4 after a failed write (with the message on stderr)."""
        self.flush()
        if self.error is None:
            return code
        with contextlib.suppress(OSError, ValueError, AttributeError):  # the last flush at exit: to nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
        if isinstance(self.error, BrokenPipeError):
            return code
        print(f"standard output: cannot write: {self.error.strerror or self.error}", file=sys.stderr)
        return EXIT_INTERNAL


class _OutputFile(_KeepsFirstError):
    """``-o FILE``: what the command prints goes to a temporary file beside FILE (its real path, symbolic
    links followed), renamed over FILE once the command has finished (:meth:`commit`), so an input is never
    truncated before it is read and a failed write leaves FILE as it was. A FILE that is not a regular file
    (``/dev/null``, a pipe, a terminal) is written directly. A write that fails (a full disk, ``/dev/full``)
    is remembered, the rest of the output dropped, and :meth:`commit` reports it (exit 4)."""

    def __init__(self, path: str, inputs: Sequence[str]) -> None:
        super().__init__()
        self.path = path
        self.error: OSError | None = None
        self.tmp: str | None = None
        real = os.path.realpath(path)
        try:
            st: os.stat_result | None = os.stat(real)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise VerifiedIndexingError(f"-o {path}: cannot write: is a directory")
            for other in inputs:
                try:
                    ost = os.stat(other)
                except OSError:
                    continue
                if (ost.st_dev, ost.st_ino) == (st.st_dev, st.st_ino):
                    raise VerifiedIndexingError(
                        f"-o {path}: is {other}, a file this command reads or writes: the output would "
                        "replace it; write to another file"
                    )
        self.real = real
        try:
            if st is not None and not stat.S_ISREG(st.st_mode):
                self.file = open(real, "w", encoding="utf-8")  # a device or a pipe: no rename there
            else:
                import tempfile

                directory, name = os.path.split(real)
                fd, self.tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
                mask = os.umask(0)
                os.umask(mask)
                os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~mask)
                self.file = open(fd, "w", encoding="utf-8")
        except OSError as exc:
            self.discard()
            raise VerifiedIndexingError(f"-o {path}: cannot write: {exc.strerror or exc}") from None

    def _sink(self) -> Any:
        return self.file

    def flush(self) -> None:
        if self.error is None and not self.file.closed:
            try:
                self.file.flush()
            except OSError as exc:
                self.error = exc

    def commit(self, code: int) -> int:
        """Close the output and put it in place; the command's exit code, or 4 when the output could not be
        written (FILE is then left as it was). An interrupted command (130) leaves FILE as it was too."""
        self.flush()
        try:
            self.file.close()
        except OSError as exc:
            self.error = self.error or exc
        if self.error is not None:
            reason = self.error.strerror or str(self.error)
            kept = " (left as it was)" if self.tmp is not None else ""
            print(f"-o {self.path}: cannot write: {reason}{kept}", file=sys.stderr)
            return EXIT_INTERNAL
        if self.tmp is not None and code != 130:
            try:
                os.replace(self.tmp, self.real)
            except OSError as exc:
                print(f"-o {self.path}: cannot write: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_INTERNAL
            self.tmp = None
        return code

    def discard(self) -> None:
        """Close the output and remove the temporary file if it was not put in place."""
        f = getattr(self, "file", None)
        if f is not None and not f.closed:
            with contextlib.suppress(OSError):
                f.close()
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


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
        from verified_indexing.engines.deadline import (
            command_budget,
            hard_deadline,
            preload_in_worker,
            prewarm,
            remaining,
        )

        with command_budget(budget):  # --timeout bounds the whole command, every engine inside
            if budget != math.inf:
                preload_in_worker("verified_indexing.engines.api")
                prewarm()  # the worker for risky isl calls starts while the inputs are parsed
            try:
                with hard_deadline(HARD_GRACE):  # the backstop: code that does not check the budget is stopped
                    return run(a)
            finally:
                if budget != math.inf and remaining() <= 0:
                    _SPENT.append(budget)

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
        from verified_indexing.errors import NotModelledError, ParseError

        if isinstance(exc, NotModelledError):  # a well-formed construct not modelled: the answer is unknown
            report("not-modelled", f"unknown: {exc}", exc)
            return EXIT_UNKNOWN
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
    except BaseException as exc:
        from verified_indexing.engines.deadline import BudgetExpired

        if not isinstance(exc, BudgetExpired):
            raise
        sys.stdout.flush()
        timeout = getattr(args, "timeout", math.inf)
        report(
            "timeout",
            f"unknown: the time budget (--timeout {timeout:g} s) ran out before {args.command} finished: "
            "what is printed above was finished, the rest was not reached",
            None,
        )
        return EXIT_UNKNOWN


def _print_error_json(kind: str, message: str, exc: BaseException | None, command: str | None = None) -> None:
    from verified_indexing.cli._common import envelope, error_json

    print(json.dumps(envelope({"error": error_json(kind, message, exc)}, command=command), indent=2))
