# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def main(X: T.Buffer((16, 32), "float32"), D: T.Buffer((32, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    B = T.sblock_alloc_buffer((16, 32))
    C = T.sblock_alloc_buffer((32, 16))
    for i, j in T.grid(16, 32):
        with T.sblock("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(X[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = X[v_i, v_j] * T.float32(2.0)
    for i, j in T.grid(32, 16):
        with T.sblock("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(B[v_j, v_i])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = B[v_j, v_i] + T.float32(1.0)
    for i, j in T.grid(32, 16):
        with T.sblock("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j])
            T.writes(D[v_i, v_j])
            D[v_i, v_j] = T.exp(C[v_i, v_j])