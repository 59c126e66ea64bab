"""A matcher compiled from the rule catalogue: one decision tree keyed on node kinds.

The rules stay stated once (:mod:`verified_indexing.simplify.rules`: the same ``lhs`` functions drive
each rule's z3 proof in ``proofs/``). Here each rule's ``lhs`` is evaluated once with a *pattern
algebra* (:class:`PatternAlgebra`), which records the shape it builds (``fdiv(add(fdiv(x, a), y), b)``
for ``div_fold_inner``); from those shapes a decision tree is generated as Python source, in the style
of Halide's simplifier: the node's class first, then the class of a division's dividend, then which
kinds of division / ``min`` / ``max`` terms a sum holds (a bit mask). Each leaf is the tuple of rules,
in catalogue order, whose shape can match a node with those kinds (intersected with the node classes
each matcher declares, :func:`~verified_indexing.simplify.rules.rule_heads`). So a node is inspected
once to find its candidate rules, not once per rule: on a linear sum no ``recombine`` or
``..._in_sum`` matcher runs, on ``x floordiv c`` with ``x`` a variable no rule that needs a sum or a
nested division does.

The tree only *selects* rules: each candidate's own matcher still proposes bindings, and the engine
still applies a rule only when the instantiated ``lhs`` is exactly the node, its side condition holds
with sound ranges and the result is cheaper. So a wrong leaf could only miss a rewrite, never make a
wrong one; ``tests/test_simplify_matcher.py`` checks that the compiled matcher and the rule-by-rule
matcher give the same rewrite on every catalogue rule's left-hand side and on random expressions.

The source is generated on first use (a few milliseconds, not at import: start-up stays light) and
kept in the process; :func:`matcher_source` returns it (``python -m
verified_indexing.simplify.matcher`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from verified_indexing.expr import AffineExpr, CeilDiv, Const, Dim, FloorDiv, Max, Min, Mod, RtSym, Sum, Sym
from verified_indexing.simplify.rules import (
    RULES,
    Algebra,
    Rule,
    rule_fires_on_positive_divisor,
    rule_fires_on_variable_dividend,
    rule_heads,
)

__all__ = ["Pattern", "PatternAlgebra", "pattern_of", "compiled_candidates", "matcher_source"]

# -- patterns ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """The shape of a rule's left-hand side: ``op`` is ``var``, ``const``, ``add``, ``scale`` or a
    node class name (``FloorDiv``, ``Mod``, ``CeilDiv``, ``Min``, ``Max``); ``args`` the sub-patterns."""

    op: str
    args: tuple[Pattern, ...] = ()
    name: str = ""

    def __str__(self) -> str:
        if self.op in ("var", "const"):
            return self.name or self.op
        return f"{self.op}({', '.join(str(a) for a in self.args)})"


class _Sym:
    """A symbolic rule constant: arithmetic on it stays symbolic (patterns ignore constants' values)."""

    def _same(self, *_: Any) -> _Sym:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = _same

    def __neg__(self) -> _Sym:
        return self

    def __int__(self) -> int:  # (never read by the pattern algebra)
        raise TypeError("a symbolic rule constant has no value")


_CONST = Pattern("const")


class PatternAlgebra(Algebra):
    """The algebra whose terms are :class:`Pattern`: evaluating a rule's ``lhs`` with it gives the
    rule's shape (conditions are not traced: every condition is ``True`` here)."""

    def lit(self, value: int) -> Pattern:
        return _CONST

    def const(self, k: Any) -> Pattern:
        return _CONST

    def add(self, *terms: Any) -> Pattern:
        return Pattern("add", tuple(terms))

    def scale(self, term: Any, k: Any) -> Pattern:
        return Pattern("scale", (term,))

    def fdiv(self, term: Any, k: Any) -> Pattern:
        return Pattern("FloorDiv", (term,))

    def mod(self, term: Any, k: Any) -> Pattern:
        return Pattern("Mod", (term,))

    def cdiv(self, term: Any, k: Any) -> Pattern:
        return Pattern("CeilDiv", (term,))

    def min(self, a: Any, b: Any) -> Pattern:
        return Pattern("Min", (a, b))

    def max(self, a: Any, b: Any) -> Pattern:
        return Pattern("Max", (a, b))

    def all(self, *conds: Any) -> bool:
        return True

    def any(self, *conds: Any) -> bool:
        return True


def pattern_of(rule: Rule) -> Pattern:
    """The shape of ``rule``'s left-hand side (its ``lhs`` evaluated with :class:`PatternAlgebra`)."""
    v = SimpleNamespace(**{n: Pattern("var", name=n) for n in rule.variables})
    k = SimpleNamespace(**{n: _Sym() for n in rule.constants})
    out = rule.lhs(PatternAlgebra(), v, k)
    if not isinstance(out, Pattern):
        raise TypeError(f"rule {rule.name}: its lhs is not a term")
    return out


# -- node kinds ----------------------------------------------------------------------------------------

_STRUCTURED = ("FloorDiv", "Mod", "CeilDiv", "Min", "Max")
_BIT = {"FloorDiv": 1, "Mod": 2, "CeilDiv": 4, "Min": 8, "Max": 8}
"""A sum's mask: one bit per kind of term it holds (``min`` and ``max`` share one)."""
_MASKS = range(16)
_CLASSES: dict[str, type] = {"Const": Const, "Dim": Dim, "Sym": Sym, "RtSym": RtSym, "Sum": Sum,
                             "FloorDiv": FloorDiv, "Mod": Mod, "CeilDiv": CeilDiv, "Min": Min, "Max": Max}
_DIVS = ("FloorDiv", "Mod", "CeilDiv")
_VARIABLES = ("Dim", "Sym", "RtSym")


def _head(p: Pattern) -> str | None:
    """The node class a term of a sum must have for ``p`` (``None``: any)."""
    while p.op == "scale":
        p = p.args[0]
    return p.op if p.op in _STRUCTURED else None


def _accepts(p: Pattern, cls: str, mask: int) -> bool:
    """Whether a node of class ``cls`` (a sum: holding the term kinds ``mask``) can be an instance of
    ``p`` (over-approximated: only the node's own kind and, for a sum, its terms' kinds are read)."""
    if p.op in ("var", "const"):
        return True
    if p.op in _STRUCTURED:
        return cls == p.op
    if p.op == "scale":
        h = _head(p.args[0])
        return _accepts(p.args[0], cls, mask) or (cls == "Sum" and (h is None or bool(mask & _BIT[h])))
    # add
    heads = [h for h in (_head(t) for t in p.args) if h is not None]
    if not heads:
        return True
    need = 0
    for h in heads:
        need |= _BIT[h]
    return (cls == "Sum" and mask & need == need) or (len(heads) == 1 and cls == heads[0])


def _fires_on(rule: Rule, p: Pattern, cls: str, mask: int, child: tuple[str, int] | None) -> bool:
    """Whether ``rule`` (shape ``p``) is a candidate for a node of class ``cls`` (sum mask ``mask``)
    whose dividend (for a division) has kind ``child``."""
    heads = rule_heads(rule)
    if heads is not None and not issubclass(_CLASSES[cls], heads):
        return False
    if p.op in _DIVS:
        if cls != p.op:
            return False
        return child is None or _accepts(p.args[0], *child)
    return _accepts(p, cls, mask)


# -- the generated tree --------------------------------------------------------------------------------


def _generate(rules: Sequence[Rule]) -> tuple[str, list[tuple[Rule, ...]]]:
    """The decision tree's Python source and its leaves (tuples of rules, referenced as ``_L[i]``)."""
    pats = [pattern_of(r) for r in rules]
    leaves: list[tuple[Rule, ...]] = []
    index: dict[tuple[int, ...], int] = {}

    def leaf(cls: str, mask: int, child: tuple[str, int] | None, sign: int = 0) -> int:
        # sign: +1 / -1 for a division by a constant above 1 / below -1 (0: unknown): the matchers declared
        # silent there (a negative divisor's rules on a positive one; rules that need more than a bare
        # variable as dividend) are not offered
        def fires(r: Rule, p: Pattern) -> bool:
            if not _fires_on(r, p, cls, mask, child):
                return False
            if sign > 0 and not rule_fires_on_positive_divisor(r):
                return False
            on_variable = sign != 0 and child is not None and child[0] in _VARIABLES
            return not (on_variable and not rule_fires_on_variable_dividend(r))

        picked = tuple(i for i, (r, p) in enumerate(zip(rules, pats)) if fires(r, p))
        if picked not in index:
            index[picked] = len(leaves)
            leaves.append(tuple(rules[i] for i in picked))
        return index[picked]

    lines = ["def candidates(e):", "    t = type(e)"]
    for cls in _CLASSES:
        lines.append(f"    if t is {cls}:")
        if cls == "Sum":
            table = [leaf(cls, m, None) for m in _MASKS]
            lines.append(f"        return _L[({', '.join(map(str, table))},)[_mask(e)]]")
        elif cls in _DIVS:
            lines.append("        c = e.lhs")
            lines.append("        u = type(c)")
            lines.append("        d = e.divisor")
            branches = ((1, "        if d > 1:", "    "), (-1, "        if d < -1:", "    "), (0, None, ""))
            for sign, test, pad in branches:
                if test is not None:
                    lines.append(test)
                for ccls in _CLASSES:
                    if ccls == "Sum":
                        table = [leaf(cls, 0, (ccls, m), sign) for m in _MASKS]
                        lines.append(f"{pad}        if u is Sum:")
                        lines.append(f"{pad}            return _L[({', '.join(map(str, table))},)[_mask(c)]]")
                    else:
                        lines.append(f"{pad}        if u is {ccls}:")
                        lines.append(f"{pad}            return _L[{leaf(cls, 0, (ccls, 0), sign)}]")
                lines.append(f"{pad}        return _L[{leaf(cls, 0, None, sign)}]")
        else:
            lines.append(f"        return _L[{leaf(cls, 0, None)}]")
    lines.append("    return None  # (a node class the tree does not know: the caller offers every rule)")
    return "\n".join(lines) + "\n", leaves


def _mask(s: Sum) -> int:
    """The kinds of division / ``min`` / ``max`` terms ``s`` holds (one bit each, :data:`_BIT`)."""
    m = 0
    for t, _ in s.terms:
        m |= _TYPE_BIT.get(type(t), 0)
    return m


_TYPE_BIT = {_CLASSES[n]: b for n, b in _BIT.items()}

_COMPILED: dict[tuple[int, ...], tuple[Sequence[Rule], Callable[[AffineExpr], tuple[Rule, ...] | None], str]] = {}
"""``ids of the catalogue's rules -> (the rules, candidates function, its source)``: keyed by the rules,
not the list (the simplifier builds subsets of the catalogue as new lists: without the sign rules on a
risky map); the rules are kept so their ids cannot be reused while the entry lives."""


def _compile(rules: Sequence[Rule]) -> tuple[Sequence[Rule], Callable[[AffineExpr], tuple[Rule, ...] | None], str]:
    key = tuple(map(id, rules))
    hit = _COMPILED.get(key)
    if hit is not None:
        return hit
    rules = tuple(rules)
    source, leaves = _generate(rules)
    scope: dict[str, Any] = {n: c for n, c in _CLASSES.items()}
    scope.update(_L=tuple(leaves), _mask=_mask)
    exec(compile(source, f"<matcher for {len(rules)} rules>", "exec"), scope)  # (our own generated source)
    if len(_COMPILED) > 16:
        _COMPILED.clear()
    entry = (rules, scope["candidates"], source)
    _COMPILED[key] = entry
    return entry


def compiled_candidates(rules: Sequence[Rule] = RULES) -> Callable[[AffineExpr], tuple[Rule, ...] | None]:
    """The generated function ``candidates(node)``: the rules of ``rules`` (in their order) that can
    fire on ``node`` by its kinds; ``None`` for a node class the tree does not know (the caller then
    offers every rule). Generated on first use per catalogue and kept."""
    return _compile(rules)[1]


def matcher_source(rules: Sequence[Rule] = RULES) -> str:
    """The generated Python source of :func:`compiled_candidates` for ``rules`` (leaves as ``_L[i]``,
    listed after the function in a comment)."""
    source = _compile(rules)[2]
    _, leaves = _generate(rules)
    notes = [f"# _L[{i}] = ({', '.join(r.name for r in leaf)})" for i, leaf in enumerate(leaves)]
    return source + "\n" + "\n".join(notes) + "\n"


if __name__ == "__main__":  # pragma: no cover
    for r in RULES:
        print(f"# {r.name}: {pattern_of(r)}")
    print(matcher_source())
