// Fusing a producer into the consumer's outs: fill -> matmul (the zero-filled
// accumulator), on dynamic shapes. MLIR's elementwise fusion rejects it (the
// operand is an output); the fused op replaces the init by the fill value at the
// first write of each element (reduction loop at 0), and is proven equal.
func.func @fill_matmul(%A: tensor<?x?xf32>, %B: tensor<?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %C = linalg.matmul ins(%A, %B : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %C : tensor<?x?xf32>
}

// An elementwise bias feeding an elementwise accumulate: every element written once.
func.func @bias_then_accumulate(%x: tensor<?xf32>, %b: tensor<?xf32>, %o: tensor<?xf32>) -> tensor<?xf32> {
  %biased = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
      ins(%b : tensor<?xf32>) outs(%o : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%biased : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
