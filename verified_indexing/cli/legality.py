"""``verified-indexing fuse``, ``inline`` and ``invert``: legality, decided and proven.

Exit codes: 0 legal / inlined / proved, 1 illegal / refused / refuted (with a
counterexample or the rule that refuses), 2 unknown, 3 bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from verified_indexing.cli._common import add_inputs, add_timeout, looks_like_map, print_json, read_input, read_inputs
from verified_indexing.errors import UnsupportedError, VerifiedIndexingError

if TYPE_CHECKING:  # the legality modules load when a command runs (a fast --help)
    from verified_indexing.legality.cinn_ir import Stmt
    from verified_indexing.legality.inline import InlineReport

FUSE_EXAMPLES = """examples:
  verified-indexing fuse examples/mlir/transpose.mlir
  verified-indexing fuse examples/mlir/skew_legal.mlir --producer %producer --consumer %consumer --json
  verified-indexing fuse examples/mlir/dynamic_elementwise.mlir      (tensor<?x?xf32>: legal for every size)
  verified-indexing fuse examples/mlir/outs_fusion.mlir --producer %acc   (fill -> matmul outs: legal when N2 >= 1)
"""
INLINE_EXAMPLES = """examples:
  verified-indexing inline examples/cinn/compute_inline.txt
  verified-indexing inline examples/cinn/split_store.txt --block B --json
  verified-indexing inline examples/cinn/reduction.txt --all
"""
EPILOGUE_EXAMPLES = """examples:
  verified-indexing fuse-epilogue examples/cinn/matmul_bias.txt --block D
  verified-indexing fuse-epilogue examples/cinn/matmul_sub.txt --block D \\
      --fused examples/cinn/matmul_sub_fused_wrong.txt
"""
REVERSE_EXAMPLES = """examples:
  verified-indexing reverse-inline examples/cinn/reverse_inline.txt --block D
"""
INVERT_EXAMPLES = """examples:
  verified-indexing invert -e '(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]'
  verified-indexing invert -e '(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]'
  verified-indexing invert -e 'affine_map<(d0, d1, d2) -> (d2, d0, d1)>'
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fuse",
        help="linalg elementwise fusion: MLIR's verdict and ours, with proofs",
        description="Check fusing a producer linalg op into a consumer: MLIR's checks in its order, then "
        "the proof obligations for every size ('?' dims are size parameters: legal for every size, or legal when "
        "a condition on the sizes holds, re-proven), the fused op's maps, each proven, and the whole-op proof: the "
        "printed fused op, read back, computes what the pair computed. Named ops (transpose, broadcast, matmul..., "
        "convolutions and poolings with their strides and dilations, linalg.elementwise) are read as the generics "
        "MLIR's linalg-generalize-named-ops writes; other linalg ops (linalg.softmax...) are listed as skipped. "
        "MLIR's pass's whole decision "
        "in the function ('MLIR's pass in this function', JSON mlir.pass) names what decided: the canonicalization "
        "dropping an unread input, FoldFillWithGenericOp, areElementwiseOpsFusable, the one-use control function, "
        "EraseIdentityLinalgOp (an identity copy, once its payload is folded, is erased: 'erases the consumer'), "
        "folding ('unknown': a payload fold the model does not follow), RemoveOutsDependency, or "
        "reshape propagation for a pair through a tensor.expand_shape (also checked: the consumer reads the "
        "producer's result through the collapsed map). "
        "Without "
        "--producer/--consumer every producer-consumer pair of the file is checked, each consumer operand that "
        "reads the producer separately; SSA names are resolved as MLIR scopes them (each function and each "
        "isolated region such as flow.dispatch.workgroups is its own namespace), and a file with linalg ops but no "
        "pair says so (exit 0). Element types are checked (an ill-typed pair is unknown). An out-of-bounds access "
        "of the input is a warning with the sizes, and no verdict rests on sizes where the pair is undefined. Every "
        "legal fused op is also run by a Linalg interpreter at several sizes (with numpy; without it the report "
        "says the check did not run): a disagreement is an internal error (exit 4).",
        epilog=FUSE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "MLIR text with linalg.generic ops: a file, or - for standard input (inline: -e TEXT)")
    p.add_argument("--producer", metavar="NAME", help="the producer's result value, e.g. %%0")
    p.add_argument("--consumer", metavar="NAME", help="the consumer's result value, e.g. %%1")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_fuse)

    p = sub.add_parser(
        "inline",
        help="CINN ComputeInline on ScheduleBlock IR: legality checked, result proven",
        description="Inline a producer ScheduleBlock into the blocks that read its tensor, through the proven "
        "inverse of its store indices, and prove the consumers store the same values. Only a write between the "
        "producer and a consumer to what the producer read is a hazard; a producer nothing reads that is not an "
        "output is removed; a loop that never runs is decided like any other. A step legal only under a "
        "condition on the sizes says 'inlined when ...' (also with --all).",
        epilog=INLINE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "the loop-nest IR or TVMScript: a file, or - for standard input (inline: -e TEXT)")
    p.add_argument("--block", metavar="NAME", help="the block to inline (default: the first whose tensor is read)")
    p.add_argument("--all", action="store_true",
                   help="inline every block that can be, in order, each step proven (as CINN's DoComputeInline)")
    p.add_argument("--output", metavar="TENSOR", action="append",
                   help="a program output tensor (repeatable; default: tensors stored and never read)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_inline)

    p = sub.add_parser(
        "fuse-epilogue",
        help="fuse an elementwise epilogue into the reduction it reads (TVM's fuse_reduction_epilogue), proven",
        description="Fuse the epilogue block into the reduction whose tensor it reads: the bias-style epilogue "
        "folded into the init, any other applied on the last reduction iteration. The fused program (ours, or "
        "the one given with --fused) is compared with the original by exact evaluation (a difference is "
        "reported with the element, the sizes and both values) and proven equal by induction over the "
        "reduction loop (z3, uninterpreted values; the algebraic laws assumed are listed). Symbolic sizes (the "
        "reduction length K = 0 included) and predicated blocks (T.where) are modelled.",
        epilog=EPILOGUE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "the loop-nest IR or TVMScript: a file, or - for standard input (inline: -e TEXT)")
    p.add_argument("--block", metavar="NAME", required=True, help="the epilogue block")
    p.add_argument("--fused", metavar="FILE", help="check this fused program instead of generating one")
    p.add_argument("--output", metavar="TENSOR", action="append", help="a program output tensor (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_fuse_epilogue)

    p = sub.add_parser(
        "reverse-inline",
        help="TVM's ReverseComputeInline: move a consumer block into its producer, legality checked, proven",
        description="Move the consumer block into the producer of the tensor it reads, through the proven inverse "
        "of its read indices; every check is reported with its witness, and z3 proves the moved store writes "
        "what the consumer wrote. A producer computing more than the consumer reads gets the moved store under "
        "a predicate proven exact (TVM's T.where); a reduction producer makes the consumer its epilogue; "
        "producer and consumer may share a loop nest.",
        epilog=REVERSE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "the loop-nest IR or TVMScript: a file, or - for standard input (inline: -e TEXT)")
    p.add_argument("--block", metavar="NAME", required=True, help="the consumer block to move")
    p.add_argument("--output", metavar="TENSOR", action="append", help="a program output tensor (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_reverse_inline)

    p = sub.add_parser(
        "invert",
        help="prove a map injective and compute its exact inverse (or give two points with one image)",
        description="For an indexing map with a domain: injectivity, the inverse on the image, and proofs of "
        "inverse . map = id and map . inverse = id. For a plain affine_map: MLIR's inversePermutation.",
        epilog=INVERT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["MAP_FILE"], "a file holding the map, or - for standard input (inline text: -e TEXT)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p)
    p.set_defaults(run=run_invert)


def format_like_input(program: Stmt, text: str) -> str:
    """A result program printed like the input: TVMScript in the input's spelling for
    TVMScript input, CINN IR otherwise (JSON reports keep CINN IR)."""
    from verified_indexing.legality.tvmscript import format_like_input as fmt

    return fmt(program, text)


def read_program(text: str, source: str, block: str | None = None) -> Stmt:
    """A CINN loop-nest program, or TVMScript (``@T.prim_func``, ``import tvm``)
    read with ``ast`` and converted to it (with several prim_funcs, the one
    holding ``block``)."""
    from verified_indexing.legality.cinn_ir import parse_program
    from verified_indexing.legality.tvmscript import is_tvmscript, parse_tvmscript

    if is_tvmscript(text):
        return parse_tvmscript(text, source, block)
    return parse_program(text, source)


def run_fuse(args: argparse.Namespace) -> int:
    from verified_indexing.api import _fuse_text
    from verified_indexing.legality.linalg import format_report

    ((text, source),) = read_inputs(args)
    result = _fuse_text(text, source, args.producer, args.consumer)
    notes, reports = result.notes, result.reports
    if not reports:
        # Nothing to fuse is an answer, not bad input (a chunk holding one op); with
        # linalg ops not modelled (a note each), pairs through them are not decided: unknown.
        if args.json:
            for n in notes:
                print(f"note: {n}", file=sys.stderr)
            print_json({"results": [], "note": result.nothing})
        else:
            print("\n".join([*notes, result.nothing]))
        return 2 if notes else 0
    if args.json:
        for n in notes:
            print(f"note: {n}", file=sys.stderr)
        print_json(reports[0].to_json() if len(reports) == 1 else [r.to_json() for r in reports])
    else:
        print("\n".join([*notes, ""]) if notes else "", end="")
        print("\n\n".join(format_report(r) for r in reports))
    return max(r.exit_code for r in reports)


def run_inline(args: argparse.Namespace) -> int:
    from verified_indexing.legality.inline import compute_inline

    ((text, source),) = read_inputs(args)
    program = read_program(text, source, args.block)
    if args.all:
        if args.block is not None:
            raise VerifiedIndexingError("--all and --block are exclusive")
        return _run_inline_all(program, args, text)
    rep = compute_inline(program, args.block, outputs=args.output)
    if args.json:
        print_json(rep.to_json())
        return rep.exit_code
    from verified_indexing._text import inline_text

    print(inline_text(rep, lambda p: format_like_input(p, text)))
    return rep.exit_code


def _inline_head(rep: InlineReport) -> str:
    """``inline B: inlined when N <= 2`` (the condition whenever there is one) or ``inline B: refused: why``."""
    from verified_indexing._text import inline_head

    return inline_head(rep)


def _run_inline_all(program: Stmt, args: argparse.Namespace, text: str = "") -> int:
    from verified_indexing.legality.inline import inline_all

    final, reports = inline_all(program, outputs=args.output)
    when = list(dict.fromkeys(r.when for r in reports if r.status == "inlined" and r.when))
    if args.json:
        from verified_indexing.serialize import inline_all_json

        print_json(inline_all_json(final, reports))
    else:
        for r in reports:
            print(_inline_head(r))
        if when:
            print(f"the final program holds when {' and '.join(when)} (it is guarded by that condition)")
        print(format_like_input(final, text))
    if any(r.status == "unknown" for r in reports):
        return 2
    return 0


def run_fuse_epilogue(args: argparse.Namespace) -> int:
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue

    ((text, source),) = read_inputs(args)
    program = read_program(text, source, args.block)
    fused = None
    if args.fused is not None:
        ftext, fsource = read_input(args.fused)
        fused = read_program(ftext, fsource, args.block)
    rep = fuse_reduction_epilogue(program, args.block, outputs=args.output, fused=fused)
    if args.json:
        print_json(rep.to_json())
        return rep.exit_code
    from verified_indexing._text import epilogue_text

    print(epilogue_text(rep, given_fused=args.fused is not None, fmt=lambda p: format_like_input(p, text)))
    return rep.exit_code


def run_reverse_inline(args: argparse.Namespace) -> int:
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    ((text, source),) = read_inputs(args)
    program = read_program(text, source, args.block)
    rep = reverse_compute_inline(program, args.block, outputs=args.output)
    if args.json:
        print_json(rep.to_json())
        return rep.exit_code
    from verified_indexing._text import inline_text

    print(inline_text(rep, lambda p: format_like_input(p, text)))
    return rep.exit_code


def run_invert(args: argparse.Namespace) -> int:
    from verified_indexing.affine_map import AffineMap
    from verified_indexing.legality.inverse import inverse
    from verified_indexing.serialize import invert_json, invert_mlir
    from verified_indexing.syntax import parse_map

    ((text, source),) = read_inputs(args, looks_like_map)
    m = parse_map(text, source)
    mlir = invert_mlir(m)
    if isinstance(m, AffineMap):
        if mlir is None:
            raise UnsupportedError("MLIR's inversePermutation needs a map without symbols")
        if args.json:
            print_json(invert_json(m))
        else:
            print(f"map: {m}")
            print(f"MLIR isPermutation: {str(mlir['is_permutation']).lower()}")
            print(f"MLIR inversePermutation: {mlir['inverse_permutation'] or 'null'}")
            print("(the semantic inverse needs a domain: give an indexing map with 'domain:')")
        return 0
    res = inverse(m)
    code = {"proved": 0, "refuted": 1, "unknown": 2, "error": 4}[res.status]
    if args.json:
        print_json(invert_json(m, res))
        return code
    from verified_indexing._text import invert_text

    print(invert_text(res, mlir))
    return code


