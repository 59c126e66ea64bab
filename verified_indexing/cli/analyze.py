"""``verified-indexing analyze``: indexing maps of the fusions of an HLO module."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from verified_indexing.cli._common import add_inputs, add_timeout, count, input_args, jobs, print_json, read_hlo_inputs
from verified_indexing.errors import VerifiedIndexingError

if TYPE_CHECKING:
    from verified_indexing.hlo.epilogue import EpilogueQuestion
    from verified_indexing.hlo.fusion import ComputationIndexing
    from verified_indexing.hlo.ir import Module

T = TypeVar("T")

EXAMPLES = """examples:
  verified-indexing analyze examples/jax_hlo/softmax.post.hlo
  verified-indexing analyze model.hlo --computation fused_computation.2 --direction input-to-output
  verified-indexing analyze model.hlo --instruction gather.3 --computation fused_computation --json
  verified-indexing analyze model.hlo --from transpose.1 --physical
  verified-indexing analyze --jax examples/jax/layer_norm.py:layer_norm --args 'f32[8,128]' --args 'f32[128]'
  verified-indexing analyze examples/jax_hlo/softmax.post.hlo --dot softmax.dot
  XLA_FLAGS=--xla_dump_to=/tmp/dump python train.py; verified-indexing analyze /tmp/dump --module 'jit_step*'
  verified-indexing analyze /tmp/dump/module_0004.jit_f.cpu_after_optimizations.hlo.pb
  verified-indexing analyze model.hlo --epilogue reduce.3
  echo 'p0 = f32[20] parameter(0)
  bc = f32[10,20,30] broadcast(p0), dimensions={1}' | verified-indexing analyze -

By default every fusion of the module is analyzed: per fusion and parameter,
the maps from the fusion's output, composed along every path, simplified,
deduplicated, and proven equal (isl) to the exact composition of the per-op
maps. A module without fusions (an unoptimized one) gets, by default, the maps
of each instruction of its entry computation to its own operands (one op deep,
proven; time linear in the module's size); --computation ENTRY composes the
whole entry computation from its root to every parameter instead. Exit code 0
when every map is there and proven, 2 when an op has no indexing model (named
in the output) or --timeout ran out (what was finished is printed, what was not
reached is named), 4 when a proof fails.

A dump directory (or a file of several modules) prints each module's analyses
under a line 'module NAME (FILE)'; its JSON results carry "module" and "file".
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyze",
        help="indexing maps of the fusions of an HLO module (composed, simplified, proven)",
        description="Compute the indexing maps of an HLO module's fusions (XLA indexing analysis).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(
        p,
        ["FILE"],
        "HLO text: a file (one module, or a lit-test file split by // -----), an --xla_dump_to directory "
        "(its after-optimization modules), or - for standard input (inline text: -e TEXT); StableHLO/MHLO text "
        "is converted to (unoptimized) HLO by jaxlib when jax is installed",
        dirs=True,
    )
    p.add_argument(
        "--jax",
        metavar="MODULE:FUNCTION",
        help="instead of FILE: compile this JAX function (mypkg.model:forward, imported from the current "
        "directory, or path/to/file.py:forward) on the CPU with the --args shapes, analyze XLA's optimized HLO "
        "(needs jax: pip install 'verified-indexing[jax]')",
    )
    p.add_argument(
        "--args",
        dest="jax_args",
        metavar="SHAPE",
        action="append",
        default=[],
        help="with --jax: the shape of the next positional argument, HLO syntax (f32[8,128], s32[], bf16[4,4]); "
        "repeat once per argument, or give several at once separated by commas or spaces "
        "('f32[8,128], f32[128]')",
    )
    p.add_argument(
        "--dot",
        metavar="FILE",
        help="also write the fusion graph as Graphviz DOT (- for standard output, instead of the text report): "
        "one node per instruction, fused computations as clusters, each edge labelled by its proven map, "
        "unsupported and over-approximating ops marked",
    )
    p.add_argument("--svg", metavar="FILE", help="also draw the fusion graph as SVG (needs Graphviz's dot program)")
    p.add_argument("--module", metavar="PATTERN", help=MODULE_HELP)
    p.add_argument("--computation", metavar="NAME",
                   help="analyze this computation (fused or not), composed from its root to every parameter; "
                   "ENTRY: the entry computation (the default of a module without fusions is each instruction "
                   "one op deep)")
    p.add_argument(
        "--instruction",
        metavar="NAME",
        help="analyze this one instruction (in --computation, default the entry): its per-op maps",
    )
    p.add_argument(
        "--direction",
        choices=("output-to-input", "input-to-output"),
        default="output-to-input",
        help="map output indices to operands (default) or an operand's indices to the output",
    )
    p.add_argument(
        "--operand", metavar="K", type=count, help="only operand/parameter K (input-to-output: map from it)"
    )
    p.add_argument(
        "--from",
        dest="from_instruction",
        metavar="INSTRUCTION",
        help="the maps from this instruction's output (as if it were the root) to the parameters of its computation",
    )
    p.add_argument(
        "--epilogue",
        metavar="HERO",
        help="XLA's epilogue indexing: the maps from this hero instruction's output (a reduce, a transpose...) to "
        "the output of its computation's root, through the ops after it (composed, simplified, proven like every "
        "map; the hero itself is not looked into); in --computation, default the one computation holding HERO",
    )
    p.add_argument(
        "--physical",
        action="store_true",
        help="maps between physical indices: each shape's dimensions in its layout's major-to-minor order",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument(
        "--format",
        choices=("text", "xla"),
        default="text",
        help="with --instruction, 'xla' prints the maps as XLA's HloInstructionIndexing::ToString does "
        "('operand id = K' then the map; 'unknown indexing'), so XLA's FileCheck tests carry over",
    )
    p.add_argument("--no-verify", action="store_true", help="skip the isl proofs (merge only identical maps)")
    p.add_argument(
        "--jobs",
        metavar="N",
        type=jobs,
        help=f"analyze the modules of a dump directory or split file on N worker processes (default: the cores "
        f"when there are {POOL_FROM} or more modules, else 1); the output is the same, in input order",
    )
    add_timeout(p, math.inf)
    p.set_defaults(run=run)


MODULE_HELP = (
    "only the modules whose file name or HloModule name matches PATTERN, a shell-style glob ('*' any text, "
    "'?' one character, [seq]; case-sensitive; quote it): 'jit_f', '*softmax*', 'module_0004.*'; in a dump "
    "directory a pattern no after-optimization file matches is tried on the before-optimization ones "
    "('*before_optimizations*'); no match is bad input (exit 3) listing the modules there are"
)
"""The ``--help`` of ``--module`` (the rules are :func:`verified_indexing.hlo.dumps.select_modules`'s)."""

POOL_FROM = 4
"""Without ``--jobs``, an input of this many modules or more is analyzed on a pool of the cores."""


def split_shapes(text: str) -> list[str]:
    """The shapes of one ``--args`` value: separated by commas or white space outside brackets, braces
    and parentheses (``f32[8,128], f32[128]`` is two; ``f32[8,128]{1,0}`` and ``(f32[8], f32[8])`` one)."""
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text + ","):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth <= 0 and (ch == "," or ch.isspace()):
            if text[start:i].strip():
                out.append(text[start:i].strip())
            start = i + 1
    return out or [text]


def _xla_text(modules: list[Module], work: list[tuple[int, Module, str | None]], instruction: str,
              results: list[ComputationIndexing]) -> str:
    """The maps as XLA's ``HloInstructionIndexing::ToString`` prints them: per operand position K (per
    output, input to output), ``operand id = K`` and each of its maps in the multi-line form, or
    ``unknown indexing``. An operand named at two positions has the maps of both at each (the analysis
    reads it as one parameter)."""
    lines: list[str] = []
    for (_, module, computation), r in zip(work, results):
        comp = module.computations[(computation or module.entry_name).lstrip("%")]
        inst = comp.by_name[instruction]
        if r.direction == "output-to-input":
            params = list(dict.fromkeys(inst.operands))
            ids = [(k, params.index(name)) for k, name in enumerate(inst.operands)]
        else:
            ids = [(t.index, t.index) for t in r.targets]
        by_index = {t.index: t for t in r.targets}
        for k, index in ids:
            t = by_index.get(index)
            if t is None:
                continue  # --operand chose another operand
            if not t.maps or t.unsupported:
                lines.append(f"operand id = {k} unknown indexing")
            lines += [f"operand id = {k} {a.map}" for a in t.maps]
    return "".join(line + "\n" for line in lines)


def _analyze_one(job: tuple[Module, str | None, dict[str, Any], float]) -> tuple[list[ComputationIndexing], list[str]]:
    """One module's analysis in a worker process, within what was left of the command's budget: the
    results, and the analyses not reached when the budget ran out."""
    from verified_indexing.engines.deadline import command_budget
    from verified_indexing.hlo.fusion import analyze_module

    module, computation, options, left = job
    if left <= 0:
        return [], ["every analysis of the module"]
    missed: list[str] = []
    with command_budget(left):
        return analyze_module(module, computation=computation, not_reached=missed, **options), missed


def _chosen(module: Module, computation: str | None, from_instruction: str | None, drawing: bool,
            many: bool) -> tuple[bool, str | None]:
    """Whether ``module`` is analyzed (``many``: the input holds several modules, and ``--computation`` or
    ``--from`` may name another one's) and the computation to analyze (None: the default)."""
    if computation is None and drawing and not module.fusions():
        computation = module.entry_name  # the drawing of a module without fusions: its entry, composed
    if computation == "ENTRY" and "ENTRY" not in module.computations:
        computation = module.entry_name
    if many and computation is not None and computation not in module.computations:
        return False, None  # --computation names a computation of another module of the file
    if many and from_instruction is not None and not any(
        from_instruction in c.by_name for c in module.computations.values()
    ):
        return False, None
    return True, computation


def _read_and_analyze(
    job: tuple[str, str, str | None, str | None, dict[str, Any], float],
) -> tuple[list[Module], list[str], list[tuple[list[ComputationIndexing], list[str]]]] | None:
    """One input of several (a dump directory's file) read and analyzed in a worker process: its modules,
    the notes of reading it, and each chosen module's results and analyses not reached. The budget is
    the command's: ``deadline`` is a wall-clock time (``time.time()``), the same in every process. None
    when the input is bad or the budget ran out while it was read: the caller then reads every input
    itself, and reports that as one process does."""
    from verified_indexing.engines.deadline import BudgetExpired, command_budget
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo_modules

    text, source, computation, from_instruction, options, deadline = job
    notes: list[str] = []
    outcomes: list[tuple[list[ComputationIndexing], list[str]]] = []
    with command_budget(max(deadline - time.time(), 0.0)):
        try:
            modules = load_hlo_modules(text, source, notes)
        except (VerifiedIndexingError, BudgetExpired):
            return None
        for module in modules:
            keep, chosen = _chosen(module, computation, from_instruction, False, True)
            if keep:
                missed: list[str] = []
                try:
                    found = analyze_module(module, computation=chosen, not_reached=missed, **options)
                except VerifiedIndexingError:
                    return None
                outcomes.append((found, missed))
    return modules, notes, outcomes


def _bar(what: str) -> Callable[[list[T]], Iterable[T]]:
    """A progress bar over a list of analyses (:func:`verified_indexing.parallel.progress`)."""
    from verified_indexing.parallel import progress

    def wrap(jobs: list[T]) -> Iterable[T]:
        return progress(jobs, len(jobs), what)

    return wrap


def check_options(*, jobs: int | None, operand: int | None, epilogue: str | None, instruction: str | None,
                  from_instruction: str | None, direction: str, drawing: bool = False, xla: bool = False) -> None:
    """The options of ``analyze`` that do not go together, or are out of range: :class:`VerifiedIndexingError`
    with the command's message (the command line and :func:`verified_indexing.analyze` both check here)."""
    if jobs is not None and jobs < 1:  # (the command line's argparse says so first, in these words)
        raise VerifiedIndexingError(f"argument --jobs: expected a positive number of worker processes, "
                                    f"got {str(jobs)!r}")
    if operand is not None and operand < 0:
        raise VerifiedIndexingError(f"argument --operand: expected a non-negative integer, got {str(operand)!r}")
    if direction not in ("output-to-input", "input-to-output"):
        raise VerifiedIndexingError(f"argument --direction: invalid choice: {direction!r} (choose from "
                                    "'output-to-input', 'input-to-output')")
    if epilogue is not None and (instruction or from_instruction or drawing or xla or direction != "output-to-input"
                                 or operand is not None):
        raise VerifiedIndexingError("analyze --epilogue HERO maps the hero's output to the root's: not with "
                                    "--instruction, --from, --direction, --operand, --dot, --svg or --format=xla")


def read_path(path: str, say: Callable[[str], None]) -> tuple[list[tuple[str, str]], str | None]:
    """The HLO texts of ``path`` and the dump directory it is (None: a file): a directory's picked modules
    (:func:`verified_indexing.hlo.loader.dump_modules`; ``say`` is given the line saying what was picked), or
    the one file (text, or a ``*.hlo.pb`` read through jaxlib)."""
    from verified_indexing.cli._common import read_hlo_file

    if os.path.isdir(path):
        from verified_indexing.hlo.loader import dump_modules

        selection = dump_modules(path)
        say(selection.note)
        return [read_hlo_file(str(f)) for f in selection.files], path
    return [read_hlo_file(path)], None


class Outcome:
    """What ``analyze`` found on its inputs (:func:`analyze_inputs`): the command prints it, the library's
    :class:`verified_indexing.api.Analysis` holds it. ``named``: each result says its module and file (several
    modules, or a dump directory); ``drawn``: each analyzed module and its results; ``work``: (index, module,
    computation) of each analyzed module; ``epilogue``: with ``--epilogue``, (question, module, results) per
    module holding the hero; ``unread``: the budget ran out while the input was read."""

    def __init__(self, modules: list[Module], results: list[ComputationIndexing], seconds: float,
                 not_reached: list[str], named: bool, drawn: list[tuple[Module, list[ComputationIndexing]]],
                 work: list[tuple[int, Module, str | None]],
                 epilogue: list[tuple[EpilogueQuestion, Module, list[ComputationIndexing]]] | None = None,
                 unread: bool = False) -> None:
        self.modules, self.results, self.seconds, self.not_reached = modules, results, seconds, not_reached
        self.named, self.drawn, self.work, self.epilogue, self.unread = named, drawn, work, epilogue, unread

    def to_json_data(self) -> dict[str, Any]:
        """The fields of ``analyze --json`` (before the envelope)."""
        from verified_indexing.serialize import analyze_json

        if self.epilogue is None:
            return analyze_json(self.results, self.seconds, self.not_reached)
        data = analyze_json(self.results, self.seconds)
        data["epilogue"] = [{"hero": q.hero, "opcode": q.opcode, "computation": q.computation,
                             "module": m.name} for q, m, _ in self.epilogue]
        return data

    def text(self) -> str:
        """The text report ``analyze`` prints (without a trailing newline): the maps, then the summary line."""
        from verified_indexing.hlo.dumps import format_named, module_source
        from verified_indexing.hlo.report import format_result, format_results, summary_line

        parts: list[str] = []
        if self.epilogue is not None:
            from verified_indexing.hlo.epilogue import epilogue_heading

            for q, m, found in self.epilogue:
                if self.named:
                    parts.append(f"module {m.name} ({module_source(m) or 'input'})\n")
                for r in found:
                    lines = format_result(r).split("\n")
                    parts.append("\n".join([epilogue_heading(q), *lines[1:]]) + "\n")
        elif self.named and not self.unread:
            parts.append(format_named(self.drawn) + "\n")
        elif self.results:
            parts.append(format_results(self.results) + "\n")
        parts.append(summary_line(self.results, self.seconds))
        return "\n".join(parts)

    def exit_code(self) -> int:
        """0 every map there and proven, 2 unknown, unsupported or not reached, 4 a failed proof."""
        from verified_indexing.hlo.report import exit_code

        code = exit_code(self.results)
        return max(code, 2) if self.not_reached and self.epilogue is None else code


def analyze_inputs(
    inputs: list[tuple[str, str]],
    *,
    directory: str | None = None,
    parsed: list[Module] | None = None,
    module: str | None = None,
    computation: str | None = None,
    epilogue: str | None = None,
    jobs: int | None = None,
    options: dict[str, Any] | None = None,
    drawing: bool = False,
    poolable: bool = True,
    progress: bool = False,
    say: Callable[[str], None] = lambda line: None,
    start: float | None = None,
) -> Outcome:
    """``analyze`` on HLO texts ``inputs`` ((text, source) each; or the modules ``parsed``), the one code path of
    the command and of :func:`verified_indexing.analyze`. ``directory``: the inputs are that dump directory's
    (their results are named; ``module`` is tried on every module file when no picked one matches);
    ``module``: the ``--module`` glob; ``computation``, ``epilogue``, ``jobs``: the options of the same names;
    ``options``: :func:`~verified_indexing.hlo.fusion.analyze_module`'s (instruction, direction, operand,
    verify, from_instruction, physical); ``drawing``: for ``--dot``/``--svg`` (a module without fusions is
    drawn composed); ``poolable``: the inputs may be read and analyzed on worker processes; ``say``: each
    line the command writes to standard error before its report (notes)."""
    from verified_indexing.engines.deadline import BudgetExpired, remaining
    from verified_indexing.hlo.dumps import module_source
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo_modules
    from verified_indexing.parallel import default_jobs, run_ordered

    start = time.perf_counter() if start is None else start
    opts: dict[str, Any] = dict(options or {})
    if parsed is None:
        inputs = _selected(module, inputs, directory)
    if epilogue is not None:
        return _epilogue_outcome(inputs, parsed, directory, module, epilogue, computation, opts, say, start)
    notes: list[str] = []
    pooled = None if parsed is not None or not poolable else \
        _pooled(inputs, jobs, computation, opts.get("from_instruction"), opts)  # each input read by a worker
    try:
        if parsed is not None:
            modules = list(parsed)
        elif pooled is None:
            modules = [m for text, source in inputs for m in load_hlo_modules(text, source, notes)]
        else:
            modules = [m for found, _, _ in pooled for m in found]
    except BudgetExpired:  # not one module read: the (empty) report all the same, and what was not reached
        return Outcome([], [], time.perf_counter() - start, ["reading the input"], False, [], [], unread=True)
    for note in notes if pooled is None else [n for _, found, _ in pooled for n in found]:
        say(f"note: {note}")
    named = len(modules) > 1 or directory is not None  # each module's results say which module and file
    if module is not None and (parsed is not None or (len(inputs) == 1 and directory is None)):  # one file's
        from verified_indexing.hlo.dumps import module_matches, no_module_matches

        if not any(module_matches(module, m) for m in modules):
            raise no_module_matches(module, modules)
        modules = [m for m in modules if module_matches(module, m)]
    work: list[tuple[int, Module, str | None]] = []
    for index, m in enumerate(modules):
        keep, chosen = _chosen(m, computation, opts.get("from_instruction"), drawing, len(modules) > 1)
        if keep:
            work.append((index, m, chosen))
    njobs = jobs if jobs is not None else (default_jobs() if len(work) >= POOL_FROM else 1)
    outcomes: list[tuple[list[ComputationIndexing], list[str]]] = []
    if pooled is not None:
        outcomes = [o for _, _, done in pooled for o in done]
    elif njobs > 1 and len(work) > 1:
        left = remaining()
        outcomes = list(run_ordered(_analyze_one, [(m, c, opts, left) for _, m, c in work], jobs=njobs,
                                    what="modules", chunk=1))  # a module is heavy work: one a task
    else:
        for _, m, c in work:
            missed: list[str] = []
            what = "fusions" if m.fusions() and c is None and not opts.get("instruction") \
                and not opts.get("from_instruction") else "instructions"
            found = analyze_module(m, computation=c, progress=_bar(what) if progress else None,
                                   not_reached=missed, **opts)
            outcomes.append((found, missed))
    results: list[ComputationIndexing] = []
    not_reached: list[str] = []
    drawn = []  # (module, its results), for --dot/--svg
    for (index, m, _), (found, missed) in zip(work, outcomes):
        if len(modules) > 1:
            for r in found:
                r.module = f"{index}:{m.name}"  # two modules may share computation names
            missed = [f"{index}:{m.name}: {name}" for name in missed]
        if named:
            for r in found:
                r.module_name, r.file = m.name, module_source(m)
        results += found
        not_reached += missed
        drawn.append((m, found))
    return Outcome(modules, results, time.perf_counter() - start, not_reached, named, drawn, work)


def run(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.dumps import module_source

    check_options(jobs=args.jobs, operand=args.operand, epilogue=args.epilogue, instruction=args.instruction,
                  from_instruction=args.from_instruction, direction=args.direction,
                  drawing=bool(args.dot or args.svg), xla=args.format == "xla")
    if bool(input_args(args)) == (args.jax is not None):
        raise VerifiedIndexingError("analyze: give one FILE or --jax MODULE:FUNCTION (or inline HLO with -e TEXT)")
    if args.jax_args and args.jax is None:
        raise VerifiedIndexingError("analyze: --args gives the argument shapes of --jax MODULE:FUNCTION")
    if args.format == "xla" and (args.instruction is None or args.json or args.dot or args.svg):
        raise VerifiedIndexingError("analyze --format=xla prints one instruction's maps: give --instruction NAME "
                                    "(and not --json, --dot or --svg)")
    if (args.dot or args.svg) and (args.instruction or args.from_instruction):
        raise VerifiedIndexingError("analyze: --dot/--svg draw fusions or computations, not --instruction or --from")
    start = time.perf_counter()
    directory = None
    if args.jax is not None:
        from verified_indexing.jax import compiled_hlo, load_function, shape_spec

        specs = [shape_spec(a, f"--args {a}") for given in args.jax_args for a in split_shapes(given)]
        inputs = [(compiled_hlo(load_function(args.jax), *specs), f"<jax {args.jax}>")]
    elif _is_directory(args):
        inputs, directory = read_path(input_args(args)[0], _stderr)  # type: ignore[arg-type]
    else:
        inputs = read_hlo_inputs(args)
    options = {
        "instruction": args.instruction,
        "direction": args.direction,
        "operand": args.operand,
        "verify": not args.no_verify,
        "from_instruction": args.from_instruction,
        "physical": args.physical,
    }
    found = analyze_inputs(inputs, directory=directory, module=args.module, computation=args.computation,
                           epilogue=args.epilogue, jobs=args.jobs, options=options, drawing=bool(args.dot or args.svg),
                           poolable=args.jax is None and not (args.dot or args.svg or args.format == "xla"),
                           progress=True, say=_stderr, start=start)
    _disarm_backstop()  # the analyses are over: what was finished is printed in full, however late
    results, named = found.results, found.named
    if found.unread:
        if args.json:
            print_json(found.to_json_data())
        else:
            print(found.text())
        print(not_reached_line(found.not_reached, args.timeout), file=sys.stderr)
        return 2
    if found.epilogue is None and (args.dot or args.svg):
        from verified_indexing.hlo.graph import dot_to_svg, to_dot
        from verified_indexing.hlo.report import exit_code, summary_line

        text = "".join(to_dot(m, r, module_source(m) if named else None) for m, r in found.drawn)
        if args.dot and args.dot != "-":  # written first: a failing --svg leaves the DOT file
            try:
                with open(args.dot, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as exc:
                raise VerifiedIndexingError(f"--dot {args.dot}: cannot write: {exc}") from None
        if args.svg:
            if len(found.drawn) > 1:
                raise VerifiedIndexingError("analyze --svg: the input holds several modules; use --dot")
            dot_to_svg(text, args.svg)
        if args.dot == "-":
            sys.stdout.write(text)
            print(summary_line(results, found.seconds), file=sys.stderr)
            return exit_code(results)
    if args.format == "xla":
        sys.stdout.write(_xla_text(found.modules, found.work, args.instruction, results))
    elif args.json:
        print_json(found.to_json_data())
    else:
        print(found.text())
    if found.not_reached and found.epilogue is None:
        print(not_reached_line(found.not_reached, args.timeout), file=sys.stderr)
    return found.exit_code()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _pooled(
    inputs: list[tuple[str, str]], jobs: int | None, computation: str | None, from_instruction: str | None,
    options: dict[str, Any],
) -> list[tuple[list[Module], list[str], list[tuple[list[ComputationIndexing], list[str]]]]] | None:
    """Several inputs (a dump directory's files) read and analyzed on the process pool, one input a task
    (:func:`_read_and_analyze`: the reading is most of the work of an unoptimized module, and a parsed
    module is not sent to a worker); None when not on the pool (one input, one job) or when an input is bad
    or the budget ran out while reading it (the caller then reads every input itself and reports that as
    one process does)."""
    from verified_indexing.engines.deadline import remaining
    from verified_indexing.parallel import default_jobs, run_ordered

    njobs = jobs if jobs is not None else (default_jobs() if len(inputs) >= POOL_FROM else 1)
    if njobs < 2 or len(inputs) < 2:
        return None
    left = remaining()
    deadline = time.time() + left if left != math.inf else math.inf
    tasks = [(text, source, computation, from_instruction, options, deadline) for text, source in inputs]
    done = list(run_ordered(_read_and_analyze, tasks, jobs=njobs, what="modules", chunk=1))
    found = [d for d in done if d is not None]
    if len(found) < len(done) or sum(len(m) for m, _, _ in found) < 2:  # (a worker chose as for several modules)
        return None
    return found


def _epilogue_outcome(inputs: list[tuple[str, str]], parsed: list[Module] | None, directory: str | None,
                      pattern: str | None, hero: str, computation: str | None, options: dict[str, Any],
                      say: Callable[[str], None], start: float) -> Outcome:
    """``analyze --epilogue HERO``: the hero's epilogue maps in each module holding it
    (:mod:`verified_indexing.hlo.epilogue`)."""
    from verified_indexing.hlo.dumps import module_matches, module_source, no_module_matches
    from verified_indexing.hlo.epilogue import epilogue_indexing
    from verified_indexing.hlo.report import load_hlo_modules

    notes: list[str] = []
    modules = list(parsed) if parsed is not None else \
        [m for text, source in inputs for m in load_hlo_modules(text, source, notes)]
    for note in notes:
        say(f"note: {note}")
    named = len(modules) > 1 or directory is not None
    if pattern is not None and (parsed is not None or (len(inputs) == 1 and directory is None)):
        if not any(module_matches(pattern, m) for m in modules):
            raise no_module_matches(pattern, modules)
        modules = [m for m in modules if module_matches(pattern, m)]
    holders = [m for m in modules if any(hero in c.by_name for c in m.computations.values())]
    if len(modules) > 1 and not holders:
        raise VerifiedIndexingError(f"--epilogue {hero}: no instruction {hero!r} in any of the {len(modules)} modules")
    blocks = []
    results = []
    for index, m in enumerate(holders if len(modules) > 1 else modules):
        q, found = epilogue_indexing(m, hero, computation, verify=options.get("verify", True),
                                     physical=options.get("physical", False))
        for r in found:
            if named:
                r.module, r.module_name, r.file = f"{index}:{m.name}", m.name, module_source(m)
        blocks.append((q, m, found))
        results += found
    drawn = [(m, found) for _, m, found in blocks]
    return Outcome(modules, results, time.perf_counter() - start, [], named, drawn, [], epilogue=blocks)


def _is_directory(args: argparse.Namespace) -> bool:
    """The input is a dump directory."""
    given = input_args(args)
    return len(given) == 1 and isinstance(given[0], str) and given[0] != "-" and os.path.isdir(given[0])


def _selected(pattern: str | None, inputs: list[tuple[str, str]], directory: str | None) -> list[tuple[str, str]]:
    """The inputs ``--module PATTERN`` keeps (see :func:`verified_indexing.hlo.dumps.select_modules`): in a
    dump directory, a pattern matching none of the after-optimization files is tried on every module file."""
    if pattern is None or (len(inputs) == 1 and directory is None):
        return inputs  # one file: its modules are filtered once read
    from verified_indexing.cli._common import read_hlo_file
    from verified_indexing.hlo.dumps import select_modules
    from verified_indexing.hlo.loader import dump_candidates

    picked = {source for _, source in inputs}
    others = [read_hlo_file(f) for f in dump_candidates(directory) if f not in picked] if directory else []
    return select_modules(inputs, pattern, others)


def _disarm_backstop() -> None:
    """Cancel the budget's alarm (:func:`verified_indexing.engines.deadline.hard_deadline`, ``SIGALRM``)
    once the analyses are over, so that it cannot cut the report short while it is printed (a large
    report takes a while to print after a budget has run out)."""
    import signal
    import threading

    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)


NAMED = 20
"""How many of the analyses not reached the text report names (JSON: every one)."""


def not_reached_line(names: list[str], timeout: float) -> str:
    """The message of a command whose budget ran out: what it did not reach."""
    shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
    return (f"unknown: the time budget (--timeout {timeout:g} s) ran out: what is printed above was finished; "
            f"not reached ({len(names)}): {shown}")

