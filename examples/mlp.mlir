// A two-layer perceptron with a softmax classifier and a cross-entropy loss.
// Result 0 is the loss (so `df-autodiff` can differentiate it), result 1 the
// class probabilities.
// Run it: `dflow run examples/mlp.mlir` (seeded random inputs), or feed your own
// with `--inputs x.npz` holding arrays named x, w1, b1, w2, b2 and labels.
func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                %w2: tensor<32x10xf32>, %b2: tensor<10xf32>, %labels: tensor<8x10xf32>)
    -> (tensor<f32>, tensor<8x10xf32>) {
  %h = df.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %hb = df.add %h, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %a = df.relu %hb : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %logits = df.matmul %a, %w2 : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
  %lb = df.add %logits, %b2 : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %p = df.softmax %lb {axis = -1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %logp = df.log %p : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %weighted = df.mul %labels, %logp : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
  %total = df.reduce_sum %weighted {axes = array<i64: 1>} : (tensor<8x10xf32>) -> tensor<8xf32>
  %mean = df.reduce_mean %total : (tensor<8xf32>) -> tensor<f32>
  %loss = df.neg %mean : (tensor<f32>) -> tensor<f32>
  func.return %loss, %p : tensor<f32>, tensor<8x10xf32>
}
