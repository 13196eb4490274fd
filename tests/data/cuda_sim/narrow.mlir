// devices: gpu:0
// Narrow element types on the GPU: f16 and bf16 held as 16 bits and converted by
// the helpers around f32 arithmetic (an exp, a product through the f32 matmul
// routine, a sum), i8 products wrapping, ui8 sums, ui64 maxima; df-widen made them so.
func.func @main(%h: tensor<4x8xf16>, %w: tensor<8x3xf16>, %b: tensor<16xbf16>, %i: tensor<16xi8>,
                %u: tensor<16xui8>, %l: tensor<16xui64>)
    -> (tensor<4x8xf16>, tensor<4x3xf16>, tensor<4xf16>, tensor<16xbf16>, tensor<16xi8>,
        tensor<16xui8>, tensor<16xui64>) {
  %e = df.exp %h : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %m = df.matmul %h, %w : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  %s = df.reduce_sum %e {axes = array<i64: 1>} : (tensor<4x8xf16>) -> tensor<4xf16>
  %t = df.tanh %b : (tensor<16xbf16>) -> tensor<16xbf16>
  %c = df.constant dense<100> : tensor<16xi8>
  %p = df.mul %i, %c : (tensor<16xi8>, tensor<16xi8>) -> tensor<16xi8>
  %a = df.add %u, %u : (tensor<16xui8>, tensor<16xui8>) -> tensor<16xui8>
  %x = df.maximum %l, %l : (tensor<16xui64>, tensor<16xui64>) -> tensor<16xui64>
  func.return %e, %m, %s, %t, %p, %a, %x
      : tensor<4x8xf16>, tensor<4x3xf16>, tensor<4xf16>, tensor<16xbf16>, tensor<16xi8>,
        tensor<16xui8>, tensor<16xui64>
}
