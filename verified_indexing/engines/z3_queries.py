"""z3 queries for the proof questions, built with :class:`Z3Encoder`.

Each builder returns a :class:`Z3Query`: a formula that is satisfiable exactly
when the claim is false, the terms whose model values form the candidate
counterexample, and comments naming the variables and the question (for the
SMT-LIB export). :func:`solve` runs it in the query's own fresh context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from verified_indexing.engines.z3 import DEFAULT_RLIMIT, Z3Encoder, Z3Term
from verified_indexing.expr import AffineExpr
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval

__all__ = [
    "Z3Query",
    "solve",
    "pointwise_query",
    "implies_query",
    "nonempty_query",
    "injectivity_query",
    "image_outside_query",
]


SMALL = 16
"""Counterexample values up to this magnitude are not worth an optimization query."""


@dataclass
class Z3Query:
    """``formula`` is satisfiable iff the claim fails; ``extract`` lists the
    terms to read from a model, ``groups`` how many of them form each point."""

    enc: Z3Encoder
    formula: Z3Term
    extract: list[Z3Term]
    comments: list[str] = field(default_factory=list)
    bounds: list[Interval] = field(default_factory=list)
    sat_refutes: bool = True
    """False when the query is only a sufficient condition (``unsat`` proves the
    claim, ``sat`` proves nothing), e.g. the pointwise check of maps with range
    variables."""

    def assertions(self) -> list[Z3Term]:
        """The side conditions and the formula (a top-level conjunction is split)."""
        parts = list(self.formula.children()) if z3.is_and(self.formula) else [self.formula]
        return [*self.enc.side_conditions, *parts]


def solve(
    q: Z3Query, timeout: float, rlimit: int = DEFAULT_RLIMIT, minimize: bool = True
) -> tuple[str, list[int], str]:
    """``(status, values, reason)`` with status ``sat``/``unsat``/``unknown``.

    On ``sat`` with some value beyond ``SMALL`` in magnitude, a second (cheap,
    time-capped) optimization query prefers values near zero; if it does not
    finish, the first model is used.
    """
    s = q.enc.solver(timeout, rlimit)
    s.add(*q.assertions())
    r = s.check()
    if r == z3.unsat:
        return "unsat", [], ""
    if r != z3.sat:
        return "unknown", [], str(s.reason_unknown())
    model = s.model()
    values = [model.eval(x, model_completion=True).as_long() for x in q.extract]
    if minimize and q.extract and any(abs(v) > SMALL for v in values):
        opt = z3.Optimize(ctx=q.enc.ctx)
        opt.set("timeout", max(1, int(min(timeout, 1.0) * 1000)))  # min() also caps an infinite timeout
        opt.set("rlimit", rlimit)
        opt.add(*q.assertions())
        opt.minimize(z3.Sum([z3.If(x >= 0, x, -x) for x in q.extract]))
        if opt.check() == z3.sat:
            om = opt.model()
            values = [om.eval(x, model_completion=True).as_long() for x in q.extract]
    return "sat", values, ""


def _vars(enc: Z3Encoder, m: IndexingMap, prefix: str = "") -> tuple[dict[Any, Z3Term], list[Z3Term]]:
    env = enc.map_vars(m, prefix)
    order = [env[(k, i)] for k, i, _ in m.variables()]
    return env, order


def _and(enc: Z3Encoder, items: list[Z3Term]) -> Z3Term:
    return z3.And(*items) if items else z3.BoolVal(True, enc.ctx)


def _describe(m: IndexingMap, label: str) -> list[str]:
    return [f"{label}: {m.format(one_line=True)}"]


def pointwise_query(a: IndexingMap, b: IndexingMap, question: str) -> Z3Query:
    """Sat iff some point (of ``a``'s variables) is in exactly one domain, or in
    both with different results. ``a`` and ``b`` have the same variable counts."""
    enc = Z3Encoder()
    env, order = _vars(enc, a)
    diffs = [enc.expr(x, env) != enc.expr(y, env) for x, y in zip(a.results, b.results)]
    differ = z3.Or(*diffs) if diffs else z3.BoolVal(False, enc.ctx)
    same_domain = [v.bounds for _, _, v in a.variables()] == [v.bounds for _, _, v in b.variables()] and (
        a.constraints == b.constraints
    )
    if same_domain:
        # The common case (a rewrite keeps the domain): flat conjunction, easier for z3.
        formula = _and(enc, [*enc.domain(a, env), differ])
    else:
        dom_a = _and(enc, enc.domain(a, env))
        dom_b = _and(enc, enc.domain(b, env))
        formula = z3.Or(dom_a != dom_b, z3.And(dom_a, dom_b, differ))
    comments = [question, *_describe(a, "source"), *_describe(b, "target")]
    comments.append("variables: " + ", ".join(str(x) for x in order))
    comments.append("sat = a point in one domain only, or in both with different results")
    return Z3Query(enc, formula, order, comments)


def implies_query(m: IndexingMap, expr: AffineExpr, interval: Interval, question: str) -> Z3Query:
    """Sat iff some domain point puts ``expr`` outside ``interval``."""
    enc = Z3Encoder()
    env, order = _vars(enc, m)
    t = enc.expr(expr, env)
    formula = _and(enc, [*enc.domain(m, env), z3.Or(t < interval.lo, t > interval.hi)])
    comments = [question, *_describe(m, "domain"), "variables: " + ", ".join(str(x) for x in order)]
    comments.append("sat = a domain point where the expression leaves the interval")
    return Z3Query(enc, formula, order, comments)


def nonempty_query(m: IndexingMap, question: str) -> Z3Query:
    """Sat iff the domain has a point."""
    enc = Z3Encoder()
    env, order = _vars(enc, m)
    formula = _and(enc, enc.domain(m, env))
    comments = [question, *_describe(m, "map"), "variables: " + ", ".join(str(x) for x in order)]
    comments.append("sat = the domain is not empty")
    return Z3Query(enc, formula, order, comments)


def injectivity_query(m: IndexingMap, question: str) -> Z3Query:
    """Sat iff two domain points with different (dims, rt vars) have the same results
    (each point has its own range variables: the relational definition)."""
    enc = Z3Encoder()
    env1, order1 = _vars(enc, m, "p1_")
    env2, order2 = _vars(enc, m, "p2_")
    inputs = [(k, i) for k, i, _ in m.variables() if k != "s"]
    differ = z3.Or(*[env1[k] != env2[k] for k in inputs]) if inputs else z3.BoolVal(False, enc.ctx)
    same = [enc.expr(r, env1) == enc.expr(r, env2) for r in m.results]
    formula = _and(enc, [*enc.domain(m, env1), *enc.domain(m, env2), differ, *same])
    comments = [question, *_describe(m, "map"), "variables: " + ", ".join(str(x) for x in order1 + order2)]
    comments.append("sat = two different inputs with the same results")
    return Z3Query(enc, formula, order1 + order2, comments)


def image_outside_query(m: IndexingMap, box: list[Interval], question: str) -> Z3Query:
    """Sat iff some domain point has results outside ``box``."""
    enc = Z3Encoder()
    env, order = _vars(enc, m)
    outside = [z3.Or(enc.expr(r, env) < iv.lo, enc.expr(r, env) > iv.hi) for r, iv in zip(m.results, box)]
    formula = _and(enc, [*enc.domain(m, env), z3.Or(*outside) if outside else z3.BoolVal(False, enc.ctx)])
    comments = [question, *_describe(m, "map"), "sat = a domain point whose results leave the box"]
    return Z3Query(enc, formula, order, comments)


def subset_query(a: IndexingMap, b: IndexingMap, of: str, question: str) -> Z3Query:
    """Sat iff some domain point of ``a`` gives an element (``of`` = ``domain``:
    its (dims, rt vars); ``relation``: those inputs with ``a``'s results) that
    ``b`` lacks. ``b`` must have no range variables (else a quantifier would be
    needed); ``a`` and ``b`` have the same dims and rt vars (and results for
    ``relation``)."""
    if b.num_range_vars:
        raise ValueError("subset_query: the second map has range variables")
    enc = Z3Encoder()
    env, order = _vars(enc, a)
    member = enc.domain(b, env)
    if of == "relation":
        member += [enc.expr(x, env) == enc.expr(y, env) for x, y in zip(a.results, b.results)]
    formula = _and(enc, [*enc.domain(a, env), z3.Not(_and(enc, member))])
    comments = [question, *_describe(a, "source"), *_describe(b, "target")]
    comments.append("variables: " + ", ".join(str(x) for x in order))
    comments.append(f"sat = a point of the source whose {of} element the target lacks")
    return Z3Query(enc, formula, order, comments)


def preimage_query(
    m: IndexingMap, results: tuple[int, ...], inputs: tuple[tuple[int, ...], tuple[int, ...]] | None, question: str
) -> Z3Query:
    """Sat iff some domain point of ``m`` has the given ``results`` (and, when
    ``inputs = (dims, rts)`` is given, those dims and runtime variables; ``results``
    may then be empty to ask only for domain membership)."""
    enc = Z3Encoder()
    env, order = _vars(enc, m)
    conds = list(enc.domain(m, env))
    conds += [enc.expr(r, env) == v for r, v in zip(m.results, results)]
    if inputs is not None:
        d, rts = inputs
        conds += [env[("d", i)] == v for i, v in enumerate(d)]
        conds += [env[("rt", i)] == v for i, v in enumerate(rts)]
    comments = [question, *_describe(m, "map"), "sat = the element has a preimage"]
    return Z3Query(enc, _and(enc, conds), order, comments)
