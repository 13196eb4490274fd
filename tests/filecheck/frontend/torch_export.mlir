// The PyTorch importer: models exported by `dflow.export` (Inputs/torch_models.py)
// and read back by `dflow opt` as any program is.
// RUN: %python %S/Inputs/torch_models.py mlp | dflow opt - | filecheck %s --check-prefix=MLP
// RUN: %python %S/Inputs/torch_models.py conv_bn_relu | dflow opt - | filecheck %s --check-prefix=CONV
// RUN: %python %S/Inputs/torch_models.py attention | dflow opt - | filecheck %s --check-prefix=ATTENTION

// A linear layer: the weight's transpose folded at import, the bias added.
// MLP-LABEL: func.func @main(%input: tensor<2x4xf32>) -> tensor<2x3xf32>
// MLP-DAG:     %[[B:.*]] = df.constant {{.*}} : tensor<3xf32>
// MLP-DAG:     %[[W:.*]] = df.constant {{.*}} : tensor<4x3xf32>
// MLP:         %[[P:.*]] = df.matmul %input, %[[W]]
// MLP-NEXT:    %[[S:.*]] = df.add %[[P]], %[[B]]
// MLP-NEXT:    %[[R:.*]] = df.relu %[[S]]
// MLP-NEXT:    func.return %[[R]] : tensor<2x3xf32>

// Frozen batch norm: its scale and shift folded to per-channel constants; the
// ceil-mode pool of 5 pixels pads one at the end.
// CONV-LABEL: func.func @main(%x: tensor<1x3x5x5xf32>) -> tensor<1x4x3x3xf32>
// CONV:         %[[C:.*]] = df.conv2d %x, %{{.*}} {{.*}}pads = array<i64: 1, 1, 1, 1>
// CONV:         %[[M:.*]] = df.mul %[[C]], %{{.*}} : (tensor<1x4x5x5xf32>, tensor<4x1x1xf32>)
// CONV-NEXT:    %[[A:.*]] = df.add %[[M]], %{{.*}} : (tensor<1x4x5x5xf32>, tensor<4x1x1xf32>)
// CONV-NEXT:    %[[R:.*]] = df.relu %[[A]]
// CONV-NEXT:    %{{.*}} = df.max_pool2d %[[R]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>}
// CONV-NOT:     df.rsqrt

// Attention as torch.export decomposes it: q and kᵀ each scaled by 8^-1/4, their
// product's softmax (a row all -inf would be zeros), times v.
// ATTENTION-LABEL: func.func @main(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// ATTENTION:         %[[Q:.*]] = df.mul %q, %{{.*}} : (tensor<1x2x4x8xf32>, tensor<f32>)
// ATTENTION:         %[[T:.*]] = df.transpose %q {perm = array<i64: 0, 1, 3, 2>}
// ATTENTION:         %[[K:.*]] = df.mul %[[T]], %{{.*}} : (tensor<1x2x8x4xf32>, tensor<f32>)
// ATTENTION:         df.matmul {{.*}} -> tensor<2x4x4xf32>
// ATTENTION:         %[[P:.*]] = df.softmax %{{.*}} {axis = 3 : i64}
// ATTENTION:         df.select %{{.*}}, %{{.*}}, %[[P]]
// ATTENTION:         df.matmul {{.*}} -> tensor<2x4x8xf32>
