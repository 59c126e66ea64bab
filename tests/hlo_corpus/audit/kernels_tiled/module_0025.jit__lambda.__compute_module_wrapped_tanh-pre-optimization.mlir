module @__compute_module_wrapped_tanh attributes {xla.cpu_memory_region_name = "xla_cpu_emitter__tiled_emitter__hlo_opcode__fusion"} {
  xtile.entry_func @wrapped_tanh(%arg0: memref<4x3xf32>, %arg1: memref<4x3xf32>, %arg2: index) attributes {num_opaque_args = 0 : i32, xtile.tiling_info = #xtile.tiling_info<tile_count : 4, tiles_per_workgroup : 4>} {
    %c0 = arith.constant 0 : index
    %0 = xtile.extract %arg0[%arg2, %c0] [1, 4] [1, 1] : memref<4x3xf32> -> tensor<1x4xf32>
    %1 = math.tanh %0 : tensor<1x4xf32>
    %c0_0 = arith.constant 0 : index
    xtile.insert %1 into %arg1[%arg2, %c0_0] [1, 4] [1, 1] : tensor<1x4xf32> -> memref<4x3xf32>
    xtile.return
  }
}