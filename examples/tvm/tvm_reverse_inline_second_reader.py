# TVM 0.27's reverse_compute_inline of C drops B's store although D still reads B: TVM's result reads a buffer
# nothing allocates or writes (TVM's own well-formedness check rejects it). validate-tvm refutes it.
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(A: T.Buffer((4, 6), "float32"), D: T.Buffer((4, 6), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    B = T.sblock_alloc_buffer((4, 6))
    C = T.sblock_alloc_buffer((4, 6))
    for i, j in T.grid(4, 6):
        with T.sblock("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(4, 6):
        with T.sblock("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
    for i, j in T.grid(4, 6):
        with T.sblock("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j], B[v_i, v_j])
            T.writes(D[v_i, v_j])
            D[v_i, v_j] = T.exp(C[v_i, v_j]) - B[v_i, v_j]
