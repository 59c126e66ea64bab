"""Hypothesis strategies for expressions and indexing maps, with an independent reference.

Needs ``hypothesis`` (``pip install 'verified-indexing[test]'``).

* :func:`ref_exprs` draws a reference tree (nested tuples such as
  ``("floordiv", ("d", 0), 3)``); :func:`build` turns it into an
  :class:`~verified_indexing.AffineExpr` through the public operators, and
  :func:`ref_eval` evaluates it with exact rational arithmetic
  (``fractions.Fraction`` and ``math.floor``), independently of the package's
  ``floor_div``/``floor_mod``: an oracle for code that evaluates or rewrites
  expressions.
* :func:`affine_exprs` draws the built expressions directly.
* :func:`indexing_maps` draws small maps (every variable kind, optional names,
  constraints) whose domains are small enough to enumerate.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised only without the test extra
    raise ImportError(
        "verified_indexing.testing.strategies needs hypothesis: pip install 'verified-indexing[test]'"
    ) from exc

from verified_indexing import AffineExpr, IndexingMap, Interval, Variable, const, dim, emax, emin, rt, sym

__all__ = ["Ref", "affine_exprs", "build", "indexing_maps", "ref_eval", "ref_exprs"]

Ref = tuple[Any, ...]
"""A reference tree: ``("c", k)``, ``("d", i)``, ``("s", i)``, ``("rt", i)``, ``(op, a, b)``, ``("neg", a)``,
``(div_op, a, divisor)``."""


def ref_eval(node: Ref, dims: tuple[int, ...], syms: tuple[int, ...] = (), rts: tuple[int, ...] = ()) -> int:
    """The value of a reference tree at a point, with exact rational arithmetic."""
    op = node[0]
    if op == "c":
        return int(node[1])
    if op == "d":
        return dims[node[1]]
    if op == "s":
        return syms[node[1]]
    if op == "rt":
        return rts[node[1]]
    if op in ("+", "-", "*"):
        a = ref_eval(node[1], dims, syms, rts)
        b = ref_eval(node[2], dims, syms, rts)
        return a + b if op == "+" else a - b if op == "-" else a * b
    if op == "neg":
        return -ref_eval(node[1], dims, syms, rts)
    if op in ("floordiv", "ceildiv", "mod"):
        a = ref_eval(node[1], dims, syms, rts)
        c: int = node[2]
        q = math.floor(Fraction(a, c))
        if op == "floordiv":
            return q
        if op == "ceildiv":
            return math.ceil(Fraction(a, c))
        return a - c * q
    if op in ("min", "max"):
        a = ref_eval(node[1], dims, syms, rts)
        b = ref_eval(node[2], dims, syms, rts)
        return min(a, b) if op == "min" else max(a, b)
    raise AssertionError(op)


def build(node: Ref) -> AffineExpr:
    """The :class:`AffineExpr` of a reference tree, built with the public operators."""
    op = node[0]
    if op == "c":
        return const(node[1])
    if op == "d":
        return dim(node[1])
    if op == "s":
        return sym(node[1])
    if op == "rt":
        return rt(node[1])
    if op == "+":
        return build(node[1]) + build(node[2])
    if op == "-":
        return build(node[1]) - build(node[2])
    if op == "*":
        # one side is a constant leaf by construction
        return build(node[1]) * build(node[2])
    if op == "neg":
        return -build(node[1])
    if op == "floordiv":
        return build(node[1]).floordiv(node[2])
    if op == "ceildiv":
        return build(node[1]).ceildiv(node[2])
    if op == "mod":
        return build(node[1]).mod(node[2])
    if op == "min":
        return emin(build(node[1]), build(node[2]))
    if op == "max":
        return emax(build(node[1]), build(node[2]))
    raise AssertionError(op)


nonzero = st.integers(-9, 9).filter(lambda c: c != 0)


def ref_exprs(n_dims: int = 2, n_syms: int = 0, n_rts: int = 0, max_leaves: int = 8, minmax: bool = True) -> Any:
    """Reference trees over ``d0..``, ``s0..`` and ``rt0..`` (constants in [-20, 20], nonzero divisors
    in [-9, 9], products by a constant in [-5, 5]; ``min``/``max`` unless ``minmax=False``)."""
    leaves: list[Any] = [st.tuples(st.just("c"), st.integers(-20, 20))]
    if n_dims:
        leaves.append(st.tuples(st.just("d"), st.integers(0, n_dims - 1)))
    if n_syms:
        leaves.append(st.tuples(st.just("s"), st.integers(0, n_syms - 1)))
    if n_rts:
        leaves.append(st.tuples(st.just("rt"), st.integers(0, n_rts - 1)))
    leaf = st.one_of(*leaves)

    def extend(children: Any) -> Any:
        options = [
            st.tuples(st.sampled_from(["+", "-"]), children, children),
            st.tuples(st.just("*"), children, st.tuples(st.just("c"), st.integers(-5, 5))),
            st.tuples(st.just("neg"), children),
            st.tuples(st.sampled_from(["floordiv", "ceildiv", "mod"]), children, nonzero),
        ]
        if minmax:
            options.append(st.tuples(st.sampled_from(["min", "max"]), children, children))
        return st.one_of(*options)

    return st.recursive(leaf, extend, max_leaves=max_leaves)


NAMES = ["th_x", "bl_z", "vector_elem", "i", "j", "k", "row", "col"]


@st.composite
def indexing_maps(
    draw: Any,
    max_dims: int = 3,
    max_syms: int = 2,
    max_rts: int = 1,
    max_bound: int = 6,
    allow_negative: bool = True,
    named: bool = True,
    max_results: int = 3,
    max_constraints: int = 2,
) -> IndexingMap:
    """Small random maps (boxes of at most ``(max_bound*2+1)^vars`` points)."""
    nd = draw(st.integers(0, max_dims))
    ns = draw(st.integers(0, max_syms))
    nr = draw(st.integers(0, max_rts))
    lo_min = -max_bound if allow_negative else 0

    def var(kind: str, i: int) -> Variable:
        lo = draw(st.integers(lo_min, max_bound))
        hi = draw(st.integers(lo, lo + max_bound))
        name = None
        if named and draw(st.booleans()) and draw(st.booleans()):
            name = f"{draw(st.sampled_from(NAMES))}_{kind}{i}"
        return Variable(Interval(lo, hi), name)

    dims = [var("d", i) for i in range(nd)]
    syms = [var("s", i) for i in range(ns)]
    rts = [var("rt", i) for i in range(nr)]
    if nd + ns + nr == 0:
        return IndexingMap([], [draw(st.integers(-5, 5))])
    exprs = ref_exprs(nd, ns, nr, max_leaves=5)
    results = [build(draw(exprs)) for _ in range(draw(st.integers(0, max_results)))]
    constraints = []
    for _ in range(draw(st.integers(0, max_constraints))):
        e = build(draw(exprs))
        lo = draw(st.integers(-15, 15))
        constraints.append((e, Interval(lo, lo + draw(st.integers(0, 20)))))
    return IndexingMap(dims, results, syms, rts, constraints)


def affine_exprs(n_dims: int = 2, n_syms: int = 0, n_rts: int = 0, max_leaves: int = 8, minmax: bool = True) -> Any:
    """Expressions (:class:`AffineExpr`) drawn as :func:`ref_exprs` draws trees."""
    return ref_exprs(n_dims, n_syms, n_rts, max_leaves, minmax).map(build)
