// Where the document's "1 != 2" check really fires: the producer has two
// parallel loops but writes a 1-D tensor, so the consumer's map for it has one
// result for two producer loops. Both producer iterations (i, 0) and (i, 1)
// write element i.
func.func @two_loops_one_result(%A: tensor<8x2xf32>, %init: tensor<8xf32>, %init2: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %producer = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%A : tensor<8x2xf32>) outs(%init : tensor<8xf32>) {
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
