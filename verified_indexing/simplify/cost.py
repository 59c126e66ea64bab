"""The simplifier's cost model: what "simpler" means.

``cost``: constant 0, variable 1, each addition 2, each multiplication by a
constant other than 1 (including negation) 4, each ``floordiv``/``ceildiv``/``mod``
10 (plus the cost of its dividend), each ``min``/``max`` 10 (plus both operands).
The simplifier only applies a rewrite that strictly decreases :func:`measure`
(cost first, then two tie-breakers), so it terminates and the result never costs
more than the input. Expressions are immutable values, so ``cost`` and
``measure`` are memoised (the engine asks them before every rule match).
"""

from __future__ import annotations

from functools import lru_cache

from verified_indexing.expr import AffineExpr, CeilDiv, Const, FloorDiv, Max, Min, Mod, Sum, _BinaryDiv, _MinMax
from verified_indexing.indexing_map import IndexingMap

__all__ = ["cost", "map_cost", "measure"]

COST_CONST = 0
COST_VAR = 1
COST_ADD = 2
COST_MUL = 4
COST_DIV = 10
COST_MINMAX = 10


@lru_cache(maxsize=1 << 16)
def cost(e: AffineExpr) -> int:
    """The cost of an expression under the model above."""
    if isinstance(e, Const):
        return COST_CONST
    if isinstance(e, Sum):
        n = len(e.terms) + (1 if e.constant != 0 else 0)
        total = COST_ADD * (n - 1)
        for t, c in e.terms:
            total += cost(t) + (COST_MUL if c != 1 else 0)
        if n == 1:  # a single scaled term: c * t
            return total
        return total
    if isinstance(e, _BinaryDiv):
        return COST_DIV + cost(e.lhs)
    if isinstance(e, _MinMax):
        return COST_MINMAX + cost(e.lhs) + cost(e.rhs)
    return COST_VAR


def map_cost(m: IndexingMap) -> int:
    """The total cost of a map's results and constraint expressions."""
    return sum(cost(r) for r in m.results) + sum(cost(e) for e, _ in m.constraints)


def _weight(e: AffineExpr) -> tuple[int, int]:
    """(total cost of dividends, number of mod nodes under a floordiv)."""
    w = 0
    nested = 0
    stack = [e]
    while stack:  # (every node once, in any order: the totals are sums; no generator per node)
        node = stack.pop()
        t = type(node)
        if t is Sum:
            stack.extend([u for u, _ in node.terms])  # type: ignore[attr-defined]
        elif t is FloorDiv or t is CeilDiv or t is Mod:
            lhs = node.lhs  # type: ignore[attr-defined]
            w += cost(lhs)
            if t is not Mod:
                nested += _mods(lhs)
            stack.append(lhs)
        elif t is Min or t is Max:
            w += cost(node.lhs) + cost(node.rhs)  # type: ignore[attr-defined]
            stack.append(node.lhs)  # type: ignore[attr-defined]
            stack.append(node.rhs)  # type: ignore[attr-defined]
    return w, nested


def _mods(e: AffineExpr) -> int:
    """The ``mod`` nodes of ``e`` (``e`` included)."""
    n = 0
    stack = [e]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is Sum:
            stack.extend([u for u, _ in node.terms])  # type: ignore[attr-defined]
        elif t is Mod:
            n += 1
            stack.append(node.lhs)  # type: ignore[attr-defined]
        else:
            stack.extend(node.children())
    return n


@lru_cache(maxsize=1 << 16)
def measure(e: AffineExpr) -> tuple[int, int, int]:
    """The well-founded order of rewrites: cost, then the cost under divisions
    (moves work out of floordiv/mod), then mods nested under floordivs."""
    w, nested = _weight(e)
    return cost(e), w, nested
