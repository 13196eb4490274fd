// RUN: xdsl-opt %s --split-input-file -p 'df-autodiff{func=main wrt=0,1}' | filecheck %s

// df-autodiff adds @main_grad: @main's arguments; @main's results followed by the
// gradient of result 0 (the scalar loss) w.r.t. arguments 0 and 1, in that order.
// The forward ops are cloned unmarked; every op of the backward sweep carries
// df.backward. @main itself is left as it was.

// A broadcasting mul: the gradient of the 1x8 operand is summed over axis 0 and
// reshaped back; relu passes the gradient where its input is positive.

// CHECK-LABEL: func.func @main(
// CHECK-NOT:   df.backward
// CHECK:       func.return
// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<1x8xf32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>) {
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[M]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[L:.*]] = df.reduce_sum %[[R]] : (tensor<4x8xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = df.constant {df.backward} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[K:.*]] = df.reshape %[[ONE]] {df.backward} : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[GR:.*]] = df.broadcast_to %[[K]] {df.backward} : (tensor<1x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = df.constant {df.backward} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[POS:.*]] = df.greater %[[M]], %[[ZERO]] {df.backward} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %[[GM:.*]] = df.select %[[POS]], %[[GR]], %[[ZERO]] {df.backward} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[GX:.*]] = df.mul %[[GM]], %[[W]] {df.backward} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[GWFULL:.*]] = df.mul %[[GM]], %[[X]] {df.backward} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[GWSUM:.*]] = df.reduce_sum %[[GWFULL]] {df.backward, axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[GW:.*]] = df.reshape %[[GWSUM]] {df.backward} : (tensor<8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %[[L]], %[[R]], %[[GX]], %[[GW]] : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>
// CHECK-NEXT:  }
func.func @main(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %0 = df.mul %x, %w : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %1 = df.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = df.reduce_sum %1 : (tensor<4x8xf32>) -> tensor<f32>
  func.return %2, %1 : tensor<f32>, tensor<4x8xf32>
}

// -----

// matmul: gA = g·Bᵀ and gB = Aᵀ·g; the mean's gradient is scaled by 1/8.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>) -> (tensor<f32>, tensor<2x3xf32>, tensor<3x4xf32>) {
// CHECK-NEXT:    %[[P:.*]] = df.matmul %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[L:.*]] = df.reduce_mean %[[P]] : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = df.constant {df.backward} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[EIGHTH:.*]] = df.constant {df.backward} dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = df.mul %[[ONE]], %[[EIGHTH]] {df.backward} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[K:.*]] = df.reshape %[[S]] {df.backward} : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[G:.*]] = df.broadcast_to %[[K]] {df.backward} : (tensor<1x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[GA:.*]] = df.matmul %[[G]], %[[B]] {df.backward, transpose_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[GB:.*]] = df.matmul %[[A]], %[[G]] {df.backward, transpose_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[L]], %[[GA]], %[[GB]] : tensor<f32>, tensor<2x3xf32>, tensor<3x4xf32>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<f32> {
  %0 = df.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = df.reduce_mean %0 : (tensor<2x4xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}

// -----

// %x is used three times: its contributions are summed by one df.addn. %unused
// has no path to the loss: its gradient is a zero splat of its type.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %{{.*}}: tensor<2xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<2xf32>) {
// CHECK:         %[[L:.*]] = df.reduce_sum %{{.*}} : (tensor<3xf32>) -> tensor<f32>
// CHECK:         %[[G:.*]] = df.broadcast_to %{{.*}} {df.backward} : (tensor<1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[G1:.*]] = df.mul %[[G]], %[[X]] {df.backward} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[G2:.*]] = df.mul %[[G]], %[[X]] {df.backward} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[GX:.*]] = df.addn %[[G]], %[[G1]], %[[G2]] {df.backward} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[GU:.*]] = df.constant {df.backward} dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[L]], %[[GX]], %[[GU]] : tensor<f32>, tensor<3xf32>, tensor<2xf32>
func.func @main(%x: tensor<3xf32>, %unused: tensor<2xf32>) -> tensor<f32> {
  %0 = df.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = df.add %0, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = df.reduce_sum %1 : (tensor<3xf32>) -> tensor<f32>
  func.return %2 : tensor<f32>
}

// -----

// An embedding lookup: the table's gradient is the output gradient scatter-added
// at the tokens; the tokens (integers, argument 2) get none.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[T:.*]]: tensor<10x4xf32>, %[[W:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2x3xi64>) -> (tensor<f32>, tensor<10x4xf32>, tensor<4xf32>)
// CHECK:         %[[E:.*]] = df.gather %[[T]], %[[I]] : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK:         %[[GE:.*]] = df.mul %{{.*}}, %[[W]] {df.backward}
// CHECK:         %[[GT:.*]] = df.scatter_add %[[GE]], %[[I]] {df.backward} : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
// CHECK-NEXT:    func.return %{{.*}}, %[[GT]], %{{.*}} : tensor<f32>, tensor<10x4xf32>, tensor<4xf32>
func.func @main(%table: tensor<10x4xf32>, %w: tensor<4xf32>, %tokens: tensor<2x3xi64>) -> tensor<f32> {
  %e = df.gather %table, %tokens : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %h = df.mul %e, %w : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %l = df.reduce_sum %h : (tensor<2x3x4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// fmod(a, b) = a - trunc(a/b)·b: the gradient is g for a and -g·trunc(a/b) for b,
// with trunc(q) = q - fmod(q, 1) (exact).

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>)
// CHECK:         %[[G:.*]] = df.broadcast_to %{{.*}} {df.backward} : (tensor<1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[Q:.*]] = df.div %[[A]], %[[B]] {df.backward}
// CHECK-NEXT:    %[[ONE:.*]] = df.constant {df.backward} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[F:.*]] = df.rem %[[Q]], %[[ONE]] {df.backward}
// CHECK-NEXT:    %[[T:.*]] = df.sub %[[Q]], %[[F]] {df.backward}
// CHECK-NEXT:    %[[GT:.*]] = df.mul %[[G]], %[[T]] {df.backward}
// CHECK-NEXT:    %[[GB:.*]] = df.neg %[[GT]] {df.backward}
// CHECK-NEXT:    func.return %{{.*}}, %[[G]], %[[GB]]
func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %r = df.rem %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = df.reduce_sum %r : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// layer_norm: with x̂ = (x - mean)·r, r = rsqrt(var + ε) and d = g·scale, the
// input's gradient is r·(d - mean(d) - x̂·mean(d·x̂)) along the last axis; the
// scale's is Σ g·x̂ over the rows (the bias's, Σ g, is not asked for here).

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:.*]]: tensor<3x6xf32>, %[[S:.*]]: tensor<6xf32>, %[[B:.*]]: tensor<6xf32>) -> (tensor<f32>, tensor<3x6xf32>, tensor<6xf32>)
// CHECK:         %[[G:.*]] = df.broadcast_to %{{.*}} {df.backward} : (tensor<1x1xf32>) -> tensor<3x6xf32>
// CHECK-NEXT:    %[[MU:.*]] = df.reduce_mean %[[X]] {df.backward, keepdims = true, axes = array<i64: 1>}
// CHECK-NEXT:    %[[C:.*]] = df.sub %[[X]], %[[MU]] {df.backward}
// CHECK-NEXT:    %[[C2:.*]] = df.mul %[[C]], %[[C]] {df.backward}
// CHECK-NEXT:    %[[VAR:.*]] = df.reduce_mean %[[C2]] {df.backward, keepdims = true, axes = array<i64: 1>}
// CHECK-NEXT:    %[[EPS:.*]] = df.constant {df.backward} dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = df.add %[[VAR]], %[[EPS]] {df.backward}
// CHECK-NEXT:    %[[R:.*]] = df.rsqrt %[[VE]] {df.backward}
// CHECK-NEXT:    %[[XH:.*]] = df.mul %[[C]], %[[R]] {df.backward}
// CHECK-NEXT:    %[[D:.*]] = df.mul %[[G]], %[[S]] {df.backward}
// CHECK-NEXT:    %[[DM:.*]] = df.reduce_mean %[[D]] {df.backward, keepdims = true, axes = array<i64: 1>}
// CHECK-NEXT:    %[[DX:.*]] = df.mul %[[D]], %[[XH]] {df.backward}
// CHECK-NEXT:    %[[P:.*]] = df.reduce_mean %[[DX]] {df.backward, keepdims = true, axes = array<i64: 1>}
// CHECK-NEXT:    %[[S1:.*]] = df.sub %[[D]], %[[DM]] {df.backward}
// CHECK-NEXT:    %[[XP:.*]] = df.mul %[[XH]], %[[P]] {df.backward}
// CHECK-NEXT:    %[[IN:.*]] = df.sub %[[S1]], %[[XP]] {df.backward}
// CHECK-NEXT:    %[[GX:.*]] = df.mul %[[R]], %[[IN]] {df.backward}
// CHECK-NEXT:    %[[GXH:.*]] = df.mul %[[G]], %[[XH]] {df.backward}
// CHECK-NEXT:    %[[GS:.*]] = df.reduce_sum %[[GXH]] {df.backward, axes = array<i64: 0>}
// CHECK-NEXT:    func.return %{{.*}}, %[[GX]], %[[GS]]
func.func @main(%x: tensor<3x6xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<f32> {
  %y = df.layer_norm %x, %s, %b : (tensor<3x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<3x6xf32>
  %l = df.reduce_sum %y : (tensor<3x6xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// max_pool2d keeps where each window's maximum lies: in @main_grad the forward pool
// becomes df.max_pool2d_indices and a read of the maxima there (the rest of the
// forward pass reads them), and the gradient is added at the kept indices. @main
// keeps its df.max_pool2d.

// CHECK-LABEL: func.func @main(
// CHECK:         df.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5xf32>, %[[B:.*]]: tensor<1x2x3x3xf32>)
// CHECK-NEXT:    %[[I:.*]] = df.max_pool2d_indices %[[X]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xi64>
// CHECK-NEXT:    %[[PLANES:.*]] = df.reshape %[[X]] : (tensor<1x2x5x5xf32>) -> tensor<1x2x25xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = df.reshape %[[I]] : (tensor<1x2x3x3xi64>) -> tensor<1x2x9xi64>
// CHECK-NEXT:    %[[MAX:.*]] = df.gather_elements %[[PLANES]], %[[FLAT]] {axis = 2 : i64}
// CHECK-NEXT:    %[[P:.*]] = df.reshape %[[MAX]] : (tensor<1x2x9xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[T:.*]] = df.mul %[[P]], %[[B]]
// CHECK-NOT:     df.max_pool2d{{(_grad)? }}
// CHECK:         %[[DX:.*]] = df.max_pool2d_grad_indices %{{.*}}, %[[I]] {df.backward, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
// CHECK-NEXT:    func.return %{{.*}}, %[[DX]], %{{.*}} : tensor<f32>, tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>
func.func @main(%x: tensor<1x2x5x5xf32>, %b: tensor<1x2x3x3xf32>) -> tensor<f32> {
  %p = df.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %t = df.mul %p, %b : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %l = df.reduce_sum %t : (tensor<1x2x3x3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
