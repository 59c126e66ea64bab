"""Exact operand utilization and tile propagation (hlo.utilization) against
independent oracles: the tagged numpy interpreter of whole computations
(tests/hlo_oracle.py via test_hlo_fusion._run_computation) and plain
enumeration of the maps' domains."""

from __future__ import annotations

import glob
import itertools
import json

import hlo_oracle
import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import indexing_maps
from test_hlo_fusion import _run_computation
from test_hlo_fusion_props import chains

from verified_indexing.cli import main
from verified_indexing.engines.isl import to_isl_map
from verified_indexing.hlo.fusion import output_to_input_maps
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.report import load_hlo
from verified_indexing.hlo.utilization import count_points, operand_utilization, tile_reads

MODULES = sorted(glob.glob("examples/jax_hlo/*.post.hlo")) + sorted(glob.glob("examples/hlo/*.hlo"))

Tag = tuple[int, tuple[int, ...]]


def oracle_counts(comp: Computation) -> dict[int, tuple[int, int]] | None:
    """Per parameter number: (distinct elements read, (output element, element)
    pairs summed over outputs), by the tagged interpreter; None when the
    interpreter has no model for an op of the computation."""
    try:
        values = _run_computation(comp)
    except (NotImplementedError, KeyError, IndexError, TypeError, AttributeError, ValueError):
        return None
    root = comp.root
    outputs = [values[o] for o in root.operands] if root.opcode == "tuple" else [values[root.name]]
    read: dict[int, set[tuple[int, ...]]] = {}
    pairs: dict[int, int] = {}
    for out in outputs:
        for idx in np.ndindex(*out.shape):
            tags: frozenset[Tag] = out[idx]
            for k, x in tags:
                read.setdefault(k, set()).add(x)
                pairs[k] = pairs.get(k, 0) + 1
    return {k: (len(read.get(k, ())), pairs.get(k, 0)) for k in set(read) | set(pairs)}


def test_bundled_modules_match_the_oracle() -> None:
    checked = 0
    for path in MODULES:
        module = load_hlo(open(path).read(), path)
        entries = operand_utilization(module)
        assert entries, path
        for e in entries:
            assert e.status in ("ok", "unknown"), (path, e.format())
            if e.status == "unknown":
                assert e.reason and "unknown indexing" in e.reason
                continue
            assert e.elements_read is not None and 0 <= e.elements_read <= e.operand_elements, e.format()
        by_comp: dict[str, list] = {}
        for e in entries:
            by_comp.setdefault(e.computation, []).append(e)
        for name, es in by_comp.items():
            if any(e.runtime or e.status != "ok" or e.element is not None for e in es):
                continue
            expected = oracle_counts(module.computations[name])
            if expected is None:
                continue
            for e in es:
                assert e.exact
                assert (e.elements_read, e.accesses) == expected.get(e.operand, (0, 0)), (path, e.format())
                checked += 1
    assert checked >= 55, checked  # 58 of the bundled operands when written


@settings(max_examples=40, deadline=None)
@given(chains())
def test_random_fusions_match_the_oracle(text: str) -> None:
    module = load_hlo(text)
    entries = operand_utilization(module, computation="f")
    expected = oracle_counts(module.computations["f"])
    assert expected is not None
    for e in entries:
        assert e.status == "ok" and e.exact, e.format()
        assert (e.elements_read, e.accesses) == expected.get(e.operand, (0, 0)), (text, e.format())


DS = """
f {
  p0 = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT ds = f32[3,8] dynamic-slice(p0, i, j), dynamic_slice_sizes={3,8}
}
"""

GATHER = """
f {
  operand = f32[12,4] parameter(0)
  indices = s32[3,1] parameter(1)
  ROOT g = f32[3,1,4] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
"""


def test_dynamic_slice_counts_every_runtime_value() -> None:
    module = load_hlo(DS)
    (e, *_) = operand_utilization(module, computation="f")
    assert e.status == "ok" and e.runtime and e.exact
    comp = module.computations["f"]
    inst = comp.root
    for i, j in itertools.product(range(-2, 12), range(-1, 2)):
        out = hlo_oracle.run(inst, comp, {1: np.array(i), 2: np.array(j)})[0]
        read = {x for idx in np.ndindex(*out.shape) for k, x in out[idx] if k == 0}
        assert e.elements_read_min is not None and e.elements_read is not None
        assert e.elements_read_min <= len(read) <= e.elements_read
        assert len(read) == e.elements_read  # a dynamic slice reads its size, whatever the offsets


def test_gather_gives_sound_upper_bounds() -> None:
    module = load_hlo(GATHER)
    e = operand_utilization(module, computation="f")[0]
    assert e.status == "ok" and not e.exact and e.runtime and "upper bound" in e.runtime
    comp = module.computations["f"]
    rng = np.random.default_rng(0)
    most = 0
    for _ in range(30):
        idx = rng.integers(-3, 15, size=(3, 1))
        out = hlo_oracle.run(comp.root, comp, {1: idx})[0]
        read = {x for i in np.ndindex(*out.shape) for k, x in out[i] if k == 0}
        most = max(most, len(read))
        assert e.elements_read is not None and len(read) <= e.elements_read
    assert most == e.elements_read == 12  # three distinct rows of four: the bound is reached


@settings(max_examples=60, deadline=None)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0))
def test_isl_counting_agrees_with_enumeration(m) -> None:  # type: ignore[no-untyped-def]
    if m.state != "ok" or m.box_size() > 20_000:
        return
    img = to_isl_map(m).range()
    n, method = count_points(img)
    assert method in ("isl-count", "barvinok")
    expected = {m.evaluate(d, s, r) for d, s, r in m.domain_points()}
    assert n == len(expected)


@settings(max_examples=30, deadline=None)
@given(chains(), st.data())
def test_tiles_contain_and_exactness_by_enumeration(text: str, data: st.DataObject) -> None:
    module = load_hlo(text)
    comp = module.computations["f"]
    dims = comp.root.shape.dims
    offsets = [data.draw(st.integers(0, n - 1)) for n in dims]
    strides = [data.draw(st.integers(1, 2)) for _ in dims]
    sizes = [data.draw(st.integers(1, max(1, (n - o + s - 1) // s))) for n, o, s in zip(dims, offsets, strides)]
    reads = tile_reads(module, offsets, sizes, strides, computation="f")
    result = output_to_input_maps(comp)
    tile_points = [
        tuple(o + s * t for o, s, t in zip(offsets, strides, ts))
        for ts in itertools.product(*(range(n) for n in sizes))
    ]
    for r in reads:
        maps = [a.map for a in result.targets[r.operand].maps]
        shape = result.targets[r.operand].shape
        read = set()
        for m in maps:
            for d, s, rt in m.domain_points():
                y = m.evaluate(d, s, rt)
                if d in tile_points and all(0 <= v < n for v, n in zip(y, shape.dims)):
                    read.add(y)
        if not read:
            assert r.reason == "the tile reads nothing"
            continue
        assert r.proved, r.format()
        box = set(itertools.product(*(range(o, o + s * n, s) for o, s, n in zip(r.offsets, r.strides, r.sizes))))
        assert read <= box
        assert r.exact == (read == box), (text, r.format())
        # smallest: each dimension's first and last box values are read
        for i in range(len(r.offsets)):
            vals = {y[i] for y in read}
            assert min(vals) == r.offsets[i] and max(vals) == r.offsets[i] + r.strides[i] * (r.sizes[i] - 1)
        assert isinstance(r.read, isl.Set)


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    path = "examples/jax_hlo/slice_strided.post.hlo"
    assert main(["utilization", path, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["operands"]
    assert entry["elements_read"] == 231 and entry["operand_elements"] == 960 and entry["bytes_read"] == 924
    assert main(["tile", path, "--offsets", "0,x", "--sizes", "1,1"]) == 3
    assert "comma-separated integers" in capsys.readouterr().err
    assert main(["tile", path, "--offsets", "0,0", "--sizes", "99,1"]) == 3
    assert "outside the output" in capsys.readouterr().err
    assert main(["utilization", "examples/hlo/gpu_kernels.hlo"]) == 2  # the scatter hides its reads
    assert "unknown indexing through scatter" in capsys.readouterr().out
