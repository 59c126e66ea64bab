"""The verified simplifier: a rule catalogue (each rule proven in general in
``proofs/``) applied with bounds, every result proven equal to its input.

Public names: :func:`simplify`, :func:`simplify_with_report`,
:func:`simplify_expr`, :class:`SimplifyReport`, :data:`RULES`, :class:`Rule`, :class:`Lemma`,
:func:`prove_rule`, :func:`check_user_rule`, :func:`cost`.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from verified_indexing.simplify.api import SimplifyReport, simplify, simplify_expr, simplify_with_report
from verified_indexing.simplify.cost import cost, map_cost
from verified_indexing.simplify.engine import Step
from verified_indexing.simplify.rules import RULES, Lemma, Rule, rule_by_name

__all__ = [
    "RULES",
    "Lemma",
    "Rule",
    "SimplifyReport",
    "Step",
    "check_user_rule",
    "cost",
    "map_cost",
    "prove_rule",
    "rule_by_name",
    "simplify",
    "simplify_expr",
    "simplify_with_report",
]


def prove_rule(rule: Rule, *, timeout: float = 10.0) -> Any:
    """The general theorem of ``rule`` proven by z3 for all integers: a
    :class:`~verified_indexing.engines.Verdict` (see ``proofs/``)."""
    from verified_indexing.proofs.theorems import prove_rule as _prove

    return _prove(rule, timeout=timeout)


def check_user_rule(
    text: str, where: str = "", domain: str = "", *, timeout: float = 10.0, lemmas: Sequence[str] = ()
) -> Any:
    """Prove a user's rewrite ``"LHS -> RHS"`` (symbolic constants ``c0, c1, ...``,
    variables ``x, y, z`` or ``d0, s0, ...``) under ``where`` side conditions and
    ``domain`` bounds: a Verdict (proved / refuted with a confirmed
    counterexample / unknown with the reason). ``lemmas`` are proof hints, each
    proven before it is assumed."""
    from verified_indexing.proofs.user_rule import check_user_rule as _check

    return _check(text, where=where, domain=domain, timeout=timeout, lemmas=lemmas)


if TYPE_CHECKING:
    from verified_indexing.indexing_map import IndexingMap


class _CallableModule(types.ModuleType):
    """This package is also the function :func:`simplify`: ``from verified_indexing import simplify``
    gives the package (Python binds a subpackage's name in its parent), and calling it simplifies, so
    ``simplify(m)`` and ``simplify.simplify_with_report(m)`` both work."""

    def __call__(self, m: IndexingMap, *, verify: bool = True, timeout: float = 10.0) -> IndexingMap:
        return simplify(m, verify=verify, timeout=timeout)


sys.modules[__name__].__class__ = _CallableModule
