# A dynamic-shape function: symbolic sizes are recognized, not modelled yet.
from tvm.script import tir as T


@T.prim_func
def add_one(a: T.handle, b: T.handle) -> None:
    N = T.int32()
    A = T.match_buffer(a, (N,))
    B = T.match_buffer(b, (N,))
    for i in T.serial(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = A[vi] + 1.0
