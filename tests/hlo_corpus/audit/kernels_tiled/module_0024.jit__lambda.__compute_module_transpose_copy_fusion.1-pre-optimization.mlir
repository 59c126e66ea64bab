module @__compute_module_transpose_copy_fusion.1 attributes {xla.cpu_memory_region_name = "xla_cpu_emitter__tiled_emitter__hlo_opcode__fusion"} {
  xtile.entry_func @transpose_copy_fusion.1(%arg0: memref<3x2x3x3xf32>, %arg1: memref<3x3x2x3xf32>, %arg2: index) attributes {num_opaque_args = 0 : i32, xtile.tiling_info = #xtile.tiling_info<tile_count : 6, tiles_per_workgroup : 6>} {
    %c0 = arith.constant 0 : index
    %0 = xla.apply_indexing #xla.indexing_map<"(pid_0) -> (pid_0 mod 2), domain: pid_0 in [0, 5]">(%arg2)
    %1 = xla.apply_indexing #xla.indexing_map<"(pid_0) -> (pid_0 / 2), domain: pid_0 in [0, 5]">(%arg2)
    %c0_0 = arith.constant 0 : index
    %2 = xtile.extract %arg0[%c0, %0, %1, %c0_0] [4, 1, 1, 4] [1, 1, 1, 1] : memref<3x2x3x3xf32> -> tensor<4x1x1x4xf32>
    %3 = stablehlo.transpose %2, dims = [2, 3, 1, 0] : (tensor<4x1x1x4xf32>) -> tensor<1x4x1x4xf32>
    %4 = xla.apply_indexing #xla.indexing_map<"(pid_0) -> (pid_0 / 2), domain: pid_0 in [0, 5]">(%arg2)
    %c0_1 = arith.constant 0 : index
    %5 = xla.apply_indexing #xla.indexing_map<"(pid_0) -> (pid_0 mod 2), domain: pid_0 in [0, 5]">(%arg2)
    %c0_2 = arith.constant 0 : index
    xtile.insert %3 into %arg1[%4, %c0_1, %5, %c0_2] [1, 4, 1, 4] [1, 1, 1, 1] : tensor<1x4x1x4xf32> -> memref<3x3x2x3xf32>
    xtile.return
  }
}