"""Semantic injectivity and inverses, checked against enumeration of the domain."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.errors import UnsupportedError
from verified_indexing.expr import AffineExpr, Const, Dim
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval
from verified_indexing.legality.inverse import inverse, is_bijective, is_injective
from verified_indexing.syntax import parse_expr, parse_indexing_map


def _image(m: IndexingMap) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    out: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for d, _, _ in m.domain_points():
        out.setdefault(m.evaluate(d), []).append(d)
    return out


def _check_inverse_by_enumeration(m: IndexingMap) -> None:
    """The oracle: the inverse's domain is exactly the image, and it undoes m."""
    r = inverse(m)
    assert r.status == "proved", r.reason
    inv = r.inverse
    assert inv is not None
    img = _image(m)
    assert all(len(v) == 1 for v in img.values())
    inv_domain = {d for d, _, _ in inv.domain_points()}
    assert inv_domain == set(img)
    for x, (p,) in img.items():
        assert inv.evaluate(x) == p


def test_issue_examples() -> None:
    skew = parse_indexing_map("(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]")
    r = inverse(skew)
    assert r.proved and r.inverse is not None
    # The inverse worked out by hand in the permutation document (section 4, case 3).
    assert r.inverse.results == (parse_expr("d1"), parse_expr("d0 - d1"))
    _check_inverse_by_enumeration(skew)

    split = parse_indexing_map("(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    r = inverse(split)
    assert r.proved and r.inverse is not None
    assert r.inverse.results == (parse_expr("d0 * 8 + d1"),)
    assert [v.bounds for v in r.inverse.dims] == [Interval(0, 3), Interval(0, 7)]
    _check_inverse_by_enumeration(split)

    perm = parse_indexing_map("(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3]")
    r = inverse(perm)
    assert r.proved and r.inverse is not None
    assert r.inverse.results == (Dim(1), Dim(2), Dim(0))
    assert r.left_identity is not None and r.left_identity.proved
    assert r.right_identity is not None and r.right_identity.proved


def test_non_injective_gets_confirmed_collision() -> None:
    m = parse_indexing_map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]")
    r = inverse(m)
    assert r.status == "refuted" and r.inverse is None and r.collision is not None
    a, b, img = r.collision
    assert a != b and m.contains(a) and m.contains(b)
    assert m.evaluate(a) == m.evaluate(b) == img
    v = is_injective(m)
    assert v.refuted


def test_injective_only_thanks_to_the_domain() -> None:
    # d0 + 4 * d1 is injective on d0 in [0, 3] but not on [0, 4].
    ok = parse_indexing_map("(d0, d1) -> (d0 + d1 * 4), domain: d0 in [0, 3], d1 in [0, 2]")
    bad = parse_indexing_map("(d0, d1) -> (d0 + d1 * 4), domain: d0 in [0, 4], d1 in [0, 2]")
    assert is_injective(ok).proved
    assert is_injective(bad).refuted
    _check_inverse_by_enumeration(ok)
    # A constraint can make a non-injective box injective.
    m = parse_indexing_map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3], d0 - d1 in [0, 0]")
    assert is_injective(m).proved


def test_bijective_onto_box() -> None:
    m = parse_indexing_map("(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert is_bijective(m, [(0, 3), (0, 7)]).proved
    assert not is_bijective(m, [(0, 3), (0, 8)]).proved
    skew = parse_indexing_map("(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]")
    assert is_bijective(skew, [(0, 6), (0, 3)]).refuted  # the image is a parallelogram, not the box


def test_unsupported_inputs() -> None:
    with pytest.raises(UnsupportedError):
        inverse(parse_indexing_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]"))
    with pytest.raises(UnsupportedError):
        inverse(IndexingMap.undefined())


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@st.composite
def unimodular(draw: st.DrawFn) -> list[list[int]]:
    """A random integer matrix with determinant +-1 (product of elementary ops)."""
    n = draw(st.integers(1, 3))
    mat = [[int(i == j) for j in range(n)] for i in range(n)]
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, n - 1))
        j = draw(st.integers(0, n - 1))
        if i == j:
            mat[i] = [-x for x in mat[i]]
        else:
            k = draw(st.integers(-2, 2))
            mat[i] = [a + k * b for a, b in zip(mat[i], mat[j])]
    perm = draw(st.permutations(list(range(n))))
    return [mat[p] for p in perm]


@settings(max_examples=40)
@given(unimodular(), st.data())
def test_random_unimodular_maps_invert(mat: list[list[int]], data: st.DataObject) -> None:
    n = len(mat)
    bounds = [(0, data.draw(st.integers(0, 3))) for _ in range(n)]
    offsets = [data.draw(st.integers(-3, 3)) for _ in range(n)]
    results: list[AffineExpr] = []
    for row, off in zip(mat, offsets):
        e: AffineExpr = Const(off)
        for j, c in enumerate(row):
            e = e + Dim(j) * c
        results.append(e)
    _check_inverse_by_enumeration(IndexingMap(bounds, results))


@settings(max_examples=40)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.permutations(list(range(n))),
                                                       st.lists(st.integers(1, 4), min_size=n, max_size=n))))
def test_random_permutations_invert(args: tuple[list[int], list[int]]) -> None:
    perm, his = args
    m = IndexingMap([(0, h) for h in his], [Dim(p) for p in perm])
    r = inverse(m)
    assert r.proved and r.inverse is not None
    inv_perm = [perm.index(i) for i in range(len(perm))]
    assert r.inverse.results == tuple(Dim(p) for p in inv_perm)  # every extent > 1: isl keeps the dims
    _check_inverse_by_enumeration(m)


@settings(max_examples=40)
@given(st.data())
def test_random_reshapes_invert(data: st.DataObject) -> None:
    # (d0) -> (d0 floordiv c, d0 mod c) on [0, k*c - 1] and its generalisations.
    c = data.draw(st.integers(2, 5))
    k = data.draw(st.integers(1, 4))
    m = IndexingMap([(0, k * c - 1)], [Dim(0).floordiv(c), Dim(0).mod(c)])
    _check_inverse_by_enumeration(m)


@st.composite
def non_injective(draw: st.DrawFn) -> IndexingMap:
    kind = draw(st.sampled_from(["sum", "projection", "floordiv", "mod", "scaled"]))
    a = draw(st.integers(1, 4))
    b = draw(st.integers(1, 4))
    if kind == "sum":
        return IndexingMap([(0, a), (0, b)], [Dim(0) + Dim(1)])
    if kind == "projection":
        return IndexingMap([(0, a), (0, b)], [Dim(draw(st.integers(0, 1)))])
    if kind == "floordiv":
        c = draw(st.integers(2, 4))
        return IndexingMap([(0, c + a)], [Dim(0).floordiv(c)])
    if kind == "mod":
        c = draw(st.integers(1, 3))
        return IndexingMap([(0, c + a)], [Dim(0).mod(c)])
    k = draw(st.integers(1, 2))
    return IndexingMap([(0, k + a), (0, 1)], [Dim(0) + Dim(1) * k])


@settings(max_examples=40)
@given(non_injective())
def test_random_non_injective_maps_are_refuted(m: IndexingMap) -> None:
    img = _image(m)
    assert any(len(v) > 1 for v in img.values())  # the oracle agrees it is not injective
    r = inverse(m)
    assert r.status == "refuted" and r.collision is not None
    a, b, x = r.collision
    assert a != b and m.contains(a) and m.contains(b) and m.evaluate(a) == m.evaluate(b) == x


def test_injectivity_agrees_with_enumeration_on_small_maps() -> None:
    exprs = ["d0", "d0 + d1", "d0 * 3 + d1", "d0 floordiv 2", "d0 mod 3", "d0 - d1 * 2", "d1 * 4 + d0 mod 4"]
    for e1, e2 in itertools.product(exprs, repeat=2):
        m = IndexingMap([(0, 3), (0, 2)], [parse_expr(e1), parse_expr(e2)])
        expected = all(len(v) == 1 for v in _image(m).values())
        v = is_injective(m)
        assert v.status in ("proved", "refuted")
        assert v.proved == expected, (e1, e2)


@pytest.mark.parametrize(
    "text",
    [
        "(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3], d0 - d1 in [0, 0]",  # injective by constraint
        "(d0, d1) -> (d0 * 2 + d1 * 3), domain: d0 in [0, 2], d1 in [0, 1]",  # a lattice image
        "(d0) -> (d0 * 3 + 1), domain: d0 in [0, 5]",  # a strided image
        "(d0, d1) -> (min(d0, 2), d1), domain: d0 in [0, 2], d1 in [0, 3]",  # min that never clips
        "(d0, d1) -> (d1 * 4 + d0 mod 4, d0 floordiv 4), domain: d0 in [0, 7], d1 in [0, 2]",
    ],
)
def test_inverses_with_strides_constraints_and_divisions(text: str) -> None:
    _check_inverse_by_enumeration(parse_indexing_map(text))


def test_injectivity_is_cross_checked_by_z3() -> None:
    m = parse_indexing_map("(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 3], d1 in [0, 2]")
    assert is_injective(m).engine == "isl+z3"
    assert is_injective(m, cross_check=False).engine == "isl"
    bad = parse_indexing_map("(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 3], d1 in [0, 3]")
    v = is_injective(bad)
    assert v.refuted and v.engine == "isl+z3"
