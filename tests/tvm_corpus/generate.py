"""Regenerate the TVM 0.27 corpus: ``.venv/bin/python tests/tvm_corpus/generate.py``.

Each ``te_*.tvm`` file is ``func.script()`` of a function built with
``te.create_prim_func`` (some after one of TVM's own schedule primitives), printed by
the installed apache-tvm 0.27 as is, so the tests read exactly what TVM prints
without TVM installed. The hand-written ``hand_*.tvm`` files (not generated) cover the
constructs ``te`` does not print.

``tensorize`` is not in the corpus: apache-tvm 0.27.0.post1 crashes (a segmentation fault in
``tvm::s_tir::Tensorize``) tensorizing a split elementwise loop with a registered ``TensorIntrin``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import tvm
from tvm import te, tirx, topi

HERE = Path(__file__).resolve().parent


def _sched(func: tirx.PrimFunc, steps: Callable[[tvm.s_tir.Schedule], None]) -> tirx.PrimFunc:
    sch = tvm.s_tir.Schedule(func)
    steps(sch)
    return sch.mod["main"]


def functions() -> dict[str, tirx.PrimFunc]:
    out: dict[str, tirx.PrimFunc] = {}
    f32 = "float32"

    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((4, 6), lambda i, j: B[i, j] + 1.0, name="C")
    out["elementwise_chain"] = te.create_prim_func([A, C])
    D = te.compute((4, 6), lambda i, j: te.exp(C[i, j]) - B[i, j], name="D")
    out["elementwise_three"] = te.create_prim_func([A, D])
    T_ = te.compute((6, 4), lambda i, j: B[j, i], name="T")
    out["transpose_after"] = te.create_prim_func([A, T_])
    R = te.compute((24,), lambda k: B[k // 6, k % 6], name="R")
    out["reshape_flat"] = te.create_prim_func([A, R])
    R2 = te.compute((3, 8), lambda i, j: B[(i * 8 + j) // 6, (i * 8 + j) % 6], name="R2")
    out["reshape_3x8"] = te.create_prim_func([A, R2])

    M, N, K = 4, 5, 3
    X = te.placeholder((M, K), name="X")
    W = te.placeholder((K, N), name="W")
    bias = te.placeholder((N,), name="bias")
    k = te.reduce_axis((0, K), name="k")
    mm = te.compute((M, N), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="matmul")
    out["matmul"] = te.create_prim_func([X, W, mm])
    mb = te.compute((M, N), lambda i, j: mm[i, j] + bias[j], name="bias_add")
    relu = te.compute((M, N), lambda i, j: te.max(mb[i, j], tirx.const(0, f32)), name="relu")
    out["matmul_bias_relu"] = te.create_prim_func([X, W, bias, relu])
    lo = te.var("lo", dtype=f32)
    hi = te.var("hi", dtype=f32)
    clip = te.compute((M, N), lambda i, j: te.min(te.max(mb[i, j], lo), hi), name="clip")
    out["matmul_bias_clip_scalar_params"] = te.create_prim_func([X, W, bias, clip, lo, hi])

    red_k = te.reduce_axis((0, 6), name="rk")
    rsum = te.compute((4,), lambda i: te.sum(A[i, red_k], axis=red_k), name="rsum")
    out["row_sum"] = te.create_prim_func([A, rsum])
    mk = te.reduce_axis((0, 6), name="mk")
    rmax = te.compute((4,), lambda i: te.max(A[i, mk], axis=mk), name="rmax")
    out["row_max"] = te.create_prim_func([A, rmax])
    sm_e = te.compute((4, 6), lambda i, j: te.exp(A[i, j] - rmax[i]), name="sm_exp")
    sk = te.reduce_axis((0, 6), name="sk")
    sm_s = te.compute((4,), lambda i: te.sum(sm_e[i, sk], axis=sk), name="sm_sum")
    sm = te.compute((4, 6), lambda i, j: sm_e[i, j] / sm_s[i], name="softmax")
    out["softmax"] = te.create_prim_func([A, sm])

    P = te.placeholder((8,), name="P")
    pad = te.compute((10,), lambda i: tirx.if_then_else(tirx.all(i >= 1, i < 9), P[i - 1], 0.0), name="pad")
    wk = te.reduce_axis((0, 3), name="wk")
    Wt = te.placeholder((3,), name="Wt")
    conv = te.compute((8,), lambda i: te.sum(pad[i + wk] * Wt[wk], axis=wk), name="conv1d")
    out["pad_conv1d"] = te.create_prim_func([P, Wt, conv])
    pk = te.reduce_axis((0, 2), name="pk")
    pool = te.compute((4,), lambda i: te.max(P[i * 2 + pk], axis=pk), name="maxpool")
    out["maxpool_stride2"] = te.create_prim_func([P, pool])

    Ai = te.placeholder((4, 6), name="Ai", dtype="int32")
    castf = te.compute((4, 6), lambda i, j: Ai[i, j].astype(f32) * 0.5, name="castf")
    out["cast_int_to_float"] = te.create_prim_func([Ai, castf])
    casti = te.compute((4, 6), lambda i, j: (A[i, j] * 4.0).astype("int32"), name="casti")
    out["cast_float_to_int"] = te.create_prim_func([A, casti])

    n = te.var("n")
    S = te.placeholder((n,), name="S")
    S1 = te.compute((n,), lambda i: S[i] + 1.0, name="S1")
    S2 = te.compute((n,), lambda i: S1[i] * 3.0, name="S2")
    out["symbolic_chain"] = te.create_prim_func([S, S2])
    m = te.var("m")
    SM = te.placeholder((n, m), name="SM")
    ST = te.compute((m, n), lambda i, j: SM[j, i], name="ST")
    out["symbolic_transpose"] = te.create_prim_func([SM, ST])
    n64 = te.var("n64", dtype="int64")
    S64 = te.placeholder((n64,), name="S64")
    out["symbolic_int64"] = te.create_prim_func([S64, te.compute((n64,), lambda i: S64[i] * 2.0, name="D64")])

    Bc = te.placeholder((6,), name="Bc")
    bc = te.compute((4, 6), lambda i, j: A[i, j] + Bc[j], name="bcast_add")
    out["broadcast_add"] = te.create_prim_func([A, Bc, bc])
    sl = te.compute((2, 3), lambda i, j: A[i * 2 + 1, j * 2], name="strided_slice")
    out["strided_slice"] = te.create_prim_func([A, sl])
    cat = topi.concatenate([A, B], axis=0)
    out["concatenate"] = te.create_prim_func([A, cat])
    idx = te.placeholder((3,), name="idx", dtype="int32")
    gather = te.compute((3, 6), lambda i, j: A[idx[i], j], name="gather")
    out["gather_rows"] = te.create_prim_func([A, idx, gather])
    wh = te.compute((4, 6), lambda i, j: tirx.if_then_else(A[i, j] > 0.0, A[i, j], B[i, j]), name="where")
    out["select_data"] = te.create_prim_func([A, wh])
    out["topi_relu_transpose"] = te.create_prim_func([A, topi.transpose(topi.nn.relu(A), (1, 0))])
    out["topi_reshape"] = te.create_prim_func([A, topi.reshape(topi.nn.relu(A), (2, 12))])

    # TVM's own primitives applied
    out["sched_compute_inline"] = _sched(out["elementwise_chain"], lambda s: s.compute_inline(s.get_sblock("B")))
    out["sched_reverse_compute_inline"] = _sched(
        out["elementwise_chain"], lambda s: s.reverse_compute_inline(s.get_sblock("C")))

    def split_nondivisible(s: tvm.s_tir.Schedule) -> None:
        _, j = s.get_loops(s.get_sblock("B"))
        s.split(j, factors=[None, 4])

    out["sched_split_where"] = _sched(out["elementwise_chain"], split_nondivisible)

    def reorder_k_outer(s: tvm.s_tir.Schedule) -> None:
        i, j, kk = s.get_loops(s.get_sblock("matmul"))
        s.reorder(kk, i, j)

    out["sched_matmul_k_outer"] = _sched(out["matmul"], reorder_k_outer)

    def fuse_loops(s: tvm.s_tir.Schedule) -> None:
        i, j = s.get_loops(s.get_sblock("C"))
        s.fuse(i, j)

    out["sched_fuse"] = _sched(out["elementwise_chain"], fuse_loops)

    def decompose(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("matmul")
        kk = s.get_loops(b)[2]
        s.decompose_reduction(b, kk)

    out["sched_decompose_reduction"] = _sched(out["matmul"], decompose)

    def blockize(block: str) -> Callable[[tvm.s_tir.Schedule], None]:
        def steps(s: tvm.s_tir.Schedule) -> None:
            outer, inner = s.get_loops(s.get_sblock(block))[-1:][0], None
            del inner
            s.blockize(s.split(outer, factors=[None, 3 if block == "rsum" else 2])[1])

        return steps

    out["sched_blockize"] = _sched(out["elementwise_chain"], blockize("B"))  # nested blocks
    out["sched_blockize_reduction"] = _sched(out["row_sum"], blockize("rsum"))  # an init holding a block
    out.update(scheduled(out))
    return out


def scheduled(base: dict[str, tirx.PrimFunc]) -> dict[str, tirx.PrimFunc]:
    """Functions after the schedules TVM users write (``tvm.s_tir``), printed as TVM prints them."""
    out: dict[str, tirx.PrimFunc] = {}
    chain, mm, rs = base["elementwise_chain"], base["matmul"], base["row_sum"]

    def split_reorder(s: tvm.s_tir.Schedule) -> None:
        i, j = s.get_loops(s.get_sblock("B"))
        _, ji = s.split(j, factors=[2, 3])
        s.reorder(ji, i)

    out["sched_split_reorder"] = _sched(chain, split_reorder)

    def tile(s: tvm.s_tir.Schedule) -> None:
        i, j, k = s.get_loops(s.get_sblock("matmul"))
        io, ii = s.split(i, factors=[2, 2])
        jo, ji = s.split(j, factors=[None, 2])  # 5 = 3 * 2 - 1: a T.where
        s.reorder(io, jo, k, ii, ji)

    out["sched_matmul_tile"] = _sched(mm, tile)

    def compute_at(s: tvm.s_tir.Schedule) -> None:
        i, _ = s.get_loops(s.get_sblock("C"))
        s.compute_at(s.get_sblock("B"), i)

    out["sched_compute_at"] = _sched(chain, compute_at)

    def reverse_compute_at(s: tvm.s_tir.Schedule) -> None:
        i, _ = s.get_loops(s.get_sblock("B"))
        s.reverse_compute_at(s.get_sblock("C"), i)

    out["sched_reverse_compute_at"] = _sched(chain, reverse_compute_at)

    def cache_read_write(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("matmul")
        s.cache_read(b, 0, "shared")
        s.cache_write(b, 0, "local")

    out["sched_cache_read_write"] = _sched(mm, cache_read_write)

    def rfactor(s: tvm.s_tir.Schedule) -> None:
        _, k = s.get_loops(s.get_sblock("rsum"))
        _, ki = s.split(k, factors=[2, 3])
        s.rfactor(ki, 0)

    out["sched_rfactor"] = _sched(rs, rfactor)

    def decompose_tiled(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("matmul")
        i, j, k = s.get_loops(b)
        io, ii = s.split(i, factors=[2, 2])
        s.reorder(io, k, ii, j)
        s.decompose_reduction(b, k)

    out["sched_decompose_tiled"] = _sched(mm, decompose_tiled)

    def decompose_k_outer(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("matmul")
        i, j, k = s.get_loops(b)
        s.reorder(k, i, j)
        s.decompose_reduction(b, k)

    out["sched_decompose_k_outer"] = _sched(mm, decompose_k_outer)

    def decompose_matmul(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("matmul")
        s.decompose_reduction(b, s.get_loops(b)[2])

    out["sched_decompose_bias_relu"] = _sched(base["matmul_bias_relu"], decompose_matmul)
    out["sched_decompose_row_max"] = _sched(base["softmax"], lambda s: s.decompose_reduction(
        s.get_sblock("rmax"), s.get_loops(s.get_sblock("rmax"))[1]))

    def bind_threads(s: tvm.s_tir.Schedule) -> None:
        i, j = s.get_loops(s.get_sblock("C"))
        bx, tx = s.split(s.fuse(i, j), factors=[None, 8])
        s.bind(bx, "blockIdx.x")
        s.bind(tx, "threadIdx.x")

    out["sched_bind_threads"] = _sched(chain, bind_threads)

    def cross_thread(s: tvm.s_tir.Schedule) -> None:
        i, k = s.get_loops(s.get_sblock("rsum"))
        s.bind(i, "blockIdx.x")
        s.bind(k, "threadIdx.x")

    out["sched_cross_thread_reduction"] = _sched(rs, cross_thread)

    def parallel_vectorize_unroll(s: tvm.s_tir.Schedule) -> None:
        i, j = s.get_loops(s.get_sblock("B"))
        s.parallel(i)
        s.vectorize(j)
        s.unroll(s.get_loops(s.get_sblock("C"))[1])

    out["sched_parallel_vectorize_unroll"] = _sched(chain, parallel_vectorize_unroll)

    def storage_align_set_scope(s: tvm.s_tir.Schedule) -> None:
        s.storage_align(s.get_sblock("B"), 0, axis=0, factor=8, offset=1)
        s.set_scope(s.get_sblock("B"), 0, "shared")

    out["sched_storage_align_set_scope"] = _sched(chain, storage_align_set_scope)

    def annotate(s: tvm.s_tir.Schedule) -> None:
        b = s.get_sblock("B")
        s.annotate(s.get_loops(b)[0], "pragma_auto_unroll_max_step", 16)
        s.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")

    out["sched_annotate"] = _sched(chain, annotate)

    def gpu_matmul(s: tvm.s_tir.Schedule) -> None:  # a typical GPU schedule, every step at once
        b = s.get_sblock("matmul")
        i, j, k = s.get_loops(b)
        io, ii = s.split(i, factors=[None, 2])
        jo, ji = s.split(j, factors=[None, 5])
        s.reorder(io, jo, k, ii, ji)
        s.bind(io, "blockIdx.x")
        s.bind(jo, "blockIdx.y")
        xs = s.cache_read(b, 0, "shared")
        s.compute_at(xs, k)
        loc = s.cache_write(b, 0, "local")
        s.reverse_compute_at(loc, jo)
        s.decompose_reduction(b, k)
        s.unroll(ii)

    out["sched_gpu_matmul"] = _sched(mm, gpu_matmul)

    def blockize_cache_read(s: tvm.s_tir.Schedule) -> None:  # a buffer allocated inside a block
        s.blockize(s.get_loops(s.get_sblock("matmul"))[2], preserve_unit_iters=True)
        s.cache_read(s.get_sblock("matmul"), 0, "shared")

    out["sched_blockize_cache_read"] = _sched(mm, blockize_cache_read)

    return out


def main() -> int:
    funcs = functions()
    for f in HERE.glob("te_*.tvm"):
        f.unlink()
    for name, func in funcs.items():
        text = func.script()
        (HERE / f"te_{name}.tvm").write_text(f"# generated by generate.py with apache-tvm {tvm.__version__}\n{text}\n")
    print(f"{len(funcs)} functions written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
