module @broadcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_add_fusion(%arg0: tensor<4x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<4x3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<4x3xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.slice_index = 2 : index}) -> tensor<4x3xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg3, %arg4, %arg5) in (1, 1, 1) shared_outs(%arg6 = %arg2) -> (tensor<4x3xf32>) {
      %xla_loop = xla.loop (%arg3, %arg4, %arg5, %0, %1, %2)[%i, %j] -> (%ra, %rb) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1] -> (s0, s1), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 3], s1 in [0, 2]"> iter_args(%iter = %arg6) -> (tensor<4x3xf32>) {
        %pure_call = xla.pure_call @fused_computation_add_2(%arg0, %arg1, %ra, %rb) : (tensor<4x8xf32>, tensor<4x3xi32>, index, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra, %rb] : tensor<4x3xf32>
        xla.yield %inserted : tensor<4x3xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg6[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x3xf32>
      }
    }
    return %3 : tensor<4x3xf32>
  }
  func.func private @fused_computation_add_2(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xi32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 2 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c8_i32 = arith.constant 8 : i32
    %extracted = tensor.extract %arg1[%arg2, %arg3] : tensor<4x3xi32>
    %0 = arith.cmpi slt, %extracted, %c0_i32 : i32
    %1 = arith.extui %0 : i1 to i8
    %2 = arith.addi %extracted, %c8_i32 : i32
    %extracted_0 = tensor.extract %arg1[%arg2, %arg3] : tensor<4x3xi32>
    %3 = arith.select %0, %2, %extracted_0 : i32
    %c7_i32 = arith.constant 7 : i32
    %4 = arith.cmpi sge, %3, %c0_i32 : i32
    %5 = arith.extui %4 : i1 to i8
    %6 = arith.cmpi sle, %3, %c7_i32 : i32
    %7 = arith.extui %6 : i1 to i8
    %8 = arith.andi %5, %7 : i8
    %9 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 3], d1 in [0, 2]">(%arg2, %arg3)
    %c0_1 = arith.constant 0 : index
    %c0_2 = arith.constant 0 : index
    %c0_3 = arith.constant 0 : index
    %10 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 / 3), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c0_3)
    %11 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 mod 3), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c0_3)
    %c1 = arith.constant 1 : index
    %12 = arith.cmpi ult, %c0_3, %c1 : index
    %13 = scf.if %12 -> (i32) {
      %c0_10 = arith.constant 0 : index
      %27 = arith.subi %c0_3, %c0_10 : index
      %28 = arith.index_castui %10 : index to i64
      %29 = arith.trunci %28 : i64 to i32
      scf.yield %29 : i32
    } else {
      %c1_10 = arith.constant 1 : index
      %27 = arith.subi %c0_3, %c1_10 : index
      %extracted_11 = tensor.extract %arg1[%10, %11] : tensor<4x3xi32>
      %28 = arith.cmpi slt, %extracted_11, %c0_i32 : i32
      %29 = arith.extui %28 : i1 to i8
      %30 = arith.addi %extracted_11, %c8_i32 : i32
      %extracted_12 = tensor.extract %arg1[%10, %11] : tensor<4x3xi32>
      %31 = arith.select %28, %30, %extracted_12 : i32
      scf.yield %31 : i32
    }
    %c0_4 = arith.constant 0 : index
    %14 = arith.index_cast %13 : i32 to index
    %c3 = arith.constant 3 : index
    %15 = arith.minsi %14, %c3 : index
    %16 = arith.maxsi %15, %c0_4 : index
    %c1_5 = arith.constant 1 : index
    %17 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 / 3), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c1_5)
    %18 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 mod 3), domain: d0 in [0, 11], d1 in [0, 1]">(%9, %c1_5)
    %c1_6 = arith.constant 1 : index
    %19 = arith.cmpi ult, %c1_5, %c1_6 : index
    %20 = scf.if %19 -> (i32) {
      %c0_10 = arith.constant 0 : index
      %27 = arith.subi %c1_5, %c0_10 : index
      %28 = arith.index_castui %17 : index to i64
      %29 = arith.trunci %28 : i64 to i32
      scf.yield %29 : i32
    } else {
      %c1_10 = arith.constant 1 : index
      %27 = arith.subi %c1_5, %c1_10 : index
      %extracted_11 = tensor.extract %arg1[%17, %18] : tensor<4x3xi32>
      %28 = arith.cmpi slt, %extracted_11, %c0_i32 : i32
      %29 = arith.extui %28 : i1 to i8
      %30 = arith.addi %extracted_11, %c8_i32 : i32
      %extracted_12 = tensor.extract %arg1[%17, %18] : tensor<4x3xi32>
      %31 = arith.select %28, %30, %extracted_12 : i32
      scf.yield %31 : i32
    }
    %c0_7 = arith.constant 0 : index
    %21 = arith.index_cast %20 : i32 to index
    %c7 = arith.constant 7 : index
    %22 = arith.minsi %21, %c7 : index
    %23 = arith.maxsi %22, %c0_7 : index
    %extracted_8 = tensor.extract %arg0[%16, %23] : tensor<4x8xf32>
    %cst = arith.constant 0x7FC00000 : f32
    %24 = arith.trunci %8 : i8 to i1
    %25 = arith.select %24, %extracted_8, %cst : f32
    %cst_9 = arith.constant 1.000000e+00 : f32
    %26 = arith.addf %25, %cst_9 : f32
    return %26 : f32
  }
}