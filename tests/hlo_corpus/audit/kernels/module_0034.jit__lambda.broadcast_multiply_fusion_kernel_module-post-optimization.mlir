module @broadcast_multiply_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_multiply_fusion(%arg0: tensor<32xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<77xf32> {llvm.align = 64 : index, llvm.dereferenceable = 308 : index, xla.slice_index = 1 : index}) -> tensor<77xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c11 = arith.constant 11 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 2.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c7 = arith.constant 7 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %0 = scf.for %arg2 = %c0 to %c7 step %c1 iter_args(%arg3 = %arg1) -> (tensor<77xf32>) {
      %1 = arith.cmpi sge, %arg2, %c1 : index
      %2 = arith.cmpi sle, %arg2, %c4 : index
      %3 = arith.andi %1, %2 : i1
      %4 = scf.for %arg4 = %c0 to %c11 step %c1 iter_args(%arg5 = %arg3) -> (tensor<77xf32>) {
        %5 = arith.cmpi sle, %arg4, %c7 : index
        %6 = arith.andi %3, %5 : i1
        %7 = scf.if %6 -> (f32) {
          %10 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d1 * 8 + d0 - 8), domain: d0 in [0, 7], d1 in [1, 4]">(%arg4, %arg2)
          %extracted = tensor.extract %arg0[%10] : tensor<32xf32>
          scf.yield %extracted : f32
        } else {
          scf.yield %cst_0 : f32
        }
        %8 = arith.mulf %7, %cst : f32
        %9 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 11 + d1), domain: d0 in [0, 6], d1 in [0, 10]">(%arg2, %arg4)
        %inserted = tensor.insert %8 into %arg5[%9] : tensor<77xf32>
        scf.yield %inserted : tensor<77xf32>
      }
      scf.yield %4 : tensor<77xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %0 : tensor<77xf32>
  }
}