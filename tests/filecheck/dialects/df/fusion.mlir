// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// df.fused holds a fusion group: `%x = %a` binds a block argument to an operand,
// the attribute dictionary holds the properties `kind` and `name`, the functional
// type follows, then the body, ended by df.yield of the results.

// CHECK-LABEL: func.func @two_results(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[R:.*]], %[[R1:.*]] = df.fused(%[[X:.*]] = %[[A]], %[[Y:.*]] = %[[B]]) {kind = "elementwise", name = "fused_add_0"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:      %[[S:.*]] = df.add %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %[[C:.*]] = df.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:      %[[T:.*]] = df.mul %[[S]], %[[C]] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:      df.yield %[[S]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[R1]]
// CHECK-NEXT:    func.return %[[R]], %[[E]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @two_results(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:2 = df.fused(%x = %a, %y = %b) {kind = "elementwise", name = "fused_add_0"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %s = df.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %c = df.constant dense<0.5> : tensor<f32>
    %t = df.mul %s, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    df.yield %s, %t : tensor<4x8xf32>, tensor<4x8xf32>
  }
  %e = df.exp %r#1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %r#0, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// A placed group prints df.device before the properties, as df ops do; a
// reduction closes the group.

// CHECK-LABEL: func.func @placed_reduction(
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[X:.*]] = %{{.*}}) {df.device = "gpu:0", kind = "reduction", name = "fused_exp_1"} : (tensor<4x8xf64>) -> tensor<4x1xf64> {
// CHECK-NEXT:      %[[E:.*]] = df.exp %[[X]] {df.device = "gpu:0"}
// CHECK-NEXT:      %[[S:.*]] = df.reduce_sum %[[E]] {df.device = "gpu:0", axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:      df.yield %[[S]] {df.device = "gpu:0"} : tensor<4x1xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x1xf64>
func.func @placed_reduction(%a: tensor<4x8xf64>) -> tensor<4x1xf64> {
  %r = df.fused(%x = %a) {kind = "reduction", name = "fused_exp_1", df.device = "gpu:0"} : (tensor<4x8xf64>) -> tensor<4x1xf64> {
    %e = df.exp %x {df.device = "gpu:0"} : (tensor<4x8xf64>) -> tensor<4x8xf64>
    %s = df.reduce_sum %e {axes = array<i64: 1>, keepdims = true, df.device = "gpu:0"} : (tensor<4x8xf64>) -> tensor<4x1xf64>
    df.yield %s {df.device = "gpu:0"} : tensor<4x1xf64>
  }
  func.return %r : tensor<4x1xf64>
}

// A contraction heads its group; an operand may be bound twice, and a block
// argument may be yielded as it is.

// CHECK-LABEL: func.func @contraction(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = df.fused(%[[X:.*]] = %{{.*}}, %[[W:.*]] = %{{.*}}, %[[V:.*]] = %{{.*}}) {kind = "contraction", name = "fused_matmul_2"} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:      %[[M:.*]] = df.matmul %[[X]], %[[W]]
// CHECK-NEXT:      %[[R:.*]] = df.relu %[[M]]
// CHECK-NEXT:      df.yield %[[R]], %[[V]] : tensor<2x4xf32>, tensor<2x3xf32>
func.func @contraction(%a: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %r:2 = df.fused(%x = %a, %v = %w, %u = %a) {kind = "contraction", name = "fused_matmul_2"} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
    %m = df.matmul %x, %v : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %n = df.relu %m : (tensor<2x4xf32>) -> tensor<2x4xf32>
    df.yield %n, %u : tensor<2x4xf32>, tensor<2x3xf32>
  }
  func.return %r#0, %r#1 : tensor<2x4xf32>, tensor<2x3xf32>
}

// No operands: the body computes from its own constants.

// CHECK-LABEL: func.func @no_operands()
// CHECK-NEXT:    %[[R:.*]] = df.fused() {kind = "elementwise", name = "k"} : () -> tensor<3xi32> {
// CHECK-NEXT:      %[[C:.*]] = df.constant dense<[1, 2, 3]> : tensor<3xi32>
// CHECK-NEXT:      %[[D:.*]] = df.add %[[C]], %[[C]]
// CHECK-NEXT:      df.yield %[[D]] : tensor<3xi32>
func.func @no_operands() -> tensor<3xi32> {
  %r = df.fused() {kind = "elementwise", name = "k"} : () -> tensor<3xi32> {
    %c = df.constant dense<[1, 2, 3]> : tensor<3xi32>
    %d = df.add %c, %c : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    df.yield %d : tensor<3xi32>
  }
  func.return %r : tensor<3xi32>
}
