module @__compute_module_iota_add_fusion attributes {xla.cpu_memory_region_name = "xla_cpu_emitter__tiled_emitter__hlo_opcode__fusion"} {
  xtile.entry_func @iota_add_fusion(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>, %arg2: index) attributes {num_opaque_args = 0 : i32, xtile.tiling_info = #xtile.tiling_info<tile_count : 4, tiles_per_workgroup : 4>} {
    %c0 = arith.constant 0 : index
    %0 = xtile.extract %arg0[%arg2, %c0] [1, 8] [1, 1] : memref<4x8xf32> -> tensor<1x8xf32>
    %c0_0 = arith.constant 0 : index
    %1 = arith.index_cast %c0_0 : index to i32
    %2 = stablehlo.iota dim = 0 : tensor<8xi32>
    %c1_i32 = arith.constant 1 : i32
    %from_elements = tensor.from_elements %c1_i32 : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %from_elements, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %4 = arith.muli %2, %3 : tensor<8xi32>
    %from_elements_1 = tensor.from_elements %1 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %from_elements_1, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %6 = arith.addi %4, %5 : tensor<8xi32>
    %7 = stablehlo.convert %6 : (tensor<8xi32>) -> tensor<8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %9 = stablehlo.add %0, %8 : tensor<1x8xf32>
    %c0_2 = arith.constant 0 : index
    xtile.insert %9 into %arg1[%arg2, %c0_2] [1, 8] [1, 1] : tensor<1x8xf32> -> memref<4x8xf32>
    xtile.return
  }
}