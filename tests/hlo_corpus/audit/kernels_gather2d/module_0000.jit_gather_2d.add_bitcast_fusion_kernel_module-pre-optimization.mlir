module @add_bitcast_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @add_bitcast_fusion(%arg0: tensor<8x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 256 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<3xi32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.invariant, xla.slice_index = 2 : index}, %arg3: tensor<3xf32> {llvm.align = 64 : index, llvm.dereferenceable = 12 : index, xla.slice_index = 3 : index}) -> tensor<3xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg4, %arg5, %arg6) in (1, 1, 1) shared_outs(%arg7 = %arg3) -> (tensor<3xf32>) {
      %xla_loop = xla.loop (%arg4, %arg5, %arg6, %0, %1, %2)[%i] -> (%ra) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0] -> (s0), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 2]"> iter_args(%iter = %arg7) -> (tensor<3xf32>) {
        %pure_call = xla.pure_call @fused_computation_bitcast_3(%arg0, %arg1, %arg2, %ra) : (tensor<8x8xf32>, tensor<3xi32>, tensor<3xi32>, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra] : tensor<3xf32>
        xla.yield %inserted : tensor<3xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg7[0] [3] [1] : tensor<3xf32> into tensor<3xf32>
      }
    }
    return %3 : tensor<3xf32>
  }
  func.func private @fused_computation_bitcast_3(%arg0: tensor<8x8xf32>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>, %arg3: index {xla.range = [0 : index, 2 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c0 = arith.constant 0 : index
    %c0_0 = arith.constant 0 : index
    %c0_1 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %0 = arith.cmpi ult, %c0_1, %c1 : index
    %1 = scf.if %0 -> (i32) {
      %c0_7 = arith.constant 0 : index
      %11 = arith.subi %c0_1, %c0_7 : index
      %c0_i32 = arith.constant 0 : i32
      %c8_i32 = arith.constant 8 : i32
      %extracted_8 = tensor.extract %arg2[%arg3] : tensor<3xi32>
      %12 = arith.cmpi slt, %extracted_8, %c0_i32 : i32
      %13 = arith.extui %12 : i1 to i8
      %14 = arith.addi %extracted_8, %c8_i32 : i32
      %extracted_9 = tensor.extract %arg2[%arg3] : tensor<3xi32>
      %15 = arith.select %12, %14, %extracted_9 : i32
      scf.yield %15 : i32
    } else {
      %c1_7 = arith.constant 1 : index
      %11 = arith.subi %c0_1, %c1_7 : index
      %c0_i32 = arith.constant 0 : i32
      %c8_i32 = arith.constant 8 : i32
      %extracted_8 = tensor.extract %arg1[%arg3] : tensor<3xi32>
      %12 = arith.cmpi slt, %extracted_8, %c0_i32 : i32
      %13 = arith.extui %12 : i1 to i8
      %14 = arith.addi %extracted_8, %c8_i32 : i32
      %extracted_9 = tensor.extract %arg1[%arg3] : tensor<3xi32>
      %15 = arith.select %12, %14, %extracted_9 : i32
      scf.yield %15 : i32
    }
    %c0_2 = arith.constant 0 : index
    %2 = arith.index_cast %1 : i32 to index
    %c7 = arith.constant 7 : index
    %3 = arith.minsi %2, %c7 : index
    %4 = arith.maxsi %3, %c0_2 : index
    %c1_3 = arith.constant 1 : index
    %c1_4 = arith.constant 1 : index
    %5 = arith.cmpi ult, %c1_3, %c1_4 : index
    %6 = scf.if %5 -> (i32) {
      %c0_7 = arith.constant 0 : index
      %11 = arith.subi %c1_3, %c0_7 : index
      %c0_i32 = arith.constant 0 : i32
      %c8_i32 = arith.constant 8 : i32
      %extracted_8 = tensor.extract %arg2[%arg3] : tensor<3xi32>
      %12 = arith.cmpi slt, %extracted_8, %c0_i32 : i32
      %13 = arith.extui %12 : i1 to i8
      %14 = arith.addi %extracted_8, %c8_i32 : i32
      %extracted_9 = tensor.extract %arg2[%arg3] : tensor<3xi32>
      %15 = arith.select %12, %14, %extracted_9 : i32
      scf.yield %15 : i32
    } else {
      %c1_7 = arith.constant 1 : index
      %11 = arith.subi %c1_3, %c1_7 : index
      %c0_i32 = arith.constant 0 : i32
      %c8_i32 = arith.constant 8 : i32
      %extracted_8 = tensor.extract %arg1[%arg3] : tensor<3xi32>
      %12 = arith.cmpi slt, %extracted_8, %c0_i32 : i32
      %13 = arith.extui %12 : i1 to i8
      %14 = arith.addi %extracted_8, %c8_i32 : i32
      %extracted_9 = tensor.extract %arg1[%arg3] : tensor<3xi32>
      %15 = arith.select %12, %14, %extracted_9 : i32
      scf.yield %15 : i32
    }
    %c0_5 = arith.constant 0 : index
    %7 = arith.index_cast %6 : i32 to index
    %c7_6 = arith.constant 7 : index
    %8 = arith.minsi %7, %c7_6 : index
    %9 = arith.maxsi %8, %c0_5 : index
    %extracted = tensor.extract %arg0[%4, %9] : tensor<8x8xf32>
    %cst = arith.constant 1.000000e+00 : f32
    %10 = arith.addf %extracted, %cst : f32
    return %10 : f32
  }
}