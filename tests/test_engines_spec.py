"""The spec's simplifier examples and the reshape round trip, proved by isl and z3;
a deliberately wrong variant of each refuted with an evaluator-checked counterexample.

Maps are written from the text of spec/xla-indexing-analysis.md ("Indexing Map
Simplifier"); the expected verdicts come from the spec, not from the engines.
"""

from __future__ import annotations

import pytest

from verified_indexing import IndexingMap, compose, parse_indexing_map
from verified_indexing.engines import Verdict, compose_relation, prove_equal, to_isl_map

# (name, original, simplified per the spec, wrong variant)
SPEC_EXAMPLES = [
    (
        "example1",
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]",
        # off-by-one bound: d1 reaches 16, where d1 floordiv 16 = 1
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 16]",
    ),
    (
        "example2",
        "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 100, ((100 * d0 + 10 * d1 + d2) mod 100) floordiv 10,"
        " d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        # wrong constant
        "(d0, d1, d2) -> (d0, d1, d2 + 1), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    ),
    (
        "example3",
        "(d0, d1, d2) -> ((16 * d0 + 4 * d1 + d2) floordiv 8, (16 * d0 + 4 * d1 + d2) mod 8),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        "(d0, d1, d2) -> (2 * d0 + (4 * d1 + d2) floordiv 8, (4 * d1 + d2) mod 8),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
        # wrong constant: floordiv 4 instead of 8 inside
        "(d0, d1, d2) -> (2 * d0 + (4 * d1 + d2) floordiv 4, (4 * d1 + d2) mod 8),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    ),
    (
        "example4",
        "(d0, d1) -> (-((-11 * d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
        "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]",
        # off-by-one bound: d1 = 11 breaks it
        "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 11]",
    ),
]


def _reshape_round_trip() -> IndexingMap:
    """reshape2 (f32[50,20] -> f32[10,10,10]) then reshape1 (f32[10,10,10] -> f32[50,20]),
    output-to-input maps composed with the core's substitution-based compose."""
    # output of reshape2 (10x10x10) -> its operand (50x20): linear index 100d0 + 10d1 + d2
    first = parse_indexing_map(
        "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 20, (100 * d0 + 10 * d1 + d2) mod 20),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    # output of reshape1 (50x20) -> p0 (10x10x10): linear index 20d0 + d1
    second = parse_indexing_map(
        "(d0, d1) -> ((20 * d0 + d1) floordiv 100, ((20 * d0 + d1) mod 100) floordiv 10, (20 * d0 + d1) mod 10),"
        " domain: d0 in [0, 49], d1 in [0, 19]"
    )
    return compose(first, second)


IDENTITY_10 = "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
WRONG_10 = "(d0, d1, d2) -> (d0, d2, d1), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"


def _check_refutation(v: Verdict, a: IndexingMap, b: IndexingMap) -> None:
    """Re-derive the difference from the counterexample values with the plain evaluator."""
    assert v.refuted, v
    ce = v.counterexample
    assert ce is not None
    vals = [x for _, x in ce.values]
    nd, ns = a.num_dims, a.num_range_vars
    pt = (tuple(vals[:nd]), tuple(vals[nd : nd + ns]), tuple(vals[nd + ns :]))
    in_a, in_b = a.contains(*pt), b.contains(*pt)
    if ce.kind == "domain":
        assert in_a != in_b
        assert ce.in_domain == ("source" if in_a else "target")
    else:
        assert ce.kind == "results"
        assert in_a and in_b
        assert a.evaluate(*pt) != b.evaluate(*pt)
        assert ce.source == a.evaluate(*pt) and ce.target == b.evaluate(*pt)


@pytest.mark.parametrize("engine", ["isl", "z3", "enum"])
@pytest.mark.parametrize(("name", "original", "simplified", "wrong"), SPEC_EXAMPLES, ids=[e[0] for e in SPEC_EXAMPLES])
def test_spec_examples(name: str, original: str, simplified: str, wrong: str, engine: str) -> None:
    a, b, w = (parse_indexing_map(t) for t in (original, simplified, wrong))
    v = prove_equal(a, b, engine=engine)
    assert v.proved, v
    assert v.engine == engine
    bad = prove_equal(a, w, engine=engine)
    _check_refutation(bad, a, w)


@pytest.mark.parametrize("engine", ["isl", "z3", "enum"])
def test_reshape_round_trip(engine: str) -> None:
    composed = _reshape_round_trip()
    ident = parse_indexing_map(IDENTITY_10)
    # compose adds constraints from the intermediate shape; the domain stays the 10x10x10 box.
    v = prove_equal(composed, ident, engine=engine)
    assert v.proved, v
    wrong = parse_indexing_map(WRONG_10)
    _check_refutation(prove_equal(composed, wrong, engine=engine), composed, wrong)


def test_compose_relation_matches_core_compose() -> None:
    first = parse_indexing_map(
        "(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floordiv 20, (100 * d0 + 10 * d1 + d2) mod 20),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    )
    second = parse_indexing_map(
        "(d0, d1) -> ((20 * d0 + d1) floordiv 100, ((20 * d0 + d1) mod 100) floordiv 10, (20 * d0 + d1) mod 10),"
        " domain: d0 in [0, 49], d1 in [0, 19]"
    )
    rel = compose_relation(first, second)
    assert rel.is_equal(to_isl_map(compose(first, second)))
    assert rel.is_equal(to_isl_map(parse_indexing_map(IDENTITY_10)))


def test_spec_example4_parenthesization_matters() -> None:
    """Without the explicit parentheses, unary minus binds tighter (MLIR precedence):
    -(-11d0 - d1 + 109) floordiv 11 + 9 is a different function, refuted."""
    a = parse_indexing_map("(d0, d1) -> (-(-11 * d0 - d1 + 109) floordiv 11 + 9), domain: d0 in [0, 9], d1 in [0, 10]")
    b = parse_indexing_map("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]")
    # an independent check that they do differ somewhere
    assert any(a.evaluate(d) != b.evaluate(d) for d, _, _ in a.domain_points())
    _check_refutation(prove_equal(a, b, engine="z3"), a, b)
    _check_refutation(prove_equal(a, b, engine="isl"), a, b)
