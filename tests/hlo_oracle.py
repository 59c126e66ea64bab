"""A small numpy interpreter of HLO data-movement ops: the independent oracle of the
per-op indexing maps.

It runs an instruction on *tagged* inputs: every element of operand ``k`` at index
``x`` is the set ``{(k, x)}``; an output element is the set of every operand element
it was computed from (one element for data movement, many for reductions, dot,
windows; elementwise ops unite their operands). Operands that hold integers used
as indices (dynamic-slice offsets, gather indices) also get concrete values.

Written from the HLO operation semantics (openxla.org/xla/operation_semantics),
independently of :mod:`verified_indexing.hlo.ops`: it does not import it and uses
no indexing map. Test-only code.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from verified_indexing.hlo.ir import Computation, Instruction, Shape

Tag = frozenset[tuple[int, tuple[int, ...]]]

__all__ = ["ELEMENTWISE_FOR_ORACLE", "compose_tags", "run", "tagged"]

ELEMENTWISE_FOR_ORACLE = {
    "add", "multiply", "select", "clamp", "exponential", "compare", "convert", "copy", "negate",
    # the inverse and hyperbolic functions XLA added as opcodes: one element in, one out
    "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "erf", "tan", "cbrt",
    # map applies its computation at each index; reduce-precision rounds each element; rng draws
    # each element from its (scalar) distribution parameters.
    "map", "reduce-precision", "rng",
    # domain marks a sharding boundary: each element passes through.
    "domain",
    # the rest of XLA's elementwise opcodes (operation_semantics: "Element-wise unary/binary functions"):
    # output element x is computed from element x of each operand (a scalar operand: its one element)
    "abs", "and", "atan2", "ceil", "clz", "count-leading-zeros", "complex", "cosine", "divide",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "maximum",
    "minimum", "not", "or", "popcnt", "power", "real", "remainder", "round-nearest-afz", "round-nearest-even",
    "rsqrt", "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sqrt",
    "stochastic-convert", "subtract", "tanh", "xor",
}


def tagged(dims: Sequence[int], k: int) -> np.ndarray:
    """An object array of ``dims`` whose element ``x`` is ``{(k, x)}``."""
    a = np.empty(tuple(dims), dtype=object)
    for idx in np.ndindex(*dims):
        a[idx] = frozenset({(k, tuple(int(i) for i in idx))})
    return a


def compose_tags(res: np.ndarray, operands: Sequence[np.ndarray]) -> np.ndarray:
    """``res``, an output of :func:`run` (element -> tags ``(k, x)``: element ``x`` of operand ``k``), with each
    tag replaced by the tags of element ``x`` of ``operands[k]`` (a scalar operand: its one element): running an
    instruction on values that are themselves tagged (by the parameters of a computation, say)."""
    mapped = np.empty(res.shape, dtype=object)
    for idx in np.ndindex(*res.shape):
        acc: set[tuple[int, tuple[int, ...]]] = set()
        for k, x in res[idx]:
            src = operands[k]
            acc |= set(src[x] if src.ndim else src[()])
        mapped[idx] = frozenset(acc)
    return mapped


def _empty(dims: Sequence[int]) -> np.ndarray:
    a = np.empty(tuple(dims), dtype=object)
    for idx in np.ndindex(*dims):
        a[idx] = frozenset()
    return a


def _all_tags(a: np.ndarray) -> Tag:
    out: set[tuple[int, tuple[int, ...]]] = set()
    for v in a.flat:
        out |= v
    return frozenset(out)


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(v, hi))


def _dims(shape: Shape) -> tuple[int, ...]:
    return shape.dims


def run(
    inst: Instruction, comp: Computation, values: dict[int, np.ndarray] | None = None
) -> list[np.ndarray]:
    """The tagged outputs of ``inst`` (one array per output), with every operand
    ``k`` tagged ``k`` and the integer operands given in ``values`` (operand index
    -> int array)."""
    values = values or {}
    ops = [tagged(_dims(comp.operand(inst, k).shape), k) for k in range(len(inst.operands))]
    shapes = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    out = [_dims(s) for s in shapes]
    op = inst.opcode
    if op in ELEMENTWISE_FOR_ORACLE:
        res = _empty(out[0])
        for idx in np.ndindex(*out[0]):
            acc: set[tuple[int, tuple[int, ...]]] = set()
            for a in ops:
                acc |= a[()] if a.ndim == 0 else a[idx]  # type: ignore[arg-type]
            res[idx] = frozenset(acc)
        return [res]
    if op == "bitcast-convert":  # the bits of each element; across widths the minor dimension splits or joins them
        src, res = ops[0], _empty(out[0])
        for idx in np.ndindex(*out[0]):
            if src.ndim == len(out[0]):  # equal widths
                res[idx] = src[idx]
            elif src.ndim < len(out[0]):  # narrower: (x..., j) is a part of x
                res[idx] = src[idx[:-1]]
            else:  # wider: x is made of (x..., j) for every j
                res[idx] = _all_tags(src[idx])
        return [res]
    if op == "add-dependency":  # the data operand passes through; the token is only ordered after
        return [ops[0]]
    if op == "broadcast":
        dims = inst.dimensions()
        res = _empty(out[0])
        for idx in np.ndindex(*out[0]):
            res[idx] = ops[0][tuple(idx[d] for d in dims)]
        return [res]
    if op == "transpose":
        # Output dimension i is operand dimension dimensions[i].
        return [np.transpose(ops[0], inst.dimensions())]
    if op == "reverse":
        a = ops[0]
        for d in inst.dimensions():
            a = np.flip(a, axis=d)
        return [a]
    if op == "slice":
        sl = tuple(slice(s.start, s.limit, s.stride) for s in inst.slice_dims())
        return [ops[0][sl]]
    if op == "reshape":
        return [ops[0].reshape(out[0])]  # row-major, numpy's default
    if op == "bitcast":
        src_major = list(reversed(comp.operand(inst, 0).shape.minor_to_major()))
        dst_major = list(reversed(inst.shape.minor_to_major()))
        buffer = np.transpose(ops[0], src_major).ravel()
        phys = buffer.reshape([inst.shape.dims[k] for k in dst_major])
        return [np.transpose(phys, list(np.argsort(dst_major)))]
    if op == "concatenate":
        return [np.concatenate(ops, axis=inst.dimensions()[0])]
    if op == "pad":
        return [_pad(inst, ops, out[0])]
    if op == "dynamic-slice":
        operand = ops[0]
        offs = [int(values[k]) for k in range(1, len(ops))]
        starts = [_clamp(o, 0, n - s) for o, n, s in zip(offs, operand.shape, out[0])]
        res = operand[tuple(slice(st, st + s) for st, s in zip(starts, out[0]))].copy()
        extra = frozenset().union(*(ops[k][()] for k in range(1, len(ops))))
        return [_add(res, extra)]
    if op == "dynamic-update-slice":
        res = ops[0].copy()
        upd = ops[1]
        offs = [int(values[k]) for k in range(2, len(ops))]
        starts = [_clamp(o, 0, n - s) for o, n, s in zip(offs, res.shape, upd.shape)]
        res[tuple(slice(st, st + s) for st, s in zip(starts, upd.shape))] = upd
        extra = frozenset().union(*(ops[k][()] for k in range(2, len(ops))))
        return [_add(res, extra)]
    if op == "gather":
        return [_gather(inst, ops, values[1], out[0])]
    if op == "reduce":
        return _reduce(inst, ops, out)
    if op == "reduce-window":
        return _reduce_window(inst, ops, out)
    if op == "dot":
        return [_dot(inst, ops, out[0])]
    if op == "convolution":
        return [_convolution(inst, ops, out[0])]
    if op == "custom-call" and inst.attributes.get("custom_call_target", "").strip('"') in PASS_THROUGH_TARGETS:
        return [ops[0]]  # an annotation: each element passes through
    if op == "sort":
        return _sort(inst, ops)
    if op in ("topk", "top-k"):
        # The k largest of each row (last dimension) and their indices: chosen by comparing the row.
        res = _empty(out[0])
        for idx in np.ndindex(*out[0]):
            res[idx] = frozenset().union(*(ops[0][(*idx[:-1], j)] for j in range(ops[0].shape[-1])))
        return [res, res.copy()]
    if op == "scatter":
        n = (len(ops) - 1) // 2
        return _scatter(inst, ops, values[n], n)
    if op == "select-and-scatter":
        return [_select_and_scatter(inst, ops, values[0])]
    if op in _COLLECTIVES:
        return _collective(inst, ops, out, values)
    if op == "cholesky" or (op == "custom-call" and "potrf" in inst.attributes.get("custom_call_target", "")):
        return [_cholesky(ops[0])]
    if op == "triangular-solve":
        return [_triangular_solve(inst, ops)]
    if op == "rng-bit-generator":  # every output element is drawn from the whole state
        everything = _all_tags(ops[0])
        return [_filled(o, everything) for o in out]
    if op == "scaled-dot":
        return [_scaled_dot(inst, ops, out[0])]
    if op == "fft":  # a DFT over the trailing fft_length dims: every element of them, per batch index
        n = len(inst.ints("fft_length"))
        res = _empty(out[0])
        for idx in np.ndindex(*out[0]):
            res[idx] = _all_tags(ops[0][idx[: len(idx) - n]])
        return [res]
    if op.startswith("batch-norm-"):
        return _batch_norm(inst, ops, out)
    if op == "ragged-dot":
        return [_ragged_dot(ops, values[2], out[0])]
    raise NotImplementedError(f"oracle: no interpreter for {op}")


def _batch_norm(inst: Instruction, ops: list[np.ndarray], out: list[tuple[int, ...]]) -> list[np.ndarray]:
    """The formulas of the HLO semantics, on tags: statistics sum over every element of a feature."""
    f = int(inst.attributes["feature_index"])
    x = ops[0]

    def feature(a: np.ndarray, c: int) -> Tag:
        return _all_tags(np.take(a, [c], axis=f))

    op = inst.opcode
    if op == "batch-norm-inference":  # (x - mean) / sqrt(var + eps) * scale + offset
        res = _empty(x.shape)
        for idx in np.ndindex(*x.shape):
            res[idx] = frozenset().union(x[idx], *(v[idx[f]] for v in ops[1:]))
        return [res]
    stats = [feature(x, c) for c in range(x.shape[f])]
    if op == "batch-norm-training":  # (output, batch_mean, batch_var)
        y = _empty(x.shape)
        for idx in np.ndindex(*x.shape):
            y[idx] = stats[idx[f]] | ops[1][idx[f]] | ops[2][idx[f]]
        mean = _empty(out[1])
        for c in range(x.shape[f]):
            mean[c] = stats[c]
        return [y, mean, mean.copy()]
    # batch-norm-grad (operand, scale, mean, variance, grad_output) -> (grad_operand, grad_scale, grad_offset)
    scale, mean_, var, dy = ops[1:]
    dys = [feature(dy, c) for c in range(x.shape[f])]
    gx = _empty(x.shape)
    for idx in np.ndindex(*x.shape):
        c = idx[f]
        gx[idx] = stats[c] | dys[c] | scale[c] | mean_[c] | var[c]
    gs, go = _empty(out[1]), _empty(out[2])
    for c in range(x.shape[f]):
        gs[c] = stats[c] | dys[c] | mean_[c] | var[c]
        go[c] = dys[c]
    return [gx, gs, go]


def _ragged_dot(ops: list[np.ndarray], sizes: np.ndarray, out: tuple[int, ...]) -> np.ndarray:
    """``ragged-dot(lhs[m,k], rhs[g,k,n], group_sizes[g])`` (rows ragged, groups of rhs): row i
    belongs to the group whose cumulative size covers it (rows past the groups are zero)."""
    lhs, rhs, gsz = ops
    bounds = np.cumsum(sizes)
    res = _empty(out)
    every = _all_tags(gsz)
    for i, j in np.ndindex(*out):
        g = int(np.searchsorted(bounds, i, side="right"))
        acc = set(every)
        if g < rhs.shape[0]:
            for c in range(lhs.shape[1]):
                acc |= lhs[i, c] | rhs[g, c, j]
        res[i, j] = frozenset(acc)
    return res


# -- collectives, simulated on one device of a group ------------------------------------------------
#
# ``values[-1]`` is this device's position in its replica group (default 0), ``values[-2]`` the group
# size where the shapes do not give it, ``values[-3]`` 1 when no pair of a collective-permute targets
# this device. Tags name operand elements by index (on whichever replica holds them).

_COLLECTIVES = {
    "all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter", "all-to-all",
    "collective-permute", "collective-permute-start", "collective-broadcast", "copy-start",
}


def _filled(dims: Sequence[int], tag: Tag) -> np.ndarray:
    a = np.empty(tuple(dims), dtype=object)
    for idx in np.ndindex(*a.shape):
        a[idx] = tag
    return a


def _collective(
    inst: Instruction, ops: list[np.ndarray], out: list[tuple[int, ...]], values: dict[int, np.ndarray]
) -> list[np.ndarray]:
    op = inst.opcode
    me = int(values.get(-1, np.array(0)))
    if op in ("all-reduce", "all-reduce-start", "collective-broadcast"):
        return [a.copy() for a in ops]  # element i of every replica's operand (or the root's)
    if op in ("collective-permute", "collective-permute-start", "copy-start"):
        untargeted = op != "copy-start" and int(values.get(-3, np.array(0))) == 1
        moved = _empty(ops[0].shape) if untargeted else ops[0].copy()
        if op == "collective-permute":
            return [moved]
        return [ops[0].copy(), moved] + [_empty(o) for o in out[2:]]
    split = inst.dimensions()
    if op == "all-to-all" and not split:  # the tuple form: output k is operand ``me`` of replica k
        return [ops[me].copy() for _ in ops]
    (g,) = split
    if op in ("all-gather", "all-gather-start"):
        gathered = [np.concatenate([a] * (o[g] // a.shape[g]), axis=g) for a, o in
                    zip(ops, out[1:] if op == "all-gather-start" else out)]
        return [ops[0].copy(), *gathered] if op == "all-gather-start" else gathered
    if op == "reduce-scatter":  # this device keeps block ``me`` of the sum over the replicas
        res = []
        for a, o in zip(ops, out):
            m = o[g]
            res.append(np.take(a, range(me * m, (me + 1) * m), axis=g))
        return res
    # the array all-to-all
    (a,) = ops
    groups = int(values[-2])
    m = a.shape[g] // groups
    mine = np.take(a, range(me * m, (me + 1) * m), axis=g)  # every sender sends its chunk ``me`` here
    return [np.concatenate([mine] * groups, axis=g)]


def _cholesky(a: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor computed on tags (the textbook algorithm, batch by batch); the
    other triangle (implementation-defined) is taken as the input's element."""
    res = a.copy()
    n = a.shape[-1]
    for b in np.ndindex(*a.shape[:-2]):
        low: dict[tuple[int, int], Tag] = {}
        for j in range(n):
            acc = set(a[(*b, j, j)])
            for k in range(j):
                acc |= low[(j, k)]
            low[(j, j)] = frozenset(acc)
            for i in range(j + 1, n):
                acc = set(a[(*b, i, j)]) | low[(j, j)]
                for k in range(j):
                    acc |= low[(i, k)] | low[(j, k)]
                low[(i, j)] = frozenset(acc)
        for (i, j), tag in low.items():
            res[(*b, i, j)] = tag
    return res


def _triangular_solve(inst: Instruction, ops: list[np.ndarray]) -> np.ndarray:
    """``a x = b`` with a lower (or upper) triangular ``a``, left side, not transposed, by
    substitution on tags."""
    a, rhs = ops
    lower = inst.attributes.get("lower", "false") == "true"
    if inst.attributes.get("left_side", "false") != "true" or inst.attributes.get("transpose_a", "NO_TRANSPOSE") \
            not in ("NO_TRANSPOSE", "no_transpose"):
        raise NotImplementedError("oracle: triangular-solve other than left side, not transposed")
    res = rhs.copy()
    m = a.shape[-1]
    rows = range(m) if lower else range(m - 1, -1, -1)
    for b in np.ndindex(*a.shape[:-2]):
        for j in range(rhs.shape[-1]):
            done: list[int] = []
            for i in rows:
                acc = set(rhs[(*b, i, j)]) | a[(*b, i, i)]
                for k in done:
                    acc |= a[(*b, i, k)] | res[(*b, k, j)]
                res[(*b, i, j)] = frozenset(acc)
                done.append(i)
    return res


def _scaled_dot(inst: Instruction, ops: list[np.ndarray], out: tuple[int, ...]) -> np.ndarray:
    """``dot(lhs * expand(lhs_scale), rhs * expand(rhs_scale))``: each scale element covers a
    block of its operand (operands: lhs, rhs, lhs_scale, rhs_scale)."""
    scaled = []
    for data, scale in ((ops[0], ops[2]), (ops[1], ops[3])):
        big = scale
        for d in range(data.ndim):
            big = np.repeat(big, data.shape[d] // scale.shape[d], axis=d)
        both = _empty(data.shape)
        for idx in np.ndindex(*data.shape):
            both[idx] = data[idx] | big[idx]
        scaled.append(both)
    return _dot(inst, scaled, out)


PASS_THROUGH_TARGETS = {"Sharding", "annotate_device_placement", "MoveToHost", "MoveToDevice", "xla.sdy.Sharding"}


def _sort(inst: Instruction, ops: list[np.ndarray]) -> list[np.ndarray]:
    """Each output element is placed by comparing its whole row along the sorted
    dimension, and the comparator (taken to read every operand) sees every
    operand's row: output element (.., j, ..) reads every operand's row (.., :, ..)."""
    (d,) = inst.dimensions()
    res = _empty(ops[0].shape)
    for idx in np.ndindex(*ops[0].shape):
        acc: set[tuple[int, tuple[int, ...]]] = set()
        for a in ops:
            for j in range(a.shape[d]):
                acc |= a[(*idx[:d], j, *idx[d + 1:])]
        res[idx] = frozenset(acc)
    return [res.copy() for _ in ops]


def _scatter(inst: Instruction, ops: list[np.ndarray], indices: np.ndarray, n: int) -> list[np.ndarray]:
    """XLA's scatter (operation semantics), without batching dims: update element U
    lands at operand index W + S, W its window index (update_window_dims placed in the
    operand dims that are not inserted_window_dims) and S the start index vector read
    from ``indices`` at U's scatter dims (along scatter_dims_to_operand_dims); an
    update whose index is out of bounds is skipped. Output element o reads operand[o]
    (the combiner's first argument) and the updates landing at o with their index
    vectors."""
    uwd = inst.ints("update_window_dims", ())
    iwd = inst.ints("inserted_window_dims", ())
    sdod = inst.ints("scatter_dims_to_operand_dims", ())
    ivd = int(inst.attributes["index_vector_dim"])
    operand_shape = ops[0].shape
    idx_tags = ops[n]
    updates = ops[n + 1 :]
    res = [a.copy() for a in ops[:n]]
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in iwd]
    for u in np.ndindex(*updates[0].shape):
        scatter_pos = [u[d] for d in range(len(u)) if d not in uwd]
        vec_len = indices.shape[ivd] if ivd < indices.ndim else 1
        s_in = [0] * len(operand_shape)
        read_idx: set[tuple[int, tuple[int, ...]]] = set()
        for i in range(vec_len):
            at = list(scatter_pos)
            if ivd < indices.ndim:
                at.insert(ivd, i)
            s_in[sdod[i]] = int(indices[tuple(at)])
            read_idx |= idx_tags[tuple(at)]
        target = list(s_in)
        for w, od in zip(uwd, window_operand_dims):
            target[od] += u[w]
        if any(not 0 <= t < m for t, m in zip(target, operand_shape)):
            continue
        for k in range(n):
            extra = frozenset(read_idx) | frozenset().union(*(up[u] for up in updates))
            res[k][tuple(target)] = res[k][tuple(target)] | extra
    return res


def _add(a: np.ndarray, extra: Tag) -> np.ndarray:
    res = _empty(a.shape)
    for idx in np.ndindex(*a.shape):
        res[idx] = a[idx] | extra
    return res


def _pad(inst: Instruction, ops: list[np.ndarray], out: tuple[int, ...]) -> np.ndarray:
    src, value = ops
    pads = inst.padding()
    res = np.empty(out, dtype=object)
    for idx in np.ndindex(*out):
        res[idx] = value[()]
    # Place the operand on the interior-dilated grid, then drop what falls outside.
    for idx in np.ndindex(*src.shape):
        pos = tuple(p.low + i * (p.interior + 1) for i, p in zip(idx, pads))
        if all(0 <= q < n for q, n in zip(pos, out)):
            res[pos] = src[idx]
    return res


def _gather(inst: Instruction, ops: list[np.ndarray], indices: np.ndarray, out: tuple[int, ...]) -> np.ndarray:
    operand, idx_tags = ops
    g = inst.gather_dims()
    res = _empty(out)
    batch_dims = [d for d in range(len(out)) if d not in g.offset_dims]
    kept = [
        d for d in range(operand.ndim) if d not in g.collapsed_slice_dims and d not in g.operand_batching_dims
    ]
    ivd = g.index_vector_dim
    idx_batch = [d for d in range(indices.ndim) if d != ivd]
    for o in np.ndindex(*out):
        batch = [o[d] for d in batch_dims]
        # The start vector: the indices at the batch position, along index_vector_dim.
        pos: list[int | slice] = list(batch)
        if ivd < indices.ndim:
            pos.insert(ivd, slice(None))
        vec = np.atleast_1d(indices[tuple(pos)])
        vec_tags = np.atleast_1d(idx_tags[tuple(pos)])
        start = [0] * operand.ndim
        for k, d in enumerate(g.start_index_map):
            start[d] = _clamp(int(vec[k]), 0, operand.shape[d] - g.slice_sizes[d])
        # A batching dim of the operand takes the index of the paired indices dim.
        for d, i in zip(g.operand_batching_dims, g.start_indices_batching_dims):
            start[d] = batch[idx_batch.index(i)]
        full = list(start)
        for od, d in zip(g.offset_dims, kept):
            full[d] += o[od]
        res[o] = operand[tuple(full)] | frozenset().union(*vec_tags)
    return res


def _reduce(inst: Instruction, ops: list[np.ndarray], out: list[tuple[int, ...]]) -> list[np.ndarray]:
    n = len(ops) // 2
    rdims = set(inst.dimensions())
    shape = ops[0].shape
    init = frozenset().union(*(ops[n + k][()] for k in range(n)))
    res = _empty(out[0])
    for idx in np.ndindex(*shape):
        o = tuple(i for d, i in enumerate(idx) if d not in rdims)
        for k in range(n):
            res[o] = res[o] | ops[k][idx]
    res = _add(res, init)
    # Every output of a variadic reduce is computed from every input (the reducer
    # combines them all).
    return [res.copy() for _ in range(n)]


def _reduce_window(inst: Instruction, ops: list[np.ndarray], out: list[tuple[int, ...]]) -> list[np.ndarray]:
    n = len(ops) // 2
    win = inst.window()
    shape = ops[0].shape
    init = frozenset().union(*(ops[n + k][()] for k in range(n)))
    res = _empty(out[0])
    for o in np.ndindex(*out[0]):
        acc = set(init)
        for kpos in itertools.product(*(range(w.size) for w in win)):
            src = []
            for oi, ki, w, size in zip(o, kpos, win, shape):
                p = oi * w.stride + ki * w.window_dilation - w.pad_low  # position in the dilated input
                if p < 0 or p % w.base_dilation or p // w.base_dilation >= size:
                    break
                src.append(p // w.base_dilation)
            else:
                for k in range(n):
                    acc |= ops[k][tuple(src)]
        res[o] = frozenset(acc)
    return [res.copy() for _ in range(n)]


def _select_and_scatter(inst: Instruction, ops: list[np.ndarray], operand: np.ndarray) -> np.ndarray:
    """Select ``ge`` on the concrete ``operand`` values (the first largest element of
    each window is chosen, as XLA's loop over the window keeps its current choice while
    ``select(current, candidate)`` holds; padded positions are never chosen). Result
    element ``p`` reads the init value, every operand element of every window that
    contains ``p`` (the selections that decide it), and the source element of each
    window that chose ``p``."""
    data, source, init = ops
    win = inst.window()
    res = _empty(data.shape)
    for p in np.ndindex(*data.shape):
        res[p] = set(init[()])
    for w in np.ndindex(*source.shape):
        members = []
        for kpos in itertools.product(*(range(d.size) for d in win)):
            pos = []
            for wi, ki, d, size in zip(w, kpos, win, data.shape):
                x = wi * d.stride + ki * d.window_dilation - d.pad_low
                if x < 0 or x % d.base_dilation or x // d.base_dilation >= size:
                    break
                pos.append(x // d.base_dilation)
            else:
                members.append(tuple(pos))
        if not members:
            continue
        chosen = members[0]
        for m in members[1:]:
            if not operand[chosen] >= operand[m]:
                chosen = m
        reads = frozenset().union(*(data[m] for m in members))
        for m in members:
            res[m] |= reads
        res[chosen] |= source[w]
    for p in np.ndindex(*data.shape):
        res[p] = frozenset(res[p])
    return res


def _dot(inst: Instruction, ops: list[np.ndarray], out: tuple[int, ...]) -> np.ndarray:
    lhs, rhs = ops
    dd = inst.dot_dims()
    lfree = [d for d in range(lhs.ndim) if d not in dd.lhs_batch and d not in dd.lhs_contracting]
    rfree = [d for d in range(rhs.ndim) if d not in dd.rhs_batch and d not in dd.rhs_contracting]
    res = _empty(out)
    csizes = [lhs.shape[d] for d in dd.lhs_contracting]
    nb = len(dd.lhs_batch)
    for o in np.ndindex(*out):
        acc: set[tuple[int, tuple[int, ...]]] = set()
        for c in itertools.product(*(range(s) for s in csizes)):
            li = [0] * lhs.ndim
            ri = [0] * rhs.ndim
            for i, (a, b) in enumerate(zip(dd.lhs_batch, dd.rhs_batch)):
                li[a] = ri[b] = o[i]
            for i, d in enumerate(lfree):
                li[d] = o[nb + i]
            for i, d in enumerate(rfree):
                ri[d] = o[nb + len(lfree) + i]
            for i, (a, b) in enumerate(zip(dd.lhs_contracting, dd.rhs_contracting)):
                li[a] = ri[b] = c[i]
            acc |= lhs[tuple(li)] | rhs[tuple(ri)]
        res[o] = frozenset(acc)
    return res


def _convolution(inst: Instruction, ops: list[np.ndarray], out: tuple[int, ...]) -> np.ndarray:
    """out[b, o.., f] = sum over window positions k.. and input features c of
    lhs[b, x.., c] * rhs[k.., c, f], where x is the (padded, base-dilated) input
    position of o * stride + k * rhs_dilate; padding positions read no lhs
    element, but the kernel element is read for every window position."""
    lhs, rhs = ops
    lhs_l, rest = (inst.attributes["dim_labels"]).split("_")
    rhs_l, out_l = rest.split("->")
    nsp = len(lhs_l) - 2
    win = inst.window() if nsp else []
    res = _empty(out)
    for o in np.ndindex(*out):
        acc: set[tuple[int, tuple[int, ...]]] = set()
        b, f = o[out_l.index("b")], o[out_l.index("f")]
        # feature_group_count G: output feature f belongs to group f // (cout / G) and
        # reads the input features of that group; the kernel's i dim indexes within it.
        groups = int(inst.attributes.get("feature_group_count", "1"))
        per_group = lhs.shape[lhs_l.index("f")] // groups
        group = f // (out[out_l.index("f")] // groups)
        # batch_group_count G: the lhs batch splits into G groups of B/G (group-major, as JAX's batching
        # rule and XLA's CPU result agree); output feature f belongs to batch group f // (cout / G) and
        # output batch b reads lhs batch group * (B/G) + b, over every input feature.
        bgroups = int(inst.attributes.get("batch_group_count", "1"))
        b = (f // (out[out_l.index("f")] // bgroups)) * (lhs.shape[lhs_l.index("b")] // bgroups) + b
        for kpos in itertools.product(*(range(w.size) for w in win)):
            for ci in range(per_group):
                c = group * per_group + ci
                ri = [0] * rhs.ndim
                ri[rhs_l.index("i")], ri[rhs_l.index("o")] = ci, f
                li = [0] * lhs.ndim
                li[lhs_l.index("b")], li[lhs_l.index("f")] = b, c
                real = True
                for i, (w, k) in enumerate(zip(win, kpos)):
                    ri[rhs_l.index(str(i))] = w.size - 1 - k if w.reversal else k
                    p = o[out_l.index(str(i))] * w.stride + k * w.window_dilation - w.pad_low
                    x, r = divmod(p, w.base_dilation)
                    if p < 0 or r or x >= lhs.shape[lhs_l.index(str(i))]:
                        real = False
                    li[lhs_l.index(str(i))] = x
                acc |= rhs[tuple(ri)]
                if real:
                    acc |= lhs[tuple(li)]
        res[o] = frozenset(acc)
    return res


def all_tags(a: np.ndarray) -> Tag:
    """Every tag in an array (for tests)."""
    return _all_tags(a)
