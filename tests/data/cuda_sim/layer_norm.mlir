// devices: gpu:0
// layer_norm after a fused prologue, one GPU thread per row: the row stored, its
// mean and variance once each (in lanes), then normalized, scaled and shifted.
func.func @main(%x: tensor<6x40xf32>, %s: tensor<40xf32>, %b: tensor<40xf32>)
    -> tensor<6x40xf32> {
  %t = df.tanh %x : (tensor<6x40xf32>) -> tensor<6x40xf32>
  %y = df.layer_norm %t, %s, %b : (tensor<6x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<6x40xf32>
  func.return %y : tensor<6x40xf32>
}
