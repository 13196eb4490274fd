// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Shape ops and reductions: transpose, reshape, broadcast_to, reduce_*,
// softmax, concat and slice.

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[M:.*]]: tensor<3x5xi64>, %[[S:.*]]: tensor<f32>)
func.func @transpose(%x: tensor<2x3x4xf32>, %m: tensor<3x5xi64>, %s: tensor<f32>) -> tensor<4x2x3xf32> {
  // CHECK-NEXT: %[[T:.*]] = df.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: %{{.*}} = df.transpose %[[X]] {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = df.transpose %[[M]] {perm = array<i64: 1, 0>} : (tensor<3x5xi64>) -> tensor<5x3xi64>
  // CHECK-NEXT: %{{.*}} = df.transpose %[[S]] {perm = array<i64>} : (tensor<f32>) -> tensor<f32>
  // CHECK-NEXT: func.return %[[T]] : tensor<4x2x3xf32>
  %0 = df.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = df.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = df.transpose %m {perm = array<i64: 1, 0>} : (tensor<3x5xi64>) -> tensor<5x3xi64>
  %3 = df.transpose %s {perm = array<i64>} : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<4x2x3xf32>
}

// reshape: the result type gives the shape; the element count is kept.

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<i32>, %[[B:.*]]: tensor<1xi1>)
func.func @reshape(%x: tensor<2x3x4xf32>, %s: tensor<i32>, %b: tensor<1xi1>) {
  // CHECK-NEXT: df.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT: df.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<24xf32>
  // CHECK-NEXT: df.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<1x24x1xf32>
  // CHECK-NEXT: df.reshape %[[S]] : (tensor<i32>) -> tensor<1x1xi32>
  // CHECK-NEXT: df.reshape %[[B]] : (tensor<1xi1>) -> tensor<i1>
  // CHECK-NEXT: func.return
  %0 = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %2 = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<1x24x1xf32>
  %3 = df.reshape %s : (tensor<i32>) -> tensor<1x1xi32>
  %4 = df.reshape %b : (tensor<1xi1>) -> tensor<i1>
  func.return
}

// broadcast_to: NumPy broadcasting to the result type's shape.

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf32>, %[[S:.*]]: tensor<f64>, %[[V:.*]]: tensor<8xi64>)
func.func @broadcast_to(%x: tensor<4x1xf32>, %s: tensor<f64>, %v: tensor<8xi64>) {
  // CHECK-NEXT: df.broadcast_to %[[X]] : (tensor<4x1xf32>) -> tensor<3x4x8xf32>
  // CHECK-NEXT: df.broadcast_to %[[X]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
  // CHECK-NEXT: df.broadcast_to %[[S]] : (tensor<f64>) -> tensor<2x2xf64>
  // CHECK-NEXT: df.broadcast_to %[[V]] : (tensor<8xi64>) -> tensor<4x8xi64>
  // CHECK-NEXT: func.return
  %0 = df.broadcast_to %x : (tensor<4x1xf32>) -> tensor<3x4x8xf32>
  %1 = df.broadcast_to %x : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %2 = df.broadcast_to %s : (tensor<f64>) -> tensor<2x2xf64>
  %3 = df.broadcast_to %v : (tensor<8xi64>) -> tensor<4x8xi64>
  func.return
}

// Reductions: all axes when `axes` is absent, negative axes count from the
// end, keepdims keeps reduced axes as 1 (keepdims = false is not printed).

// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[D:.*]]: tensor<5xf64>, %[[I:.*]]: tensor<2x3xi32>, %[[J:.*]]: tensor<2x3xi64>)
func.func @reduce(%x: tensor<2x3x4xf32>, %d: tensor<5xf64>, %i: tensor<2x3xi32>, %j: tensor<2x3xi64>) -> tensor<f32> {
  // CHECK-NEXT: %[[ALL:.*]] = df.reduce_sum %[[X]] : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64: 0, -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64: 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_mean %[[X]] : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = df.reduce_mean %[[X]] {axes = array<i64: -2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_mean %[[D]] {axes = array<i64: 0>} : (tensor<5xf64>) -> tensor<f64>
  // CHECK-NEXT: %{{.*}} = df.reduce_max %[[X]] : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = df.reduce_max %[[X]] {axes = array<i64: -3, 1>} : (tensor<2x3x4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = df.reduce_max %[[I]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[I]] : (tensor<2x3xi32>) -> tensor<i32>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[J]] {axes = array<i64: 0>} : (tensor<2x3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: %{{.*}} = df.reduce_max %[[J]] : (tensor<2x3xi64>) -> tensor<i64>
  // CHECK-NEXT: %{{.*}} = df.reduce_sum %[[X]] {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return %[[ALL]] : tensor<f32>
  %0 = df.reduce_sum %x : (tensor<2x3x4xf32>) -> tensor<f32>
  %1 = df.reduce_sum %x {keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %2 = df.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %3 = df.reduce_sum %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %4 = df.reduce_sum %x {axes = array<i64: 0, -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %5 = df.reduce_sum %x {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %6 = df.reduce_sum %x {axes = array<i64: 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %7 = df.reduce_mean %x : (tensor<2x3x4xf32>) -> tensor<f32>
  %8 = df.reduce_mean %x {axes = array<i64: -2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %9 = df.reduce_mean %d {axes = array<i64: 0>} : (tensor<5xf64>) -> tensor<f64>
  %10 = df.reduce_max %x : (tensor<2x3x4xf32>) -> tensor<f32>
  %11 = df.reduce_max %x {axes = array<i64: -3, 1>} : (tensor<2x3x4xf32>) -> tensor<4xf32>
  %12 = df.reduce_max %i {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %13 = df.reduce_sum %i : (tensor<2x3xi32>) -> tensor<i32>
  %14 = df.reduce_sum %j {axes = array<i64: 0>} : (tensor<2x3xi64>) -> tensor<3xi64>
  %15 = df.reduce_max %j : (tensor<2x3xi64>) -> tensor<i64>
  %16 = df.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<f32>
}

// softmax: axis defaults to -1 (not printed when given explicitly).

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[D:.*]]: tensor<5xf64>)
func.func @softmax(%x: tensor<2x3x4xf32>, %d: tensor<5xf64>) {
  // CHECK-NEXT: df.softmax %[[X]] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: df.softmax %[[X]] {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: df.softmax %[[X]] {axis = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: df.softmax %[[X]] {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: df.softmax %[[X]] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: df.softmax %[[D]] : (tensor<5xf64>) -> tensor<5xf64>
  // CHECK-NEXT: func.return
  %0 = df.softmax %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = df.softmax %x {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = df.softmax %x {axis = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = df.softmax %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = df.softmax %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %5 = df.softmax %d : (tensor<5xf64>) -> tensor<5xf64>
  func.return
}

// concat of one and of three operands; `axis` is required, may be negative.

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x1xf32>, %[[C:.*]]: tensor<2x4xf32>, %[[P:.*]]: tensor<3xi1>, %[[Q:.*]]: tensor<1x3xi32>)
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x4xf32>, %p: tensor<3xi1>, %q: tensor<1x3xi32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %{{.*}} = df.concat %[[A]] {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[R:.*]] = df.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %{{.*}} = df.concat %[[C]], %[[B]], %[[A]] {axis = -1 : i64} : (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %{{.*}} = df.concat %[[A]], %[[A]] {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK-NEXT: %{{.*}} = df.concat %[[P]], %[[P]] {axis = 0 : i64} : (tensor<3xi1>, tensor<3xi1>) -> tensor<6xi1>
  // CHECK-NEXT: %{{.*}} = df.concat %[[Q]], %[[Q]], %[[Q]] {axis = -2 : i64} : (tensor<1x3xi32>, tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<3x3xi32>
  // CHECK-NEXT: func.return %[[R]] : tensor<2x8xf32>
  %0 = df.concat %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = df.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %2 = df.concat %c, %b, %a {axis = -1 : i64} : (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x8xf32>
  %3 = df.concat %a, %a {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %4 = df.concat %p, %p {axis = 0 : i64} : (tensor<3xi1>, tensor<3xi1>) -> tensor<6xi1>
  %5 = df.concat %q, %q, %q {axis = -2 : i64} : (tensor<1x3xi32>, tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<3x3xi32>
  func.return %1 : tensor<2x8xf32>
}

// slice: x[start:limit] per axis; an empty range gives a 0-sized axis.

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<i64>)
func.func @slice(%x: tensor<4x8xf32>, %s: tensor<i64>) -> tensor<2x6xf32> {
  // CHECK-NEXT: %[[R:.*]] = df.slice %[[X]] {start = array<i64: 1, 2>, limit = array<i64: 3, 8>} : (tensor<4x8xf32>) -> tensor<2x6xf32>
  // CHECK-NEXT: %{{.*}} = df.slice %[[X]] {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.slice %[[X]] {start = array<i64: 2, 0>, limit = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
  // CHECK-NEXT: %{{.*}} = df.slice %[[S]] {start = array<i64>, limit = array<i64>} : (tensor<i64>) -> tensor<i64>
  // CHECK-NEXT: func.return %[[R]] : tensor<2x6xf32>
  %0 = df.slice %x {start = array<i64: 1, 2>, limit = array<i64: 3, 8>} : (tensor<4x8xf32>) -> tensor<2x6xf32>
  %1 = df.slice %x {start = array<i64: 0, 0>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = df.slice %x {start = array<i64: 2, 0>, limit = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
  %3 = df.slice %s {start = array<i64>, limit = array<i64>} : (tensor<i64>) -> tensor<i64>
  func.return %0 : tensor<2x6xf32>
}

// -----

// layer_norm: along the last axis, with a scale and a bias of its length; epsilon
// defaults to 1e-5 (not printed when given so).

// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x8xf32>, %[[S:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<5xf64>, %[[E:.*]]: tensor<5xf64>)
func.func @layer_norm(%x: tensor<2x3x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %d: tensor<5xf64>, %e: tensor<5xf64>) {
  // CHECK-NEXT: df.layer_norm %[[X]], %[[S]], %[[B]] : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: df.layer_norm %[[X]], %[[S]], %[[B]] {epsilon = 1.000000e-03 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: df.layer_norm %[[D]], %[[E]], %[[E]] : (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  // CHECK-NEXT: func.return
  %0 = df.layer_norm %x, %s, %b : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %1 = df.layer_norm %x, %s, %b {epsilon = 1.0e-03 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %2 = df.layer_norm %d, %e, %e {epsilon = 1.0e-05 : f64} : (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return
}
