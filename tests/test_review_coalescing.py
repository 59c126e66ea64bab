"""Review findings on hlo.coalescing, checked by hand-evaluated addresses."""

from __future__ import annotations

from verified_indexing.hlo.coalescing import coalescing
from verified_indexing.hlo.parser import parse_module

# p is read twice: (i, j) -> (i, j) (lanes step by 1: coalesced) and
# (i, j) -> (i, 0) (one address per warp). Lanes 0..3 of warp 0 read addresses
# 0, 1, 2, 3 through the first map: the warp does not read one address.
MIXED = """HloModule m
ENTRY e {
  p = f32[8,32]{1,0} parameter(0)
  s = f32[8,1]{1,0} slice(p), slice={[0:8],[0:1]}
  r = f32[8]{0} reshape(s)
  b = f32[8,32]{1,0} broadcast(r), dimensions={0}
  ROOT a = f32[8,32]{1,0} add(p, b)
}
"""


def test_coalesced_and_uniform_maps_mixed_are_not_uniform() -> None:
    # was: "uniform" (only the maps whose lanes were not proved were asked for one address)
    (res,) = coalescing(parse_module(MIXED), warp_size=4)
    assert res.status != "uniform"
    assert res.status == "not coalesced"
    assert res.witness is not None and res.witness["warp"] == 0
    addresses = [addr for _lane, _elem, addr in res.witness["lanes"]]
    assert addresses == [0, 0, 0, 0]  # the broadcast map's lanes: a step of 0, not 1
