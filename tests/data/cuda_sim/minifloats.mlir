// devices: gpu:0
// 8- and 4-bit floats and 2- and 4-bit integers on the GPU: held as bytes and
// converted by the helpers (`_bits_to_float`, `_float_to_bits`, the wrap to 4 bits)
// around f32 and i32 arithmetic; df-widen made them so.
func.func @main(%x: tensor<64xf32>, %a: tensor<64xf8E4M3FN>, %b: tensor<64xf8E5M2FNUZ>,
                %q: tensor<64xi4>, %u: tensor<64xui2>)
    -> (tensor<64xf8E4M3FN>, tensor<64xf8E4M3FNUZ>, tensor<64xf8E5M2>, tensor<64xf4E2M1FN>,
        tensor<64xf32>, tensor<64xf8E5M2FNUZ>, tensor<64xi4>, tensor<64xui2>, tensor<64xi4>) {
  %c1 = df.cast %x : (tensor<64xf32>) -> tensor<64xf8E4M3FN>
  %c2 = df.cast %x : (tensor<64xf32>) -> tensor<64xf8E4M3FNUZ>
  %c3 = df.cast %x : (tensor<64xf32>) -> tensor<64xf8E5M2>
  %c4 = df.cast %x : (tensor<64xf32>) -> tensor<64xf4E2M1FN>
  %w = df.cast %a : (tensor<64xf8E4M3FN>) -> tensor<64xf32>
  %m = df.mul %b, %b : (tensor<64xf8E5M2FNUZ>, tensor<64xf8E5M2FNUZ>) -> tensor<64xf8E5M2FNUZ>
  %s = df.add %q, %q : (tensor<64xi4>, tensor<64xi4>) -> tensor<64xi4>
  %v = df.mul %u, %u : (tensor<64xui2>, tensor<64xui2>) -> tensor<64xui2>
  %t = df.cast %x : (tensor<64xf32>) -> tensor<64xi4>
  func.return %c1, %c2, %c3, %c4, %w, %m, %s, %v, %t
      : tensor<64xf8E4M3FN>, tensor<64xf8E4M3FNUZ>, tensor<64xf8E5M2>, tensor<64xf4E2M1FN>,
        tensor<64xf32>, tensor<64xf8E5M2FNUZ>, tensor<64xi4>, tensor<64xui2>, tensor<64xi4>
}
