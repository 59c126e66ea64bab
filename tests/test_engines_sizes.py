"""Size parameters (engines.sizes): questions for every size at once, against
enumeration at concrete sizes."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from verified_indexing import IndexingMap
from verified_indexing.engines import is_injective, prove_subset
from verified_indexing.engines import sizes as S
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.interval import Interval
from verified_indexing.legality.inverse import inverse

N, I = Dim(0), Dim(1)


def loop_map(result: AffineExpr, extent: AffineExpr = N, lo: int = 0) -> IndexingMap:
    """(N, i) -> (result), i in [lo, lo + extent - 1]."""
    bounds = Interval(lo, lo + S.SIZE_MAX - 1)
    return IndexingMap([S.SIZE_BOUNDS, bounds], [result], constraints=[S.loop_constraint(I, extent, lo)])


def at(n: int, m: IndexingMap) -> list[tuple[int, ...]]:
    """The results of ``m`` at size ``n`` by plain evaluation (ranges are small)."""
    out = []
    for i in range(-2, n + 4):
        if m.contains([n, i]):
            out.append(m.evaluate([n, i]))
    return out


def cond_holds(c: S.SizeCondition, n: int) -> bool:
    assert c.constraints is not None
    return all(e.evaluate([n]) in iv for e, iv in c.constraints)


results = st.builds(
    lambda a, b, c, q, kind: {
        "lin": I * a + N * b + c,
        "div": (I * a + c).floordiv(q) + N * b,
        "mod": (I * a + c) % q + N * b,
    }[kind],
    st.integers(-2, 2),
    st.integers(-1, 1),
    st.integers(-3, 3),
    st.integers(1, 4),
    st.sampled_from(["lin", "div", "mod"]),
)


def test_loop_constraint_matches_range() -> None:
    m = loop_map(I, N + 1, lo=2)
    assert [r[0] for r in at(3, m)] == [2, 3, 4, 5]


@given(results)
def test_injectivity_condition_matches_enumeration(r: AffineExpr) -> None:
    m = loop_map(r)
    cond = S.size_condition([S.violating_sizes_injective(m, 1)], 1, ["N"])
    verdict = is_injective(m, sizes=1)
    for n in range(0, 9):
        res = at(n, m)
        injective = len(set(res)) == len(res)
        if cond.status == "every":
            assert injective, (r, n)
        elif cond.status == "when" and cond.constraints is not None:
            assert cond_holds(cond, n) == injective, (r, n, cond.text)
    assert verdict.proved == (cond.status == "every")
    if verdict.refuted:
        ce = verdict.counterexample
        assert ce is not None
        n = dict(ce.values)["d0"]
        if n <= 64:  # the counterexample's size, checked by plain evaluation
            res = at(n, m)
            assert len(set(res)) < len(res)


@given(results, results)
def test_image_inclusion_condition_matches_enumeration(r: AffineExpr, w: AffineExpr) -> None:
    read, write = loop_map(r), loop_map(w, N + 2)
    cond = S.size_condition([S.violating_sizes_subset(read, write, 1)], 1, ["N"])
    verdict = prove_subset(read, write, of="image", sizes=1)
    for n in range(0, 9):
        inside = set(at(n, read)) <= set(at(n, write))
        if cond.status == "every":
            assert inside, (r, w, n)
        elif cond.status == "when" and cond.constraints is not None:
            assert cond_holds(cond, n) == inside, (r, w, n, cond.text)
    assert verdict.proved == (cond.status == "every")
    if cond.violation is not None and cond.violation[0] <= 64:  # the smallest violating size
        (n,) = cond.violation
        assert not set(at(n, read)) <= set(at(n, write))


def test_condition_texts() -> None:
    read = loop_map(I)
    write8 = IndexingMap([S.SIZE_BOUNDS, Interval(0, 7)], [I])
    c = S.size_condition([S.violating_sizes_subset(read, write8, 1)], 1, ["N"])
    assert (c.status, c.text, c.violation) == ("when", "N <= 8", (9,))
    shifted = loop_map(I + 1)
    c = S.size_condition([S.violating_sizes_subset(shifted, read, 1)], 1, ["N"])
    assert (c.status, c.violation) == ("never", (1,))


def test_sized_inverse_composes() -> None:
    rev = loop_map(N - 1 - I)
    inv = inverse(rev, sizes=1)
    assert inv.status == "proved" and inv.inverse is not None
    g = inv.inverse
    for n, i in itertools.product(range(5), range(5)):
        if i < n:
            assert g.evaluate([n, n - 1 - i]) == (n, i)


def test_image_and_equality_take_sizes() -> None:
    from verified_indexing.engines import image, prove_equal

    m = loop_map(I * 2)
    img = image(m, sizes=1)
    assert img.n_dim() == 2  # (N, result) tuples
    for n in range(4):
        expected = {(n, 2 * i) for i in range(n)}
        got = {(n, v) for v in range(-2, 12) if not img.intersect(_point(n, v)).is_empty()}
        assert got == expected
    assert prove_equal(m, loop_map(I + I), sizes=1).proved
    assert prove_equal(m, loop_map(I * 3), sizes=1).refuted
    assert prove_equal(m, m, sizes=5).status == "error"


def _point(n: int, v: int):  # type: ignore[no-untyped-def]
    import islpy as isl

    from verified_indexing.engines.isl import engine_context

    return isl.Set(f"{{ [{n}, {v}] }}", context=engine_context())


def test_sizes_that_do_not_fit_are_an_error_verdict_for_every_question() -> None:
    m = loop_map(I)
    for v in (prove_subset(m, m, of="image", sizes=3), is_injective(m, sizes=3), is_injective(m, sizes=-1)):
        assert v.status == "error" and "size parameters" in (v.reason or "")
    from verified_indexing.engines import prove_equal

    assert prove_equal(m, m, sizes=3).status == "error"
