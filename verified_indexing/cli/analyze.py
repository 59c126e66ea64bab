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


def run(args: argparse.Namespace) -> int:
    from verified_indexing.engines.deadline import BudgetExpired, remaining
    from verified_indexing.hlo.dumps import format_named, module_source
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import exit_code, format_results, load_hlo_modules, results_to_json, summary_line
    from verified_indexing.parallel import default_jobs, run_ordered

    if args.jobs is not None and args.jobs < 1:
        raise VerifiedIndexingError(f"--jobs must be at least 1, got {args.jobs}")
    if args.operand is not None and args.operand < 0:
        raise VerifiedIndexingError(f"--operand must be >= 0, got {args.operand}")
    if bool(input_args(args)) == (args.jax is not None):
        raise VerifiedIndexingError("analyze: give one FILE or --jax MODULE:FUNCTION (or inline HLO with -e TEXT)")
    if args.jax_args and args.jax is None:
        raise VerifiedIndexingError("analyze: --args gives the argument shapes of --jax MODULE:FUNCTION")
    if args.format == "xla" and (args.instruction is None or args.json or args.dot or args.svg):
        raise VerifiedIndexingError("analyze --format=xla prints one instruction's maps: give --instruction NAME "
                                    "(and not --json, --dot or --svg)")
    if (args.dot or args.svg) and (args.instruction or args.from_instruction):
        raise VerifiedIndexingError("analyze: --dot/--svg draw fusions or computations, not --instruction or --from")
    if args.epilogue is not None and (args.instruction or args.from_instruction or args.dot or args.svg
                                      or args.format == "xla" or args.direction != "output-to-input"
                                      or args.operand is not None):
        raise VerifiedIndexingError("analyze --epilogue HERO maps the hero's output to the root's: not with "
                                    "--instruction, --from, --direction, --operand, --dot, --svg or --format=xla")
    start = time.perf_counter()
    if args.jax is not None:
        from verified_indexing.jax import compiled_hlo, load_function, shape_spec

        specs = [shape_spec(a, f"--args {a}") for given in args.jax_args for a in split_shapes(given)]
        inputs = [(compiled_hlo(load_function(args.jax), *specs), f"<jax {args.jax}>")]
    else:
        inputs = _selected(args, read_hlo_inputs(args))
    options = {
        "instruction": args.instruction,
        "direction": args.direction,
        "operand": args.operand,
        "verify": not args.no_verify,
        "from_instruction": args.from_instruction,
        "physical": args.physical,
    }
    if args.epilogue is not None:
        return _run_epilogue(args, inputs, start)
    notes: list[str] = []
    pooled = _pooled(args, inputs, options)  # several inputs: each read and analyzed by a worker
    try:
        modules = [m for text, source in inputs for m in load_hlo_modules(text, source, notes)] \
            if pooled is None else [m for found, _, _ in pooled for m in found]
    except BudgetExpired:  # not one module read: the (empty) report all the same, and what was not reached
        _disarm_backstop()
        if args.json:
            print_json({**results_to_json([], time.perf_counter() - start), "not_reached": ["reading the input"]})
        else:
            print(summary_line([], time.perf_counter() - start))
        print(not_reached_line(["reading the input"], args.timeout), file=sys.stderr)
        return 2
    for note in notes if pooled is None else [n for _, found, _ in pooled for n in found]:
        print(f"note: {note}", file=sys.stderr)
    named = len(modules) > 1 or _is_directory(args)  # each module's results say which module and file
    if args.module is not None and len(inputs) == 1 and not _is_directory(args):  # one file's modules
        from verified_indexing.hlo.dumps import module_matches, no_module_matches

        if not any(module_matches(args.module, m) for m in modules):
            raise no_module_matches(args.module, modules)
        modules = [m for m in modules if module_matches(args.module, m)]
    work: list[tuple[int, Module, str | None]] = []
    for index, module in enumerate(modules):
        keep, computation = _chosen(module, args.computation, args.from_instruction, bool(args.dot or args.svg),
                                    len(modules) > 1)
        if keep:
            work.append((index, module, computation))
    jobs = args.jobs if args.jobs is not None else (default_jobs() if len(work) >= POOL_FROM else 1)
    outcomes: list[tuple[list[ComputationIndexing], list[str]]] = []
    if pooled is not None:
        outcomes = [o for _, _, done in pooled for o in done]
    elif jobs > 1 and len(work) > 1:
        left = remaining()
        outcomes = list(run_ordered(_analyze_one, [(m, c, options, left) for _, m, c in work], jobs=jobs,
                                    what="modules", chunk=1))  # a module is heavy work: one a task
    else:
        for _, m, c in work:
            missed: list[str] = []
            what = "fusions" if m.fusions() and c is None and not args.instruction and not args.from_instruction \
                else "instructions"
            found = analyze_module(m, computation=c, progress=_bar(what),
                                   not_reached=missed, **options)
            outcomes.append((found, missed))
    results = []
    not_reached: list[str] = []
    drawn = []  # (module, its results), for --dot/--svg
    for (index, module, _), (found, missed) in zip(work, outcomes):
        if len(modules) > 1:
            for r in found:
                r.module = f"{index}:{module.name}"  # two modules may share computation names
            missed = [f"{index}:{module.name}: {name}" for name in missed]
        if named:
            for r in found:
                r.module_name, r.file = module.name, module_source(module)
        results += found
        not_reached += missed
        drawn.append((module, found))
    seconds = time.perf_counter() - start
    _disarm_backstop()  # the analyses are over: what was finished is printed in full, however late
    if args.dot or args.svg:
        from verified_indexing.hlo.graph import dot_to_svg, to_dot

        text = "".join(to_dot(m, found, module_source(m) if named else None) for m, found in drawn)
        if args.dot and args.dot != "-":  # written first: a failing --svg leaves the DOT file
            try:
                with open(args.dot, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as exc:
                raise VerifiedIndexingError(f"--dot {args.dot}: cannot write: {exc}") from None
        if args.svg:
            if len(drawn) > 1:
                raise VerifiedIndexingError("analyze --svg: the input holds several modules; use --dot")
            dot_to_svg(text, args.svg)
        if args.dot == "-":
            sys.stdout.write(text)
            print(summary_line(results, seconds), file=sys.stderr)
            return exit_code(results)
    if args.format == "xla":
        sys.stdout.write(_xla_text(modules, work, args.instruction, results))
    elif args.json:
        from verified_indexing.serialize import analyze_json

        print_json(analyze_json(results, seconds, not_reached))
    else:
        if named:
            print(format_named(drawn))
            print()
        elif results:
            print(format_results(results))
            print()
        print(summary_line(results, seconds))
    code = exit_code(results)
    if not_reached:
        print(not_reached_line(not_reached, args.timeout), file=sys.stderr)
        return max(code, 2)
    return code


def _pooled(
    args: argparse.Namespace, inputs: list[tuple[str, str]], options: dict[str, Any]
) -> list[tuple[list[Module], list[str], list[tuple[list[ComputationIndexing], list[str]]]]] | None:
    """Several inputs (a dump directory's files) read and analyzed on the process pool, one input a task
    (:func:`_read_and_analyze`: the reading is most of the work of an unoptimized module, and a parsed
    module is not sent to a worker); None when not on the pool (one input, one job, --jax, --dot/--svg,
    --format=xla) or when an input is bad or the budget ran out while reading it (the caller then reads
    every input itself and reports that as one process does)."""
    from verified_indexing.engines.deadline import remaining
    from verified_indexing.parallel import default_jobs, run_ordered

    jobs = args.jobs if args.jobs is not None else (default_jobs() if len(inputs) >= POOL_FROM else 1)
    if jobs < 2 or len(inputs) < 2 or args.jax is not None or args.dot or args.svg or args.format == "xla":
        return None
    left = remaining()
    deadline = time.time() + left if left != math.inf else math.inf
    tasks = [(text, source, args.computation, args.from_instruction, options, deadline) for text, source in inputs]
    done = list(run_ordered(_read_and_analyze, tasks, jobs=jobs, what="modules", chunk=1))
    found = [d for d in done if d is not None]
    if len(found) < len(done) or sum(len(m) for m, _, _ in found) < 2:  # (a worker chose as for several modules)
        return None
    return found


def _run_epilogue(args: argparse.Namespace, inputs: list[tuple[str, str]], start: float) -> int:
    """``analyze --epilogue HERO``: the hero's epilogue maps in each module holding it
    (:mod:`verified_indexing.hlo.epilogue`), printed as the other analyses are."""
    from verified_indexing.hlo.dumps import module_matches, module_source, no_module_matches
    from verified_indexing.hlo.epilogue import epilogue_heading, epilogue_indexing
    from verified_indexing.hlo.report import exit_code, format_result, load_hlo_modules, summary_line

    notes: list[str] = []
    modules = [m for text, source in inputs for m in load_hlo_modules(text, source, notes)]
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    named = len(modules) > 1 or _is_directory(args)
    if args.module is not None and len(inputs) == 1 and not _is_directory(args):
        if not any(module_matches(args.module, m) for m in modules):
            raise no_module_matches(args.module, modules)
        modules = [m for m in modules if module_matches(args.module, m)]
    hero = args.epilogue
    holders = [m for m in modules if any(hero in c.by_name for c in m.computations.values())]
    if len(modules) > 1 and not holders:
        raise VerifiedIndexingError(f"--epilogue {hero}: no instruction {hero!r} in any of the {len(modules)} modules")
    blocks = []
    results = []
    for index, m in enumerate(holders if len(modules) > 1 else modules):
        q, found = epilogue_indexing(m, hero, args.computation, verify=not args.no_verify, physical=args.physical)
        for r in found:
            if named:
                r.module, r.module_name, r.file = f"{index}:{m.name}", m.name, module_source(m)
        blocks.append((q, m, found))
        results += found
    seconds = time.perf_counter() - start
    _disarm_backstop()
    if args.json:
        from verified_indexing.serialize import analyze_json

        data = analyze_json(results, seconds)
        data["epilogue"] = [{"hero": q.hero, "opcode": q.opcode, "computation": q.computation,
                             "module": m.name} for q, m, _ in blocks]
        print_json(data)
    else:
        for q, m, found in blocks:
            if named:
                print(f"module {m.name} ({module_source(m) or 'input'})\n")
            for r in found:
                lines = format_result(r).split("\n")
                print("\n".join([epilogue_heading(q), *lines[1:]]))
                print()
        print(summary_line(results, seconds))
    return exit_code(results)


def _is_directory(args: argparse.Namespace) -> bool:
    """The input is a dump directory."""
    given = input_args(args)
    return len(given) == 1 and isinstance(given[0], str) and given[0] != "-" and os.path.isdir(given[0])


def _selected(args: argparse.Namespace, inputs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The inputs ``--module PATTERN`` keeps (see :func:`verified_indexing.hlo.dumps.select_modules`): in a
    dump directory, a pattern matching none of the after-optimization files is tried on every module file."""
    if args.module is None or (len(inputs) == 1 and not _is_directory(args)):
        return inputs  # one file: its modules are filtered once read
    from verified_indexing.cli._common import read_hlo_file
    from verified_indexing.hlo.dumps import select_modules
    from verified_indexing.hlo.loader import dump_candidates

    picked = {source for _, source in inputs}
    others = [read_hlo_file(f) for f in dump_candidates(input_args(args)[0])  # type: ignore[arg-type]
              if f not in picked] if _is_directory(args) else []
    return select_modules(inputs, args.module, others)


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

