module @multiply_bitcast_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @multiply_bitcast_fusion(%arg0: tensor<10x4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 160 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<2x2xi32> {llvm.align = 64 : index, llvm.dereferenceable = 16 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<2x2x4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 64 : index, xla.slice_index = 2 : index}) -> tensor<2x2x4xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg3, %arg4, %arg5) in (1, 1, 1) shared_outs(%arg6 = %arg2) -> (tensor<2x2x4xf32>) {
      %xla_loop = xla.loop (%arg3, %arg4, %arg5, %0, %1, %2)[%i, %j, %k] -> (%ra, %rb, %rc) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1, s2] -> (s0, s1, s2), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 1], s1 in [0, 1], s2 in [0, 3]"> iter_args(%iter = %arg6) -> (tensor<2x2x4xf32>) {
        %pure_call = xla.pure_call @fused_computation_bitcast_2(%arg0, %arg1, %ra, %rb, %rc) : (tensor<10x4xf32>, tensor<2x2xi32>, index, index, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra, %rb, %rc] : tensor<2x2x4xf32>
        xla.yield %inserted : tensor<2x2x4xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg6[0, 0, 0] [2, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> into tensor<2x2x4xf32>
      }
    }
    return %3 : tensor<2x2x4xf32>
  }
  func.func private @fused_computation_bitcast_2(%arg0: tensor<10x4xf32>, %arg1: tensor<2x2xi32>, %arg2: index {xla.range = [0 : index, 1 : index]}, %arg3: index {xla.range = [0 : index, 1 : index]}, %arg4: index {xla.range = [0 : index, 3 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %0 = xla.apply_indexing #xla.indexing_map<"(d0, d1, d2) -> (d0 * 2 + d1), domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 3]">(%arg2, %arg3, %arg4)
    %1 = xla.apply_indexing #xla.indexing_map<"(d0, d1, d2) -> (d2 / 4), domain: d0 in [0, 1], d1 in [0, 1], d2 in [0, 3]">(%arg2, %arg3, %arg4)
    %c0 = arith.constant 0 : index
    %2 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 / 2), domain: d0 in [0, 3], d1 in [0, 0]">(%0, %c0)
    %3 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 mod 2), domain: d0 in [0, 3], d1 in [0, 0]">(%0, %c0)
    %c0_i32 = arith.constant 0 : i32
    %c10_i32 = arith.constant 10 : i32
    %extracted = tensor.extract %arg1[%2, %3] : tensor<2x2xi32>
    %4 = arith.cmpi slt, %extracted, %c0_i32 : i32
    %5 = arith.extui %4 : i1 to i8
    %6 = arith.addi %extracted, %c10_i32 : i32
    %extracted_0 = tensor.extract %arg1[%2, %3] : tensor<2x2xi32>
    %7 = arith.select %4, %6, %extracted_0 : i32
    %c0_1 = arith.constant 0 : index
    %8 = arith.index_cast %7 : i32 to index
    %c9 = arith.constant 9 : index
    %9 = arith.minsi %8, %c9 : index
    %10 = arith.maxsi %9, %c0_1 : index
    %11 = arith.addi %10, %1 : index
    %extracted_2 = tensor.extract %arg0[%11, %arg4] : tensor<10x4xf32>
    %cst = arith.constant 2.000000e+00 : f32
    %12 = arith.mulf %extracted_2, %cst : f32
    return %12 : f32
  }
}