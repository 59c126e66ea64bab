"""A range variable fixed by a ``mod`` constraint is solved for (``solve_range_var``), proven as a relation.

Oracle: the plain evaluator enumerates both maps as relations ``{dims -> results}`` (range variables
existential) over every box point; the simplifier's result must define the same relation, never have
more range variables, and every ``solve_range_var`` step must carry a ``proved`` verdict.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap
from verified_indexing.expr import Const, Dim, Sym
from verified_indexing.simplify import simplify_with_report
from verified_indexing.syntax import parse_indexing_map


def relation(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    ranges = [range(v.bounds.lo, v.bounds.hi + 1) for _, _, v in m.variables()]
    nd, ns = m.num_dims, m.num_range_vars
    out = set()
    for p in itertools.product(*ranges):
        d, s = p[:nd], p[nd:nd + ns]
        if m.contains(d, s):
            out.add((d, m.evaluate(d, s)))
    return out


def test_the_select_and_scatter_window_offset_is_solved() -> None:
    """The source map of select-and-scatter (stride 2, window 2): the window offset ``s0`` is ``d0 mod 2``."""
    m = parse_indexing_map("(d0)[s0] -> (d0 floordiv 2, s0), domain: d0 in [0, 9], s0 in [0, 1], "
                           "(d0 - s0) mod 2 in [0, 0]")
    rep = simplify_with_report(m)
    assert rep.map.num_range_vars == 0
    assert rep.map.format(one_line=True) == "(d0) -> (d0 floordiv 2, d0 mod 2), domain: d0 in [0, 9]"
    assert relation(rep.map) == relation(m)
    solved = [s for s in rep.steps if s.rule == "solve_range_var"]
    assert solved and all(s.verdict is not None and s.verdict.proved for s in solved)


@settings(max_examples=60)
@given(
    c=st.integers(1, 5), r=st.integers(0, 4), k=st.sampled_from([1, -1]), a=st.integers(-3, 3),
    lo=st.integers(-3, 3), width=st.integers(0, 6), b=st.integers(-2, 2), offset=st.integers(-4, 4),
)
def test_solving_keeps_the_relation(c: int, r: int, k: int, a: int, lo: int, width: int, b: int,
                                    offset: int) -> None:
    r %= c
    rest = Dim(0) * a + offset
    m = IndexingMap(
        [(0, 7)], [Dim(0) * b + Sym(0), Dim(0)], [(lo, lo + width)], [],
        [((rest + Sym(0) * k).mod(c), (r, r))])
    out = simplify_with_report(m).map
    want = relation(m)
    if not want:
        assert out.state != "ok" or not relation(out)
        return
    assert out.state == "ok"
    assert relation(out) == want
    assert out.num_range_vars <= m.num_range_vars
    if width + 1 == c and a in (0, 1) and b in (0, 1):  # exactly c values: the variable is fixed
        assert out.num_range_vars == 0, out.format(True)


def test_a_variable_with_more_values_than_the_divisor_is_kept() -> None:
    """``s0`` in [0, 3] with ``(d0 + s0) mod 2 = 0`` has two solutions per ``d0``: not a function, kept."""
    m = IndexingMap([(0, 5)], [Dim(0) + Sym(0) * 10], [(0, 3)], [], [((Dim(0) + Sym(0)).mod(2), (0, 0))])
    out = simplify_with_report(m).map
    assert out.num_range_vars == 1
    assert relation(out) == relation(m)
    assert Const(0) is not None
