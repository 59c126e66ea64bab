"""Review findings on hlo.coalescing, checked by hand-evaluated addresses."""

from __future__ import annotations

import pathlib

import pytest

from verified_indexing.cli import main
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


MULTI_OUTPUT = """HloModule m
f {
  p0 = f32[8,4]{1,0} parameter(0)
  s1 = f32[4,4]{1,0} slice(p0), slice={[0:4],[0:4]}
  s2 = f32[4,4]{1,0} slice(p0), slice={[2:6],[0:4]}
  ROOT t = (f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(s1, s2)
}
ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  ROOT fu = (f32[4,4]{1,0}, f32[4,4]{1,0}) fusion(a), kind=kLoop, calls=f
}
"""


def test_multi_output_fusion_is_unknown_not_bad_input(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # was: exit 3 (bad input) for a valid module the model does not cover
    (res,) = coalescing(parse_module(MULTI_OUTPUT))
    assert res.status == "unknown" and res.reason is not None
    f = tmp_path / "mo.hlo"
    f.write_text(MULTI_OUTPUT)
    assert main(["coalescing", str(f)]) == 2
    assert "unknown" in capsys.readouterr().out


DS_OFFSET = """HloModule m
ENTRY e {
  p0 = f32[6,4]{1,0} parameter(0)
  p1 = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT ds = f32[2,4]{1,0} dynamic-slice(p0, p1, z), dynamic_slice_sizes={2,4}
}
"""


def test_scalar_offset_is_uniform_with_vectors() -> None:
    # p1 (the offset) is one address for every lane and every slot. With a vector
    # size of 2 it was "not coalesced" (its vector is not contiguous: step 0)
    for v in (1, 2, 3):
        res = coalescing(parse_module(DS_OFFSET), vector_size=v, warp_size=4)
        assert res[1].status == "uniform", (v, res[1].format())
        assert res[0].status == "coalesced", v  # full rows: contiguous addresses


def test_scalar_offset_uniform_with_one_thread() -> None:
    # 2 elements, vector size 2: one thread, no lane pairs; the offset is one address
    text = DS_OFFSET.replace("f32[2,4]{1,0} dynamic-slice", "f32[1,2]{1,0} dynamic-slice").replace(
        "dynamic_slice_sizes={2,4}", "dynamic_slice_sizes={1,2}")
    res = coalescing(parse_module(text), vector_size=2, warp_size=4)
    assert res[1].status == "uniform", res[1].format()
