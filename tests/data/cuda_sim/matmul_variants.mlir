// devices: gpu:0
// Transposed, batched and integer products, and a product whose epilogue
// broadcasts it to a larger shape (so it goes to a scratch buffer).
func.func @main(%at: tensor<6x5xf64>, %bt: tensor<7x6xf64>, %ba: tensor<2x3x4x5xf32>,
                %bb: tensor<2x3x5x3xf32>, %i: tensor<3x4xi32>, %j: tensor<5x4xi64>,
                %x: tensor<6x8xf32>, %w: tensor<8x5xf32>, %t: tensor<3x1x1xf32>)
    -> (tensor<5x7xf64>, tensor<2x3x4x3xf32>, tensor<3x3xi32>, tensor<4x4xi64>, tensor<3x6x5xf32>) {
  %tt = df.matmul %at, %bt {transpose_a = true, transpose_b = true}
      : (tensor<6x5xf64>, tensor<7x6xf64>) -> tensor<5x7xf64>
  %bm = df.matmul %ba, %bb : (tensor<2x3x4x5xf32>, tensor<2x3x5x3xf32>) -> tensor<2x3x4x3xf32>
  %im = df.matmul %i, %i {transpose_b = true}
      : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x3xi32>
  %jm = df.matmul %j, %j {transpose_a = true}
      : (tensor<5x4xi64>, tensor<5x4xi64>) -> tensor<4x4xi64>
  %h = df.matmul %x, %w : (tensor<6x8xf32>, tensor<8x5xf32>) -> tensor<6x5xf32>
  %y = df.add %h, %t : (tensor<6x5xf32>, tensor<3x1x1xf32>) -> tensor<3x6x5xf32>
  %z = df.tanh %y : (tensor<3x6x5xf32>) -> tensor<3x6x5xf32>
  func.return %tt, %bm, %im, %jm, %z : tensor<5x7xf64>, tensor<2x3x4x3xf32>, tensor<3x3xi32>, tensor<4x4xi64>, tensor<3x6x5xf32>
}
