module @add_bitcast_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @add_bitcast_fusion(%arg0: tensor<64xf32> {llvm.align = 64 : index, llvm.dereferenceable = 256 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.invariant, xla.slice_index = 2 : index}, %arg3: tensor<3xf32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.slice_index = 3 : index}) -> tensor<3xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %c7 = arith.constant 7 : index
    %c8_i32 = arith.constant 8 : i32
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %0 = scf.for %arg4 = %c0 to %c3 step %c1 iter_args(%arg5 = %arg3) -> (tensor<3xf32>) {
      %extracted = tensor.extract %arg2[%arg4] : tensor<3xi32>
      %1 = arith.cmpi slt, %extracted, %c0_i32 : i32
      %2 = arith.addi %extracted, %c8_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
      %3 = arith.select %1, %2, %extracted : i32
      %4 = arith.index_cast %3 : i32 to index
      %5 = arith.minsi %4, %c7 {xla.range = [-9223372036854775808 : index, 7 : index]} : index
      %6 = arith.maxsi %5, %c0 {xla.range = [0 : index, 7 : index]} : index
      %extracted_0 = tensor.extract %arg1[%arg4] : tensor<3xi32>
      %7 = arith.cmpi slt, %extracted_0, %c0_i32 : i32
      %8 = arith.addi %extracted_0, %c8_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
      %9 = arith.select %7, %8, %extracted_0 : i32
      %10 = arith.index_cast %9 : i32 to index
      %11 = arith.minsi %10, %c7 {xla.range = [-9223372036854775808 : index, 7 : index]} : index
      %12 = arith.maxsi %11, %c0 {xla.range = [0 : index, 7 : index]} : index
      %13 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 7], d1 in [0, 7]">(%6, %12)
      %extracted_1 = tensor.extract %arg0[%13] : tensor<64xf32>
      %14 = arith.addf %extracted_1, %cst : f32
      %inserted = tensor.insert %14 into %arg5[%arg4] : tensor<3xf32>
      scf.yield %inserted : tensor<3xf32>
    }
    return %0 : tensor<3xf32>
  }
}