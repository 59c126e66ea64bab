module @__compute_module_transpose_copy_fusion.2 attributes {xla.cpu_memory_region_name = "xla_cpu_emitter__tiled_emitter__hlo_opcode__fusion"} {
  xtile.entry_func @transpose_copy_fusion.2(%arg0: memref<1x2x6x6xf32>, %arg1: memref<1x6x6x2xf32>, %arg2: index) attributes {num_opaque_args = 0 : i32, xtile.tiling_info = #xtile.tiling_info<tile_count : 6, tiles_per_workgroup : 6>} {
    %c0 = arith.constant 0 : index
    %c0_0 = arith.constant 0 : index
    %c0_1 = arith.constant 0 : index
    %0 = xtile.extract %arg0[%c0, %c0_0, %arg2, %c0_1] [1, 2, 1, 8] [0, 1, 1, 1] : memref<1x2x6x6xf32> -> tensor<1x2x1x8xf32>
    %1 = stablehlo.transpose %0, dims = [0, 2, 3, 1] : (tensor<1x2x1x8xf32>) -> tensor<1x1x8x2xf32>
    %c0_2 = arith.constant 0 : index
    %c0_3 = arith.constant 0 : index
    %c0_4 = arith.constant 0 : index
    xtile.insert %1 into %arg1[%c0_2, %arg2, %c0_3, %c0_4] [1, 1, 8, 2] [1, 1, 1, 1] : tensor<1x1x8x2xf32> -> memref<1x6x6x2xf32>
    xtile.return
  }
}