// The permutation document's case 1: a transpose producer, an elementwise consumer.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @transpose_then_square(%A: tensor<4x8xf32>, %init: tensor<8x4xf32>, %init2: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %producer = linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x8xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %consumer = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%producer : tensor<8x4xf32>) outs(%init2 : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %mul = arith.mulf %in, %in : f32
    linalg.yield %mul : f32
  } -> tensor<8x4xf32>
  return %consumer : tensor<8x4xf32>
}
