#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1, d0)>
#loc = loc("model.py":3:0)
module attributes {torch.debug_module_name = "M"} {
  // As mlir-opt prints it: a transpose, a bias add, a row sum, a broadcast, a product, a softmax.
  func.func @forward(%arg0: tensor<4x8xf32> loc("model.py":3:0), %arg1: tensor<8x4xf32>) -> tensor<8xf32> {
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<8x4xf32>
    %transposed = linalg.transpose ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]  loc(#loc)
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"], library_call = "bias_add", doc = "a // doc with {braces}"} ins(%transposed, %arg1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%0 : tensor<8x4xf32>) attrs =  {my.attr = 1 : i64} {
    ^bb0(%in: f32 loc("x"), %in_0: f32, %out: f32):
      %4 = arith.addf %in, %in_0 : f32 loc(#loc)
      linalg.yield %4 : f32
    } -> tensor<8x4xf32> loc(#loc)
    %2 = tensor.empty() : tensor<8xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
    %reduced = linalg.reduce ins(%1 : tensor<8x4xf32>) outs(%3 : tensor<8xf32>) dimensions = [1]
      (%in: f32, %init: f32) {
        %5 = arith.addf %in, %init : f32
        linalg.yield %5 : f32
      }
    %b = linalg.broadcast ins(%reduced : tensor<8xf32>) outs(%0 : tensor<8x4xf32>) dimensions = [1]
    %m = linalg.map { arith.mulf } ins(%b, %1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%0 : tensor<8x4xf32>)
    %s = linalg.softmax dimension(1) ins(%m : tensor<8x4xf32>) outs(%0 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %reduced : tensor<8xf32>
  }
}
