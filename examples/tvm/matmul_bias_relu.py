# A matmul, a bias-add and a ReLU, as a TVM test writes them.
import tvm
from tvm.script import tir as T


@T.prim_func
def matmul_bias_relu(
    A: T.Buffer((16, 16), "float32"),
    B: T.Buffer((16, 16), "float32"),
    bias: T.Buffer((16,), "float32"),
    E: T.Buffer((16, 16), "float32"),
) -> None:
    C = T.alloc_buffer((16, 16))
    D = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j)
            D[vi, vj] = C[vi, vj] + bias[vj]
    for i, j in T.grid(16, 16):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.max(D[vi, vj], T.float32(0))
