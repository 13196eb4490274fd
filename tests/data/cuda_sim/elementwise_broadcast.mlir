// devices: gpu:0
// One fused elementwise kernel over broadcast operands (a 0-d feed, a splat
// constant, comparisons, select, sigmoid, rsqrt, pow, rem): one GPU thread per element.
func.func @main(%x: tensor<4x1x8xf32>, %y: tensor<1x6x8xf32>, %z: tensor<8xf32>,
                %s: tensor<f32>) -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xi1>) {
  %c = df.constant dense<0.5> : tensor<f32>
  %a = df.add %x, %y : (tensor<4x1x8xf32>, tensor<1x6x8xf32>) -> tensor<4x6x8xf32>
  %b = df.mul %a, %z : (tensor<4x6x8xf32>, tensor<8xf32>) -> tensor<4x6x8xf32>
  %e = df.exp %b : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %m = df.maximum %e, %s : (tensor<4x6x8xf32>, tensor<f32>) -> tensor<4x6x8xf32>
  %t = df.tanh %m : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %g = df.greater %a, %c : (tensor<4x6x8xf32>, tensor<f32>) -> tensor<4x6x8xi1>
  %sel = df.select %g, %t, %y
      : (tensor<4x6x8xi1>, tensor<4x6x8xf32>, tensor<1x6x8xf32>) -> tensor<4x6x8xf32>
  %sg = df.sigmoid %sel : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %ab = df.abs %b : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %r = df.rsqrt %ab : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %p = df.pow %ab, %c : (tensor<4x6x8xf32>, tensor<f32>) -> tensor<4x6x8xf32>
  %d = df.div %r, %p : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %q = df.rem %d, %y : (tensor<4x6x8xf32>, tensor<1x6x8xf32>) -> tensor<4x6x8xf32>
  func.return %sg, %q, %g : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xi1>
}
