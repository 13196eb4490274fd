// devices: gpu:0
// Softmax along the last axis (f32) and a middle axis (f64).
func.func @main(%x: tensor<6x10xf32>, %y: tensor<3x4x5xf64>) -> (tensor<6x10xf32>, tensor<3x4x5xf64>) {
  %s = df.softmax %x {axis = -1 : i64} : (tensor<6x10xf32>) -> tensor<6x10xf32>
  %t = df.softmax %y {axis = 1 : i64} : (tensor<3x4x5xf64>) -> tensor<3x4x5xf64>
  func.return %s, %t : tensor<6x10xf32>, tensor<3x4x5xf64>
}
