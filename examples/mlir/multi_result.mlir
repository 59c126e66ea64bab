// A producer with two results: the consumer reads the first, the function also
// returns the second. The fused op returns both (the second through the kept
// result's proven map), so the producer can be erased.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @two_results(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %o0: tensor<?x?xf32>, %o1: tensor<?x?xf32>,
                       %j: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%o0, %o1 : tensor<?x?xf32>, tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %init0: f32, %init1: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %init1 : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<?x?xf32>, tensor<?x?xf32>)
  %c = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0 : tensor<?x?xf32>) outs(%j : tensor<?x?xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.mulf %x, %x : f32
    linalg.yield %n : f32
  } -> tensor<?x?xf32>
  return %c, %r#1 : tensor<?x?xf32>, tensor<?x?xf32>
}
