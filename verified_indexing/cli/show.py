"""``verified-indexing show``: parse a map and print it normalized."""

from __future__ import annotations

import argparse
import math

from verified_indexing.cli._common import add_inputs, add_timeout, looks_like_map, print_json, read_inputs

EXAMPLES = """examples:
  verified-indexing show -e '(d0, d1) -> (d1 + d0 * 0, d0), domain: d0 in [0, 9], d1 in [0, 19]'
  verified-indexing show --mlir -e 'affine_map<(d0, d1) -> (d1, d0)>'
  echo '(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]' | verified-indexing show --json -
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "show",
        help="parse an indexing map (XLA text or MLIR affine_map) and print it normalized",
        description="Parse an indexing map and print it in canonical form (the spec's layout).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["MAP_FILE"], "a file holding the map, or - for standard input (inline text: -e TEXT)")
    p.add_argument("--mlir", action="store_true", help="print as an MLIR affine_map (bounds dropped)")
    p.add_argument("--json", action="store_true", help="print a JSON description")
    add_timeout(p, math.inf)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verified_indexing.affine_map import AffineMap
    from verified_indexing.serialize import affine_map_to_json, indexing_map_to_affine_map, map_to_json
    from verified_indexing.syntax import format_affine_map, parse_map

    ((text, source),) = read_inputs(args, looks_like_map)
    m = parse_map(text, source)
    if args.json:
        print_json(affine_map_to_json(m) if isinstance(m, AffineMap) else map_to_json(m))
    elif args.mlir:
        am = m if isinstance(m, AffineMap) else indexing_map_to_affine_map(m)
        print(format_affine_map(am.num_dims, am.num_symbols, am.results))
    else:
        print(m)
    return 0
