module @add_bitcast_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @add_bitcast_fusion(%arg0: tensor<128xf32> {llvm.align = 64 : index, llvm.dereferenceable = 512 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<24xf32> {llvm.align = 64 : index, llvm.dereferenceable = 96 : index, xla.slice_index = 2 : index}) -> tensor<24xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c8 = arith.constant 8 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %c15 = arith.constant 15 : index
    %c16_i32 = arith.constant 16 : i32
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %0 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %arg2) -> (tensor<24xf32>) {
      %extracted = tensor.extract %arg1[%arg3] : tensor<3xi32>
      %1 = arith.cmpi slt, %extracted, %c0_i32 : i32
      %2 = arith.addi %extracted, %c16_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
      %3 = arith.select %1, %2, %extracted : i32
      %4 = arith.index_cast %3 : i32 to index
      %5 = arith.minsi %4, %c15 {xla.range = [-9223372036854775808 : index, 15 : index]} : index
      %6 = arith.maxsi %5, %c0 {xla.range = [0 : index, 15 : index]} : index
      %7 = scf.for %arg5 = %c0 to %c8 step %c1 iter_args(%arg6 = %arg4) -> (tensor<24xf32>) {
        %8 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 15], d1 in [0, 7]">(%6, %arg5)
        %extracted_0 = tensor.extract %arg0[%8] : tensor<128xf32>
        %9 = arith.addf %extracted_0, %cst : f32
        %10 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 2], d1 in [0, 7]">(%arg3, %arg5)
        %inserted = tensor.insert %9 into %arg6[%10] : tensor<24xf32>
        scf.yield %inserted : tensor<24xf32>
      }
      scf.yield %7 : tensor<24xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %0 : tensor<24xf32>
  }
}