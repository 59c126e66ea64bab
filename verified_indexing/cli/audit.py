"""``verified-indexing audit``: check XLA's printed indexing maps against our analysis."""

from __future__ import annotations

import argparse
import math
import os

from verified_indexing.cli._batch import add_batch
from verified_indexing.cli._common import (
    add_inputs,
    add_timeout,
    input_args,
    print_json,
    read_input,
    read_inputs,
    read_one_hlo,
)

EXAMPLES = """examples:
  verified-indexing audit module.hlo claims.txt
  verified-indexing audit tests/hlo_corpus/audit/module.hlo tests/hlo_corpus/audit/claims.txt --json
  verified-indexing audit --batch questions.jsonl     (one {"module": HLO, "claims": TEXT} a line)

CLAIMS holds XLA's printouts (per operand: 'operand id = K', the map, and its
'runtime variables:' section; 'fusion NAME' lines choose the fusion) or JSON
({"claims": [{"fusion": ..., "operand": K, "map": ..., "runtime_variables":
[{"rt": 0, "instruction": ..., "map": ...}]}]}). Each claim is checked against
the proven maps of our analysis (the claims for one operand together): runtime
variables bound to a constant, an iota or a clamp of those are folded in
(clamped as XLA's emitters clamp), then the reads are compared, then the range
variables pointwise, then each remaining runtime variable's binding. Also read:
'operand id = K (d0) -> ...' on one line, 'KNOWN EMPTY', 'unknown indexing',
'instruction NAME' (that instruction's operands; a module without fusions: its
root's), 'producer NAME' (grouped by producer: the root to NAME), 'physical'
(physical-layout indices). Verdicts: proved (the same reads), over-approximates
(every read claimed, and an element the output never reads), refuted (a read
missed, a wrong binding or loop, with a witness the evaluator confirmed),
unknown (with the reason). Exit code 0 when every claim is proved, 1 when one
is refuted, 2 when one is unknown, 5 when one over-approximates (and none is
worse), 3 bad input.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="prove or refute XLA's printed indexing maps (with runtime-variable bindings) against our analysis",
        description="Audit claimed indexing maps of an HLO module's fusions against the proven analysis.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["MODULE", "CLAIMS"], "MODULE: HLO (a file, an XLA dump directory holding one module, or - for "
               "standard input); CLAIMS: XLA's printed maps (text) or JSON, a file (inline text: -e TEXT)",
               dirs=True)
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    add_batch(p)
    p.set_defaults(run=run)
    k = sub.add_parser(
        "audit-kernels",
        help="validate the index arithmetic of XLA's emitted kernels (an --xla_dump_to directory) against the "
        "proven maps",
        description="Translation validation of XLA's fusion kernels: for every output element, the operand elements "
        "each kernel reads (its xla.loop, xla.apply_indexing, arith on indices, scf.for, scf.if, tensor.extract, "
        "calls; the tiled emitter's xtile.extract/insert of tiles) are compared with the proven maps of the same "
        "fusion.",
        epilog=KERNEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument("dump", metavar="DIR", help="an XLA dump directory written with XLA_FLAGS='--xla_dump_to=DIR "
                   "--xla_dump_emitter_re=.*' (XLA:CPU: *_kernel_module-pre-optimization.mlir beside the module's "
                   "*.cpu_after_optimizations.txt)")
    k.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(k, math.inf)
    k.set_defaults(run=run_kernels)


KERNEL_EXAMPLES = """examples:
  XLA_FLAGS='--xla_dump_to=/tmp/dump --xla_dump_emitter_re=.*' python my_jax_program.py
  verified-indexing audit-kernels /tmp/dump
  verified-indexing audit-kernels tests/hlo_corpus/audit/kernels --json

Each kernel (the loop emitter's, *_kernel_module-pre-optimization.mlir, after
XLA's passes, *_kernel_module-post-optimization.mlir, and the tiled emitter's,
*.__compute_module_*-pre-optimization.mlir; the tiled emitter's modules after
its passes, *.__compute_module_*-post-optimization.mlir, are not read) is
proved (the kernel reads exactly what the proven maps say, for every output
element and every value of the dynamic offsets or gather indices it reads),
refuted (an output element, the runtime values and an operand element one
side reads and the other does not), or unknown with the
reason (an index the interpreter cannot state, an op it does not read, a kernel
of another emitter). Exit code 0 when every kernel is proved, 1 when one is refuted,
2 when one is unknown, 3 bad input.
"""


def run_kernels(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.audit import exit_code
    from verified_indexing.hlo.kernels import audit_dump, format_kernel_results

    results = audit_dump(args.dump)
    if args.json:
        from verified_indexing.serialize import json_value

        print_json(json_value(results, "audit-kernels"))
    else:
        print(format_kernel_results(results))
    return exit_code({r.status for r in results})


def run(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.audit import audit, exit_code, format_audit, parse_claims
    from verified_indexing.hlo.report import load_hlo

    given = input_args(args)
    if len(given) == 2 and isinstance(given[0], str) and os.path.isdir(given[0]):
        one = argparse.Namespace(**{**vars(args), "inputs": [given[0]], "expr": [], "input_names": ("MODULE",)})
        text, source = read_one_hlo(one, "audit")
        claims = given[1]
        ctext, csource = claims if isinstance(claims, tuple) else read_input(claims)
    else:
        (text, source), (ctext, csource) = read_inputs(args)
    module = load_hlo(text, source)
    results = audit(module, parse_claims(ctext, csource))
    if args.json:
        from verified_indexing.serialize import json_value

        print_json(json_value(results, "audit"))
    else:
        print(format_audit(results))
    return exit_code({r.status for r in results})
