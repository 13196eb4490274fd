// devices: cpu:0,gpu:0
// Ops pinned alternately on cpu:0 and gpu:0: values cross both ways through
// df.send/df.recv (a 0-d value among them).
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>)
    -> (tensor<8x12xf32>, tensor<8xf32>, tensor<f32>) {
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = df.matmul %e, %w {df.device = "gpu:0"}
      : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %hb = df.add %h, %b {df.device = "gpu:0"} : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
  %r = df.relu %hb {df.device = "gpu:0"} : (tensor<8x12xf32>) -> tensor<8x12xf32>
  %s = df.softmax %r {df.device = "cpu:0", axis = -1 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf32>
  %m = df.reduce_max %s {df.device = "gpu:0", axes = array<i64: 1>}
      : (tensor<8x12xf32>) -> tensor<8xf32>
  %n = df.neg %m {df.device = "cpu:0"} : (tensor<8xf32>) -> tensor<8xf32>
  %t = df.reduce_sum %n {df.device = "gpu:0"} : (tensor<8xf32>) -> tensor<f32>
  %u = df.sqrt %t {df.device = "cpu:0"} : (tensor<f32>) -> tensor<f32>
  %v = df.abs %u {df.device = "gpu:0"} : (tensor<f32>) -> tensor<f32>
  func.return %r, %n, %v : tensor<8x12xf32>, tensor<8xf32>, tensor<f32>
}
