// devices: gpu:0
// Grouped convolutions: 2 groups with bias, strides, pads and dilations (f32); a
// depthwise one with two filters per channel (f64), then a pointwise one.
func.func @main(%x: tensor<2x4x7x7xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                %d: tensor<1x3x6x6xf64>, %dw: tensor<6x1x3x3xf64>, %pw: tensor<2x6x1x1xf64>)
    -> (tensor<2x6x4x2xf32>, tensor<1x2x6x6xf64>) {
  %c = df.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 2>, groups = 2 : i64}
      : (tensor<2x4x7x7xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
  %e = df.conv2d %d, %dw {pads = array<i64: 1, 1, 1, 1>, groups = 3 : i64}
      : (tensor<1x3x6x6xf64>, tensor<6x1x3x3xf64>) -> tensor<1x6x6x6xf64>
  %r = df.relu %e : (tensor<1x6x6x6xf64>) -> tensor<1x6x6x6xf64>
  %p = df.conv2d %r, %pw : (tensor<1x6x6x6xf64>, tensor<2x6x1x1xf64>) -> tensor<1x2x6x6xf64>
  func.return %c, %p : tensor<2x6x4x2xf32>, tensor<1x2x6x6xf64>
}
