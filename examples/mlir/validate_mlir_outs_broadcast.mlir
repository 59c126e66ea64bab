// Found by the fuzz area of validate-mlir (seed 7, job 1): the producer reads its init (%b2)
// and the consumer broadcasts its result along d0. MLIR's linalg-fuse-elementwise-ops keeps
// the producer's result as an output of the fused op (its init is read), so at d0 = 1 the
// producer's payload reads the value the fused op wrote there at d0 = 0, not the init.
func.func @f18(%a0: tensor<2xf32>, %a1: tensor<2xf32>, %a2: tensor<2xf32>, %a3: tensor<2x2xf32>) -> (tensor<2x2xf32>) {
  %p3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a0, %a1 : tensor<2xf32>, tensor<2xf32>) outs(%a2 : tensor<2xf32>) {
  ^bb0(%b0: f32, %b1: f32, %b2: f32):
    %v1 = arith.subf %b0, %b1 : f32
    %v2 = arith.addf %v1, %b2 : f32
    linalg.yield %v2 : f32
  } -> tensor<2xf32>
  %e4 = tensor.empty() : tensor<2x2xf32>
  %q6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p3, %a3 : tensor<2xf32>, tensor<2x2xf32>) outs(%e4 : tensor<2x2xf32>) {
  ^bb0(%b0: f32, %b1: f32, %b2: f32):
    %v5 = arith.mulf %b0, %b1 : f32
    linalg.yield %v5 : f32
  } -> tensor<2x2xf32>
  return %q6 : tensor<2x2xf32>
}
