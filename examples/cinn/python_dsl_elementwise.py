# CINN's Python DSL, as Paddle's test/cinn/ir tests write it, read like TVMScript:
#   verified-indexing reverse-inline examples/cinn/python_dsl_elementwise.py --block Y --output Y
# The schedule calls after the blocks (sch....) are the question, not part of the program read.
from paddle.cinn import ir, to_cinn_llir
from paddle.cinn.runtime.data_array import DataArray
from paddle.cinn.schedule import IRSchedule as sch


@to_cinn_llir
def elementwise_add_inline(
    X: DataArray((8, 16)),
    Y: DataArray((8, 16)),
    A: DataArray((8, 16)),
):
    for i in range(8):
        for j in range(16):
            with ir.ScheduleBlockContext("A") as A_block:
                i1, j1 = ir.AxisMap("SS", [i, j])
                A[i1, j1] = X[i1, j1] * 2.0
    for i in range(8):
        for j in range(16):
            with ir.ScheduleBlockContext("Y"):
                i1, j1 = ir.AxisMap("SS", [i, j])
                Y[i1, j1] = A[i1, j1] + 2.0
    block_a = sch.get_block("A")
    sch.compute_inline(block_a)
