"""audit-kernels (issue 25 item 2): a gather kernel after XLA's passes (its indices read at a linear
index) and the kernels of XLA:CPU's tiled emitter (``xtile.entry_func``: tiles extracted, transposed,
broadcast, computed elementwise and inserted), each checked against the numpy interpreter of the fused
HLO (tests/hlo_oracle.py), proved as dumped, and refuted (or unknown, named) when a map is planted wrong.
The kernels are XLA:CPU's (jaxlib) dumps of small JAX programs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hlo_oracle import run
from test_hlo_audit import _cli, _fusion_oracle, _kernel_relation

from verified_indexing.hlo.parser import parse_module

HERE = Path(__file__).resolve().parent / "hlo_corpus" / "audit"
DYNAMIC = HERE / "kernels_dynamic"
TILED = HERE / "kernels_tiled"
GATHER_AFTER = next(DYNAMIC.glob("*-post-optimization.mlir"))
TRANSPOSE = next(TILED.glob("*transpose_copy_fusion.1-pre-optimization.mlir"))


def _planted(tmp_path: Path, kernel: Path, old: str, new: str) -> Path:
    """A dump directory holding ``kernel`` with ``old`` replaced by ``new`` (once), beside its module."""
    prefix = ".".join(kernel.name.split(".")[:2])
    shutil.copy(kernel.parent / f"{prefix}.cpu_after_optimizations.txt", tmp_path)
    text = kernel.read_text()
    assert old in text
    (tmp_path / kernel.name).write_text(text.replace(old, new, 1))
    return tmp_path


def test_no_timing_leaves_the_kernel_times_out_of_the_text() -> None:
    # --no-timing promises the same bytes on two runs: the text printed each kernel's milliseconds
    code, out, _ = _cli("audit-kernels", str(DYNAMIC), "--no-timing")
    assert code == 0, out
    assert re.search(r"PROVED\s+add_bitcast_fusion \(after XLA's passes\)$", out, re.M), out
    assert not re.search(r"\d ms\)", out), out
    code, out, _ = _cli("audit-kernels", str(DYNAMIC))
    assert re.search(r"\(\d+\.\d ms\)", out), out  # shown without it


# -- a gather after XLA's passes: its indices read at the row of the linear index written ---------------


def test_the_gather_kernel_after_xla_passes_is_proved() -> None:
    # x[i] + 1 with x f32[16,8], i s32[3]: after the passes the kernel reads i[r] in an outer scf.for over the
    # rows r and writes the linear index r * 8 + c; the element of i read is stated against the output element
    code, out, _ = _cli("audit-kernels", str(DYNAMIC))
    assert code == 0, out
    assert re.search(r"PROVED\s+add_bitcast_fusion \(after XLA's passes\)", out), out
    assert "summary: 2 proved" in out


@pytest.mark.parametrize(("old", "new"), [
    ("%c15 = arith.constant 15 : index", "%c15 = arith.constant 14 : index"),  # a wrong clamp of the index
    ('"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 15]', '"(d0, d1) -> (d0 * 8 + d1 + 1), domain: d0 in [0, 15]'),
])
def test_a_wrong_gather_kernel_after_xla_passes_is_refuted_with_its_element(tmp_path: Path, old: str, new: str) -> None:
    d = _planted(tmp_path, GATHER_AFTER, old, new)
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \((\d+)\), parameter 1 element \((\d+)\) = (-?\d+): (the kernel|the analysis) "
                  r"reads parameter 0 element \((\d+)\)", out)
    assert code == 1 and m is not None, out
    linear, row, value, who, element = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), int(m.group(5))
    o = divmod(linear, 8)  # the output f32[3,8]{1,0}
    assert row == o[0]  # the element of the index array the output row reads
    module = parse_module(next(d.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    indices = np.full((3, 1), value + 16 if value < 0 else value)  # the fused computation wraps negatives
    (g,) = run(comp.by_name["gather.2"], comp, {1: indices})
    truth = {x[0] * 8 + x[1] for k, x in g[o[0], 0, o[1]] if k == 0}  # parameter 0 f32[16,8]{1,0}, linear
    assert (element in truth) == (who == "the analysis")


def test_the_index_array_read_off_the_output_row_is_not_proved(tmp_path: Path) -> None:
    # the kernel reads i[2 - r] for output row r: not the element the analysis' runtime variable stands for
    d = _planted(tmp_path, GATHER_AFTER, "%extracted = tensor.extract %arg1[%arg3]",
                 "%r = xla.apply_indexing #xla.indexing_map<\"(d0) -> (2 - d0), domain: d0 in [0, 2]\">(%arg3)\n"
                 "      %extracted = tensor.extract %arg1[%r]")
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \((\d+)\), parameter 1 element \((\d+)\) = -?\d+: the kernel reads parameter 1 "
                  r"element \((\d+)\), the analysis does not", out)
    assert code == 1 and m is not None, out
    row = int(m.group(1)) // 8
    assert int(m.group(3)) == 2 - row != row  # the kernel's element of i; the program reads i[row]


# -- the tiled emitter: xtile.entry_func ---------------------------------------------------------------


def test_tiled_kernels_are_proved_and_read_what_the_interpreter_says() -> None:
    code, out, _ = _cli("audit-kernels", str(TILED))
    assert code == 0, out
    for name in ("iota_add_fusion", "transpose_copy_fusion.1", "transpose_copy_fusion.2", "wrapped_tanh"):
        assert re.search(rf"PROVED\s+{re.escape(name)} ", out), out
    # independent of the analysis: the kernels' tiles, enumerated, read what the numpy interpreter says
    for kernel in sorted(TILED.glob("*.mlir")):
        fusion = re.search(r"__compute_module_(.*)-pre-optimization", kernel.name)
        assert fusion is not None
        hlo = TILED / (".".join(kernel.name.split(".")[:2]) + ".cpu_after_optimizations.txt")
        want = _fusion_oracle(hlo, 0, fusion.group(1))
        got = _kernel_relation(kernel.read_text(), 0)
        assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}, kernel.name


@pytest.mark.parametrize(("old", "new"), [
    ('"(pid_0) -> (pid_0 mod 2)', '"(pid_0) -> ((pid_0 + 1) mod 2)'),  # the tile read at another offset
    ("[1, 1, 1, 1] : memref<3x2x3x3xf32>", "[1, 1, 1, 2] : memref<3x2x3x3xf32>"),  # a stride of 2
])
def test_a_wrong_tiled_kernel_is_refuted_with_its_element(tmp_path: Path, old: str, new: str) -> None:
    d = _planted(tmp_path, TRANSPOSE, old, new)
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \(([^)]*)\): (the kernel|the analysis) reads parameter 0 element \(([^)]*)\)", out)
    assert code == 1 and m is not None, out
    at = tuple(int(x) for x in m.group(1).split(","))
    element = tuple(int(x) for x in m.group(3).split(","))
    truth = _fusion_oracle(d / "module_0024.jit__lambda.cpu_after_optimizations.txt", 0, "transpose_copy_fusion.1")
    kernel = _kernel_relation((d / TRANSPOSE.name).read_text(), 0)
    assert (element in truth[at]) == (m.group(2) == "the analysis")
    assert (element in kernel.get(at, set())) == (m.group(2) == "the kernel")


def test_a_tile_op_the_interpreter_does_not_read_is_unknown_and_named(tmp_path: Path) -> None:
    d = _planted(tmp_path, TRANSPOSE, "stablehlo.transpose %2, dims = [2, 3, 1, 0]", "stablehlo.reverse %2, dims = [0]")
    code, out, _ = _cli("audit-kernels", str(d))
    assert code == 2 and "UNKNOWN" in out and "stablehlo.reverse" in out, out


def test_a_tiled_kernel_over_a_memref_of_another_shape_is_unknown(tmp_path: Path) -> None:
    d = _planted(tmp_path, TRANSPOSE, "%arg0: memref<3x2x3x3xf32>", "%arg0: memref<3x2x9xf32>")
    code, out, _ = _cli("audit-kernels", str(d))
    assert code == 2 and "UNKNOWN" in out, out


EMBEDDING = HERE / "kernels_embedding"


def test_an_embedding_lookup_after_xla_passes_reads_its_2d_index_array_at_the_output_element(tmp_path: Path) -> None:
    # t[i] * 2 with t f32[10,4], i s32[2,2]: after the passes the index array is flattened too (tensor<4xi32>
    # read at o0 * 2 + o1); the analysis names the element ((o0 * 2 + o1) floordiv 2, (o0 * 2 + o1) mod 2):
    # the same element, proven equal over the output's coordinates
    code, out, _ = _cli("audit-kernels", str(EMBEDDING))
    assert code == 0 and "summary: 2 proved" in out, out
    kernel = next(EMBEDDING.glob("*-post-optimization.mlir"))
    d = _planted(tmp_path, kernel, "%c9 = arith.constant 9 : index", "%c9 = arith.constant 8 : index")
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \((\d+)\), parameter 1 element \((\d+), (\d+)\) = (-?\d+): (the kernel|the analysis) "
                  r"reads parameter 0 element \((\d+)\)", out)
    assert code == 1 and m is not None, out
    linear, value, who, element = int(m.group(1)), int(m.group(4)), m.group(5), int(m.group(6))
    o = (linear // 8, linear // 4 % 2, linear % 4)  # the output f32[2,2,4]{2,1,0}
    assert (int(m.group(2)), int(m.group(3))) == o[:2]  # the element of i the output element reads
    module = parse_module(next(d.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    indices = np.full((4, 1), value + 10 if value < 0 else value)  # the fused computation wraps negatives
    (g,) = run(comp.by_name["gather.2"], comp, {1: indices})
    truth = {x[0] * 4 + x[1] for k, x in g[o[0] * 2 + o[1], 0, o[2]] if k == 0}  # t f32[10,4]{1,0}, linear
    assert (element in truth) == (who == "the analysis")


GATHER_2D = HERE / "kernels_gather2d"


def test_a_gather_with_two_index_arrays_is_decided(tmp_path: Path) -> None:
    # x[i, j] + 1 (x f32[8,8], i and j s32[3]): the fused computation concatenates the two wrapped index arrays;
    # the kernel picks each column with an scf.if on constants (taken in place) and reads i[o0], j[o0]; the
    # analysis' runtime variables are the concatenation's elements (o0, 0) and (o0, 1): each traced to its array
    code, out, _ = _cli("audit-kernels", str(GATHER_2D))
    assert code == 0 and "summary: 2 proved" in out, out
    kernel = next(GATHER_2D.glob("*-pre-optimization.mlir"))
    d = _planted(tmp_path, kernel, "%c7 = arith.constant 7 : index", "%c7 = arith.constant 6 : index")
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \((\d+)\), parameter 1 element \((\d+)\) = (-?\d+), parameter 2 element \((\d+)\) = "
                  r"(-?\d+): (the kernel|the analysis) reads parameter 0 element \((\d+), (\d+)\)", out)
    assert code == 1 and m is not None, out
    o, who = int(m.group(1)), m.group(6)
    assert int(m.group(2)) == int(m.group(4)) == o  # the elements of the index arrays the output element reads
    module = parse_module(next(d.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()

    def wrap(v: int) -> int:
        return v + 8 if v < 0 else v  # the fused computation's select

    concat = comp.by_name["concatenate.0"]  # its columns: parameter 2 (bitcast.5), then parameter 1 (bitcast.4)
    assert concat.operands == ["bitcast.5", "bitcast.4"]
    indices = np.array([[wrap(int(m.group(5))), wrap(int(m.group(3)))]] * 3)
    (g,) = run(comp.by_name["gather.2"], comp, {1: indices})
    truth = {x for k, x in g[o, 0, 0] if k == 0}
    assert ((int(m.group(7)), int(m.group(8))) in truth) == (who == "the analysis")


TAKE_ALONG = HERE / "kernels_take_along"


def test_take_along_axis_is_decided(tmp_path: Path) -> None:
    # jnp.take_along_axis(x, i, axis=1) + 1 (x f32[4,8], i s32[4,3]): the gather's index rows concatenate an iota
    # (the row) and i; the kernel computes the iota's value as an index (index_castui, trunci) and reads i at the
    # output element twice, written differently ((o0 * 3 + o1) / 3, ... mod 3): the same element, proven equal
    code, out, _ = _cli("audit-kernels", str(TAKE_ALONG))
    assert code == 0 and "summary: 2 proved" in out, out
    kernel = next(TAKE_ALONG.glob("*-pre-optimization.mlir"))
    d = _planted(tmp_path, kernel, '"(d0, d1) -> (d0 / 3), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c0_3)',
                 '"(d0, d1) -> ((d0 / 3 + 1) mod 4), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c0_3)')
    code, out, _ = _cli("audit-kernels", str(d))
    m = re.search(r"output element \((\d+), (\d+)\), parameter 1 element \((\d+), (\d+)\) = (-?\d+): (the kernel|the "
                  r"analysis) reads parameter 0 element \((\d+), (\d+)\)", out)
    assert code == 1 and m is not None, out
    o = (int(m.group(1)), int(m.group(2)))
    assert (int(m.group(3)), int(m.group(4))) == o
    value, who, element = int(m.group(5)), m.group(6), (int(m.group(7)), int(m.group(8)))
    module = parse_module(next(d.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    wrapped = value + 8 if value < 0 else value  # the fused computation's select
    indices = np.array([[r // 3, wrapped] for r in range(12)])  # concatenate(iota (the row), i)
    (g,) = run(comp.by_name["gather.4"], comp, {1: indices})
    truth = {x for k, x in g[o[0] * 3 + o[1], 0, 0] if k == 0}
    assert (element in truth) == (who == "the analysis")


def test_a_tiled_kernel_reading_an_argument_another_way_is_unknown(tmp_path: Path) -> None:
    # a value the interpreter does not read (the argument as a tensor, a slice of it) feeding the computed tile
    # could carry reads it would miss: unknown, never a refutation built on missing reads
    kernel = next(TILED.glob("*wrapped_tanh-pre-optimization.mlir"))
    d = _planted(tmp_path, kernel, "%1 = math.tanh %0 : tensor<1x4xf32>",
                 "%b = bufferization.to_tensor %arg0 : memref<4x3xf32> to tensor<4x3xf32>\n"
                 "    %e = tensor.extract_slice %b[0, 0] [1, 4] [1, 1] : tensor<4x3xf32> to tensor<1x4xf32>\n"
                 "    %1 = arith.addf %0, %e : tensor<1x4xf32>")
    code, out, _ = _cli("audit-kernels", str(d))
    assert code == 2 and "UNKNOWN" in out and "does not read" in out, out


def test_a_loop_kernel_using_an_argument_another_way_is_unknown(tmp_path: Path) -> None:
    # the loop emitter's kernel: an argument used by an op other than tensor.extract (a slice of it) could be
    # reads the interpreter misses: unknown, named
    kernel = next(DYNAMIC.glob("*-pre-optimization.mlir"))
    d = _planted(tmp_path, kernel, "%extracted_2 = tensor.extract %arg0[%8, %arg3] : tensor<16x8xf32>",
                 "%s = tensor.extract_slice %arg0[0, 0] [1, 8] [1, 1] : tensor<16x8xf32> to tensor<1x8xf32>\n"
                 "    %extracted_2 = tensor.extract %arg0[%8, %arg3] : tensor<16x8xf32>")
    code, out, _ = _cli("audit-kernels", str(d))
    assert code == 2 and "tensor.extract_slice of a kernel argument" in out, out
