"""Review findings on hlo.utilization (utilization and tile), checked against
hand-computed reads."""

from __future__ import annotations

import pathlib

import pytest

from verified_indexing.cli import main
from verified_indexing.hlo.parser import parse_module
from verified_indexing.hlo.utilization import operand_utilization, tile_reads

GATHER = """HloModule m
ENTRY e {
  p0 = f32[10,4]{1,0} parameter(0)
  idx = s32[5,1]{1,0} parameter(1)
  ROOT g = f32[5,4]{1,0} gather(p0, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
"""

DS = """HloModule m
ENTRY e {
  p0 = f32[16,8]{1,0} parameter(0)
  p1 = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT ds = f32[4,8]{1,0} dynamic-slice(p0, p1, z), dynamic_slice_sizes={4,8}
}
"""

DUS = """HloModule m
ENTRY e {
  p0 = f32[8,8]{1,0} parameter(0)
  u = f32[2,8]{1,0} parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[8,8]{1,0} dynamic-update-slice(p0, u, p2, z)
}
"""


def test_tile_of_gather_is_not_exact() -> None:
    # A 2x2 tile of the gather reads 2 rows (chosen by the indices) x 2 columns
    # = 4 elements of p0 in any run; the box [10, 2] is the union over every
    # index value, so "exact" (every element of the box read) was wrong.
    (p0, _idx) = tile_reads(parse_module(GATHER), [0, 0], [2, 2])
    assert p0.sizes == (10, 2)
    assert not p0.exact


def test_tile_of_dynamic_slice_is_not_exact() -> None:
    # Any run reads 1 row x 8 = 8 elements for a 1x8 tile; the box spans every offset (13 rows).
    p0 = tile_reads(parse_module(DS), [0, 0], [1, 8])[0]
    assert p0.sizes == (13, 8)
    assert not p0.exact


def test_tile_containment_of_dynamic_update_slice_update() -> None:
    # XLA's map to the update is not clipped to the update region; the read set is
    # (clipped), and the box contains every read of the update: containment holds.
    reads = tile_reads(parse_module(DUS), [0, 0], [8, 8])
    u = reads[1]
    assert (u.offsets, u.sizes) == ((0, 0), (2, 8))
    assert u.proved, [v.status for v in u.containment]


def test_dynamic_update_slice_operand_reads_exclude_the_update() -> None:
    # At every offset, 16 of the 64 output elements come from the update: 48 elements of p0 are read.
    # The analysis marks XLA's identity map to operand 0 as an over-approximation, so 64 is an upper bound.
    p0 = operand_utilization(parse_module(DUS))[0]
    assert p0.status == "ok"
    assert not (p0.exact and p0.elements_read == 64)


STRIDES = """HloModule m
ENTRY e {
  p = f32[12]{0} parameter(0)
  a = f32[2]{0} slice(p), slice={[1:9:4]}
  b = f32[2]{0} slice(p), slice={[5:12:6]}
  ROOT r = f32[2]{0} add(a, b)
}
"""


def test_tile_box_stride_of_a_union() -> None:
    # reads {1, 5} and {5, 11}: every read is odd, so the smallest strided box is
    # offset 1, stride 2, 6 elements (was: isl's stride of the union, 1: 11 elements)
    (p,) = tile_reads(parse_module(STRIDES), [0], [2])
    assert (p.offsets, p.sizes, p.strides) == ((1,), (6,), (2,))
    assert p.proved and not p.exact


CHECKER = """HloModule m
ENTRY e {
  p0 = f32[3,3]{1,0} parameter(0)
  v1 = f32[1,9]{1,0} reshape(p0)
  v2 = f32[1,3]{1,0} slice(v1), slice={[0:1:1],[1:7:2]}
  ROOT v3 = f32[1,3]{1,0} reshape(v2)
}
"""


def test_tile_box_stride_relative_to_other_dims() -> None:
    # reads p0 elements 1, 3, 5 = (0, 1), (1, 0), (1, 2): i0 + i1 odd. isl's stride of
    # i0 is 2 *for each i1*; taken alone it gave the box rows {0} only (was: offsets
    # [0, 0] sizes [1, 2] strides [2, 2], containment not proved).
    (p,) = tile_reads(parse_module(CHECKER), [0, 0], [1, 3])
    assert (p.offsets, p.sizes, p.strides) == ((0, 0), (2, 3), (1, 1))
    assert p.proved and not p.exact


ZERO = """HloModule m
ENTRY e {
  p0 = f32[0,4]{1,0} parameter(0)
  ROOT t = f32[4,0]{0,1} transpose(p0), dimensions={1,0}
}
"""


def test_zero_element_tensors(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    # was: exit 4 (AssertionError in format: no ratio for an empty operand) for
    # utilization, and exit 3 ("mod by zero") for coalescing of a valid module
    f = tmp_path / "zero.hlo"
    f.write_text(ZERO)
    assert main(["utilization", str(f)]) == 0
    assert "read 0 of 0 elements" in capsys.readouterr().out
    assert main(["coalescing", str(f)]) == 0
    assert "not read" in capsys.readouterr().out


GATHER_REDUCE = """HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p0 = f32[10,6]{1,0} parameter(0)
  idx = s32[5,2]{1,0} parameter(1)
  g = f32[5,2,3]{2,1,0} gather(p0, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
  c = f32[] constant(0)
  ROOT r = f32[5]{0} reduce(g, c), dimensions={1,2}, to_apply=add
}
"""


def test_gather_then_reduce_upper_bound_text() -> None:
    # was: "..., None accesses [upper bound, ...]" (no bound on accesses with range variables)
    p0 = operand_utilization(parse_module(GATHER_REDUCE))[0]
    assert not p0.exact and p0.accesses is None
    assert p0.elements_read is not None and p0.elements_read >= 30  # 5 disjoint 2x3 windows can be read
    assert "None" not in p0.format()
