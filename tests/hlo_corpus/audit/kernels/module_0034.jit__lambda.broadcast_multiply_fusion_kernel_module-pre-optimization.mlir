module @broadcast_multiply_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @broadcast_multiply_fusion(%arg0: tensor<4x8xf32> {llvm.align = 64 : index, llvm.dereferenceable = 128 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<7x11xf32> {llvm.align = 64 : index, llvm.dereferenceable = 308 : index, xla.slice_index = 1 : index}) -> tensor<7x11xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg2, %arg3, %arg4) in (1, 1, 1) shared_outs(%arg5 = %arg1) -> (tensor<7x11xf32>) {
      %xla_loop = xla.loop (%arg2, %arg3, %arg4, %0, %1, %2)[%i, %j] -> (%ra, %rb) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0, s1] -> (s0, s1), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 6], s1 in [0, 10]"> iter_args(%iter = %arg5) -> (tensor<7x11xf32>) {
        %pure_call = xla.pure_call @fused_computation_mul_0(%arg0, %ra, %rb) : (tensor<4x8xf32>, index, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra, %rb] : tensor<7x11xf32>
        xla.yield %inserted : tensor<7x11xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg5[0, 0] [7, 11] [1, 1] : tensor<7x11xf32> into tensor<7x11xf32>
      }
    }
    return %3 : tensor<7x11xf32>
  }
  func.func private @fused_computation_mul_0(%arg0: tensor<4x8xf32>, %arg1: index {xla.range = [0 : index, 6 : index]}, %arg2: index {xla.range = [0 : index, 10 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %true = arith.constant true
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %0 = arith.cmpi sge, %arg1, %c1 : index
    %1 = arith.cmpi sle, %arg1, %c4 : index
    %2 = arith.andi %0, %1 : i1
    %3 = arith.andi %true, %2 : i1
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %4 = arith.cmpi sge, %arg2, %c0 : index
    %5 = arith.cmpi sle, %arg2, %c7 : index
    %6 = arith.andi %4, %5 : i1
    %7 = arith.andi %3, %6 : i1
    %8 = scf.if %7 -> (f32) {
      %10 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 - 1), domain: d0 in [1, 4], d1 in [0, 7]">(%arg1, %arg2)
      %extracted = tensor.extract %arg0[%10, %arg2] : tensor<4x8xf32>
      scf.yield %extracted : f32
    } else {
      %cst_0 = arith.constant 0.000000e+00 : f32
      scf.yield %cst_0 : f32
    }
    %cst = arith.constant 2.000000e+00 : f32
    %9 = arith.mulf %8, %cst : f32
    return %9 : f32
  }
}