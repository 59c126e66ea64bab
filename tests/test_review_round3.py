"""Review round 3: false answers found in the TVMScript/CINN readers, the
legality logic and HLO coalescing/utilization, each against an oracle of its
own (a brute-force warp emulator, hand-written interpreters)."""

from __future__ import annotations

from test_coalescing_paths import emulate

from verified_indexing.cli import main
from verified_indexing.hlo.coalescing import coalescing
from verified_indexing.hlo.parser import parse_module

# -- coalescing: lanes that do not read between lanes that do --------------------------------------------------

# Lane 0 reads p[0], lane 1 a constant, lane 2 p[100]: one warp, two segments.
# No two neighbouring lanes both read p, so the neighbour question was vacuous
# and the answer was 'coalesced'.
CONCAT_GAP = """HloModule m
ENTRY e {
  p = f32[200]{0} parameter(0)
  a = f32[1]{0} slice(p), slice={[0:1]}
  b = f32[1]{0} slice(p), slice={[100:101]}
  c = f32[1]{0} constant({0})
  ROOT r = f32[3]{0} concatenate(a, c, b), dimensions={0}
}
"""


def test_lanes_with_a_gap_between_them_are_not_coalesced() -> None:
    assert emulate(CONCAT_GAP, "e", 0, [], 1, 32) == "unknown"
    (res,) = coalescing(parse_module(CONCAT_GAP))
    assert res.status == "unknown", res.format()  # was: coalesced
    assert res.reason is not None and "lanes 0 and 2 of warp 0 read addresses 0 and 100" in res.reason
    assert main(["coalescing", "-e", CONCAT_GAP]) == 2


def test_lanes_with_a_gap_reading_one_address_are_uniform() -> None:
    text = CONCAT_GAP.replace("[100:101]", "[0:1]")
    assert emulate(text, "e", 0, [], 1, 32) == "uniform"
    (res,) = coalescing(parse_module(text))
    assert res.status == "uniform", res.format()


def test_gap_in_a_warp_but_not_across_warps() -> None:
    # warps of 2 lanes: lanes 0 and 2 are in different warps; nothing to compare
    assert emulate(CONCAT_GAP, "e", 0, [], 1, 2) == "coalesced"
    (res,) = coalescing(parse_module(CONCAT_GAP), warp_size=2)
    assert res.status == "coalesced", res.format()
