// Found by the fuzz area of validate-mlir (seed 0, job 1): the producer reads its init (%b2);
// MLIR's linalg-fuse-elementwise-ops fuses it into a consumer with a reduction loop and keeps
// the producer's result as an output of the fused op, which it updates at every reduction
// step: the producer value fed to the consumer changes from step to step (refuted).
func.func @f10(%a0: tensor<3xf32>, %a1: tensor<3xf32>, %a2: tensor<3xf32>, %a3: tensor<3x3xf32>, %a4: tensor<3xf32>) -> (tensor<3xf32>) {
  %p7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a0, %a1 : tensor<3xf32>, tensor<3xf32>) outs(%a2 : tensor<3xf32>) {
  ^bb0(%b0: f32, %b1: f32, %b2: f32):
    %v1 = arith.subf %b0, %b1 : f32
    %i2 = linalg.index 0 : index
    %i3 = arith.index_cast %i2 : index to i64
    %i4 = arith.sitofp %i3 : i64 to f32
    %v5 = arith.addf %v1, %i4 : f32
    %v6 = arith.addf %v5, %b2 : f32
    linalg.yield %v6 : f32
  } -> tensor<3xf32>
  %q10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%p7, %a3 : tensor<3xf32>, tensor<3x3xf32>) outs(%a4 : tensor<3xf32>) {
  ^bb0(%b0: f32, %b1: f32, %b2: f32):
    %v8 = arith.addf %b0, %b1 : f32
    %v9 = arith.addf %v8, %b2 : f32
    linalg.yield %v9 : f32
  } -> tensor<3xf32>
  %e12 = tensor.empty() : tensor<3xf32>
  %z11 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%q10 : tensor<3xf32>) outs(%e12 : tensor<3xf32>) {
  ^bb0(%b0: f32, %b1: f32):
    %n = arith.negf %b0 : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  return %z11 : tensor<3xf32>
}
