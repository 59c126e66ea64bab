"""``verified-indexing validate-tvm``: TVM's own schedule primitive applied by TVM, its result validated.

Exit codes: 0 TVM's result proved (computes every output of the original, every
size), 1 refuted (the element, the sizes and both values, re-checked by the
interpreter and by TVM's compiled code), 2 unknown, or TVM refused the primitive
(the project's answer says whether TVM was too conservative), 3 bad input or TVM
not installed, 4 error.
"""

from __future__ import annotations

import argparse
import math
import re

from verified_indexing.cli._common import add_inputs, add_timeout, print_json, read_inputs
from verified_indexing.errors import VerifiedIndexingError

EXAMPLES = """examples:
  verified-indexing validate-tvm examples/tvm/tvm_relu_epilogue.py --primitive fuse_reduction_epilogue --block D
  verified-indexing validate-tvm examples/tvm/tvm_chain.py --primitive compute_inline --block B
  verified-indexing validate-tvm examples/tvm/tvm_chain.py --primitive reverse_compute_inline --block D
  verified-indexing validate-tvm examples/tvm/tvm_bias_epilogue.py --primitive 'fuse_reduction_epilogue(C, D)'
  verified-indexing validate-tvm examples/tvm/tvm_chain.py --primitive compute_inline --block B --json
"""

_PRIMITIVE = re.compile(r"\s*(\w+)\s*(?:\(\s*([\w.]+)\s*(?:,\s*([\w.]+)\s*)?\))?\s*$")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate-tvm",
        help="apply TVM's own schedule primitive through TVM and prove or refute its result (the tvm extra)",
        description="Read FILE with TVM's TVMScript parser, apply TVM's primitive (compute_inline, "
        "reverse_compute_inline, fuse_reduction_epilogue) through tvm.s_tir.Schedule, read TVM's result back, "
        "and prove it computes every output the original computes (same elements, same values, every size), "
        "or refute it with the sizes, the element and both values (the plain interpreter's, re-run, and "
        "TVM's own compiled code on the same inputs). When TVM refuses, the project's own answer says whether "
        "the primitive is legal (TVM too conservative). The project's answer for the primitive is printed "
        "side by side. Needs TVM (pip install 'verified-indexing[tvm]'). With --timeout inf (the default) each "
        "engine query is capped at 30 s (one that hits the cap is unknown with the reason).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "TVMScript (a @T.prim_func or an @I.ir_module): a file, or - for standard input "
               "(inline: -e TEXT)")
    p.add_argument("--primitive", required=True, metavar="NAME",
                   help="compute_inline, reverse_compute_inline or fuse_reduction_epilogue; the blocks may be "
                   "given in parentheses: compute_inline(B), fuse_reduction_epilogue(C, D)")
    p.add_argument("--block", metavar="NAME",
                   help="the block: the one to inline (compute_inline), the consumer to move "
                   "(reverse_compute_inline), the epilogue (fuse_reduction_epilogue)")
    p.add_argument("--reduction", metavar="NAME",
                   help="fuse_reduction_epilogue: the reduction block (default: the one whose tensor the "
                   "epilogue reads)")
    p.add_argument("--quiet", action="store_true", help="leave out the checks and TVM's result")
    p.add_argument("--json", action="store_true",
                   help="print a JSON report: primitive, blocks, outcome, what TVM did (status, error, its result), "
                   "the validation (status, reason, checks, witness), the project's answer, TVM's re-check, notes "
                   "(schema verified-indexing/1, command validate-tvm); the exit code is unchanged")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_validate_tvm)


def _primitive(args: argparse.Namespace) -> tuple[str, str, str | None]:
    m = _PRIMITIVE.match(args.primitive)
    if m is None:
        raise VerifiedIndexingError(f"--primitive {args.primitive!r}: expected NAME or NAME(BLOCK[, BLOCK])")
    name, first, second = m.group(1), m.group(2), m.group(3)
    block, reduction = args.block, args.reduction
    if second is not None:  # fuse_reduction_epilogue(REDUCTION, EPILOGUE), TVM's argument order
        reduction, block = reduction or first, block or second
    elif first is not None:
        block = block or first
    if block is None:
        raise VerifiedIndexingError("--block is required (or the block in parentheses: --primitive NAME(BLOCK))")
    return name, block, reduction


def run_validate_tvm(args: argparse.Namespace) -> int:
    from verified_indexing.tvm.driver import load_tvm, validate_primitive

    name, block, reduction = _primitive(args)
    ((text, source),) = read_inputs(args)
    load_tvm()
    from verified_indexing.tvm.driver import parse_tvm_source

    func = parse_tvm_source(text, source)
    from verified_indexing.cli.validate_mlir import ENGINE_CAP_S
    from verified_indexing.engines.deadline import remaining

    # what is left of the command's budget (reading the file, TVM's import and the parse took their share: the
    # command as a whole stops at --timeout, not --timeout after TVM was loaded)
    timeout = max(remaining(args.timeout if math.isfinite(args.timeout) else ENGINE_CAP_S), 0.001)
    r = validate_primitive(func, name, block, reduction=reduction, timeout=timeout)
    if args.json:
        print_json(r.to_json())
        return r.exit_code
    what = f"{r.primitive}({', '.join(r.blocks)})"
    if r.tvm_status == "crashed":
        print(f"validate-tvm {what}: TVM failed inside the primitive: {r.tvm_error}")
        print(f"  the project: {r.project['status']}: {r.project['reason']}")
        return r.exit_code
    if r.tvm_status == "refused":
        print(f"validate-tvm {what}: TVM refused: {r.tvm_error}")
        legal = r.project.get("legal")
        verdict = ("TVM is too conservative: the project proves it legal" if legal
                   else "the project does not prove it legal either")
        print(f"  {verdict} (the project: {r.project['status']}: {r.project['reason']})")
        return r.exit_code
    assert r.verdict is not None
    v = r.verdict
    print(f"validate-tvm {what}: TVM's result is {_word(v.status)}")
    print(f"  {v.reason}")
    if v.laws:
        print(f"  laws assumed: {', '.join(v.laws)}")
    if v.status == "refuted" and v.witness is not None:
        print("  re-checked by the plain interpreter (both programs re-run on the witness's inputs)")
        if r.tvm_recheck is not None:
            print(f"  TVM's compiled code: {r.tvm_recheck.get('note', '')}")
    for n in r.notes:
        print(f"  note: {n}")
    print(f"  the project's own {r.primitive}: {r.project['status']}: {r.project['reason']}")
    if not args.quiet:
        for c in v.checks:
            print(f"  [{c.status}] {c.name}" + (f" ({c.engine})" if c.engine and c.engine != "syntax" else ""))
            if c.status != "proved" and c.detail and c.detail not in v.reason:
                print(f"    {c.detail}")
        if r.after is not None:
            print("TVM's result:")
            print(r.after.rstrip())
    return r.exit_code


def _word(status: str) -> str:
    return {"proved": "proved (it computes every output of the original, for every size)",
            "refuted": "REFUTED (it computes another result)", "unknown": "unknown",
            "error": "an error"}.get(status, status)
