// The permutation document's case 3: the producer writes through (d0 + d1, d0).
// MLIR refuses (not a permutation); the consumer reads exactly the written
// elements, so the fusion is legal, through the inverse (d1, d0 - d1).
func.func @skew_read_written(%A: tensor<4x4xf32>, %init: tensor<7x4xf32>, %init2: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %producer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1, d0)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x4xf32>) outs(%init : tensor<7x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<7x4xf32>
  %consumer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1 + d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%producer : tensor<7x4xf32>) outs(%init2 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  return %consumer : tensor<4x4xf32>
}
