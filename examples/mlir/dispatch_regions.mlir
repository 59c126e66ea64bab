// IREE's dispatch regions (flow.dispatch.workgroups, isolated from above): value
// names restart in each, so %2 of the first region and %2 of the second are
// different values. One real pair in each region; none across them.
//   verified-indexing fuse examples/mlir/dispatch_regions.mlir
#map = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
util.func public @main(%x: tensor<4x8xf32>, %y: tensor<8x4xf16>) -> (tensor<8x4xf32>, tensor<8x4xf16>) {
  %r0 = flow.dispatch.workgroups(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32> =
      (%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x4xf32>>) {
    %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
    %1 = tensor.empty() : tensor<8x4xf32>
    %2 = linalg.generic {indexing_maps = [#tr, #map], iterator_types = ["parallel", "parallel"]}
        ins(%0 : tensor<4x8xf32>) outs(%1 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x4xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%2 : tensor<8x4xf32>) outs(%1 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.mulf %in, %in : f32
      linalg.yield %4 : f32
    } -> tensor<8x4xf32>
    iree_tensor_ext.dispatch.tensor.store %3, %arg1, offsets = [0, 0], sizes = [8, 4], strides = [1, 1] : tensor<8x4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x4xf32>>
    flow.return
  }
  %r1 = flow.dispatch.workgroups(%y) : (tensor<8x4xf16>) -> tensor<8x4xf16> =
      (%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x4xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x4xf16>>) {
    %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [8, 4], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x4xf16>> -> tensor<8x4xf16>
    %1 = tensor.empty() : tensor<8x4xf16>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%0 : tensor<8x4xf16>) outs(%1 : tensor<8x4xf16>) {
    ^bb0(%in: f16, %out: f16):
      %5 = arith.addf %in, %in : f16
      linalg.yield %5 : f16
    } -> tensor<8x4xf16>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%2 : tensor<8x4xf16>) outs(%1 : tensor<8x4xf16>) {
    ^bb0(%in: f16, %out: f16):
      %6 = arith.negf %in : f16
      linalg.yield %6 : f16
    } -> tensor<8x4xf16>
    iree_tensor_ext.dispatch.tensor.store %3, %arg1, offsets = [0, 0], sizes = [8, 4], strides = [1, 1] : tensor<8x4xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x4xf16>>
    flow.return
  }
  util.return %r0, %r1 : tensor<8x4xf32>, tensor<8x4xf16>
}
