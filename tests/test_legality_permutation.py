"""MLIR's syntactic predicates: the permutation document's examples, MLIR's
edge cases, and properties checked by evaluation."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import UnsupportedError
from verified_indexing.expr import Dim
from verified_indexing.legality.permutation import (
    compose,
    inverse_permutation,
    is_permutation,
    is_projected_permutation,
    permutation_of,
)
from verified_indexing.syntax import parse_affine_map

# The document ../shared/spec/mlir-linalg-fusion-permutation.zh.md, section 2.
DOC_PERMUTATIONS = {
    "map0": "affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
    "map1": "affine_map<(d0, d1) -> (d1, d0)>",
    "map2": "affine_map<(d0, d1, d2) -> (d2, d0, d1)>",
    "map3": "affine_map<(d0, d1, d2) -> (d1, d2, d0)>",
}
DOC_NON_PERMUTATIONS = {
    "map4": "affine_map<(d0, d1) -> (d0)>",
    "map5": "affine_map<(d0, d1, d2) -> (d0, d1)>",
    "map6": "affine_map<(d0, d1) -> (d0, d0)>",
    "map7": "affine_map<(d0, d1) -> (0, d1)>",
    "map8": "affine_map<(d0, d1) -> (d0 + d1, d0)>",
}
# Inverses written out from the permutation definition (result i = d_pi(i)
# means the inverse sends result position back: inverse result pi(i) = d_i).
DOC_INVERSES = {
    "map0": "affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
    "map1": "affine_map<(d0, d1) -> (d1, d0)>",
    "map2": "affine_map<(d0, d1, d2) -> (d1, d2, d0)>",  # the document's worked example, section 6
    "map3": "affine_map<(d0, d1, d2) -> (d2, d0, d1)>",
}


@pytest.mark.parametrize("name", sorted(DOC_PERMUTATIONS))
def test_doc_permutations(name: str) -> None:
    m = parse_affine_map(DOC_PERMUTATIONS[name])
    assert is_permutation(m)
    assert is_projected_permutation(m)
    assert inverse_permutation(m) == parse_affine_map(DOC_INVERSES[name])


@pytest.mark.parametrize("name", sorted(DOC_NON_PERMUTATIONS))
def test_doc_non_permutations(name: str) -> None:
    m = parse_affine_map(DOC_NON_PERMUTATIONS[name])
    assert not is_permutation(m)
    assert inverse_permutation(m) is None
    assert permutation_of(m) is None


def test_projected_permutation_mlir_cases() -> None:
    pp = is_projected_permutation
    assert pp(parse_affine_map("affine_map<(d0, d1) -> (d0)>"))  # map4: a projection
    assert pp(parse_affine_map("affine_map<(d0, d1, d2) -> (d2, d0)>"))
    assert not pp(parse_affine_map("affine_map<(d0, d1) -> (d0, d0)>"))  # map6: duplicate
    assert not pp(parse_affine_map("affine_map<(d0, d1) -> (d0 + d1, d0)>"))  # map8
    zero = parse_affine_map("affine_map<(d0, d1) -> (0, d1)>")  # map7
    assert not pp(zero)
    assert pp(zero, allow_zero_in_results=True)
    assert not pp(parse_affine_map("affine_map<(d0, d1) -> (1, d1)>"), allow_zero_in_results=True)
    # More results than inputs is never a projected permutation, zeros or not.
    assert not pp(parse_affine_map("affine_map<(d0) -> (d0, 0)>"), allow_zero_in_results=True)
    assert not pp(parse_affine_map("affine_map<(d0)[s0] -> (d0)>"))  # symbols
    assert pp(parse_affine_map("affine_map<() -> ()>"))


def test_inverse_permutation_left_inverse_behaviour() -> None:
    # MLIR skips constant and non-dim results and takes each dim's first occurrence.
    m = parse_affine_map("affine_map<(d0, d1) -> (d1, 0, d0)>")
    inv = inverse_permutation(m)
    assert inv == parse_affine_map("affine_map<(d0, d1, d2) -> (d2, d0)>")
    assert inv is not None
    for p in itertools.product(range(3), range(3)):
        assert inv.evaluate(m.evaluate(p)) == p  # a left inverse
    dup = parse_affine_map("affine_map<(d0, d1) -> (d0, d1, d0)>")
    assert inverse_permutation(dup) == parse_affine_map("affine_map<(d0, d1, d2) -> (d0, d1)>")
    assert inverse_permutation(parse_affine_map("affine_map<(d0, d1) -> (d0 + d1, d0, d1)>")) == parse_affine_map(
        "affine_map<(d0, d1, d2) -> (d1, d2)>"
    )
    empty = parse_affine_map("affine_map<() -> ()>")
    assert inverse_permutation(empty) == empty
    with pytest.raises(UnsupportedError):
        inverse_permutation(parse_affine_map("affine_map<(d0)[s0] -> (d0)>"))


def test_compose_matches_evaluation() -> None:
    outer = parse_affine_map("affine_map<(d0, d1)[s0] -> (d0 + s0, d1 * 2)>")
    inner = parse_affine_map("affine_map<(d0)[s0] -> (d0 floordiv 2, d0 + s0)>")
    c = compose(outer, inner)
    assert (c.num_dims, c.num_symbols) == (1, 2)
    for d, s_out, s_in in itertools.product(range(-3, 4), range(2), range(2)):
        assert c.evaluate([d], [s_out, s_in]) == outer.evaluate(inner.evaluate([d], [s_in]), [s_out])


@settings(max_examples=60)
@given(st.integers(1, 6).flatmap(lambda n: st.permutations(list(range(n)))))
def test_random_permutations_invert(perm: list[int]) -> None:
    n = len(perm)
    m = AffineMap(n, 0, [Dim(p) for p in perm])
    assert is_permutation(m)
    inv = inverse_permutation(m)
    assert inv is not None and is_permutation(inv)
    rng = random.Random(n)
    for _ in range(5):
        p = tuple(rng.randint(-5, 5) for _ in range(n))
        assert inv.evaluate(m.evaluate(p)) == p
        assert m.evaluate(inv.evaluate(p)) == p
    assert compose(inv, m) == AffineMap.identity(n)


@settings(max_examples=60)
@given(st.integers(1, 4), st.lists(st.integers(-1, 3), min_size=1, max_size=5))
def test_projected_permutation_definition(n: int, picks: list[int]) -> None:
    # -1 stands for the constant 0; the oracle is the definition read off MLIR's doc comment.
    results = [Dim(p) if 0 <= p < n else 0 for p in picks if p < n]
    m = AffineMap(n, 0, results)
    dims = [p for p in picks if 0 <= p < n]
    zeros = len(results) - len(dims)
    distinct = len(set(dims)) == len(dims)
    assert is_projected_permutation(m) == (distinct and zeros == 0 and len(results) <= n)
    assert is_projected_permutation(m, allow_zero_in_results=True) == (distinct and len(results) <= n)
    assert is_permutation(m) == (distinct and zeros == 0 and len(results) == n)
    inv = inverse_permutation(m)
    assert (inv is not None) == (set(dims) == set(range(n)))
