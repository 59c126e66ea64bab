# A dynamic-shape function: N is a size parameter; every obligation is proven for every N at once.
from tvm.script import tir as T


@T.prim_func
def reverse_scale(a: T.handle, c: T.handle) -> None:
    N = T.int32()
    A = T.match_buffer(a, (N,))
    B = T.alloc_buffer((N,))
    C = T.match_buffer(c, (N,))
    for i in T.serial(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = A[vi] + 1.0
    for i in T.serial(N):
        with T.block("C"):
            vi = T.axis.spatial(N, i)
            C[vi] = B[N - 1 - vi] * 2.0
