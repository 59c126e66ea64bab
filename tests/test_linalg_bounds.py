"""Linalg fusion of pairs whose maps leave their tensors for some sizes (issue 26
item 4): the input program's out-of-bounds accesses are reported as warnings
with the sizes, and no verdict rests on sizes where the pair is undefined. The
oracle is the numpy interpreter of Linalg (``IndexError`` on any access outside
an operand), run at every size of a small grid."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from linalg_interpreter import run_ops
from test_linalg_props import _witness_reproduces
from test_linalg_whole_op import _env, agrees_at

from verified_indexing.legality.linalg import FusionReport, check_fusion, fusion_candidates, parse_linalg

PAIR = """
func.func @f(%A: tensor<?xf32>, %B: tensor<?xf32>, %C: tensor<?xf32>) -> tensor<?xf32> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ({w})>],
                       iterator_types = ["parallel"]}}
      ins(%A : tensor<?xf32>) outs({init} : tensor<?xf32>) {{
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }} -> tensor<?xf32>
  %1 = linalg.generic {{indexing_maps = [affine_map<(d0) -> ({r})>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}}
      ins(%0 : tensor<?xf32>) outs({out} : tensor<?xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %2 = arith.addf %in, %in : f32
    linalg.yield %2 : f32
  }} -> tensor<?xf32>
  return %1 : tensor<?xf32>
}}
"""

GRID = range(0, 5)


def _report(text: str) -> FusionReport:
    ops = parse_linalg(text)
    ((p, c, k),) = fusion_candidates(ops)
    return check_fusion(p, c, operand_index=k)


def _defined(rep: FusionReport, sizes: dict[str, int]) -> bool:
    """The interpreter runs the pair at these sizes without leaving a tensor."""
    try:
        run_ops([rep.producer, rep.consumer], _env(rep, sizes, 0))
    except IndexError:
        return False
    return True


def _grid(rep: FusionReport) -> list[dict[str, int]]:
    assert rep.sizes is not None
    names = rep.sizes.names
    return [dict(zip(names, pt)) for pt in itertools.product(GRID, repeat=len(names))]


def test_out_of_bounds_producer_write_is_not_a_legal_when() -> None:
    # The producer writes %A[2 * d0] for d0 < N0: outside %A from N0 = 2 on. It was
    # "legal when N0 <= 1, illegal otherwise at N0 = 2", a counterexample at a size
    # where the program itself is undefined, and no warning.
    rep = _report(PAIR.format(w="d0 * 2", init="%A", r="d0", out="%B"))
    assert rep.status == "legal" and rep.condition == "N0 <= 1", (rep.status, rep.condition)
    assert rep.otherwise is None  # "illegal otherwise" would rest on undefined sizes
    assert len(rep.warnings) == 1 and "at N0 = 2: producer %0 iteration (1,) writes %A[2]" in rep.warnings[0]
    from verified_indexing.legality.linalg import format_report

    assert "ours: legal when N0 <= 1 (the input program is undefined at the other sizes" in format_report(rep)
    for sizes in _grid(rep):
        assert rep.holds_at([sizes["N0"]]) == _defined(rep, sizes)
        if rep.holds_at([sizes["N0"]]):
            assert agrees_at(rep, sizes)


def test_out_of_bounds_producer_write_everywhere_is_unknown() -> None:
    # %A[d0 + 1]: outside at every size but 0. It was "illegal" with a counterexample
    # at N0 = 1, where the program writes out of bounds.
    rep = _report(PAIR.format(w="d0 + 1", init="%A", r="d0", out="%B"))
    assert rep.status == "unknown" and rep.exit_code == 2
    assert "no size is left" in rep.reason and "writes %A[1], outside the tensor" in rep.warnings[0]
    assert not any(_defined(rep, s) for s in _grid(rep) if s["N0"] >= 1)


@pytest.mark.parametrize("tmpl,w,init,r,out,old", [
    (PAIR, "d0 - 1", "%C", "0", "%C", "N0 >= 2 and N1 >= 1"),
    ("2d", "d1, d0 + d1", "%A", "d0, d1 + 1", "%B", "N1 >= 1 and N0 <= 2"),
    ("2d", "d0 + 1, d1", "%B", "d0, d1 + 1", "%B", "N2 >= 1 and N1 <= 1"),
])
def test_no_legal_when_resting_only_on_undefined_sizes(tmpl: str, w: str, init: str, r: str, out: str,
                                                        old: str) -> None:
    # Each was "legal when <old>" (exit 0), and at every size of that condition the
    # pair itself accesses out of bounds (issue 26 item 4's false proof).
    rep = _report((PAIR2 if tmpl == "2d" else tmpl).format(w=w, init=init, r=r, out=out))
    assert rep.status == "unknown" and "no size is left" in rep.reason and rep.exit_code == 2
    assert rep.condition != old and "accesses out of bounds" in rep.warnings[0]


def test_illegal_witness_at_a_defined_size() -> None:
    # The producer's loops come from %A (N0), its init is %B (N1): writing %B[d0 + 1]
    # is defined when N1 >= N0 + 1; there the consumer reads %0[0], never written.
    rep = _report(PAIR.format(w="d0 + 1", init="%B", r="d0", out="%B"))
    assert rep.status == "illegal" and rep.warnings
    w = next(o.witness for o in rep.obligations if o.witness is not None)
    assert w is not None
    assert _defined(rep, {"N0": w["sizes"]["N0"], "N1": w["sizes"]["N1"]})
    _witness_reproduces(rep)


def test_static_out_of_bounds_write_is_unknown() -> None:
    text = PAIR.format(w="d0 + 1", init="%A", r="d0", out="%B").replace("?xf32", "4xf32")
    rep = _report(text)
    assert rep.status == "unknown" and "at its static sizes" in rep.reason
    assert "producer %0 iteration (3,) writes %A[4], outside the tensor" in rep.warnings[0]


WRITES = ["d0", "d0 + 1", "d0 * 2", "d0 floordiv 2", "d0 - 1"]
READS = ["d0", "d0 + 1", "d0 * 2", "d0 floordiv 2", "d0 - 1", "0"]
INITS = ["%A", "%B", "%C"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(WRITES), st.sampled_from(INITS), st.sampled_from(READS), st.sampled_from(["%B", "%C"]))
def test_random_pairs_leaving_their_tensors_agree_with_the_interpreter(w: str, init: str, r: str, out: str) -> None:
    text = PAIR.format(w=w, init=init, r=r, out=out)
    rep = _report(text)
    assert rep.sizes is not None
    names = rep.sizes.names
    grid = _grid(rep)
    undefined = [s for s in grid if not _defined(rep, s)]
    if undefined:  # an out-of-bounds access of the input at a size of the grid is always reported
        assert any("accesses out of bounds" in x for x in rep.warnings), (text, undefined[0])
    for x in rep.warnings:
        m = re.search(r"\(at ([^:]*):", x)
        if "accesses out of bounds" in x and m is not None:  # the warning's sizes are undefined
            at = {kv.split(" = ")[0]: int(kv.split(" = ")[1]) for kv in m.group(1).split(", ")}
            if all(v in GRID for v in at.values()):
                assert not _defined(rep, at), (text, x)
    if rep.status == "legal":
        assert rep.whole_op is not None and rep.whole_op.verdict.proved
        for s in grid:
            if rep.holds_at([s[n] for n in names]):
                assert _defined(rep, s), (text, s, rep.condition)  # never resting on undefined behaviour
                assert agrees_at(rep, s), (text, s)
        if rep.otherwise is not None:
            _witness_reproduces(rep)
            assert _defined(rep, {n: rep.otherwise.witness["sizes"].get(n, 1) for n in names})  # type: ignore[index]
    elif rep.status == "illegal":
        _witness_reproduces(rep)
        w0 = next(o.witness for o in rep.obligations if o.verdict.refuted and o.witness is not None)
        assert w0 is not None
        assert _defined(rep, {n: w0.get("sizes", {}).get(n, 1) for n in names}), (text, w0)
    else:
        assert rep.reason
        if "no size is left" in rep.reason:
            assert not any(_defined(rep, s) for s in grid if all(v >= 1 for v in s.values())), text


@pytest.mark.parametrize("w", WRITES)
def test_every_write_map_reports_its_out_of_bounds_sizes(w: str) -> None:
    rep = _report(PAIR.format(w=w, init="%A", r="d0", out="%B"))
    assert rep.sizes is not None
    leaves = any(not _defined(rep, s) for s in _grid(rep))
    assert leaves == any("accesses out of bounds" in x for x in rep.warnings), (w, rep.warnings)


PAIR2 = """
func.func @f(%A: tensor<?x?xf32>, %B: tensor<?x?xf32>, %C: tensor<?x?xf32>) {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ({w})>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%A : tensor<?x?xf32>) outs({init} : tensor<?x?xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }} -> tensor<?x?xf32>
  %1 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> ({r})>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%0 : tensor<?x?xf32>) outs({out} : tensor<?x?xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %2 = arith.subf %in, %out : f32
    linalg.yield %2 : f32
  }} -> tensor<?x?xf32>
  return
}}
"""
WRITES2 = ["d0, d1", "d1, d0", "d0 + 1, d1", "d0, d1 * 2", "d1, d0 + d1"]
READS2 = ["d0, d1", "d1, d0", "d0, d1 + 1", "d0 floordiv 2, d1", "0, d1"]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(WRITES2), st.sampled_from(["%A", "%B"]), st.sampled_from(READS2), st.sampled_from(["%B", "%C"]))
def test_random_2d_pairs_leaving_their_tensors_agree_with_the_interpreter(w: str, init: str, r: str, out: str) -> None:
    text = PAIR2.format(w=w, init=init, r=r, out=out)
    rep = _report(text)
    assert rep.sizes is not None
    names = rep.sizes.names
    grid = [dict(zip(names, pt)) for pt in itertools.product(range(0, 4), repeat=len(names))]
    undefined = [s for s in grid if not _defined(rep, s)]
    if undefined:
        assert any("accesses out of bounds" in x for x in rep.warnings), (text, undefined[0])
    if rep.status == "legal":
        for s in grid:
            if rep.holds_at([s[n] for n in names]):
                assert _defined(rep, s), (text, s, rep.condition)
                assert agrees_at(rep, s), (text, s)
    elif rep.status == "illegal":
        _witness_reproduces(rep)
        w0 = next(o.witness for o in rep.obligations if o.verdict.refuted and o.witness is not None)
        assert w0 is not None
        assert _defined(rep, {n: w0.get("sizes", {}).get(n, 1) for n in names}), (text, w0)
    else:
        assert rep.reason
