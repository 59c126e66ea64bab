module @broadcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_add_fusion(%arg0: tensor<32xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<12xi32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<12xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.slice_index = 2 : index}) -> tensor<12xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0x7FC00000 : f32
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c7_i32 = arith.constant 7 : i32
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c8_i32 = arith.constant 8 : i32
    %0 = scf.for %arg3 = %c0 to %c4 step %c1 iter_args(%arg4 = %arg2) -> (tensor<12xf32>) {
      %1 = arith.index_castui %arg3 : index to i64
      %2 = arith.trunci %1 : i64 to i32
      %3 = arith.index_cast %2 : i32 to index
      %4 = arith.minsi %3, %c3 {xla.range = [-9223372036854775808 : index, 3 : index]} : index
      %5 = arith.maxsi %4, %c0 {xla.range = [0 : index, 3 : index]} : index
      %6 = scf.for %arg5 = %c0 to %c3 step %c1 iter_args(%arg6 = %arg4) -> (tensor<12xf32>) {
        %7 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 3], d1 in [0, 2]">(%arg3, %arg5)
        %extracted = tensor.extract %arg1[%7] : tensor<12xi32>
        %8 = arith.cmpi slt, %extracted, %c0_i32 : i32
        %9 = arith.addi %extracted, %c8_i32 {xla.range = [-9223372036854775808 : index, 9223372036854775807 : index]} : i32
        %10 = arith.select %8, %9, %extracted : i32
        %11 = arith.cmpi sge, %10, %c0_i32 : i32
        %12 = arith.cmpi sle, %10, %c7_i32 : i32
        %13 = arith.andi %11, %12 : i1
        %14 = arith.index_cast %10 : i32 to index
        %15 = arith.minsi %14, %c7 {xla.range = [-9223372036854775808 : index, 7 : index]} : index
        %16 = arith.maxsi %15, %c0 {xla.range = [0 : index, 7 : index]} : index
        %17 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]">(%5, %16)
        %extracted_1 = tensor.extract %arg0[%17] : tensor<32xf32>
        %18 = arith.select %13, %extracted_1, %cst_0 : f32
        %19 = arith.addf %18, %cst : f32
        %inserted = tensor.insert %19 into %arg6[%7] : tensor<12xf32>
        scf.yield %inserted : tensor<12xf32>
      }
      scf.yield %6 : tensor<12xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %0 : tensor<12xf32>
  }
}