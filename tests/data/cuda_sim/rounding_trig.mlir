// devices: gpu:0
// floor, ceil, round (halves to even: `floor(4x) / 2` makes many) and sin, cos, in
// f32 and f64: CUDA's `math.floor` keeps a float, and round is composed from it.
func.func @main(%x: tensor<6x8xf32>, %y: tensor<5xf64>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<5xf64>, tensor<5xf64>) {
  %four = df.constant dense<4.0> : tensor<f32>
  %half = df.constant dense<0.5> : tensor<f32>
  %x4 = df.mul %x, %four : (tensor<6x8xf32>, tensor<f32>) -> tensor<6x8xf32>
  %f = df.floor %x4 : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %h = df.mul %f, %half : (tensor<6x8xf32>, tensor<f32>) -> tensor<6x8xf32>
  %r = df.round %h : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %c = df.ceil %x4 : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = df.sin %x : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %rx = df.round %x4 : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %sr = df.add %s, %rx : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %four64 = df.constant dense<4.0> : tensor<f64>
  %half64 = df.constant dense<0.5> : tensor<f64>
  %y4 = df.mul %y, %four64 : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
  %fy = df.floor %y4 : (tensor<5xf64>) -> tensor<5xf64>
  %hy = df.mul %fy, %half64 : (tensor<5xf64>, tensor<f64>) -> tensor<5xf64>
  %ry = df.round %hy : (tensor<5xf64>) -> tensor<5xf64>
  %cy = df.cos %y : (tensor<5xf64>) -> tensor<5xf64>
  %ceily = df.ceil %cy : (tensor<5xf64>) -> tensor<5xf64>
  %out = df.add %ceily, %cy : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %r, %c, %sr, %ry, %out
      : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<5xf64>, tensor<5xf64>
}
