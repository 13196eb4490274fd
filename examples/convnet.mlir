// A small convolutional network: conv + bias + relu, max pooling, a dense layer.
func.func @main(%image: tensor<2x3x12x12xf32>, %filter: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>,
                %dense: tensor<200x10xf32>) -> tensor<2x10xf32> {
  %c = df.conv2d %image, %filter, %bias {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3x12x12xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x10x10xf32>
  %r = df.relu %c : (tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32>
  %p = df.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x8x10x10xf32>) -> tensor<2x8x5x5xf32>
  %f = df.reshape %p : (tensor<2x8x5x5xf32>) -> tensor<2x200xf32>
  %y = df.matmul %f, %dense : (tensor<2x200xf32>, tensor<200x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}
