"""``verified-indexing validate-mlir``: MLIR's own fusion pass run by ``iree-opt``, its output validated.

Exit codes: 0 every fused op the pass produced is proved (it computes every value
the ops it replaced compute, every size), 1 one is refuted (the element and both
values, found and re-checked by the Linalg interpreter), 2 one is unknown (the
reason is printed), 3 bad input (MLIR's own diagnostic) or IREE not installed,
4 error.
"""

from __future__ import annotations

import argparse
import math

from verified_indexing.cli._common import add_inputs, add_timeout, print_json, read_inputs

ENGINE_CAP_S = 30.0
"""Each engine query's cap when ``--timeout`` is ``inf`` (validate-mlir and validate-tvm)."""

EXAMPLES = """examples:
  verified-indexing validate-mlir examples/mlir/validate_mlir_chain.mlir
  verified-indexing validate-mlir FILE --pass linalg-fuse-elementwise-ops --json
  verified-indexing validate-mlir FILE --pass 'builtin.module(func.func(linalg-fuse-elementwise-ops))'
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate-mlir",
        help="run MLIR's own fusion pass through iree-opt and prove or refute every fused op (the mlir extra)",
        description="Run MLIR's pass (default linalg-fuse-elementwise-ops) on FILE through iree-opt, match its "
        "output to its input by location (a fused op carries its consumer's location), and prove every fused op "
        "equal to the pair or chain it replaced (the project's fusion proof and whole-op proof: every result, "
        "every size, types checked), or refute it with the element and both values (the Linalg interpreter runs "
        "both modules on random inputs and re-runs the replaced ops alone). Also lists the pairs the pass left "
        "unfused that the project proves legal, with why the pass refused (areElementwiseOpsFusable's failing "
        "check, or its control function: a producer with more than one use). Needs IREE "
        "(pip install 'verified-indexing[mlir]'); without it the command exits 3. With --timeout inf (the default) "
        "each engine query (isl, z3, the whole-op proof) is capped at ENGINE_CAP_S = 30 s, so no single query "
        "hangs the command: one that hits the cap is unknown with the reason; a finite --timeout is that cap too.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "MLIR (func.func/util.func with linalg ops on tensors): a file, or - for standard "
               "input (inline: -e TEXT)")
    p.add_argument("--pass", dest="pass_name", default="linalg-fuse-elementwise-ops", metavar="PASS",
                   help="the pass (an iree-opt flag without --, e.g. linalg-fuse-elementwise-ops) or a pipeline "
                   "with parentheses (given to --pass-pipeline)")
    p.add_argument("--seeds", type=int, default=3, metavar="N",
                   help="random input sets the interpreter runs both modules on (default 3)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--show-output", action="store_true", help="also print the pass's output (values renamed to "
                   "the input's)")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_validate_mlir)


def run_validate_mlir(args: argparse.Namespace) -> int:
    from verified_indexing.mlir_driver import validate_mlir

    ((text, source),) = read_inputs(args)
    timeout = args.timeout if math.isfinite(args.timeout) else ENGINE_CAP_S
    r = validate_mlir(text, source, pass_name=args.pass_name, timeout=timeout, seeds=max(args.seeds, 1))
    if args.json:
        print_json(r.to_json())
        return r.exit_code
    from verified_indexing._text import validate_mlir_text

    print(validate_mlir_text(r))
    if args.show_output:
        print("the pass's output:")
        print(r.after.rstrip())
    return r.exit_code
