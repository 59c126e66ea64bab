// Case 3 again, but the consumer reads the whole 7x4 result: element (0, 1) is
// never written by the producer (it would need d0 = 1, d1 = -1).
func.func @skew_read_all(%A: tensor<4x4xf32>, %init: tensor<7x4xf32>, %init2: tensor<7x4xf32>) -> tensor<7x4xf32> {
  %producer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1, d0)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<4x4xf32>) outs(%init : tensor<7x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<7x4xf32>
  %consumer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%producer : tensor<7x4xf32>) outs(%init2 : tensor<7x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<7x4xf32>
  return %consumer : tensor<7x4xf32>
}
