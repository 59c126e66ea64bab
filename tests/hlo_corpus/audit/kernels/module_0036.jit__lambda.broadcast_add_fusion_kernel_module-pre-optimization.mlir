module @broadcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__concatenate_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_add_fusion(%arg0: tensor<4x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<4x3xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<4x11xf32> {llvm.align = 64 : index, llvm.dereferenceable = 176 : index, xla.slice_index = 2 : index}) -> tensor<4x11xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg3, %arg4, %arg5) in (1, 1, 1) shared_outs(%arg6 = %arg2) -> (tensor<4x11xf32>) {
      %xla_loop = xla.loop (%arg3, %arg4, %arg5, %0, %1, %2)[%i, %j] -> (%ra, %rb) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1] -> (s0, s1), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 3], s1 in [0, 7]"> iter_args(%iter = %arg2) -> (tensor<4x11xf32>) {
        %pure_call = xla.pure_call @fused_computation_param_0_1(%arg0, %arg1, %i, %j) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index) -> f32
        %pure_call_1 = xla.pure_call @fused_computation__epilogue__add_0(%arg0, %arg1, %ra, %rb, %pure_call) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index, f32) -> f32
        %inserted = tensor.insert %pure_call_1 into %iter[%ra, %rb] : tensor<4x11xf32>
        xla.yield %inserted : tensor<4x11xf32>
      }
      %xla_loop_0 = xla.loop (%arg3, %arg4, %arg5, %0, %1, %2)[%i, %j] -> (%ra, %rb) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1] -> (s0, s1 + 8), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 3], s1 in [0, 2]"> iter_args(%iter = %xla_loop) -> (tensor<4x11xf32>) {
        %pure_call = xla.pure_call @fused_computation_param_1_2(%arg0, %arg1, %i, %j) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index) -> f32
        %pure_call_1 = xla.pure_call @fused_computation__epilogue__add_0(%arg0, %arg1, %ra, %rb, %pure_call) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index, f32) -> f32
        %inserted = tensor.insert %pure_call_1 into %iter[%ra, %rb] : tensor<4x11xf32>
        xla.yield %inserted : tensor<4x11xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop_0 into %arg6[0, 0] [4, 11] [1, 1] : tensor<4x11xf32> into tensor<4x11xf32>
      }
    }
    return %3 : tensor<4x11xf32>
  }
  func.func private @fused_computation_add_0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 10 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %cst = arith.constant 1.000000e+00 : f32
    %pure_call = xla.pure_call @fused_computation_concatenate_0(%arg0, %arg1, %arg2, %arg3) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index) -> f32
    %0 = arith.addf %pure_call, %cst : f32
    return %0 : f32
  }
  func.func private @fused_computation_concatenate_0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 10 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c8 = arith.constant 8 : index
    %0 = arith.cmpi ult, %arg3, %c8 : index
    %1 = scf.if %0 -> (f32) {
      %c0 = arith.constant 0 : index
      %2 = arith.subi %arg3, %c0 : index
      %pure_call = xla.pure_call @fused_computation_param_0_1(%arg0, %arg1, %arg2, %2) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index) -> f32
      scf.yield %pure_call : f32
    } else {
      %c8_0 = arith.constant 8 : index
      %2 = arith.subi %arg3, %c8_0 : index
      %pure_call = xla.pure_call @fused_computation_param_1_2(%arg0, %arg1, %arg2, %2) : (tensor<4x8xf32>, tensor<4x3xf32>, index, index) -> f32
      scf.yield %pure_call : f32
    }
    return %1 : f32
  }
  func.func private @fused_computation_param_1_2(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 2 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>, no_compute = true} {
    %extracted = tensor.extract %arg1[%arg2, %arg3] : tensor<4x3xf32>
    return %extracted : f32
  }
  func.func private @fused_computation_param_0_1(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 7 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>, no_compute = true} {
    %extracted = tensor.extract %arg0[%arg2, %arg3] : tensor<4x8xf32>
    return %extracted : f32
  }
  func.func private @fused_computation__epilogue__add_0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}, %arg3: index {xla.range = [0 : index, 10 : index]}, %arg4: f32) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %cst = arith.constant 1.000000e+00 : f32
    %0 = arith.addf %arg4, %cst : f32
    return %0 : f32
  }
}