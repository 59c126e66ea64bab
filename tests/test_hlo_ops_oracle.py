"""Per-op indexing maps against the numpy oracle (tests/hlo_oracle.py), both directions.

For random small shapes and attributes, the oracle runs the op on inputs whose
elements are their own index; the test checks that

* output->input: each output element reads exactly the operand elements the map
  gives at that output index (every range variable enumerated; runtime variables
  fixed to the concrete, clamped offsets the oracle used), and every image is
  inside the operand;
* input->output: each operand element goes to exactly the output elements the
  map gives.

Known over-approximations of the spec's maps are checked as inclusions: the
``src`` of dynamic-update-slice and the padding value of pad (read by a subset of
what the map says); the ``update`` of dynamic-update-slice also yields
out-of-bounds indices for outputs outside the window (only in-bounds ones count).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from hlo_oracle import run
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from verified_indexing.hlo.ir import Computation, Instruction, Shape
from verified_indexing.hlo.ops import RuntimeOrigin, input_to_output, output_to_input
from verified_indexing.indexing_map import IndexingMap

Index = tuple[int, ...]
LIMIT = 400_000


# ---------------------------------------------------------------------------
# Building instructions
# ---------------------------------------------------------------------------


def _shape(dims: tuple[int, ...] | list[int], et: str = "f32", layout: tuple[int, ...] | None = None) -> Shape:
    return Shape(et, tuple(dims), layout)


def build(
    opcode: str,
    out: Shape,
    operands: list[Shape],
    attributes: dict[str, str] | None = None,
) -> tuple[Instruction, Computation]:
    params = [Instruction(f"p{k}", "parameter", s, parameter_number=k) for k, s in enumerate(operands)]
    inst = Instruction("op", opcode, out, [p.name for p in params], attributes or {}, is_root=True)
    return inst, Computation("c", [*params, inst])


def _ints(xs: list[int] | tuple[int, ...]) -> str:
    return "{" + ",".join(str(x) for x in xs) + "}"


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------


def _rt_consistent(m: IndexingMap, dims: Index, syms: Index, rts: Index, values: dict[int, np.ndarray]) -> bool:
    for r, v in zip(rts, m.rt_vars):
        origin = v.origin
        assert isinstance(origin, RuntimeOrigin), "every runtime variable names its operand"
        om = origin.map
        at = om.evaluate(dims, syms[: om.num_range_vars])
        raw = int(values[origin.operand_index][at])
        if r != max(v.bounds.lo, min(raw, v.bounds.hi)):
            return False
    return True


def _images(m: IndexingMap, values: dict[int, np.ndarray]) -> dict[Index, set[Index]]:
    """dims -> the set of results over every consistent point of the domain."""
    out: dict[Index, set[Index]] = defaultdict(set)
    for d, s, r in m.domain_points(LIMIT):
        if m.num_rt_vars and not _rt_consistent(m, d, s, r, values):
            continue
        out[d].add(m.evaluate(d, s, r))
    return out


def _in_box(idx: Index, dims: tuple[int, ...]) -> bool:
    return len(idx) == len(dims) and all(0 <= i < n for i, n in zip(idx, dims))


def check(
    inst: Instruction,
    comp: Computation,
    values: dict[int, np.ndarray] | None = None,
    over: frozenset[int] = frozenset(),
    unbounded: frozenset[int] = frozenset(),
) -> None:
    """``over``: operands whose maps may over-approximate (inclusion);
    ``unbounded``: operands whose output->input images may leave the operand."""
    values = values or {}
    outs = run(inst, comp, values)
    out_shapes = [s.dims for s in (inst.shape.tuple_shapes if inst.shape.is_tuple else (inst.shape,))]
    op_shapes = [comp.operand(inst, k).shape.dims for k in range(len(inst.operands))]
    # Oracle reads: per output j, per output index, per operand k.
    reads: list[dict[Index, dict[int, set[Index]]]] = []
    for arr in outs:
        table: dict[Index, dict[int, set[Index]]] = {}
        for o in np.ndindex(*arr.shape):
            per: dict[int, set[Index]] = defaultdict(set)
            for k, x in arr[o]:
                per[k].add(x)
            table[tuple(int(i) for i in o)] = per
        reads.append(table)

    # output -> input
    for j, oshape in enumerate(out_shapes):
        maps = output_to_input(inst, comp, j)
        assert len(maps) == len(inst.operands)
        for k, m in enumerate(maps):
            images = _images(m, values)
            for o in np.ndindex(*oshape):
                o = tuple(int(i) for i in o)
                got = images.get(o, set())
                if k not in unbounded:
                    assert all(_in_box(x, op_shapes[k]) for x in got), (k, o, got)
                got = {x for x in got if _in_box(x, op_shapes[k])}
                want = reads[j][o].get(k, set())
                if k in over:
                    assert want <= got, ("o2i", j, k, o, want, got, str(m))
                else:
                    assert want == got, ("o2i", j, k, o, want, got, str(m))

    # input -> output
    for k, kshape in enumerate(op_shapes):
        maps = input_to_output(inst, comp, k)
        assert len(maps) == len(out_shapes)
        for j, m in enumerate(maps):
            images = _images(m, values)
            users: dict[Index, set[Index]] = defaultdict(set)
            for o, per in reads[j].items():
                for x in per.get(k, ()):
                    users[x].add(o)
            for x in np.ndindex(*kshape):
                x = tuple(int(i) for i in x)
                got = images.get(x, set())
                assert all(_in_box(o, out_shapes[j]) for o in got), (k, x, got)
                want = users.get(x, set())
                if k in over:
                    assert want <= got, ("i2o", j, k, x, want, got, str(m))
                else:
                    assert want == got, ("i2o", j, k, x, want, got, str(m))


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

small_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@st.composite
def permutations(draw: st.DrawFn, n: int) -> list[int]:
    return draw(st.permutations(list(range(n))))


def _factorizations(total: int, rank: int, data: st.DataObject) -> list[int]:
    """A random shape of ``rank`` dimensions with ``total`` elements."""
    dims = [1] * rank
    n = total
    p = 2
    factors = []
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    for f in factors:
        dims[data.draw(st.integers(0, rank - 1))] *= f
    return dims


@given(small_dims, st.data())
def test_broadcast(src: list[int], data: st.DataObject) -> None:
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    rank = len(src) + len(extra)
    positions = data.draw(st.permutations(list(range(rank))))[: len(src)]  # any order
    out = [0] * rank
    for i, p in enumerate(positions):
        out[p] = src[i]
    it = iter(extra)
    out = [n if p in positions else next(it) for p, n in enumerate(out)]
    check(*build("broadcast", _shape(out), [_shape(src)], {"dimensions": _ints(positions)}))


@given(st.lists(st.integers(1, 3), min_size=0, max_size=2))
def test_broadcast_of_scalars(extra: list[int]) -> None:
    check(*build("broadcast", _shape(extra), [_shape([])], {"dimensions": "{}"}))


@given(small_dims, st.data())
def test_transpose(src: list[int], data: st.DataObject) -> None:
    perm = data.draw(permutations(len(src)))
    out = [src[p] for p in perm]
    check(*build("transpose", _shape(out), [_shape(src)], {"dimensions": _ints(perm)}))


@given(small_dims, st.data())
def test_reverse(src: list[int], data: st.DataObject) -> None:
    rdims = data.draw(st.lists(st.integers(0, len(src) - 1), unique=True))
    check(*build("reverse", _shape(src), [_shape(src)], {"dimensions": _ints(rdims)}))


@given(st.lists(st.integers(1, 7), min_size=1, max_size=3), st.data())
def test_slice(src: list[int], data: st.DataObject) -> None:
    parts, out = [], []
    for n in src:
        start = data.draw(st.integers(0, n - 1))
        limit = data.draw(st.integers(start + 1, n))
        stride = data.draw(st.integers(1, 3))
        parts.append(f"[{start}:{limit}:{stride}]")
        out.append(-(-(limit - start) // stride))
    check(*build("slice", _shape(out), [_shape(src)], {"slice": "{" + ", ".join(parts) + "}"}))


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(1, 4), st.data())
def test_reshape(src: list[int], rank: int, data: st.DataObject) -> None:
    out = _factorizations(math.prod(src), rank, data)
    check(*build("reshape", _shape(out), [_shape(src)]))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_bitcast(src: list[int], rank: int, data: st.DataObject) -> None:
    out = _factorizations(math.prod(src), rank, data)
    src_layout = tuple(data.draw(permutations(len(src))))
    out_layout = tuple(data.draw(permutations(len(out))))
    check(*build("bitcast", _shape(out, layout=out_layout), [_shape(src, layout=src_layout)]))


@given(small_dims, st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_concatenate(base: list[int], sizes: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(base) - 1))
    shapes = [[s if i == axis else n for i, n in enumerate(base)] for s in sizes]
    out = [sum(sizes) if i == axis else n for i, n in enumerate(base)]
    check(*build("concatenate", _shape(out), [_shape(s) for s in shapes], {"dimensions": _ints([axis])}))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=2), st.data())
def test_pad(src: list[int], data: st.DataObject) -> None:
    parts, out = [], []
    for n in src:
        low, high, interior = data.draw(st.integers(-2, 3)), data.draw(st.integers(-2, 3)), data.draw(st.integers(0, 2))
        size = low + high + n + (n - 1) * interior
        assume(size >= 1)
        parts.append(f"{low}_{high}_{interior}")
        out.append(size)
    check(*build("pad", _shape(out), [_shape(src), _shape([])], {"padding": "x".join(parts)}), over=frozenset({1}))


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_dynamic_slice(src: list[int], data: st.DataObject) -> None:
    sizes = [data.draw(st.integers(1, n)) for n in src]
    offsets = [data.draw(st.integers(-2, n + 1)) for n in src]
    inst, comp = build(
        "dynamic-slice", _shape(sizes), [_shape(src)] + [_shape([], "s32")] * len(src),
        {"dynamic_slice_sizes": _ints(sizes)},
    )
    check(inst, comp, {1 + i: np.array(v) for i, v in enumerate(offsets)})


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_dynamic_update_slice(src: list[int], data: st.DataObject) -> None:
    upd = [data.draw(st.integers(1, n)) for n in src]
    offsets = [data.draw(st.integers(-2, n + 1)) for n in src]
    inst, comp = build("dynamic-update-slice", _shape(src), [_shape(src), _shape(upd)] + [_shape([], "s32")] * len(src))
    check(inst, comp, {2 + i: np.array(v) for i, v in enumerate(offsets)}, over=frozenset({0}), unbounded=frozenset({1}))


@settings(max_examples=100)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_gather(src: list[int], batch: int, data: st.DataObject) -> None:
    rank = len(src)
    sim = data.draw(st.permutations(list(range(rank))))[: data.draw(st.integers(1, rank))]
    sizes = [data.draw(st.integers(1, n)) for n in src]
    bd = data.draw(st.integers(0, rank))
    offset_dims = [d for d in range(rank + 1) if d != bd]
    out = [0] * (rank + 1)
    out[bd] = batch
    for od, s in zip(offset_dims, sizes):
        out[od] = s
    indices = np.array(
        [[data.draw(st.integers(-2, src[d] + 1)) for d in sim] for _ in range(batch)], dtype=np.int64
    ).reshape(batch, len(sim))
    attrs = {
        "offset_dims": _ints(offset_dims), "collapsed_slice_dims": "{}", "start_index_map": _ints(sim),
        "index_vector_dim": "1", "slice_sizes": _ints(sizes),
    }
    inst, comp = build("gather", _shape(out), [_shape(src), _shape([batch, len(sim)], "s32")], attrs)
    check(inst, comp, {1: indices})


@settings(max_examples=120)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(st.integers(1, 3), max_size=2), st.data())
def test_general_gather(src: list[int], idx_batch: list[int], data: st.DataObject) -> None:
    """Any gather without batching dims: collapsed slice dims (JAX's form), indices
    of any rank, index_vector_dim anywhere (or implicit, == rank of the indices)."""
    rank = len(src)
    sim = data.draw(st.permutations(list(range(rank))))[: data.draw(st.integers(1, rank))]
    collapsed = sorted(d for d in range(rank) if data.draw(st.booleans()))
    sizes = [1 if d in collapsed else data.draw(st.integers(0 if n > 1 else 1, n)) for d, n in enumerate(src)]
    kept = [d for d in range(rank) if d not in collapsed]
    implicit = len(sim) == 1 and data.draw(st.booleans())
    ivd = len(idx_batch) if implicit else data.draw(st.integers(0, len(idx_batch)))
    idx_dims = list(idx_batch)
    if not implicit:
        idx_dims.insert(ivd, len(sim))
    out_rank = len(idx_batch) + len(kept)
    offset_dims = sorted(data.draw(st.permutations(list(range(out_rank))))[: len(kept)])
    out = [0] * out_rank
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    for o, n in zip(batch_out, idx_batch):
        out[o] = n
    for o, d in zip(offset_dims, kept):
        out[o] = sizes[d]
    indices = np.array(
        [data.draw(st.integers(-2, max(src) + 1)) for _ in range(math.prod(idx_dims))], dtype=np.int64
    ).reshape(idx_dims)
    attrs = {
        "offset_dims": _ints(offset_dims), "collapsed_slice_dims": _ints(collapsed),
        "start_index_map": _ints(sim), "index_vector_dim": str(ivd), "slice_sizes": _ints(sizes),
    }
    inst, comp = build("gather", _shape(out), [_shape(src), _shape(idx_dims, "s32")], attrs)
    check(inst, comp, {1: indices})


@settings(max_examples=100)
@given(st.lists(st.integers(1, 3), min_size=2, max_size=3), st.lists(st.integers(1, 2), max_size=1), st.data())
def test_gather_with_batching_dims(src: list[int], extra: list[int], data: st.DataObject) -> None:
    """JAX's vmapped gather: operand_batching_dims paired with start_indices_batching_dims."""
    rank = len(src)
    order = data.draw(st.permutations(list(range(rank))))
    nb = data.draw(st.integers(1, rank - 1))
    obd, rest = sorted(order[:nb]), order[nb:]
    sim = rest[: data.draw(st.integers(1, len(rest)))]
    collapsed = sorted(d for d in rest if data.draw(st.booleans()))
    sizes = [1 if d in obd or d in collapsed else data.draw(st.integers(1, n)) for d, n in enumerate(src)]
    kept = [d for d in range(rank) if d not in obd and d not in collapsed]
    # Indices: one batch dim per operand batching dim (same size), extra batch dims, the index vector.
    batch_sizes = [src[d] for d in obd] + list(extra)
    perm = data.draw(st.permutations(list(range(len(batch_sizes)))))
    idx_batch_sizes = [batch_sizes[i] for i in perm]
    ivd = data.draw(st.integers(0, len(idx_batch_sizes)))
    idx_dims = list(idx_batch_sizes)
    idx_dims.insert(ivd, len(sim))
    idx_batch_dims = [d for d in range(len(idx_dims)) if d != ivd]
    sibd = [idx_batch_dims[perm.index(k)] for k in range(len(obd))]
    out_rank = len(idx_batch_sizes) + len(kept)
    offset_dims = sorted(data.draw(st.permutations(list(range(out_rank))))[: len(kept)])
    out = [0] * out_rank
    for o, n in zip([d for d in range(out_rank) if d not in offset_dims], idx_batch_sizes):
        out[o] = n
    for o, d in zip(offset_dims, kept):
        out[o] = sizes[d]
    indices = np.array(
        [data.draw(st.integers(-1, max(src) + 1)) for _ in range(math.prod(idx_dims))], dtype=np.int64
    ).reshape(idx_dims)
    attrs = {
        "offset_dims": _ints(offset_dims), "collapsed_slice_dims": _ints(collapsed),
        "start_index_map": _ints(sim), "index_vector_dim": str(ivd), "slice_sizes": _ints(sizes),
        "operand_batching_dims": _ints(obd), "start_indices_batching_dims": _ints(sibd),
    }
    inst, comp = build("gather", _shape(out), [_shape(src), _shape(idx_dims, "s32")], attrs)
    check(inst, comp, {1: indices})


def test_jax_gather_form_reads_rows() -> None:
    """JAX's pre-optimization embedding lookup: ``table[idx]`` as a gather with a
    collapsed dim; checked against the semantics written out by hand."""
    attrs = {
        "offset_dims": "{1}", "collapsed_slice_dims": "{0}", "start_index_map": "{0}",
        "index_vector_dim": "1", "slice_sizes": "{1,4}",
    }
    inst, comp = build("gather", _shape([3, 4]), [_shape([6, 4]), _shape([3, 1], "s32")], attrs)
    (operand_map, indices_map) = output_to_input(inst, comp)
    idx = [5, -1, 9]
    for row in range(3):
        for col in range(4):
            want = (min(max(idx[row], 0), 5), col)  # the start index is clamped into [0, 6 - 1]
            got = {operand_map.evaluate((row, col), s, r) for _, s, r in operand_map.domain_points(100)
                   if r == (want[0],)}
            assert got == {want}
            assert {indices_map.evaluate((row, col), s) for _, s, _r in indices_map.domain_points(100)} == {(row, 0)}


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(1, 2), st.data())
def test_reduce(src: list[int], n: int, data: st.DataObject) -> None:
    rdims = sorted(data.draw(st.lists(st.integers(0, len(src) - 1), unique=True)))
    out = [m for d, m in enumerate(src) if d not in rdims]
    shape = _shape(out) if n == 1 else Shape("tuple", tuple_shapes=tuple(_shape(out) for _ in range(n)))
    inst, comp = build("reduce", shape, [_shape(src)] * n + [_shape([])] * n, {"dimensions": _ints(rdims)})
    check(inst, comp)


def window_attr(src: list[int], data: st.DataObject, *, pad: int = 2, base_dilation: int = 2) -> tuple[str, list[int]]:
    """A random ``window={...}`` over input dims ``src`` (sizes, strides, padding up to
    ``pad``, base dilation up to ``base_dilation``, window dilation) and its output dims."""
    fields: dict[str, list[str]] = defaultdict(list)
    out = []
    for n in src:
        size, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
        lo, hi = data.draw(st.integers(0, pad)), data.draw(st.integers(0, pad))
        bdil, wdil = data.draw(st.integers(1, base_dilation)), data.draw(st.integers(1, 2))
        padded = lo + hi + (n - 1) * bdil + 1
        span = (size - 1) * wdil + 1
        assume(padded >= span)
        out.append((padded - span) // stride + 1)
        for key, v in (("size", size), ("stride", stride), ("lhs_dilate", bdil), ("rhs_dilate", wdil)):
            fields[key].append(str(v))
        fields["pad"].append(f"{lo}_{hi}")
    return "{" + " ".join(f"{k}={'x'.join(v)}" for k, v in fields.items()) + "}", out


@settings(max_examples=100)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=2), st.data())
def test_reduce_window(src: list[int], data: st.DataObject) -> None:
    window, out = window_attr(src, data)
    check(*build("reduce-window", _shape(out), [_shape(src), _shape([])], {"window": window}))


@settings(max_examples=100)
@given(st.data())
def test_dot(data: st.DataObject) -> None:
    nb, nc = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 2))
    nl, nr = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
    bsz = [data.draw(st.integers(1, 2)) for _ in range(nb)]
    csz = [data.draw(st.integers(1, 3)) for _ in range(nc)]
    lsz = [data.draw(st.integers(1, 3)) for _ in range(nl)]
    rsz = [data.draw(st.integers(1, 3)) for _ in range(nr)]
    lperm = data.draw(permutations(nb + nc + nl))  # position of each role in lhs
    rperm = data.draw(permutations(nb + nc + nr))
    lhs = [0] * (nb + nc + nl)
    rhs = [0] * (nb + nc + nr)
    for i, n in enumerate(bsz + csz + lsz):
        lhs[lperm[i]] = n
    for i, n in enumerate(bsz + csz + rsz):
        rhs[rperm[i]] = n
    attrs = {
        "lhs_batch_dims": _ints(lperm[:nb]), "rhs_batch_dims": _ints(rperm[:nb]),
        "lhs_contracting_dims": _ints(lperm[nb : nb + nc]), "rhs_contracting_dims": _ints(rperm[nb : nb + nc]),
    }
    lfree = sorted(lperm[nb + nc :])
    rfree = sorted(rperm[nb + nc :])
    out = bsz + [lhs[d] for d in lfree] + [rhs[d] for d in rfree]
    check(*build("dot", _shape(out), [_shape(lhs), _shape(rhs)], attrs))


@settings(max_examples=60)
@given(st.integers(0, 2), st.data())
def test_convolution(nsp: int, data: st.DataObject) -> None:
    # feature_group_count G (grouped and depthwise convolutions): cin and cout multiples of G.
    groups = data.draw(st.integers(1, 3))
    # batch_group_count G (XLA's grouped filter gradients): the lhs batch is G * the output batch.
    bgroups = 1 if groups > 1 else data.draw(st.integers(1, 3))
    batch = data.draw(st.integers(1, 2))
    cin, cout = groups * data.draw(st.integers(1, 2)), groups * bgroups * data.draw(st.integers(1, 2))
    spatial, kernel, out_sp = [], [], []
    fields: dict[str, list[str]] = defaultdict(list)
    for _ in range(nsp):
        n, size, stride = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
        lo, hi = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
        bdil, wdil, rev = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)), data.draw(st.booleans())
        padded, span = lo + hi + (n - 1) * bdil + 1, (size - 1) * wdil + 1
        assume(padded >= span)
        spatial.append(n)
        kernel.append(size)
        out_sp.append((padded - span) // stride + 1)
        for key, v in (("size", size), ("stride", stride), ("lhs_dilate", bdil), ("rhs_dilate", wdil)):
            fields[key].append(str(v))
        fields["pad"].append(f"{lo}_{hi}")
        fields["rhs_reversal"].append("1" if rev else "0")
    digits = [str(i) for i in range(nsp)]
    lhs_l = "".join(data.draw(st.permutations(["b", "f", *digits])))
    rhs_l = "".join(data.draw(st.permutations(["i", "o", *digits])))
    out_l = "".join(data.draw(st.permutations(["b", "f", *digits])))

    def dims(labels: str, table: dict[str, int]) -> list[int]:
        return [table[c] for c in labels]

    lhs = dims(lhs_l, {"b": batch * bgroups, "f": cin, **{str(i): n for i, n in enumerate(spatial)}})
    rhs = dims(rhs_l, {"i": cin // groups, "o": cout, **{str(i): n for i, n in enumerate(kernel)}})
    out = dims(out_l, {"b": batch, "f": cout, **{str(i): n for i, n in enumerate(out_sp)}})
    attrs = {"dim_labels": f"{lhs_l}_{rhs_l}->{out_l}"}
    if groups > 1:
        attrs["feature_group_count"] = str(groups)
    if bgroups > 1:
        attrs["batch_group_count"] = str(bgroups)
    if nsp:
        attrs["window"] = "{" + " ".join(f"{k}={'x'.join(v)}" for k, v in fields.items()) + "}"
    check(*build("convolution", _shape(out), [_shape(lhs), _shape(rhs)], attrs))


@given(small_dims, st.sampled_from(["select", "clamp", "add", "exponential", "convert"]), st.data())
def test_elementwise_with_scalar_operands(dims: list[int], opcode: str, data: st.DataObject) -> None:
    arity = {"select": 3, "clamp": 3, "add": 2, "exponential": 1, "convert": 1}[opcode]
    operands = [_shape(dims) if data.draw(st.booleans()) else _shape([]) for _ in range(arity)]
    check(*build(opcode, _shape(dims), operands))


def test_select_with_scalar_predicate_is_spec_form() -> None:
    from verified_indexing import parse_indexing_map

    inst, comp = build("select", _shape([3, 4]), [_shape([], "pred"), _shape([3, 4]), _shape([3, 4])])
    maps = output_to_input(inst, comp)
    assert maps[0] == parse_indexing_map("(d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 3]")
    check(inst, comp)


