"""The general theorems of the simplifier's domain steps (:mod:`verified_indexing.simplify.domain_rules`).

For a domain rule over the value ``x`` and constants ``k...`` the theorem is::

    for all integers x, k...:  condition(k) and hypothesis(x, k)  ->  (before(x, k) <-> after(x, k))

built by evaluating the rule's own functions (the ones the engine computes its intervals and side
conditions with) in :class:`~verified_indexing.proofs.theorems.Z3Algebra`, the project's one z3 encoding
of floor division. Two queries, as for the rewrite rules: no divisor is zero under the condition, then
the negation of the claim is unsatisfiable. A model of the negation is re-evaluated with plain integers
before it is reported as a counterexample (else the verdict is ``error``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from verified_indexing.engines import Counterexample, Verdict, Z3Encoder
from verified_indexing.proofs.theorems import INT_ALGEBRA, Z3Algebra
from verified_indexing.simplify.domain_rules import DOMAIN_RULES, DomainRule

__all__ = ["prove_domain_rule", "prove_domain_rules", "evaluate_domain_instance"]


def _question(rule: DomainRule) -> str:
    where = f" if {rule.where}" if rule.where else ""
    return f"domain rule {rule.name}: {rule.text}{where}, for all integers"


def evaluate_domain_instance(rule: DomainRule, x: int, constants: dict[str, int]) -> tuple[bool, bool, bool] | None:
    """``(condition and hypothesis, before, after)`` on plain integers (``None``: a zero divisor)."""
    v, k = SimpleNamespace(x=x), SimpleNamespace(**constants)
    try:
        ok = bool(rule.condition(INT_ALGEBRA, k)) and (
            rule.hypothesis is None or bool(rule.hypothesis(INT_ALGEBRA, v, k)))
        if not ok:
            return False, False, False
        return True, bool(rule.before(INT_ALGEBRA, v, k)), bool(rule.after(INT_ALGEBRA, v, k))
    except (ArithmeticError, ValueError):
        return None


def prove_domain_rule(rule: DomainRule, *, timeout: float = 10.0) -> Verdict:
    """Prove ``rule``'s theorem (module docstring): ``proved`` (engine ``z3``), ``refuted`` with a
    counterexample confirmed by plain integers, ``unknown`` or ``error``."""
    start = time.perf_counter()
    question = _question(rule)
    enc = Z3Encoder()
    z3 = enc.z3
    A = Z3Algebra(enc)
    x = enc.int_var("x")
    ks = {n: enc.int_var(n) for n in rule.constants}
    v, k = SimpleNamespace(x=x), SimpleNamespace(**ks)
    hyps = [A._bool(rule.condition(A, k))]
    if rule.hypothesis is not None:
        hyps.append(A._bool(rule.hypothesis(A, v, k)))
    before = A._bool(rule.before(A, v, k))
    after = A._bool(rule.after(A, v, k))
    if A.divisors:
        s = enc.solver(timeout=timeout)
        s.add(*hyps, z3.Or(*[enc.term(d) == 0 for d in A.divisors]))
        r = s.check()
        if r == z3.sat:
            return Verdict("error", "z3", time.perf_counter() - start, question,
                           reason="the side condition allows a zero divisor")
        if r != z3.unsat:
            return Verdict("unknown", "z3", time.perf_counter() - start, question,
                           reason=f"definedness query: {s.reason_unknown()}")
    s = enc.solver(timeout=timeout)
    s.add(*hyps, *enc.side_conditions, before != after)
    r = s.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", time.perf_counter() - start, question)
    if r == z3.sat:
        model = s.model()

        def val(t: Any) -> int:
            return int(model.eval(t, model_completion=True).as_long())

        xv, consts = val(x), {n: val(t) for n, t in ks.items()}
        inst = evaluate_domain_instance(rule, xv, consts)
        if inst is None or not inst[0] or inst[1] == inst[2]:
            return Verdict("error", "z3", time.perf_counter() - start, question,
                           reason="encoding disagrees with evaluator: z3's counterexample does not hold")
        ce = Counterexample("results", (*consts.items(), ("x", xv)), (int(inst[1]),), (int(inst[2]),),
                            note="the side condition holds but the constraints before and after differ")
        return Verdict("refuted", "z3", time.perf_counter() - start, question, counterexample=ce)
    return Verdict("unknown", "z3", time.perf_counter() - start, question, reason=f"z3: {s.reason_unknown()}")


def prove_domain_rules(rules: Sequence[DomainRule] = DOMAIN_RULES, *, timeout: float = 10.0
                       ) -> list[tuple[DomainRule, Verdict]]:
    """Every domain rule with its verdict (one fresh z3 context per rule)."""
    return [(r, prove_domain_rule(r, timeout=timeout)) for r in rules]
