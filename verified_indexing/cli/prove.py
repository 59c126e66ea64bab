"""``verified-indexing prove-equal``: prove two maps (or two expressions) equal."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any

from verified_indexing.cli._batch import add_batch
from verified_indexing.cli._common import add_inputs, add_timeout, looks_like_map, print_json, read_inputs
from verified_indexing.errors import ParseError, VerifiedIndexingError

if TYPE_CHECKING:  # the map modules load when the command runs (a fast --help)
    from verified_indexing.engines.verdict import Verdict
    from verified_indexing.expr import AffineExpr
    from verified_indexing.indexing_map import IndexingMap

ENGINES = ("auto", "isl", "z3", "enum", "all")
"""The ``--engine`` choices (``verified_indexing.engines.verdict.ENGINES``; a test checks they agree)."""

EXAMPLES = """examples:
  verified-indexing prove-equal -e \\
      '(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]' \\
      -e '(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]'
  verified-indexing prove-equal -e 'd0 floordiv 4 * 4 + d0 mod 4' -e 'd0' --domain 'd0 in [-10, 10]'
  verified-indexing prove-equal a.txt b.txt --engine all --json --smt2 out/
  verified-indexing prove-equal --batch pairs.jsonl --jobs 2   (one {"a": MAP, "b": MAP} a line; JSONL out)

exit codes: 0 proved, 1 refuted (counterexample printed), 2 unknown, 3 bad input,
4 the engines or the evaluator disagree (a bug: please report it).
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "prove-equal",
        help="prove two indexing maps (or two expressions over a domain) equal, or refute with a counterexample",
        description=(
            "Prove that two indexing maps are equal (same domain, same results; pointwise when both declare the "
            "same variables, else range variables existential), or, with --domain, that two expressions are "
            "equal at every point of the domain."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_inputs(p, ["A", "B"], "A and B: files holding a map (or, with --domain, an expression), or - for standard "
               "input (inline text: -e A -e B)")
    p.add_argument(
        "--domain",
        metavar="DOMAIN",
        help="compare A and B as expressions over this domain, e.g. 'd0 in [0, 9], d1 in [0, 10], d0 + d1 in [0, 12]'",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--pointwise",
        action="store_true",
        help="compare the maps pointwise: range variables universally quantified, like dims (the default when "
        "both maps declare the same numbers of dims, range variables and runtime variables)",
    )
    how.add_argument(
        "--relation",
        action="store_true",
        help="compare the relations: range variables existential (the default when the maps declare "
        "different numbers of range variables)",
    )
    p.add_argument("--engine", choices=[e for e in ENGINES], default="auto", help="proof engine (default: auto = isl)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument("--smt2", metavar="DIR", help="also write the z3 query as an SMT-LIB 2 file into DIR")
    add_timeout(p)
    p.add_argument("--cache", metavar="PATH", help="proof cache file (default: $VERIFIED_INDEXING_CACHE or ~/.cache)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the proof cache")
    add_batch(p)
    p.set_defaults(run=run)


def _unbounded(name: str, texts: list[tuple[str, str]]) -> VerifiedIndexingError:
    """The error for a variable without bounds, positioned at its first use."""
    message = f"the variable {name} has no bounds (add '{name} in [lo, hi]' to --domain)"
    for text, source in texts:
        hit = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text)
        if hit is not None:
            return ParseError(message, text, hit.start(), len(name), source)
    return VerifiedIndexingError(f"--domain: {message}")


def _domain_map(text: str, exprs: list[AffineExpr], texts: list[tuple[str, str]] | None = None) -> IndexingMap:
    """An IndexingMap holding the variables and constraints of a --domain text.

    ``texts``: ``(text, source)`` of each expression, to position the error for a
    variable the domain does not bound."""
    from verified_indexing.expr import _Var
    from verified_indexing.indexing_map import IndexingMap
    from verified_indexing.interval import Interval
    from verified_indexing.syntax import parse_domain
    entries = parse_domain(text, source="--domain")
    bounds: dict[tuple[str, int], Interval] = {}
    constraints: list[tuple[AffineExpr, Interval]] = []
    for e, iv in entries:
        if isinstance(e, _Var):
            key = (e.kind, e.index)
            bounds[key] = bounds[key].intersect(iv) if key in bounds else iv
        else:
            constraints.append((e, iv))
    used: set[tuple[str, int]] = set(bounds)
    for e in [*exprs, *(c for c, _ in constraints)]:
        used |= set(e.variables())
    for kind, i in sorted(used - set(bounds)):
        # a variable that is used but not bounded: point at its first use
        raise _unbounded(f"{kind}{i}", [*(texts or []), (text, "--domain")])
    counts = {k: max((i + 1 for kk, i in used if kk == k), default=0) for k in ("d", "s", "rt")}
    lists: dict[str, list[Interval]] = {}
    for kind, n in counts.items():
        lists[kind] = []
        for i in range(n):
            if (kind, i) not in bounds:
                # variables are positional: a later one needs this one bounded too
                name = f"{kind}{i}"
                raise VerifiedIndexingError(
                    f"--domain: the variable {name} has no bounds (add '{name} in [lo, hi]'; "
                    f"variables are positional, so {kind}{counts[kind] - 1} needs it)"
                )
            lists[kind].append(bounds[(kind, i)])
    return IndexingMap(lists["d"], [], lists["s"], lists["rt"], constraints)


def _read_map(given: tuple[str, str], bindings: list[Any] | None = None) -> IndexingMap:
    """The map of ``arg``; XLA's full printed form is accepted: its ``runtime
    variables:`` section (each ``rtN`` bound to an instruction and a map) goes to
    ``bindings``."""
    from verified_indexing.affine_map import AffineMap
    from verified_indexing.syntax import parse_map
    text, source = given
    if "runtime variables" in text:
        from verified_indexing.hlo.audit import split_runtime_variables

        text, found = split_runtime_variables(text, source)
        if bindings is not None:
            bindings.extend(found)
    m = parse_map(text.strip(), source)
    if isinstance(m, AffineMap):
        raise VerifiedIndexingError(
            f"{source}: an MLIR affine_map has no domain; give an XLA indexing map with 'domain:' bounds"
        )
    return m


#: Why prove-equal compares pointwise by default when both maps declare the same variables.
POINTWISE_NOTE = (
    "comparing pointwise: both maps declare the same variables ({variables}), so each range variable is "
    "matched with the other map's (XLA keeps range variables as loop variables: their exact sets matter); "
    "--relation compares the relations (range variables existential)"
)


def same_variables(a: IndexingMap, b: IndexingMap) -> bool:
    """Both maps are defined and declare the same numbers of dims, range variables
    (at least one: without any, both comparisons are the same) and runtime variables."""
    return (
        a.state == b.state == "ok"
        and a.num_range_vars > 0
        and (a.num_dims, a.num_range_vars, a.num_rt_vars) == (b.num_dims, b.num_range_vars, b.num_rt_vars)
    )


def _declared(m: IndexingMap) -> str:
    def count(n: int, what: str) -> str:
        return f"{n} {what}" + ("" if n == 1 else "s")

    parts = [count(m.num_dims, "dim"), count(m.num_range_vars, "range variable")]
    if m.num_rt_vars:
        parts.append(count(m.num_rt_vars, "runtime variable"))
    return ", ".join(parts)


def _exit_code(v: Verdict) -> int:
    if v.proved:
        return 0
    if v.refuted:
        return 1
    if v.unknown:
        return 2
    return 3 if v.engine == "none" else 4


def _check_vacuity(verdict: Verdict, source: IndexingMap, timeout: float) -> Verdict:
    """A proof over an empty domain holds of nothing: say so (``vacuous``)."""
    from dataclasses import replace

    from verified_indexing.engines.api import is_empty

    if source.state != "ok" or verdict.vacuous:
        return verdict
    empty = is_empty(source, timeout=timeout)
    if not empty.proved:
        return verdict
    why = "the domain is empty (no point satisfies its bounds and constraints)"
    return replace(verdict, vacuous=True, reason="; ".join(x for x in (why, verdict.reason) if x))


def _is_expr(text: str) -> bool:
    """The old spelling of an expression: the text parses as one."""
    from verified_indexing.syntax import parse_expr
    parse_expr(text.strip(), source="<argument>")
    return True


def run(args: argparse.Namespace) -> int:
    from verified_indexing.engines.api import answer, equality_question, expr_equality_question
    from verified_indexing.engines.cache import ProofCache, default_cache
    from verified_indexing.engines.smtlib import write_smt2
    from verified_indexing.engines.subset import pointwise_equality_question
    from verified_indexing.engines.verdict import Verdict
    from verified_indexing.syntax import parse_expr

    source: IndexingMap | None = None
    relation_pair: tuple[IndexingMap, IndexingMap] | None = None
    bindings_a: list[Any] = []
    bindings_b: list[Any] = []
    if args.domain is not None:
        (ta, sa), (tb, sb) = read_inputs(args, _is_expr)
        ta, tb = ta.strip(), tb.strip()
        e1 = parse_expr(ta, source=sa)
        e2 = parse_expr(tb, source=sb)
        source = _domain_map(args.domain, [e1, e2], [(ta, sa), (tb, sb)])
        q = expr_equality_question(e1, e2, source)
    else:
        ga, gb = read_inputs(args, looks_like_map)
        a, b = _read_map(ga, bindings_a), _read_map(gb, bindings_b)
        source = a
        pointwise = args.pointwise
        if not args.pointwise and not args.relation and same_variables(a, b):
            pointwise = True
            print(f"note: {POINTWISE_NOTE.format(variables=_declared(a))}", file=sys.stderr)
        q = pointwise_equality_question(a, b) if pointwise else equality_question(a, b)
        relation_pair = (a, b) if pointwise and not args.pointwise else None
    cache: ProofCache | None
    if args.no_cache:
        cache = None
    elif args.cache:
        cache = ProofCache(args.cache)
    else:
        cache = default_cache()
    if isinstance(q, Verdict):
        verdict = q
    else:
        if args.smt2:
            if q.z3_query is None:
                print("note: no SMT-LIB query for this question (different range variables need isl)", file=sys.stderr)
            else:
                try:
                    path = write_smt2(q.z3_query(), args.smt2)
                except OSError as exc:
                    raise VerifiedIndexingError(f"--smt2 {args.smt2}: cannot write the query: {exc.strerror}") from None
                print(f"wrote {path}", file=sys.stderr)
        verdict = answer(q, args.engine, args.timeout, cache)
        if verdict.proved and source is not None:
            verdict = _check_vacuity(verdict, source, args.timeout)
    if args.domain is None and relation_pair is not None and verdict.refuted:
        rel = equality_question(*relation_pair)
        rel_verdict = rel if isinstance(rel, Verdict) else answer(rel, "auto", args.timeout, cache)
        if rel_verdict.proved:
            print(
                "note: the relations are equal (--relation proves it): the maps differ only in the values or "
                "ranges of their range variables",
                file=sys.stderr,
            )
    if cache is not None and cache.disabled:
        print(f"note: {cache.disabled_reason}", file=sys.stderr)
    extra: list[tuple[str, Verdict]] = []
    if args.domain is None and (bindings_a or bindings_b):
        extra = _compare_bindings(bindings_a, bindings_b, args.engine, args.timeout, cache)
    if args.json:
        from verified_indexing.serialize import verdict_json

        print_json(verdict_json(verdict, extra))
    else:
        print(verdict)
        for text, v in extra:
            print(f"runtime variable {text}:")
            print(v)
    codes = [_exit_code(verdict), *(_exit_code(v) for _, v in extra)]
    for worst in (4, 3, 1, 2):
        if worst in codes:
            return worst
    return 0


def _compare_bindings(a: list[Any], b: list[Any], engine: str, timeout: float, cache: Any) -> list[tuple[str, Verdict]]:
    """Each ``rtN`` of XLA's ``runtime variables:`` sections: bound to the same
    instruction by pointwise-equal maps (a binding on one side only is an error)."""
    from verified_indexing.engines.api import answer
    from verified_indexing.engines.subset import pointwise_equality_question
    from verified_indexing.engines.verdict import Verdict

    out: list[tuple[str, Verdict]] = []
    by_a, by_b = {x.index: x for x in a}, {x.index: x for x in b}
    for k in sorted(set(by_a) | set(by_b)):
        x, y = by_a.get(k), by_b.get(k)
        if x is None or y is None:
            side = "A" if x is not None else "B"
            text = f"rt{k}"
            out.append((text, Verdict("error", "none", 0.0, text, f"rt{k} is bound in {side} only")))
            continue
        text = f"rt{k} (A: {x.instruction}, B: {y.instruction})"
        if x.instruction != y.instruction:
            out.append((text, Verdict("refuted", "none", 0.0, text,
                                      f"rt{k} is bound to {x.instruction} in A and to {y.instruction} in B")))
            continue
        q = pointwise_equality_question(x.map, y.map)
        out.append((text, q if isinstance(q, Verdict) else answer(q, engine, timeout, cache)))
    return out
