"""Exact operand utilization and tile propagation (hlo.utilization) against
independent oracles: the tagged numpy interpreter of whole computations
(tests/hlo_oracle.py via test_hlo_fusion._run_computation) and plain
enumeration of the maps' domains."""

from __future__ import annotations

import glob
import itertools
import json
from pathlib import Path

import hlo_oracle
import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hlo_fusion import _run_computation
from test_hlo_fusion_props import chains

from verified_indexing.cli import main
from verified_indexing.engines.isl import to_isl_map
from verified_indexing.hlo.fusion import output_to_input_maps
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.report import load_hlo
from verified_indexing.hlo.utilization import count_points, operand_utilization, tile_reads
from verified_indexing.testing.strategies import indexing_maps

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
    if root.opcode == "tuple":
        outputs = [values[o] for o in root.operands]
    elif root.shape.tuple_shapes:
        # a multi-output root (a variadic reduce): every output, each mapped through the tagged operands
        # (values[root.name] holds the first output only)
        outputs = [hlo_oracle.compose_tags(out, [values[o] for o in root.operands])
                   for out in hlo_oracle.run(root, comp)]
    else:
        outputs = [values[root.name]]
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
            if any(e.runtime or e.approximation or e.status != "ok" or e.element is not None for e in es):
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


@pytest.mark.skipif(not hasattr(isl.Set, "card"), reason="islpy without barvinok: islpy-barvinok replaces islpy")
@settings(max_examples=60, deadline=None)
@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0))
def test_barvinok_isl_count_and_enumeration_agree(m) -> None:  # type: ignore[no-untyped-def]
    if m.state != "ok" or m.box_size() > 20_000:
        return
    img = to_isl_map(m).range()
    n, method = count_points(img)
    assert method == "barvinok"
    assert n == int(img.count_val().to_python())  # isl's own counting
    assert n == len({m.evaluate(d, s, r) for d, s, r in m.domain_points()})  # enumeration


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
    assert main(["utilization", "examples/hlo/gpu_kernels.hlo"]) == 0
    out = capsys.readouterr().out  # the scatter's updates are an over-approximation: upper bounds, said so
    assert "operand 0 param_0.40 f32[4,64]{1,0}: read 256 of 256 elements" in out and "[upper bound" in out
    assert "upper bounds: a map over-approximates the reads (scatter.45" in out


# -- coalescing ------------------------------------------------------------------------------------------------

from verified_indexing.hlo.coalescing import coalescing  # noqa: E402


def _oracle_coalescing(comp: Computation, operand: int, vs: int, warp: int) -> str:
    """Brute force of the loop emitter: thread t computes output elements t*vs+v in
    physical (row-major here) order; each reads at most one element of the operand
    (the chains used have no reductions or joins); address by the operand's layout."""
    values = _run_computation(comp)
    out = values[comp.root.name]
    param = next(p for p in comp.parameters() if p.parameter_number == operand)
    pdims = param.shape.dims
    m2m = param.shape.minor_to_major()
    order = list(reversed(m2m))

    def addr(x: tuple[int, ...]) -> int:
        a = 0
        for d in order:
            a = a * pdims[d] + x[d]
        return a

    flat = [out[np.unravel_index(i, out.shape)] if out.ndim else out[()] for i in range(out.size)]
    reads: list[int | None] = []
    for tags in flat:
        mine = [x for k, x in tags if k == operand]
        assert len(mine) <= 1
        reads.append(addr(mine[0]) if mine else None)
    threads = -(-len(reads) // vs)

    def at(t: int, v: int) -> int | None:
        i = t * vs + v
        return reads[i] if i < len(reads) else None

    lane_steps, vec_steps = set(), set()
    for t in range(threads):
        for v in range(vs):
            a = at(t, v)
            if a is None:
                continue
            if t % warp != warp - 1 and t + 1 < threads and at(t + 1, v) is not None:
                lane_steps.add(at(t + 1, v) - a)  # type: ignore[operator]
            if v + 1 < vs and at(t, v + 1) is not None:
                vec_steps.add(at(t, v + 1) - a)  # type: ignore[operator]
    vec_ok = vec_steps <= {1}
    # lanes t and t + k (k >= 2) of one warp both reading, the lanes between
    # perhaps not (a pad's interior): step k * vs for coalesced, 0 for uniform,
    # else undecided by the model ("unknown", review round 3)
    far: set[tuple[int, int]] = set()
    for t in range(threads):
        for k in range(2, warp - t % warp):
            for v in range(vs):
                a, b = at(t, v), (at(t + k, v) if t + k < threads else None)
                if a is not None and b is not None:
                    far.add((k, b - a))
    far_slots: set[tuple[int, int]] = set()  # slots v and v + k of one thread likewise: k apart, or 0
    for t in range(threads):
        for v in range(vs):
            for k in range(2, vs - v):
                a, b = at(t, v), at(t, v + k)
                if a is not None and b is not None:
                    far_slots.add((k, b - a))
    vec_one = vec_ok and all(d == k for k, d in far_slots)
    vec_same = vec_steps <= {0} and all(d == 0 for _, d in far_slots)
    if all(a is None for a in reads):
        return "not read"
    def next_readers(groups: list[list[int | None]], step: int) -> bool:
        """Every reader's next reader in its group is one step on (the readers read one run)."""
        for g in groups:
            readers = [x for x in g if x is not None]
            if any(y - x != step for x, y in itertools.pairwise(readers)):
                return False
        return True

    warps = [[at(t, v) for t in range(w * warp, min(threads, (w + 1) * warp))]
             for w in range(-(-threads // warp)) for v in range(vs)]
    lanes_run = all(d == k * vs for k, d in far) or next_readers(warps, vs)
    vec_one = vec_one or (vec_ok and next_readers([[at(t, v) for v in range(vs)] for t in range(threads)], 1))
    if lane_steps <= {vs} and vec_one and lanes_run:
        return "coalesced"
    if lane_steps <= {0} and (vec_one or vec_same) and all(d == 0 for _, d in far):
        return "uniform"
    if lane_steps <= {vs} and vec_ok:  # neighbours in step, lanes further apart not
        return "unknown"
    return "not coalesced"


SIMPLE_CHAINS = chains().filter(lambda t: not any(op in t for op in ("reduce(", "concatenate(", " add(v", " add(p")))


@settings(max_examples=40, deadline=None)
@given(SIMPLE_CHAINS, st.sampled_from([1, 2, 3]), st.sampled_from([2, 4, 32]))
def test_coalescing_matches_a_brute_force_emitter(text: str, vs: int, warp: int) -> None:
    module = load_hlo(text)
    comp = module.computations["f"]
    results = coalescing(module, computation="f", vector_size=vs, warp_size=warp)
    for r in results:
        expected = _oracle_coalescing(comp, r.operand, vs, warp)
        assert r.status == expected, (text, vs, warp, r.format())
        if r.status == "not coalesced" and r.witness and r.witness["lanes"]:
            lanes = {lane: a for lane, _, a in r.witness["lanes"]}
            assert len(lanes) >= 2


TRANSPOSED = """
f {
  p0 = f32[64,32]{1,0} parameter(0)
  p1 = f32[32,64]{1,0} parameter(1)
  p2 = f32[64]{0} parameter(2)
  p3 = f32[32,64]{0,1} parameter(3)
  t = f32[32,64] transpose(p0), dimensions={1,0}
  b = f32[32,64] broadcast(p2), dimensions={1}
  a = f32[32,64] add(t, p1)
  c = f32[32,64] add(a, b)
  ROOT r = f32[32,64] add(c, p3)
}
"""


def test_coalescing_transpose_refuted_and_vector_sizes() -> None:
    module = load_hlo(TRANSPOSED)
    by = {r.name: r for r in coalescing(module, computation="f")}
    assert by["p0"].status == "not coalesced" and by["p1"].status == "coalesced"
    w = by["p0"].witness
    assert w is not None and w["warp"] == 0
    addresses = [a for _, _, a in w["lanes"]]
    assert addresses[:3] == [0, 32, 64]  # row stride of the transposed operand
    # p3 is column-major: physically transposed, so the logical row-major walk is strided
    assert by["p3"].status == "not coalesced"
    # p2 broadcast along the minor dimension: coalesced while a warp stays in one row (64 elements)
    for vs, expected in ((1, "coalesced"), (2, "coalesced"), (4, "not coalesced")):
        r = {x.name: x for x in coalescing(module, computation="f", vector_size=vs)}["p2"]
        assert r.status == expected, (vs, r.format())
        assert r.vector is None if vs == 1 else r.vector is not None and r.vector.proved


def test_coalescing_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coalescing", "examples/jax_hlo/transpose_021.post.hlo", "--warp-size", "4"]) == 1
    out = capsys.readouterr().out
    assert "lane 1: output (0, 0, 1) reads address 48" in out
    assert main(["coalescing", "examples/jax_hlo/softmax.post.hlo", "--computation", "fused_computation"]) == 0
    assert "uniform" in capsys.readouterr().out


def test_slow_count_is_bounded_by_the_command_budget() -> None:
    import time

    from verified_indexing.engines.deadline import command_budget
    from verified_indexing.engines.isl import IslLimitExceeded

    slow = isl.Set("{[i,j,k]: 0<=i,j,k<30000 and (7i+13j+17k) mod 1009 < 3 and (5i + 3j) mod 997 < 11}")
    t0 = time.monotonic()
    with command_budget(1.0), pytest.raises(IslLimitExceeded):
        count_points(slow)  # about a minute unbounded
    assert time.monotonic() - t0 < 4.0
    small = isl.Set("{[i]: 0 <= i < 10 and i mod 3 = 0}")
    with command_budget(5.0):
        assert count_points(small) == (4, "isl-count")  # counted in the worker, same answer


def test_coalescing_of_every_fusion_is_each_fusions_own(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --computation every fusion is checked: the results are those of each named run, in order."""
    path = "examples/jax_hlo/softmax.post.hlo"
    module = load_hlo(Path(path).read_text(), path)
    names = list(dict.fromkeys(c.name for _, c in module.fusions()))
    assert len(names) >= 3
    every = coalescing(module)
    one_by_one = [r for n in names for r in coalescing(module, computation=n)]
    def untimed(x: object) -> object:
        if isinstance(x, dict):
            return {k: untimed(v) for k, v in x.items() if k not in ("seconds", "cached")}
        return [untimed(v) for v in x] if isinstance(x, list) else x

    assert [untimed(r.to_json()) for r in every] == [untimed(r.to_json()) for r in one_by_one]
    assert [r.computation for r in every] == [r.computation for r in one_by_one] and set(names) == {
        r.computation for r in every}
    code = main(["coalescing", path])
    out = capsys.readouterr().out
    assert code == (1 if any(r.status == "not coalesced" for r in every) else 0)
    assert [ln.split()[1][:-1] for ln in out.splitlines() if ln.startswith("computation ")] == names
