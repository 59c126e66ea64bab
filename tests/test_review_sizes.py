"""Review findings on engines.sizes (size parameters)."""

from __future__ import annotations

from verified_indexing import IndexingMap
from verified_indexing.engines import sizes as S
from verified_indexing.expr import Dim
from verified_indexing.interval import Interval

N, I = Dim(0), Dim(1)
BASE = IndexingMap([S.SIZE_BOUNDS, Interval(0, S.SIZE_MAX - 1)], [I % 4], constraints=[S.loop_constraint(I, N)])
KE = IndexingMap.known_empty()


def test_known_empty_injective_violations_are_empty() -> None:
    # was: TypeError from isl project_out (KNOWN EMPTY maps have no dims)
    for k in (0, 1, 2):
        v = S.violating_sizes_injective(KE, k)
        assert v.is_empty()
        assert S.size_condition([v], k, ["N", "M"][:k]).status == "every"


def test_known_empty_subset_violations() -> None:
    # was: isl "spaces don't match" error for either side KNOWN EMPTY
    assert S.violating_sizes_subset(KE, BASE, 1).is_empty()
    c = S.size_condition([S.violating_sizes_subset(BASE, KE, 1)], 1, ["N"])
    # BASE has a result exactly when N >= 1: inclusion in nothing holds only at N = 0
    assert c.status == "never"
    assert c.violation == (1,)


def test_condition_text_with_a_name_like_isls() -> None:
    # was: '{ [x, x] : (x + x) mod 2 = 0 }' (n1 renamed to "n0", then both to "x")
    import islpy as isl

    from verified_indexing.engines.isl import engine_context

    v = isl.Set("{ [a, b] : (a + b) mod 2 = 1 }", context=engine_context())
    c = S.size_condition([v], 2, ["x", "n0"])
    assert c.status == "when"
    assert "[x, n0]" in c.text and "x + n0" in c.text


def test_condition_text_with_coefficients() -> None:
    # isl writes "2n1": the renaming must reach names after a coefficient too
    import islpy as isl

    from verified_indexing.engines.isl import engine_context

    v = isl.Set("{ [a, b] : 3 * floor((1 + a) / 3) > 1 + a - 2b }", context=engine_context())
    c = S.size_condition([v], 2, ["N", "M"])
    assert "n0" not in c.text and "n1" not in c.text, c.text
    assert "2M" in c.text, c.text
    isl.Set(c.text)  # the text is an isl set over the names
