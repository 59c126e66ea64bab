module @broadcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_add_fusion(%arg0: tensor<32xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<i32> {llvm.align = 64 : index, llvm.dereferenceable = 4 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<16xf32> {llvm.align = 64 : index, llvm.dereferenceable = 64 : index, xla.slice_index = 2 : index}) -> tensor<16xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c8 = arith.constant 8 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %extracted = tensor.extract %arg1[] : tensor<i32>
    %0 = arith.cmpi slt, %extracted, %c0_i32 : i32
    %1 = arith.addi %extracted, %c4_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
    %2 = arith.select %0, %1, %extracted : i32
    %3 = arith.index_cast %2 : i32 to index
    %4 = arith.minsi %3, %c2 {xla.range = [-9223372036854775808 : index, 2 : index]} : index
    %5 = arith.maxsi %4, %c0 {xla.range = [0 : index, 2 : index]} : index
    %6 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %arg2) -> (tensor<16xf32>) {
      %7 = arith.addi %arg3, %5 {xla.range = [0 : index, 3 : index]} : index
      %8 = scf.for %arg5 = %c0 to %c8 step %c1 iter_args(%arg6 = %arg4) -> (tensor<16xf32>) {
        %9 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]">(%7, %arg5)
        %extracted_0 = tensor.extract %arg0[%9] : tensor<32xf32>
        %10 = arith.addf %extracted_0, %cst : f32
        %11 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 1], d1 in [0, 7]">(%arg3, %arg5)
        %inserted = tensor.insert %10 into %arg6[%11] : tensor<16xf32>
        scf.yield %inserted : tensor<16xf32>
      }
      scf.yield %8 : tensor<16xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %6 : tensor<16xf32>
  }
}