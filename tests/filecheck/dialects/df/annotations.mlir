// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Annotations are discardable attributes in the df. namespace. They survive
// the round trip through the generic form, printed before the properties in
// the one attribute dictionary.

// CHECK-LABEL: func.func @device(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>)
func.func @device(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[E:.*]] = df.exp %[[X]] {df.device = "gpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[M:.*]] = df.matmul %[[E]], %[[W]] {df.device = "cpu:1"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %[[C:.*]] = df.constant {df.device = "gpu:10"} dense<1.000000e+00> : tensor<f32>
  // CHECK-NEXT: %[[A:.*]] = df.add %[[M]], %[[C]] {df.device = "gpu:10"} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  // CHECK-NEXT: func.return %[[A]] : tensor<4x16xf32>
  %e = df.exp %x {df.device = "gpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.matmul %e, %w {df.device = "cpu:1"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = df.constant {df.device = "gpu:10"} dense<1.0> : tensor<f32>
  %a = df.add %m, %c {df.device = "gpu:10"} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  func.return %a : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @colocate_recompute_backward(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>)
func.func @colocate_recompute_backward(%x: tensor<4x8xf32>) -> tensor<f32> {
  // CHECK-NEXT: %[[R:.*]] = df.relu %[[X]] {df.colocate = "layer1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[S:.*]] = df.sigmoid %[[R]] {df.colocate = "layer1", df.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[L:.*]] = df.reduce_sum %[[S]] {df.recompute, df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[G:.*]] = df.broadcast_to %[[L]] {df.backward} : (tensor<f32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[H:.*]] = df.mul %[[G]], %[[S]] {df.backward, df.recompute, df.colocate = "layer1", df.device = "gpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[H]] {df.backward, axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  // CHECK-NEXT: func.return %[[L]] : tensor<f32>
  %r = df.relu %x {df.colocate = "layer1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.sigmoid %r {df.colocate = "layer1", df.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = df.reduce_sum %s {df.recompute, df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<f32>
  %g = df.broadcast_to %l {df.backward} : (tensor<f32>) -> tensor<4x8xf32>
  %h = df.mul %g, %s {df.backward, df.recompute, df.colocate = "layer1", df.device = "gpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = df.reduce_sum %h {axes = array<i64: 0>, df.backward, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  func.return %l : tensor<f32>
}

// Annotations on the communication ops, and on a nested device module.

// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"}
// CHECK:         func.func @part(%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:      df.send %[[X]] {df.backward, key = "k", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
// CHECK-NEXT:      %{{.*}} = df.recv {df.device = "gpu:0", key = "k2", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
builtin.module attributes {df.device = "gpu:0"} {
  func.func @part(%x: tensor<4xf32>) {
    df.send %x {df.backward, key = "k", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
    %y = df.recv {key = "k2", from = "cpu:0", to = "gpu:0", df.device = "gpu:0"} : () -> tensor<4xf32>
    func.return
  }
}
