"""``verified-indexing audit``: check XLA's printed indexing maps against our analysis."""

from __future__ import annotations

import argparse
import math

from verified_indexing.cli._common import add_timeout, print_json, read_input

EXAMPLES = """examples:
  verified-indexing audit module.hlo claims.txt
  verified-indexing audit tests/hlo_corpus/audit/module.hlo tests/hlo_corpus/audit/claims.txt --json

CLAIMS holds XLA's printouts (per operand: 'operand id = K', the map, and its
'runtime variables:' section; 'fusion NAME' lines choose the fusion) or JSON
({"claims": [{"fusion": ..., "operand": K, "map": ..., "runtime_variables":
[{"rt": 0, "instruction": ..., "map": ...}]}]}). Each claim is checked against
the proven maps of our analysis: the relation, then the range variables
pointwise, then each runtime variable's binding. Exit code 0 when every claim
is proved, 1 when one is refuted (with a counterexample the evaluator
confirmed), 2 when one is a mismatch or unknown, 3 bad input.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="prove or refute XLA's printed indexing maps (with runtime-variable bindings) against our analysis",
        description="Audit claimed indexing maps of an HLO module's fusions against the proven analysis.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("module", metavar="MODULE", help="HLO text: a file, or - for standard input")
    p.add_argument("claims", metavar="CLAIMS", help="XLA's printed maps (text) or JSON: a file or the text itself")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_timeout(p, math.inf)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verified_indexing.hlo.audit import audit, format_audit, parse_claims
    from verified_indexing.hlo.report import load_hlo

    text, source = read_input(args.module)
    module = load_hlo(text, source)
    ctext, csource = read_input(args.claims)
    results = audit(module, parse_claims(ctext, csource))
    if args.json:
        print_json({"results": [r.to_json() for r in results]})
    else:
        print(format_audit(results))
    statuses = {r.status for r in results}
    if "error" in statuses:
        return 3
    if "refuted" in statuses:
        return 1
    if statuses - {"proved"}:
        return 2
    return 0
