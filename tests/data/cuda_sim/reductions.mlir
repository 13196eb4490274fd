// devices: gpu:0
// Reductions closing a fused group (sum over two axes, max with keepdims, a mean
// to 0-d) and integer reductions.
func.func @main(%x: tensor<6x5x8xf32>, %i: tensor<4x6xi32>)
    -> (tensor<5xf32>, tensor<6x1x8xf32>, tensor<f32>, tensor<4xi32>, tensor<i32>) {
  %sq = df.square %x : (tensor<6x5x8xf32>) -> tensor<6x5x8xf32>
  %a = df.reduce_sum %sq {axes = array<i64: 0, 2>} : (tensor<6x5x8xf32>) -> tensor<5xf32>
  %b = df.reduce_max %x {axes = array<i64: 1>, keepdims = true}
      : (tensor<6x5x8xf32>) -> tensor<6x1x8xf32>
  %c = df.reduce_mean %x : (tensor<6x5x8xf32>) -> tensor<f32>
  %d = df.reduce_max %i {axes = array<i64: 1>} : (tensor<4x6xi32>) -> tensor<4xi32>
  %e = df.reduce_sum %i : (tensor<4x6xi32>) -> tensor<i32>
  func.return %a, %b, %c, %d, %e : tensor<5xf32>, tensor<6x1x8xf32>, tensor<f32>, tensor<4xi32>, tensor<i32>
}
