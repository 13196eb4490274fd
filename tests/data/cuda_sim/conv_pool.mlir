// devices: gpu:0
// Convolutions (bias, strides, pads, dilations) followed by max and average pools.
func.func @main(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                %d: tensor<1x2x7x7xf64>, %dw: tensor<3x2x2x2xf64>)
    -> (tensor<2x4x2x2xf32>, tensor<1x3x3x6xf64>, tensor<1x3x2x3xf64>) {
  %c = df.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %r = df.relu %c : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %p = df.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
  %e = df.conv2d %d, %dw {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 2, 2>}
      : (tensor<1x2x7x7xf64>, tensor<3x2x2x2xf64>) -> tensor<1x3x3x6xf64>
  %a = df.avg_pool2d %e {kernel = array<i64: 2, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 1>}
      : (tensor<1x3x3x6xf64>) -> tensor<1x3x2x3xf64>
  func.return %p, %e, %a : tensor<2x4x2x2xf32>, tensor<1x3x3x6xf64>, tensor<1x3x2x3xf64>
}
