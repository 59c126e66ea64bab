"""The general theorem of each catalogue rule, proven by z3.

For a rule ``lhs -> rhs if condition`` over pattern variables ``x, y, ...`` (each
with a range ``lo.x <= x <= hi.x``) and rule constants ``c, k, ...``, the theorem is

    for all integers x, y, ..., lo.x, hi.x, ..., c, k, ...:
        condition and lo.x <= x <= hi.x and ...  ->  lhs == rhs

built by evaluating the rule's own statement functions (the ones the simplifier
uses) in a z3 algebra over :class:`~verified_indexing.engines.z3.Z3Encoder`, the
project's single z3 encoding of the integer semantics. Two queries per rule:

1. definedness: the condition implies every divisor in ``lhs`` and ``rhs`` is
   nonzero (otherwise the encoder's side conditions would make the claim vacuous);
2. the claim itself (unsat of its negation = proved).

A satisfying model is re-evaluated with plain Python integers (``floor_div`` and
``floor_mod``, the evaluator's semantics) before it is reported as a
counterexample. When z3 answers unknown, :func:`exhaustive_evidence` checks every
instance with small constants and values and the verdict says so in its reason.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from verified_indexing.engines import Counterexample, Verdict, Z3Encoder
from verified_indexing.simplify.rules import INT_ALGEBRA, Algebra, IntAlgebra, Rule

__all__ = [
    "Evidence",
    "INT_ALGEBRA",
    "IntAlgebra",
    "LemmaResult",
    "RuleProof",
    "Z3Algebra",
    "exhaustive_evidence",
    "prove_rule",
    "prove_rule_detailed",
    "rule_question",
]


@dataclass(frozen=True)
class Evidence:
    """The weaker evidence for a rule whose general proof is unknown: every
    instance with constants in ``[-const_bound, const_bound]`` and values in
    ``[-value_bound, value_bound]`` was evaluated with plain integers.

    ``passed`` is True when all ``instances`` (those satisfying the side
    condition) gave equal sides; otherwise ``counterexample`` is the first failure.
    """

    passed: bool
    instances: int
    const_bound: int
    value_bound: int
    counterexample: Counterexample | None = None

    @property
    def text(self) -> str:
        if not self.passed:
            return "exhaustive check found a counterexample"
        return (f"checked all {self.instances} instances with constants in [-{self.const_bound}, "
                f"{self.const_bound}] and values in [-{self.value_bound}, {self.value_bound}]")


@dataclass(frozen=True)
class LemmaResult:
    """The verdict of one proof hint (see :class:`~verified_indexing.simplify.rules.Lemma`)."""

    name: str
    text: str
    verdict: Verdict


@dataclass(frozen=True)
class RuleProof:
    """Everything :func:`prove_rule_detailed` found: the rule's verdict, the
    verdicts of its lemmas (in order; empty when the rule has none), and the
    exhaustive evidence when the general proof is unknown."""

    verdict: Verdict
    lemmas: tuple[LemmaResult, ...] = ()
    evidence: Evidence | None = None
    lemma_proof: bool = field(default=False)
    """True when the claim was proven with the (all proven) lemmas as hypotheses."""


class Z3Algebra(Algebra):
    """Rule statements as z3 terms (constants and variables symbolic)."""

    def __init__(self, enc: Z3Encoder) -> None:
        self.enc = enc
        self.z3 = enc.z3
        self.divisors: list[Any] = []

    def lit(self, value: int) -> Any:
        return self.enc.int_val(value)

    def const(self, k: Any) -> Any:
        return self.enc.term(k)

    def add(self, *terms: Any) -> Any:
        out = self.enc.int_val(0)
        for t in terms:
            out = out + self.enc.term(t)
        return out

    def scale(self, term: Any, k: Any) -> Any:
        return self.enc.term(term) * k

    def fdiv(self, term: Any, k: Any) -> Any:
        self.divisors.append(k)
        return self.enc.floordiv(term, k)

    def mod(self, term: Any, k: Any) -> Any:
        self.divisors.append(k)
        return self.enc.mod(term, k)

    def min(self, a: Any, b: Any) -> Any:
        return self.enc.min(a, b)

    def max(self, a: Any, b: Any) -> Any:
        return self.enc.max(a, b)

    def all(self, *conds: Any) -> Any:
        return self.z3.And(*[self._bool(c) for c in conds])

    def any(self, *conds: Any) -> Any:
        return self.z3.Or(*[self._bool(c) for c in conds])

    def _bool(self, c: Any) -> Any:
        if isinstance(c, bool):
            return self.z3.BoolVal(c, self.enc.ctx)
        return c




def rule_question(rule: Rule) -> str:
    where = f" if {rule.where}" if rule.where else ""
    return f"rule {rule.name}: {rule.text}{where}, for all integers"


def evaluate_instance(
    rule: Rule, values: Mapping[str, int], constants: Mapping[str, int], ranges: Mapping[str, tuple[int, int]]
) -> tuple[bool, int, int] | None:
    """``(condition, lhs, rhs)`` on plain integers, or None when a divisor is 0."""
    v = SimpleNamespace(**values)
    k = SimpleNamespace(**constants)
    lo = SimpleNamespace(**{n: r[0] for n, r in ranges.items()})
    hi = SimpleNamespace(**{n: r[1] for n, r in ranges.items()})
    cond = bool(rule.condition(INT_ALGEBRA, k, lo, hi))
    in_range = all(ranges[n][0] <= values[n] <= ranges[n][1] for n in ranges)
    if not (cond and in_range):
        return False, 0, 0
    try:
        return True, int(rule.lhs(INT_ALGEBRA, v, k)), int(rule.rhs(INT_ALGEBRA, v, k))
    except ArithmeticError:
        return None
    except ValueError:
        return None


def prove_rule(rule: Rule, *, timeout: float = 10.0, evidence: bool = True) -> Verdict:
    """Prove the rule's general theorem (see the module docstring).

    Returns ``proved`` (engine ``z3``), ``refuted`` with an evaluator-confirmed
    counterexample, ``unknown`` (with, when ``evidence``, the exhaustive check's
    outcome in the reason; the status stays ``unknown``), or ``error``.
    :func:`prove_rule_detailed` also returns the lemmas' verdicts and the evidence.
    """
    return prove_rule_detailed(rule, timeout=timeout, evidence=evidence).verdict


def prove_rule_detailed(rule: Rule, *, timeout: float = 10.0, evidence: bool = True) -> RuleProof:
    """:func:`prove_rule` with its details.

    When the rule has lemmas (proof hints), each lemma is proven in turn under the
    rule's hypotheses and the lemmas before it (every query in the same z3
    context, with the same quotient and remainder definitions); when all are
    proved, the claim is proven with them as extra hypotheses. That is sound: each
    lemma holds wherever the hypotheses hold, so adding it removes no point. When a
    lemma is not proved, the claim is attempted without the lemmas.
    """
    start = time.perf_counter()
    question = rule_question(rule)
    enc = Z3Encoder()
    z3 = enc.z3
    A = Z3Algebra(enc)
    xs = {n: enc.int_var(n) for n in rule.variables}
    ks = {n: enc.int_var(n) for n in rule.constants}
    los = {n: enc.int_var(f"lo.{n}") for n in rule.variables}
    his = {n: enc.int_var(f"hi.{n}") for n in rule.variables}
    cond = A._bool(rule.condition(A, SimpleNamespace(**ks), SimpleNamespace(**los), SimpleNamespace(**his)))
    hyps = [cond]
    if rule.uses_ranges:
        hyps += [z3.And(los[n] <= xs[n], xs[n] <= his[n]) for n in rule.variables]
    lhs = rule.lhs(A, SimpleNamespace(**xs), SimpleNamespace(**ks))
    rhs = rule.rhs(A, SimpleNamespace(**xs), SimpleNamespace(**ks))
    # Every term is built before the first query, so each query sees the same
    # (complete) definitions of the auxiliary quotients and remainders.
    lemma_terms = [(lm, A._bool(lm.statement(A, SimpleNamespace(**xs), SimpleNamespace(**ks))))
                   for lm in rule.lemmas]

    def elapsed() -> float:
        return time.perf_counter() - start

    # 1. Definedness: no divisor may be zero under the hypotheses.
    if A.divisors:
        s = enc.solver(timeout=timeout)
        s.add(*hyps, z3.Or(*[enc.term(d) == 0 for d in A.divisors]))
        r = s.check()
        if r == z3.sat:
            model = s.model()
            vals = tuple((str(n), model.eval(t, model_completion=True).as_long()) for n, t in ks.items())
            return RuleProof(Verdict("error", "z3", elapsed(), question,
                                     reason=f"the side condition allows a zero divisor (constants {dict(vals)})"))
        if r != z3.unsat:
            return _unknown(rule, question, elapsed(), f"definedness query: {s.reason_unknown()}", evidence, ())
    # 2. The lemmas, in order.
    lemma_results: list[LemmaResult] = []
    proven: list[Any] = []
    for lm, term in lemma_terms:
        t0 = time.perf_counter()
        s = enc.solver(timeout=timeout)
        s.add(*hyps, *enc.side_conditions, *proven, z3.Not(term))
        r = s.check()
        ce: Counterexample | None = None
        if r == z3.unsat:
            status, why = "proved", ""
        elif r == z3.sat:
            # A refuted lemma must be confirmed by plain integers, like any counterexample.
            model = s.model()
            values = {n: int(model.eval(t, model_completion=True).as_long()) for n, t in xs.items()}
            consts = {n: int(model.eval(t, model_completion=True).as_long()) for n, t in ks.items()}
            try:
                holds = bool(lm.statement(INT_ALGEBRA, SimpleNamespace(**values), SimpleNamespace(**consts)))
            except (ArithmeticError, ValueError):
                holds = True
            if holds:
                status, why = "unknown", "z3's model of the negation is not confirmed by plain integers"
            else:
                status, why = "refuted", "the lemma is false"
                ce = Counterexample("results", tuple(consts.items()) + tuple(values.items()), note="the lemma is false")
        else:
            status, why = "unknown", str(s.reason_unknown())
        lemma_results.append(LemmaResult(lm.name, lm.text, Verdict(
            status, "z3", time.perf_counter() - t0, f"lemma {lm.name}: {lm.text}", reason=why,  # type: ignore[arg-type]
            counterexample=ce)))
        if r != z3.unsat:
            break
        proven.append(term)
    use_lemmas = bool(lemma_terms) and len(proven) == len(lemma_terms)
    lemmas_done = tuple(lemma_results)
    # 3. The claim.
    s = enc.solver(timeout=timeout)
    s.add(*hyps, *enc.side_conditions, *(proven if use_lemmas else ()), lhs != rhs)
    r = s.check()
    if r == z3.unsat:
        why = f"with {len(proven)} lemmas, each proven by z3" if use_lemmas else ""
        return RuleProof(Verdict("proved", "z3", elapsed(), question, reason=why), lemmas_done, None, use_lemmas)
    if r == z3.sat:
        model = s.model()

        def val(t: Any) -> int:
            return int(model.eval(t, model_completion=True).as_long())

        values = {n: val(t) for n, t in xs.items()}
        consts = {n: val(t) for n, t in ks.items()}
        ranges = {n: (val(los[n]), val(his[n])) for n in rule.variables} if rule.uses_ranges else {}
        if not rule.uses_ranges:
            ranges_eval = {n: (values[n], values[n]) for n in rule.variables}
        else:
            ranges_eval = ranges
        inst = evaluate_instance(rule, values, consts, ranges_eval)
        if inst is None or not inst[0] or inst[1] == inst[2]:
            return RuleProof(Verdict("error", "z3", elapsed(), question,
                                     reason="encoding disagrees with evaluator: z3's counterexample does not hold"),
                             lemmas_done)
        shown = [(f"{n}", v) for n, v in consts.items()] + [(n, v) for n, v in values.items()]
        shown += [(f"lo.{n}", r_[0]) for n, r_ in ranges.items()] + [(f"hi.{n}", r_[1]) for n, r_ in ranges.items()]
        ce = Counterexample(
            kind="results",
            values=tuple(shown),
            source=(inst[1],),
            target=(inst[2],),
            note="the side condition holds but the two sides differ",
        )
        return RuleProof(Verdict("refuted", "z3", elapsed(), question, counterexample=ce), lemmas_done)
    return _unknown(rule, question, elapsed(), s.reason_unknown(), evidence, lemmas_done)


def _unknown(
    rule: Rule, question: str, seconds: float, why: str, evidence: bool, lemmas: tuple[LemmaResult, ...]
) -> RuleProof:
    reason = f"z3: {why}"
    failed = [lm for lm in lemmas if not lm.verdict.proved]
    if failed:
        reason += f" (lemma {failed[0].name} not proved: {failed[0].verdict.status})"
    if evidence:
        ev = exhaustive_evidence(rule)
        if ev.counterexample is not None:
            return RuleProof(Verdict("refuted", "enum", seconds, question, counterexample=ev.counterexample),
                             lemmas, ev)
        reason += f"; evidence: {ev.text}"
        return RuleProof(Verdict("unknown", "z3", seconds, question, reason=reason), lemmas, ev)
    return RuleProof(Verdict("unknown", "z3", seconds, question, reason=reason), lemmas, None)


def exhaustive_evidence(rule: Rule, budget: int = 300_000) -> Evidence:
    """Check every instance with constants in ``[-B, B]`` and variable values in
    ``[-V, V]`` (ranges: each value as its own one-point range, the instances the
    engine can meet most often), ``B`` and ``V`` chosen to fit ``budget``
    evaluations. A failure carries a counterexample confirmed by plain integers."""
    nc, nv = len(rule.constants), len(rule.variables)
    bound_c, bound_v = 64, 64
    while (2 * bound_c + 1) ** nc * (2 * bound_v + 1) ** nv > budget and (bound_c > 2 or bound_v > 2):
        if bound_c >= bound_v:
            bound_c -= 1
        else:
            bound_v -= 1
    count = 0
    for cvals in itertools.product(range(-bound_c, bound_c + 1), repeat=nc):
        consts = dict(zip(rule.constants, cvals))
        for vvals in itertools.product(range(-bound_v, bound_v + 1), repeat=nv):
            values = dict(zip(rule.variables, vvals))
            ranges = {n: (x, x) for n, x in values.items()}
            inst = evaluate_instance(rule, values, consts, ranges)
            if inst is None or not inst[0]:
                continue
            count += 1
            if inst[1] != inst[2]:
                shown = tuple(consts.items()) + tuple(values.items())
                ce = Counterexample("results", shown, (inst[1],), (inst[2],), note="found by exhaustive check")
                return Evidence(False, count, bound_c, bound_v, ce)
    return Evidence(True, count, bound_c, bound_v)
