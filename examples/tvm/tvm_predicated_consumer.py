# A consumer block guarded by T.where: TVM's reverse_compute_inline refuses it, the project proves it legal.
@T.prim_func(s_tir=True)
def main(X: T.Buffer((5, 3), "float32"), C: T.Buffer((15,), "float32")):
    B = T.sblock_alloc_buffer((15,))
    for i in range(15):
        with T.sblock("B"):
            v0 = T.axis.spatial(15, i)
            B[v0] = X[v0 // 3, v0 % 3] * X[v0 // 3, v0 % 3]
    for i in range(17):
        with T.sblock("C"):
            v0 = T.axis.spatial(15, i)
            T.where(i < 15)
            C[v0] = T.max(B[v0], T.float32(0.0))
