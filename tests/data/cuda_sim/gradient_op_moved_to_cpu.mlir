// devices: cpu:0,gpu:0
// GPUs cannot run df.max_pool2d_grad (dialects/df/capabilities.py): placement
// puts it on cpu:0, between two ops pinned on gpu:0.
func.func @main(%x: tensor<1x2x4x4xf32>, %dy: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %r = df.relu %x {df.device = "gpu:0"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %g = df.max_pool2d_grad %r, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %e = df.exp %g {df.device = "gpu:0"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %e : tensor<1x2x4x4xf32>
}
