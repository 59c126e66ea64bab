"""The isl objects built directly with isl's operations (``pointwise_map``, ``to_isl_domain``) are the same
sets and relations as isl's own reading of the text encoding (``text_pointwise_map``, ``text_domain``), and
both agree with the plain evaluator point by point on small maps."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from strategies import indexing_maps

from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.engines.isl import (
    limited_context,
    pointwise_map,
    text_domain,
    text_pointwise_map,
    to_isl_domain,
)


@settings(max_examples=150, deadline=None)
@given(indexing_maps())
def test_direct_construction_equals_the_text_encoding(m: IndexingMap) -> None:
    assert pointwise_map(m).is_equal(text_pointwise_map(m))
    assert to_isl_domain(m).is_equal(text_domain(m))


@settings(max_examples=60, deadline=None)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0, max_bound=4))
def test_direct_construction_holds_exactly_the_evaluated_points(m: IndexingMap) -> None:
    pm = pointwise_map(m)
    ranges = [range(v.bounds.lo, v.bounds.hi + 1) for _, _, v in m.variables()]
    nd, ns = m.num_dims, m.num_range_vars
    pairs = []
    for p in itertools.product(*ranges):
        d, s = p[:nd], p[nd:nd + ns]
        if m.contains(d, s):
            pairs.append("[" + ", ".join(map(str, p)) + "] -> [" + ", ".join(map(str, m.evaluate(d, s))) + "]")
    if not pairs:
        assert pm.is_empty()
    else:
        assert pm.is_equal(type(pm)("{ " + "; ".join(pairs) + " }"))


def test_building_is_not_counted_against_the_operation_limit() -> None:
    # 14 nested mods: reading or building the question must not exhaust a small budget by itself
    e = "d0"
    for c in range(2, 16):
        e = f"({e}) mod {c + 1}"
    m = parse_indexing_map(f"(d0) -> ({e}), domain: d0 in [0, 1000]")
    with limited_context() as ctx:
        ctx.set_max_operations(1)
        built = pointwise_map(m, ctx=ctx)
        assert ctx.get_max_operations() == 1
    assert built is not None


def test_known_empty_builds_empty_objects() -> None:
    m = IndexingMap.known_empty()
    assert to_isl_domain(m).is_empty() and pointwise_map(m).is_empty()
