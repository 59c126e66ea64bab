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
from types import SimpleNamespace
from typing import Any

from verified_indexing.engines import Counterexample, Verdict, Z3Encoder
from verified_indexing.expr import floor_div, floor_mod
from verified_indexing.simplify.rules import Algebra, Rule

__all__ = ["Z3Algebra", "IntAlgebra", "prove_rule", "exhaustive_evidence", "rule_question"]


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


class IntAlgebra(Algebra):
    """Rule statements on plain integers, with the evaluator's semantics."""

    def lit(self, value: int) -> int:
        return value

    def const(self, k: Any) -> int:
        return int(k)

    def add(self, *terms: Any) -> int:
        return sum(int(t) for t in terms)

    def scale(self, term: Any, k: Any) -> int:
        return int(term) * int(k)

    def fdiv(self, term: Any, k: Any) -> int:
        return floor_div(int(term), int(k))

    def mod(self, term: Any, k: Any) -> int:
        return floor_mod(int(term), int(k))

    def min(self, a: Any, b: Any) -> int:
        return min(int(a), int(b))

    def max(self, a: Any, b: Any) -> int:
        return max(int(a), int(b))

    def all(self, *conds: Any) -> bool:
        return all(bool(c) for c in conds)

    def any(self, *conds: Any) -> bool:
        return any(bool(c) for c in conds)


INT_ALGEBRA = IntAlgebra()


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
            return Verdict("error", "z3", elapsed(), question,
                           reason=f"the side condition allows a zero divisor (constants {dict(vals)})")
        if r != z3.unsat:
            return _unknown(rule, question, elapsed(), f"definedness query: {s.reason_unknown()}", evidence)
    # 2. The claim.
    s = enc.solver(timeout=timeout)
    s.add(*hyps, *enc.side_conditions, lhs != rhs)
    r = s.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", elapsed(), question)
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
            return Verdict("error", "z3", elapsed(), question,
                           reason="encoding disagrees with evaluator: z3's counterexample does not hold")
        shown = [(f"{n}", v) for n, v in consts.items()] + [(n, v) for n, v in values.items()]
        shown += [(f"lo.{n}", r_[0]) for n, r_ in ranges.items()] + [(f"hi.{n}", r_[1]) for n, r_ in ranges.items()]
        ce = Counterexample(
            kind="results",
            values=tuple(shown),
            source=(inst[1],),
            target=(inst[2],),
            note="the side condition holds but the two sides differ",
        )
        return Verdict("refuted", "z3", elapsed(), question, counterexample=ce)
    return _unknown(rule, question, elapsed(), s.reason_unknown(), evidence)


def _unknown(rule: Rule, question: str, seconds: float, why: str, evidence: bool) -> Verdict:
    reason = f"z3: {why}"
    if evidence:
        _ok, text, ce = exhaustive_evidence(rule)
        if ce is not None:
            return Verdict("refuted", "enum", seconds, question, counterexample=ce)
        reason += f"; evidence: {text}"
    return Verdict("unknown", "z3", seconds, question, reason=reason)


def exhaustive_evidence(rule: Rule, budget: int = 300_000) -> tuple[bool, str, Counterexample | None]:
    """Check every instance with constants in ``[-B, B]`` and variable values in
    ``[-V, V]`` (ranges: each value as its own one-point range, the instances the
    engine can meet most often), ``B`` and ``V`` chosen to fit ``budget``
    evaluations. Returns (all passed, a description, a counterexample or None)."""
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
                return False, "", ce
    return True, f"checked all {count} instances with constants in [-{bound_c}, {bound_c}] and values in " \
        f"[-{bound_v}, {bound_v}]", None
