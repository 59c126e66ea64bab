func.func @ln(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 2.000000e+00 : f32
  %cst_0 = arith.constant 8.000000e+00 : f32
  %cst_1 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %14 = arith.addf %out, %in : f32
    linalg.yield %14 : f32
  } -> tensor<4xf32>
  %expanded = tensor.expand_shape %2 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %3 = tensor.empty() : tensor<4x1xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<4x1xf32>) outs(%3 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %13 = arith.divf %in, %cst_0 : f32
    linalg.yield %13 : f32
  } -> tensor<4x1xf32>
  %5 = tensor.empty() : tensor<4x8xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x1xf32>) outs(%5 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %6 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%5 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %12 = arith.subf %in, %in_2 : f32
    %11 = arith.mulf %12, %cst : f32
    linalg.yield %11 : f32
  } -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}
