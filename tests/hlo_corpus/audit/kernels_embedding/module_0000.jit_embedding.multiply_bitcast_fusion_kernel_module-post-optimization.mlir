module @multiply_bitcast_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @multiply_bitcast_fusion(%arg0: tensor<40xf32> {llvm.align = 64 : index, llvm.dereferenceable = 160 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<4xi32> {llvm.align = 64 : index, llvm.dereferenceable = 16 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<16xf32> {llvm.align = 64 : index, llvm.dereferenceable = 64 : index, xla.slice_index = 2 : index}) -> tensor<16xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c4 = arith.constant 4 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 2.000000e+00 : f32
    %c9 = arith.constant 9 : index
    %c10_i32 = arith.constant 10 : i32
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %0 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %arg2) -> (tensor<16xf32>) {
      %1 = scf.for %arg5 = %c0 to %c2 step %c1 iter_args(%arg6 = %arg4) -> (tensor<16xf32>) {
        %2 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 2 + d1), domain: d0 in [0, 1], d1 in [0, 1]">(%arg3, %arg5)
        %extracted = tensor.extract %arg1[%2] : tensor<4xi32>
        %3 = arith.cmpi slt, %extracted, %c0_i32 : i32
        %4 = arith.addi %extracted, %c10_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
        %5 = arith.select %3, %4, %extracted : i32
        %6 = arith.index_cast %5 : i32 to index
        %7 = arith.minsi %6, %c9 {xla.range = [-9223372036854775808 : index, 9 : index]} : index
        %8 = arith.maxsi %7, %c0 {xla.range = [0 : index, 9 : index]} : index
        %9 = scf.for %arg7 = %c0 to %c4 step %c1 iter_args(%arg8 = %arg6) -> (tensor<16xf32>) {
          %10 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 9], d1 in [0, 3]">(%8, %arg7)
          %extracted_0 = tensor.extract %arg0[%10] : tensor<40xf32>
          %11 = arith.mulf %extracted_0, %cst : f32
          %12 = xla.apply_indexing #xla.indexing_map<"(d0, d1, d2) -> (d0 * 8 + d1 * 4 + d2), domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 3]">(%arg3, %arg5, %arg7)
          %inserted = tensor.insert %11 into %arg8[%12] : tensor<16xf32>
          scf.yield %inserted : tensor<16xf32>
        }
        scf.yield %9 : tensor<16xf32>
      } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
      scf.yield %1 : tensor<16xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %0 : tensor<16xf32>
  }
}