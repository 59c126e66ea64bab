// The permutation document's case 2: the consumer broadcasts a 1-D producer to 2-D.
func.func @copy_then_broadcast(%A: tensor<8xf32>, %init: tensor<8xf32>, %init2: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %producer = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                              iterator_types = ["parallel"]}
      ins(%A : tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %consumer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%producer : tensor<8xf32>) outs(%init2 : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  return %consumer : tensor<8x4xf32>
}
