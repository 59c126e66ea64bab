"""The general theorems of the simplifier's rule catalogue, proven by z3.

``python -m verified_indexing.proofs`` (and ``verified-indexing prove-rules``) proves every rule of
:data:`verified_indexing.simplify.RULES` and prints a table (rule, verdict, time);
it exits nonzero when a rule is refuted, errors, or is unknown without passing
evidence. :func:`prove_all` is the same as a function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verified_indexing.engines import Verdict
from verified_indexing.proofs.theorems import Evidence, LemmaResult, prove_rule, prove_rule_detailed
from verified_indexing.simplify.rules import RULES, Rule

__all__ = ["Evidence", "LemmaResult", "RuleResult", "prove_all", "format_table", "table_ok", "prove_rule",
           "prove_rule_detailed"]


@dataclass(frozen=True)
class RuleResult:
    """One row of the table: the rule, its verdict, the verdicts of its lemmas
    (proof hints, empty when it has none) and, when the general proof is unknown,
    the exhaustive evidence (``None`` otherwise)."""

    rule: Rule
    verdict: Verdict
    evidence: Evidence | None = None
    lemmas: tuple[LemmaResult, ...] = ()

    @property
    def ok(self) -> bool:
        """Proved, or unknown with passing exhaustive evidence."""
        if self.verdict.proved:
            return True
        return self.verdict.unknown and self.evidence is not None and self.evidence.passed


def prove_all(rules: Sequence[Rule] = RULES, *, timeout: float = 10.0) -> list[RuleResult]:
    """Prove every rule (one fresh z3 context per query)."""
    out = []
    for r in rules:
        p = prove_rule_detailed(r, timeout=timeout)
        out.append(RuleResult(r, p.verdict, p.evidence, p.lemmas))
    return out


def table_ok(results: Sequence[RuleResult]) -> bool:
    return all(r.ok for r in results)


def format_table(results: Sequence[RuleResult], *, times: bool | None = None) -> str:
    """The table: rule, family, verdict, time (ms), statement; then the reasons,
    counterexamples and a summary line. ``times``: show the times (default: unless
    ``--no-timing``, see :mod:`verified_indexing._timing`)."""
    if times is None:
        from verified_indexing._timing import show_timing

        times = show_timing()
    w = max([len(r.rule.name) for r in results] + [4])
    lines = [f"{'rule':<{w}}  {'family':<9}  {'verdict':<8}  {'ms':>7}  statement"]
    for r in results:
        ms = f"{r.verdict.seconds * 1000:7.1f}" if times else "      -"
        hint = f"  (via {len(r.lemmas)} lemmas)" if r.verdict.proved and r.lemmas else ""
        lines.append(f"{r.rule.name:<{w}}  {r.rule.family:<9}  {r.verdict.status:<8}  {ms}  "
                     f"{r.rule.text}  if {r.rule.where}{hint}")
    for r in results:
        if r.verdict.proved and r.lemmas:
            lines.append("")
            lines.append(f"{r.rule.name}: proved with {len(r.lemmas)} lemmas, each proven by z3 first:")
            lines += [f"  {lm.name}: {lm.text}  [{lm.verdict.status}]" for lm in r.lemmas]
    for r in results:
        if not r.verdict.proved:
            lines.append("")
            lines.append(f"{r.rule.name}: {r.verdict.status}" + (f": {r.verdict.reason}" if r.verdict.reason else ""))
            if r.verdict.counterexample is not None:
                lines += ["  " + x for x in r.verdict.counterexample.lines()]
    proved = sum(1 for r in results if r.verdict.proved)
    unknown = sum(1 for r in results if r.verdict.unknown)
    bad = len(results) - proved - unknown
    total = sum(r.verdict.seconds for r in results)
    lines.append("")
    lines.append(f"{len(results)} rules: {proved} proved, {unknown} unknown (with evidence: "
                 f"{sum(1 for r in results if r.verdict.unknown and r.ok)}), {bad} refuted or error"
                 + (f"; {total:.2f} s" if times else ""))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m verified_indexing.proofs [OPTIONS]``: the same as ``verified-indexing prove-rules
    [OPTIONS]`` (its options, ``--help`` and exit codes: 0 when every rule is proved or has passing
    evidence, 1 otherwise, 3 for a bad command line)."""
    import sys

    from verified_indexing.cli import main as cli_main

    return cli_main(["prove-rules", *(sys.argv[1:] if argv is None else argv)])
