// devices: gpu:0
// Transpose, reshape, concat, slice, broadcast_to, casts, integer negation
// and comparison.
func.func @main(%x: tensor<2x3x4xf32>, %a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %i: tensor<2x3xi32>)
    -> (tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<2x4xf32>, tensor<1x2xf32>, tensor<3x2x3xf32>,
        tensor<2x3xf64>, tensor<2x3xi1>) {
  %t = df.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %r = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %c = df.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %s = df.slice %a {start = array<i64: 1, 1>, limit = array<i64: 2, 3>}
      : (tensor<2x3xf32>) -> tensor<1x2xf32>
  %bc = df.broadcast_to %a : (tensor<2x3xf32>) -> tensor<3x2x3xf32>
  %f = df.cast %i : (tensor<2x3xi32>) -> tensor<2x3xf64>
  %n = df.neg %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %eq = df.equal %n, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
  func.return %t, %r, %c, %s, %bc, %f, %eq : tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<2x4xf32>, tensor<1x2xf32>, tensor<3x2x3xf32>, tensor<2x3xf64>, tensor<2x3xi1>
}
