"""``verified-indexing utilization`` and ``tile``: exact operand utilization
and tile propagation from the proven maps of an HLO module."""

from __future__ import annotations

import argparse
import math

from verified_indexing.cli._common import add_inputs, add_timeout, print_json, read_hlo_inputs, read_one_hlo
from verified_indexing.errors import VerifiedIndexingError

UTILIZATION_EXAMPLES = """examples:
  verified-indexing utilization examples/jax_hlo/slice_strided.post.hlo
  verified-indexing utilization model.hlo --computation fused_computation.2 --json

For every fusion (the entry computation when there is none) and every operand:
the distinct elements read to compute the whole output, the operand's size, the
bytes read, and the accesses ((output element, operand element) pairs), counted
exactly by isl from the proven maps and cross-checked by enumeration on small
sets. Runtime values (dynamic-slice offsets) are enumerated, one value per
source element (each read clamped on its own): the worst case is reported with
the range; beyond 256 combinations isl decides symbolically whether every run
reads the same count; else, and for gather-like reads, upper bounds, marked so.
Exit code 0 when every count is there, 2 when an op without a model hides some
reads, 4 when counting methods disagree or a map is not proven.
"""

TILE_EXAMPLES = """examples:
  verified-indexing tile examples/jax_hlo/transpose_021.post.hlo --offsets 0,0,0 --sizes 1,8,4
  verified-indexing tile model.hlo --computation fused_computation --offsets 0,16 --sizes 8,16 --strides 1,2

For a tile of the output (offsets, sizes, strides per dimension): for every
operand, the smallest strided box (offsets, sizes, strides) holding every
element the tile reads, the containment proven (isl), and whether the box is
exact (every element of it is read). Exit code 0 when every containment is
proved, 2 when an op without a model hides an operand's reads or a proof is not
made.
"""


COALESCING_EXAMPLES = """examples:
  verified-indexing coalescing examples/jax_hlo/transpose_021.post.hlo
  verified-indexing coalescing model.hlo --computation fused_computation --vector-size 4

Under XLA's loop emitter (thread t computes the --vector-size output elements
t*V .. t*V+V-1 in the output's physical order; warps of --warp-size threads),
for every operand: proved 'coalesced' when consecutive lanes of every warp read
consecutive chunks of the operand (physical layout, tiled layouts T(...)
included) and each chunk is contiguous, 'uniform' when a warp's lanes all read
one address, else refuted with a warp, its lanes, their output elements and
addresses. A warp's addresses are the union over every path to the operand
(both halves of a concatenate, both sides of an add). Exit code 0 when
every operand is coalesced or uniform, 1 when one is refuted, 2 unknown.
"""


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "utilization",
        help="exact operand utilization of an HLO module's fusions (elements and bytes read)",
        description="Count exactly which elements of each fusion operand the fusion reads.",
        epilog=UTILIZATION_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["FILE"], "HLO text: a file, an XLA dump directory, or - for standard input (inline: -e TEXT)",
               dirs=True)
    p.add_argument("--computation", metavar="NAME", help="only this computation (fused or not)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--no-verify", action="store_true", help="count from unproven maps (skip the isl proofs)")
    add_timeout(p, math.inf)
    p.set_defaults(run=run_utilization)

    t = sub.add_parser(
        "tile",
        help="propagate an output tile to every operand: the box read, proven, and whether it is exact",
        description="Propagate a tile of a fusion's output to the elements each operand reads.",
        epilog=TILE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(t, ["FILE"], "HLO text: a file, a dump directory holding one module, or - for standard input "
               "(inline: -e TEXT)", dirs=True)
    t.add_argument("--computation", metavar="NAME", help="the computation (default: the only fusion, or the entry)")
    t.add_argument("--output", metavar="K", type=int, default=0, help="output K of a tuple root (default 0)")
    t.add_argument("--offsets", type=_ints, required=True, metavar="O,O,...", help="tile offsets")
    t.add_argument("--sizes", type=_ints, required=True, metavar="S,S,...", help="tile sizes")
    t.add_argument("--strides", type=_ints, metavar="T,T,...", help="tile strides (default 1)")
    t.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(t, math.inf)
    t.set_defaults(run=run_tile)

    c = sub.add_parser(
        "coalescing",
        help="prove or refute that a fusion's reads are coalesced under XLA's loop emitter",
        description="Decide, for every operand, whether each warp's reads are coalesced.",
        epilog=COALESCING_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(c, ["FILE"], "HLO text: a file, a dump directory holding one module, or - for standard input "
               "(inline: -e TEXT)", dirs=True)
    c.add_argument("--computation", metavar="NAME",
                   help="only this computation (default: every fusion, or the entry when there is none)")
    c.add_argument("--vector-size", type=int, default=1, metavar="V", help="elements per thread (default 1)")
    c.add_argument("--warp-size", type=int, default=32, metavar="W", help="threads per warp (default 32)")
    c.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(c, math.inf)
    c.set_defaults(run=run_coalescing)


def run_utilization(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.report import load_hlo
    from verified_indexing.hlo.utilization import operand_utilization

    entries = []
    for text, source in read_hlo_inputs(args):
        module = load_hlo(text, source)
        entries += operand_utilization(module, computation=args.computation, verify=not args.no_verify)
    if args.json:
        from verified_indexing.serialize import json_value

        print_json(json_value(entries, "utilization"))
    else:
        for e in entries:
            print(e.format())
    if any(e.status == "error" for e in entries):
        return 4
    return 2 if any(e.status != "ok" for e in entries) else 0


def run_tile(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.report import load_hlo
    from verified_indexing.hlo.utilization import tile_reads

    if args.output < 0:
        raise VerifiedIndexingError(f"--output must be >= 0, got {args.output}")
    text, source = read_one_hlo(args, "tile")
    module = load_hlo(text, source)
    reads = tile_reads(
        module, args.offsets, args.sizes, args.strides, computation=args.computation, output_index=args.output
    )
    if args.json:
        from verified_indexing.serialize import tile_json

        print_json(tile_json(reads, args.offsets, args.sizes, args.strides))
    else:
        for r in reads:
            print(r.format())
    return 0 if all(r.proved or r.reason == "the tile reads nothing" for r in reads) else 2


def run_coalescing(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.coalescing import coalescing
    from verified_indexing.hlo.report import load_hlo

    text, source = read_one_hlo(args, "coalescing")
    module = load_hlo(text, source)
    results = coalescing(module, computation=args.computation, vector_size=args.vector_size,
                         warp_size=args.warp_size)
    if args.json:
        from verified_indexing.serialize import coalescing_json

        print_json(coalescing_json(results, args.vector_size, args.warp_size))
    else:
        several = len({r.computation for r in results}) > 1
        for k, r in enumerate(results):
            if several and (k == 0 or results[k - 1].computation != r.computation):
                print(f"{'' if k == 0 else chr(10)}computation {r.computation}:")
            print(r.format())
    if any(r.status == "not coalesced" for r in results):
        return 1
    return 0 if all(r.status in ("coalesced", "uniform", "not read") for r in results) else 2
