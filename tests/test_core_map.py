"""IndexingMap and its text syntax: the spec's maps, round trips, compose vs enumeration, parser robustness."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import (
    AffineMap,
    IndexingMap,
    Interval,
    MapError,
    ParseError,
    Variable,
    compose,
    dim,
    format_affine_map,
    parse_affine_map,
    parse_expr,
    parse_indexing_map,
    parse_map,
    sym,
)
from verified_indexing.markdown_maps import extract_map_blocks
from verified_indexing.testing.strategies import indexing_maps

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "xla-indexing-analysis.md"
# Blocks of the spec whose layout has a typo in its commas (a trailing comma after the last
# variable, or missing commas between domain lines); they are compared modulo line-final commas.
SPEC_COMMA_TYPOS = {274, 283, 436, 680}


def _spec_blocks() -> list[tuple[int, str]]:
    if not SPEC.exists():
        pytest.skip(f"spec document not found at {SPEC}")
    return [(b.line, b.text) for b in extract_map_blocks(SPEC.read_text(encoding="utf-8"))]


def _strip(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def test_every_spec_map_prints_back_exactly() -> None:
    blocks = _spec_blocks()
    assert len(blocks) >= 45  # the document prints 48 maps
    for line, text in blocks:
        expected = _strip(text)
        if "domain" not in text:
            got = format_affine_map(*_affine_parts(parse_affine_map(text)), wrap=False)
        else:
            got = str(parse_indexing_map(text))
        if line in SPEC_COMMA_TYPOS:
            expected, got = (re.sub(r",$", "", s, flags=re.M) for s in (expected, got))
        assert got == expected, f"spec block at line {line}"
    # The typo list is not stale: each listed block really differs only in commas.
    typo_blocks = {line for line, text in blocks if str(parse_map(text)) != _strip(text)}
    assert SPEC_COMMA_TYPOS <= typo_blocks


def _affine_parts(m: AffineMap) -> tuple[int, int, tuple[object, ...]]:
    return m.num_dims, m.num_symbols, m.results  # type: ignore[return-value]


def test_spec_maps_reparse_to_equal_values() -> None:
    for _, text in _spec_blocks():
        m = parse_map(text)
        assert parse_map(str(m)) == m


def test_spec_layout_details() -> None:
    m = parse_indexing_map(
        "(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2), domain: d0 in [0, 0], d1 in [0, 1], "
        "d2 in [0, 31], rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226]"
    )
    assert m.num_rt_vars == 3 and m.rt_vars[2].bounds == Interval(0, 226)
    assert str(m).splitlines()[0] == "(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2),"
    assert m.format(one_line=True).startswith("(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2), domain: ")


@pytest.mark.parametrize(
    "text",
    [
        "(d0, d1) -> (d0 / 4, d1), domain: d0 in [0, 15], d1 in [0, 3]",
        "#xla.indexing_map<\"(d0, d1) -> (d0 floordiv 4, d1), domain: d0 in [0, 15], d1 in [0, 3]\">",
        "#xla_gpu.indexing_map<(d0, d1) -> (d0 floordiv 4, d1), domain: d0 in [0, 15], d1 in [0, 3]>",
        "(d0,\n d1)\n ->\n (d0 floorDiv 4,\n d1)\n,\ndomain:\n d0 in [0,15]\n d1 in [0, 3]\n",
        "(d0, d1) -> (d0 floordiv 4, d1), domain: d0 in [0, 15], d1 in [0, 3], is_simplified: false",
    ],
)
def test_accepted_spellings(text: str) -> None:
    expected = IndexingMap([(0, 15), (0, 3)], [dim(0).floordiv(4), dim(1)])
    assert parse_indexing_map(text) == expected


def test_custom_names_min_max_big_bounds() -> None:
    text = (
        "(th_x, bl_z)[vector_elem]{rt0} -> (min(th_x, bl_z) + max(vector_elem, rt0) - th_x ceildiv 4), "
        "domain: th_x in [0, 127], bl_z in [-5, 5], vector_elem in [0, 3], rt0 in [-9223372036854775808, "
        "9223372036854775807], th_x + vector_elem in [0, 99999999999999999999]"
    )
    m = parse_indexing_map(text)
    assert m.var_name("d", 0) == "th_x" and m.var_name("s", 0) == "vector_elem"
    assert m.rt_vars[0].bounds.lo == -(2**63)
    assert m.constraints[0][1].hi == 99999999999999999999
    assert parse_indexing_map(str(m)) == m
    assert m.evaluate([10, -3], [2], [7]) == (min(10, -3) + max(2, 7) - (-(-10 // 4)),)


def test_known_empty_and_undefined() -> None:
    assert parse_indexing_map("KNOWN EMPTY").is_known_empty
    assert parse_indexing_map("UNDEFINED").is_undefined
    assert str(IndexingMap.known_empty()) == "KNOWN EMPTY"
    assert IndexingMap([(3, 1)], [dim(0)]).is_known_empty
    assert IndexingMap([(0, 3)], [dim(0)], constraints=[(dim(0) * 0 + 5, Interval(0, 4))]).is_known_empty


def test_mlir_affine_map_round_trip() -> None:
    m = parse_affine_map("#map = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2, -d0 + 3)>")
    assert m.num_dims == 2 and m.num_symbols == 1
    assert str(m) == "affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2, -d0 + 3)>"
    assert parse_affine_map(str(m)) == m
    assert m.evaluate([4, 5], [1]) == (5, 2, -1)


def test_affine_map_compose_matches_mlir_order() -> None:
    # MLIR: f.compose(g) = f ∘ g; symbols are f's then g's.
    f = parse_affine_map("(d0, d1)[s0] -> (d0 + s0, d1)")
    g = parse_affine_map("(d0)[s0] -> (d0 * 2, s0)")
    fg = f.compose(g)
    for x, a, b in itertools.product(range(-3, 4), range(-2, 3), range(-2, 3)):
        assert fg.evaluate([x], [a, b]) == f.evaluate(g.evaluate([x], [b]), [a])


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("(d0) -> (d0 +), domain: d0 in [0, 3]", 1, 14, "expected an expression"),
        ("(d0) -> (d0)\ndomain:\nd0 in [0, x]", 3, 11, "expected an integer"),
        ("(d0) -> (d1), domain: d0 in [0, 3]", 1, 10, "unknown variable"),
        ("(d0, d0) -> (d0), domain: d0 in [0, 3]", 1, 6, "duplicate variable name"),
        ("(d0) -> (d0 mod 0), domain: d0 in [0, 3]", 1, 13, "mod by zero"),
        ("(d0)[s0] -> (d0 floordiv s0), domain: d0 in [0, 3], s0 in [1, 2]", 1, 17, "constant"),
        ("(d0) -> (d0)", 1, 2, "has no bounds"),
        ("(d0) -> (d0), domain: d0 in [0, 3] @", 1, 36, "unexpected character"),
        # a text that stops early: the end of input is right after its last token, not on the line after it
        ("(d0) -> (d0 +\n\n", 1, 14, "found end of input"),
        ("(d0) -> (d0),\ndomain:\nd0 in [0, \n", 3, 10, "found end of input"),
    ],
)
def test_parse_errors_have_position_and_caret(text: str, line: int, column: int, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_indexing_map(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in str(err)
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"<input>:{line}:{column}: error:")
    assert rendered[2].index("^") == rendered[1].index(err.line_text) + column - 1


@given(indexing_maps())
def test_print_parse_round_trip(m: IndexingMap) -> None:
    text = str(m)
    back = parse_indexing_map(text)
    assert back == m
    assert str(back) == text  # deterministic printing
    assert parse_indexing_map(m.format(one_line=True)) == m


@given(indexing_maps(max_bound=3), st.data())
@settings(max_examples=100)
def test_round_trip_preserves_evaluation(m: IndexingMap, data: st.DataObject) -> None:
    back = parse_indexing_map(str(m))
    for d, s, r in itertools.islice(m.domain_points(limit=100_000), 50):
        assert back.contains(d, s, r)
        assert back.evaluate(d, s, r) == m.evaluate(d, s, r)


@given(indexing_maps(max_constraints=3), st.randoms(use_true_random=False))
def test_printed_order_is_independent_of_construction_order(m: IndexingMap, rnd: object) -> None:
    import random

    assert isinstance(rnd, random.Random)
    cons = list(m.constraints)
    rnd.shuffle(cons)
    again = m.replace(constraints=cons)
    assert again == m and str(again) == str(m)


def _compose_by_enumeration(first: IndexingMap, second: IndexingMap) -> dict[tuple[object, ...], tuple[int, ...]]:
    """The composed relation built point by point: keys (dims, second syms + first syms, second rts + first rts)."""
    out = {}
    for d, s1, r1 in first.domain_points(limit=200_000):
        mid = first.evaluate(d, s1, r1)
        s2_ranges = [range(v.bounds.lo, v.bounds.hi + 1) for v in second.range_vars]
        r2_ranges = [range(v.bounds.lo, v.bounds.hi + 1) for v in second.rt_vars]
        for s2 in itertools.product(*s2_ranges):
            for r2 in itertools.product(*r2_ranges):
                if second.contains(mid, s2, r2):
                    out[(d, s2 + s1, r2 + r1)] = second.evaluate(mid, s2, r2)
    return out


@st.composite
def composable_pairs(draw: st.DrawFn) -> tuple[IndexingMap, IndexingMap]:
    first = draw(indexing_maps(max_dims=2, max_syms=1, max_rts=1, max_bound=3, named=False))
    n = first.num_results
    second = draw(indexing_maps(max_dims=0, max_syms=1, max_rts=1, max_bound=3, named=False))
    dims = [Variable(Interval(lo, lo + draw(st.integers(0, 4)))) for lo in draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n))]
    from verified_indexing.testing.strategies import build, ref_exprs

    exprs = ref_exprs(n, second.num_range_vars, second.num_rt_vars, max_leaves=4)
    results = [build(draw(exprs)) for _ in range(draw(st.integers(0, 2)))]
    cons = [(build(draw(exprs)), Interval(-3, 6))] if draw(st.booleans()) else []
    if first.is_known_empty:
        first = IndexingMap([(0, 1)], [])
        dims = []
    if second.is_known_empty:
        second = IndexingMap(dims, results, [], [], cons)
    else:
        second = IndexingMap(dims, results, second.range_vars, second.rt_vars, cons)
    return first, second


@given(composable_pairs())
@settings(max_examples=150)
def test_compose_agrees_with_enumeration(pair: tuple[IndexingMap, IndexingMap]) -> None:
    first, second = pair
    composed = compose(first, second)
    expected = _compose_by_enumeration(first, second)
    if composed.is_known_empty:
        assert expected == {}
        return
    assert composed.num_dims == first.num_dims
    assert composed.num_range_vars == second.num_range_vars + first.num_range_vars
    assert composed.num_rt_vars == second.num_rt_vars + first.num_rt_vars
    got = {(d, s, r): composed.evaluate(d, s, r) for d, s, r in composed.domain_points(limit=500_000)}
    assert got == expected


def test_compose_spec_reshape_chain_variable_order() -> None:
    first = parse_indexing_map("(d0)[s0]{rt0} -> (d0 + s0 + rt0), domain: d0 in [0, 3], s0 in [0, 1], rt0 in [0, 2]")
    second = parse_indexing_map("(d0)[s0]{rt0} -> (d0 * 2 + s0 - rt0), domain: d0 in [0, 5], s0 in [0, 4], rt0 in [0, 1]")
    c = compose(first, second)
    # range vars: second's s0 then first's s0 (renumbered s1); rt vars likewise.
    assert c.results == ((dim(0) + sym(1) + c.var_expr("rt", 1)) * 2 + sym(0) - c.var_expr("rt", 0),)
    assert str(c).splitlines()[0] == "(d0)[s0, s1]{rt0, rt1} -> (d0 * 2 + s0 + s1 * 2 - rt0 + rt1 * 2),"
    assert (dim(0) + sym(1) + c.var_expr("rt", 1), Interval(0, 5)) in c.constraints


def test_map_validation_errors() -> None:
    with pytest.raises(MapError):
        IndexingMap([(0, 3)], [dim(1)])
    with pytest.raises(MapError):
        IndexingMap([Variable(Interval(0, 3), "x"), Variable(Interval(0, 3), "x")], [])
    with pytest.raises(MapError):
        compose(IndexingMap([(0, 3)], [dim(0), dim(0)]), IndexingMap([(0, 3)], [dim(0)]))


def test_remove_unused_symbols_keeps_used_order() -> None:
    m = parse_indexing_map(
        "(d0)[s0, s1, s2]{rt0, rt1} -> (d0 + s2 + rt1), domain: d0 in [0, 3], s0 in [0, 1], s1 in [0, 2], "
        "s2 in [0, 4], rt0 in [0, 1], rt1 in [0, 9], s1 + d0 in [0, 4]"
    )
    r = m.remove_unused_symbols()
    assert str(r) == str(
        parse_indexing_map(
            "(d0)[s0, s1]{rt0} -> (d0 + s1 + rt0), domain: d0 in [0, 3], s0 in [0, 2], s1 in [0, 4], rt0 in [0, 9], "
            "d0 + s0 in [0, 4]"
        )
    )


# -- parser robustness ------------------------------------------------------------------------------------------

_ALPHABET = "d0s1rt2() []{},:-+*/%<>#\"\n domainfloordivceilmodminmax in KNOWN EMPTY UNDEFINED 0123456789 -> _xz"


@given(st.text(alphabet=_ALPHABET, max_size=80))
@settings(max_examples=400)
def test_parser_raises_only_parse_errors_on_random_text(text: str) -> None:
    for parse in (parse_indexing_map, parse_affine_map, parse_expr, parse_map):
        try:
            parse(text)  # type: ignore[operator]
        except ParseError:
            pass


@given(indexing_maps(), st.data())
@settings(max_examples=300)
def test_parser_raises_only_parse_errors_on_mutated_maps(m: IndexingMap, data: st.DataObject) -> None:
    text = str(m)
    for _ in range(3):
        if not text:
            break
        i = data.draw(st.integers(0, len(text) - 1))
        op = data.draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        ch = data.draw(st.sampled_from(list("()[]{},:-+*0d1s in\n")))
        if op == "delete":
            text = text[:i] + text[i + 1 :]
        elif op == "insert":
            text = text[:i] + ch + text[i:]
        elif op == "replace":
            text = text[:i] + ch + text[i + 1 :]
        else:
            j = data.draw(st.integers(i, len(text)))
            text = text[:j] + text[i:j] + text[j:]
    try:
        back = parse_indexing_map(text)
    except ParseError:
        return
    assert parse_indexing_map(str(back)) == back


def test_deep_nesting_and_huge_literals_are_parse_errors() -> None:
    deep = "(" * 150 + "d0" + ")" * 150
    with pytest.raises(ParseError, match="nested more than"):
        parse_indexing_map(f"(d0) -> ({deep}), domain: d0 in [0, 3]")
    ok = "(" * 60 + "d0" + ")" * 60
    assert parse_indexing_map(f"(d0) -> ({ok} + 1), domain: d0 in [0, 3]").results == (dim(0) + 1,)
    with pytest.raises(ParseError, match="nested more than"):
        parse_expr("-" * 150 + "d0")
    with pytest.raises(ParseError, match="too long") as info:
        parse_indexing_map("(d0) -> (d0 * 1" + "0" * 5000 + "), domain: d0 in [0, 3]")
    assert info.value.column == 15
