module @broadcast_multiply_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_multiply_fusion(%arg0: tensor<4x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<2x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 64 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<i32> {llvm.align = 64 : index, llvm.dereferenceable = 4 : index, xla.invariant, xla.slice_index = 2 : index}, %arg3: tensor<4x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.slice_index = 3 : index}) -> tensor<4x8xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg4, %arg5, %arg6) in (1, 1, 1) shared_outs(%arg7 = %arg3) -> (tensor<4x8xf32>) {
      %xla_loop = xla.loop (%arg4, %arg5, %arg6, %0, %1, %2)[%i, %j] -> (%ra, %rb) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1] -> (s0, s1), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 3], s1 in [0, 7]"> iter_args(%iter = %arg7) -> (tensor<4x8xf32>) {
        %pure_call = xla.pure_call @fused_computation_mul_0(%arg0, %arg1, %arg2, %ra, %rb) : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<i32>, index, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra, %rb] : tensor<4x8xf32>
        xla.yield %inserted : tensor<4x8xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg7[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x8xf32>
      }
    }
    return %3 : tensor<4x8xf32>
  }
  func.func private @fused_computation_mul_0(%arg0: tensor<4x8xf32>, %arg1: tensor<2x8xf32>, %arg2: tensor<i32>, %arg3: index {xla.range = [0 : index, 3 : index]}, %arg4: index {xla.range = [0 : index, 7 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %true = arith.constant true
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %extracted = tensor.extract %arg2[] : tensor<i32>
    %0 = arith.cmpi slt, %extracted, %c0_i32 : i32
    %1 = arith.extui %0 : i1 to i8
    %2 = arith.addi %extracted, %c4_i32 : i32
    %extracted_0 = tensor.extract %arg2[] : tensor<i32>
    %3 = arith.select %0, %2, %extracted_0 : i32
    %c0 = arith.constant 0 : index
    %4 = arith.index_cast %3 : i32 to index
    %c2 = arith.constant 2 : index
    %5 = arith.minsi %4, %c2 : index
    %6 = arith.maxsi %5, %c0 : index
    %c2_1 = arith.constant 2 : index
    %7 = arith.addi %6, %c2_1 : index
    %8 = arith.cmpi sge, %arg3, %6 : index
    %9 = arith.andi %true, %8 : i1
    %10 = arith.cmpi slt, %arg3, %7 : index
    %11 = arith.andi %9, %10 : i1
    %12 = arith.subi %arg3, %6 : index
    %c0_2 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %13 = arith.addi %c0_2, %c8 : index
    %14 = arith.cmpi sge, %arg4, %c0_2 : index
    %15 = arith.andi %11, %14 : i1
    %16 = arith.cmpi slt, %arg4, %13 : index
    %17 = arith.andi %15, %16 : i1
    %18 = arith.subi %arg4, %c0_2 : index
    %19 = scf.if %17 -> (f32) {
      %extracted_3 = tensor.extract %arg1[%12, %18] : tensor<2x8xf32>
      scf.yield %extracted_3 : f32
    } else {
      %extracted_3 = tensor.extract %arg0[%arg3, %arg4] : tensor<4x8xf32>
      scf.yield %extracted_3 : f32
    }
    %cst = arith.constant 2.000000e+00 : f32
    %20 = arith.mulf %19, %cst : f32
    return %20 : f32
  }
}