"""``verified-indexing simplify``, ``check-rule`` and ``prove-rules``."""

from __future__ import annotations

import argparse
import math
import os
import sys

from verified_indexing.cli._batch import add_batch
from verified_indexing.cli._common import (
    add_inputs,
    add_timeout,
    looks_like_map,
    print_json,
    read_input,
    read_inputs,
)
from verified_indexing.errors import VerifiedIndexingError

SIMPLIFY_EXAMPLES = """examples:
  verified-indexing simplify -e '(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]'
  verified-indexing simplify --explain -e '(d0) -> ((d0 * 4) floordiv 8), domain: d0 in [0, 9]'
  verified-indexing simplify --json --no-verify map.txt
  verified-indexing simplify --batch maps.jsonl --jobs 2      (one {"map": TEXT} a line; JSONL out)
"""

PROVE_RULES_EXAMPLES = """examples:
  verified-indexing prove-rules
  python -m verified_indexing.proofs

Exit code 0 when every rule is proved (or unknown with passing exhaustive evidence), 1 otherwise.
"""

KNOWN_BUGS_EXAMPLES = """examples:
  verified-indexing known-bugs
  verified-indexing check-rule '(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)' --where 'c0 > 0, c1 != 0'

Exit code 0 when every wrong rewrite is refuted and every fix proved, 1 otherwise.
"""

CHECK_EXAMPLES = """examples:
  verified-indexing check-rule '(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)' --where 'c0 > 0, c1 > 0'
  verified-indexing check-rule 'x mod c0 -> x' --where 'c0 > 9' --domain 'x in [0, 9]'
  verified-indexing check-rule '(x mod (c0 * c1)) floordiv c0 -> (x floordiv c0) mod c1' --where 'c0 > 0, c1 > 0' \\
      --lemma 'x mod (c0 * c1) == c0 * ((x floordiv c0) mod c1) + x mod c0'
  verified-indexing check-rule --batch examples/batch/rules.jsonl --no-timing   (JSONL in, JSONL out)

Names c0, c1, ... are symbolic integer constants; other names are integer variables.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simplify",
        help="simplify an indexing map; the result is proven equal to the input",
        description="Simplify an indexing map (results and domain) with the rule catalogue; the result is proven "
        "equal to the input before it is printed (the input is printed when no proof succeeds): by the rules' "
        "general proofs when every step is a catalogue rule or a domain step with a general proof (each side "
        "condition checked on the map), else by isl or, on a small domain, every point.",
        epilog=SIMPLIFY_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["MAP_FILE"], "a file holding the map, or - for standard input (inline text: -e TEXT)")
    p.add_argument("--explain", action="store_true", help="print every rewrite: rule, before, after, verdict")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--no-verify", action="store_true", help="skip every proof (and isl's exact ranges)")
    p.add_argument("--point-dims", action="store_true", help="replace dimensions with one value by that value")
    p.add_argument("--rescale-range-vars", action="store_true",
                   help="replace a range variable s with s mod c = r by c*t + r (proven as a relation, as XLA's "
                   "RescaleSymbols)")
    add_timeout(p)
    add_batch(p)
    p.set_defaults(run=run_simplify)

    c = sub.add_parser(
        "check-rule",
        help="prove a rewrite rule 'LHS -> RHS' for all integers (symbolic constants c0, c1, ...)",
        description="Prove a rewrite for all integer values of its variables and symbolic constants under the "
        "side conditions: proved, refuted (with a confirmed counterexample) or unknown (with the reason).",
        epilog=CHECK_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("rule", metavar="'LHS -> RHS'", nargs="?",
                   help="the rule: text, a file holding it ('//' comment lines allowed), - for standard input; "
                   "or --batch FILE")
    c.add_argument("--where", default="", metavar="CONDITIONS", help="side conditions, e.g. 'c0 > 0, c1 != 0'")
    c.add_argument("--domain", default="", metavar="DOMAIN", help="bounds, e.g. 'x in [0, 9], y in [0, 3]'")
    add_timeout(c)
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.add_argument("--lemma", action="append", default=[], metavar="FACTS",
                   help="a proof hint (comparisons like --where), proven first and then assumed; repeatable")
    c.add_argument("--smt2", metavar="FILE",
                   help="also write the claim's query as SMT-LIB 2 to FILE (unsat = proved), for any SMT solver")
    add_batch(c)
    c.set_defaults(run=run_check_rule)

    k = sub.add_parser(
        "known-bugs",
        help="check the corpus of rewrites real simplifiers got wrong (each refuted, its fix proved)",
        description="Check the regression corpus of known wrong simplifier rewrites: each wrong rewrite must be "
        "refuted with a confirmed counterexample and its correct variant proved.",
        epilog=KNOWN_BUGS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_timeout(k, 120.0)
    k.set_defaults(run=run_known_bugs)

    r = sub.add_parser(
        "prove-rules",
        help="prove every rule of the simplifier's catalogue (same as python -m verified_indexing.proofs)",
        description="Prove the general theorem of every catalogue rule and of every domain step with z3 and print "
        "a table.",
        epilog="examples:\n  verified-indexing prove-rules\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_timeout(r, math.inf)
    r.set_defaults(run=run_prove_rules)


def run_simplify(args: argparse.Namespace) -> int:
    from verified_indexing.simplify.api import simplify_with_report
    from verified_indexing.syntax import parse_indexing_map

    ((text, source),) = read_inputs(args, looks_like_map)
    m = parse_indexing_map(text, source)
    from verified_indexing.engines.deadline import remaining

    rep = simplify_with_report(
        m, verify=not args.no_verify, timeout=args.timeout, replace_point_dims=args.point_dims,
        rescale_range_vars=args.rescale_range_vars,
    )
    code = 0
    stopped = not rep.domain_settled or "time budget" in rep.note or (rep.verdict is not None and rep.verdict.unknown)
    if remaining() <= 0 and stopped and not rep.cached:  # the budget ran out: the map is proven, maybe unfinished
        code = 2
        ran_out = (f"unknown: the --timeout {args.timeout:g} s budget ran out: rewriting stopped, perhaps before "
                   "the end (the map printed is proven equal to the input)")
        rep.note = f"{rep.note}; {ran_out}" if rep.note else ran_out
        if not args.json:
            print(ran_out, file=sys.stderr)
    if args.json:
        print_json(rep.to_json())
        return code
    print(rep.map)
    if args.explain:
        print()
        if not rep.steps:
            print("no rewrite applied")
        for s in rep.steps:
            v = f"  [{s.verdict.status} by {s.verdict.engine}]" if s.verdict is not None else ""
            print(f"{s.rule} ({s.where}): {s.before}  ->  {s.after}{v}")
        for s in rep.rejected:
            v = s.verdict.status if s.verdict is not None else "not proved"
            print(f"REJECTED {s.rule} ({s.where}): {s.before}  ->  {s.after}  [{v}]")
            if s.verdict is not None and s.verdict.counterexample is not None:
                print("\n".join("  " + x for x in s.verdict.counterexample.lines()))
        if rep.mode == "unverified":
            print("result: not verified (--no-verify)")
        elif rep.verdict is None:
            print("result: unchanged" if rep.map == rep.input else "result: proved")
        else:
            print(f"result: {rep.verdict.status} equal to the input by {rep.verdict.engine} ({rep.mode})")
        print(f"cost: {rep.cost_before} -> {rep.cost_after}")
        if rep.rounds > 1 or rep.note:
            print(f"rounds: {rep.rounds}" + (f" ({rep.note})" if rep.note else ""))
    return code


def run_check_rule(args: argparse.Namespace) -> int:
    from verified_indexing.proofs.user_rule import check_user_rule

    if args.rule is None:
        raise VerifiedIndexingError("expected the rule 'LHS -> RHS' (or --batch FILE)")
    text, source = args.rule, "<rule>"
    if text == "-" or ("\n" not in text and "->" not in text and os.path.isfile(text)):
        text, source = read_input(text)  # a rule file ('//' comment lines allowed) or standard input
    v = check_user_rule(text, where=args.where, domain=args.domain, timeout=args.timeout, lemmas=args.lemma,
                        source=source, smt2=args.smt2)
    if args.json:
        print_json(v.to_json())
    else:
        print(v)
    return {"proved": 0, "refuted": 1, "unknown": 2}.get(v.status, 3)


def run_known_bugs(args: argparse.Namespace) -> int:
    from verified_indexing.engines.deadline import BudgetExpired, remaining
    from verified_indexing.proofs.known_bugs import KNOWN_BUGS, check_known_bugs, format_known_bugs

    checks, not_reached = [], []
    for bug in KNOWN_BUGS:
        if remaining() <= 0:  # the --timeout budget is spent: the rest is named, not checked
            not_reached.append(bug.name)
            continue
        try:
            checks += check_known_bugs([bug], timeout=args.timeout)
        except BudgetExpired:  # the backstop stopped this entry: it and the rest are not reached
            not_reached.append(bug.name)
    print(format_known_bugs(checks))
    # an entry whose proof ran out of time is unknown (2), not a failure (1)
    if not_reached:
        print(_not_reached(not_reached, "entries", args.timeout))
    if any(not c.ok and "unknown" not in (c.wrong.status, c.fixed.status) for c in checks):
        return 1
    return 2 if not_reached or not all(c.ok for c in checks) else 0


def _not_reached(names: list[str], what: str, timeout: float) -> str:
    """The line naming what a command did not reach before its --timeout budget ran out."""
    return f"unknown: not reached (the --timeout {timeout:g} s budget ran out): {len(names)} {what}: {', '.join(names)}"


def run_prove_rules(args: argparse.Namespace) -> int:
    from verified_indexing.engines.deadline import BudgetExpired, remaining
    from verified_indexing.parallel import progress
    from verified_indexing.proofs import format_table, prove_all, table_ok
    from verified_indexing.simplify.rules import RULES

    results, not_reached = [], []
    for rule in progress(RULES, len(RULES), "rules"):
        if remaining() <= 0:  # the --timeout budget is spent: the rest is named, not proved
            not_reached.append(rule.name)
            continue
        try:
            results += prove_all([rule], timeout=min(10.0, args.timeout))
        except BudgetExpired:  # the backstop stopped this rule: it and the rest are not reached
            not_reached.append(rule.name)
    print(format_table(results))
    # the domain steps' theorems (verified_indexing.simplify.domain_rules, proofs/domain.py)
    from verified_indexing._timing import show_timing
    from verified_indexing.proofs.domain import prove_domain_rule
    from verified_indexing.simplify.domain_rules import DOMAIN_RULES

    domain_ok, done, proved = True, [], 0
    for drule in DOMAIN_RULES:
        if remaining() <= 0:
            not_reached.append(drule.name)
            continue
        try:
            v = prove_domain_rule(drule, timeout=min(10.0, args.timeout))
        except BudgetExpired:
            not_reached.append(drule.name)
            continue
        domain_ok = domain_ok and v.proved
        proved += v.proved
        ms = f"{v.seconds * 1000:7.1f}" if show_timing() else "      -"
        where = f"  if {drule.where}" if drule.where else ""
        done.append(f"{drule.name:<28}  {v.status:<8}  {ms}  {drule.text}{where}"
                    + (f"  ({v.reason})" if v.reason and not v.proved else ""))
    if done:
        print("\ndomain steps (before <-> after, for all integers):")
        print("\n".join(done))
        print(f"{len(done)} domain rules: {proved} proved")
    ok = table_ok(results) and domain_ok
    if not_reached:
        print(_not_reached(not_reached, "rules", args.timeout))
        return 1 if not ok else 2
    return 0 if ok else 1
