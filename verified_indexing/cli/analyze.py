"""``verified-indexing analyze``: indexing maps of the fusions of an HLO module."""

from __future__ import annotations

import argparse
import math
import time

from verified_indexing.cli._common import add_inputs, add_timeout, count, print_json, read_hlo_inputs
from verified_indexing.errors import VerifiedIndexingError

EXAMPLES = """examples:
  verified-indexing analyze examples/jax_hlo/softmax.post.hlo
  verified-indexing analyze model.hlo --computation fused_computation.2 --direction input-to-output
  verified-indexing analyze model.hlo --instruction gather.3 --computation fused_computation --json
  verified-indexing analyze model.hlo --from transpose.1 --physical
  echo 'p0 = f32[20] parameter(0)
  bc = f32[10,20,30] broadcast(p0), dimensions={1}' | verified-indexing analyze -

By default every fusion of the module is analyzed (the entry computation when
there is none): per fusion and parameter, the maps from the fusion's output,
composed along every path, simplified, deduplicated, and proven equal (isl) to
the exact composition of the per-op maps. Exit code 0 when every map is there
and proven, 2 when an op has no indexing model (named in the output), 4 when a
proof fails.
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
        "(its after-optimization modules), or - for standard input (inline text: -e TEXT)",
        dirs=True,
    )
    p.add_argument("--computation", metavar="NAME", help="analyze this computation (fused or not)")
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
        "--physical",
        action="store_true",
        help="maps between physical indices: each shape's dimensions in its layout's major-to-minor order",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--no-verify", action="store_true", help="skip the isl proofs (merge only identical maps)")
    add_timeout(p, math.inf)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import exit_code, format_results, load_hlo_modules, results_to_json, summary_line
    from verified_indexing.parallel import progress

    if args.operand is not None and args.operand < 0:
        raise VerifiedIndexingError(f"--operand must be >= 0, got {args.operand}")
    start = time.perf_counter()
    inputs = read_hlo_inputs(args)
    modules = [m for text, source in inputs for m in load_hlo_modules(text, source)]
    results = []
    for module in modules:
        computation = args.computation
        if computation is None and args.instruction is None and args.from_instruction is None and not module.fusions():
            computation = module.entry_name
        if len(modules) > 1 and computation is not None and computation not in module.computations:
            continue  # --computation names a computation of another module of the file
        if len(modules) > 1 and args.from_instruction is not None and not any(
            args.from_instruction in c.by_name for c in module.computations.values()
        ):
            continue
        results += analyze_module(
            module,
            computation=computation,
            instruction=args.instruction,
            direction=args.direction,
            operand=args.operand,
            verify=not args.no_verify,
            from_instruction=args.from_instruction,
            physical=args.physical,
            progress=lambda jobs: progress(jobs, len(jobs), "fusions"),
        )
    seconds = time.perf_counter() - start
    if args.json:
        print_json(results_to_json(results, seconds))
    else:
        if results:
            print(format_results(results))
            print()
        print(summary_line(results, seconds))
    return exit_code(results)
