// devices: gpu:0
// A matrix product (the tiled library kernel) with a bias and relu epilogue.
func.func @main(%x: tensor<8x20xf32>, %w: tensor<20x24xf32>, %b: tensor<24xf32>)
    -> (tensor<8x24xf32>, tensor<8x24xf32>) {
  %h = df.matmul %x, %w : (tensor<8x20xf32>, tensor<20x24xf32>) -> tensor<8x24xf32>
  %hb = df.add %h, %b : (tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x24xf32>
  %r = df.relu %hb : (tensor<8x24xf32>) -> tensor<8x24xf32>
  func.return %r, %hb : tensor<8x24xf32>, tensor<8x24xf32>
}
