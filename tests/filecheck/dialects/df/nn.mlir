// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Contractions and windows: matmul, conv2d and its two gradients, pooling.
// Properties equal to their defaults (transpose_a/transpose_b = false,
// strides = 1,1, pads = 0,0,0,0, dilations = 1,1, groups = 1) are not printed.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[AT:.*]]: tensor<8x4xf32>, %[[BT:.*]]: tensor<16x8xf32>)
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %at: tensor<8x4xf32>, %bt: tensor<16x8xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[M:.*]] = df.matmul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = df.matmul %[[AT]], %[[B]] {transpose_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = df.matmul %[[A]], %[[BT]] {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = df.matmul %[[AT]], %[[BT]] {transpose_a = true, transpose_b = true} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = df.matmul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = df.matmul %[[A]], %[[BT]] {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: func.return %[[M]] : tensor<4x16xf32>
  %0 = df.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = df.matmul %at, %b {transpose_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = df.matmul %a, %bt {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %3 = df.matmul %at, %bt {transpose_a = true, transpose_b = true} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // Explicit default values are dropped.
  %4 = df.matmul %a, %b {transpose_a = false, transpose_b = false} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %5 = df.matmul %a, %bt {transpose_a = false, transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// Leading axes are a batch and must be equal; integer and f64 operands.

// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3x4x8xf32>, %[[B:.*]]: tensor<2x3x8x16xf32>, %[[C:.*]]: tensor<5x8x4xf64>, %[[D:.*]]: tensor<5x16x8xf64>, %[[I:.*]]: tensor<2x3xi32>, %[[J:.*]]: tensor<3x1xi64>)
func.func @matmul_batched(%a: tensor<2x3x4x8xf32>, %b: tensor<2x3x8x16xf32>, %c: tensor<5x8x4xf64>, %d: tensor<5x16x8xf64>, %i: tensor<2x3xi32>, %j: tensor<3x1xi64>) {
  // CHECK-NEXT: df.matmul %[[A]], %[[B]] : (tensor<2x3x4x8xf32>, tensor<2x3x8x16xf32>) -> tensor<2x3x4x16xf32>
  // CHECK-NEXT: df.matmul %[[C]], %[[D]] {transpose_a = true, transpose_b = true} : (tensor<5x8x4xf64>, tensor<5x16x8xf64>) -> tensor<5x4x16xf64>
  // CHECK-NEXT: df.matmul %[[I]], %[[I]] {transpose_b = true} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x2xi32>
  // CHECK-NEXT: df.matmul %[[J]], %[[J]] {transpose_a = true} : (tensor<3x1xi64>, tensor<3x1xi64>) -> tensor<1x1xi64>
  // CHECK-NEXT: func.return
  %0 = df.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<2x3x8x16xf32>) -> tensor<2x3x4x16xf32>
  %1 = df.matmul %c, %d {transpose_a = true, transpose_b = true} : (tensor<5x8x4xf64>, tensor<5x16x8xf64>) -> tensor<5x4x16xf64>
  %2 = df.matmul %i, %i {transpose_b = true} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x2xi32>
  %3 = df.matmul %j, %j {transpose_a = true} : (tensor<3x1xi64>, tensor<3x1xi64>) -> tensor<1x1xi64>
  func.return
}

// conv2d: NCHW input, OIHW filter, optional bias of shape [O].

// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK-NEXT: %[[C:.*]] = df.conv2d %[[X]], %[[W]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]] {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]] {strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x4xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]] {strides = array<i64: 2, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 3, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x10xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]] {pads = array<i64: 0, 0, 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x7xf32>
  // CHECK-NEXT: func.return %[[C]] : tensor<1x4x6x6xf32>
  %0 = df.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = df.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %2 = df.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %3 = df.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %4 = df.conv2d %x, %w {strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x4xf32>
  %5 = df.conv2d %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 3, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x10xf32>
  // Explicit default values are dropped, only the others are printed.
  %6 = df.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %7 = df.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x7xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @conv2d_f64(
// CHECK-SAME:      %[[X:.*]]: tensor<2x1x5x5xf64>, %[[W:.*]]: tensor<1x1x5x5xf64>, %[[B:.*]]: tensor<1xf64>)
func.func @conv2d_f64(%x: tensor<2x1x5x5xf64>, %w: tensor<1x1x5x5xf64>, %b: tensor<1xf64>) -> tensor<2x1x1x1xf64> {
  // CHECK-NEXT: %[[C:.*]] = df.conv2d %[[X]], %[[W]], %[[B]] : (tensor<2x1x5x5xf64>, tensor<1x1x5x5xf64>, tensor<1xf64>) -> tensor<2x1x1x1xf64>
  // CHECK-NEXT: func.return %[[C]] : tensor<2x1x1x1xf64>
  %0 = df.conv2d %x, %w, %b : (tensor<2x1x5x5xf64>, tensor<1x1x5x5xf64>, tensor<1xf64>) -> tensor<2x1x1x1xf64>
  func.return %0 : tensor<2x1x1x1xf64>
}

// The gradients: conv2d_grad_input(d_output, filter) -> input type and
// conv2d_grad_filter(input, d_output) -> filter type. With stride 2 the result
// type picks one of the input sizes that give the same output (7 or 8).

// CHECK-LABEL: func.func @conv2d_grads(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[DY:.*]]: tensor<1x4x6x6xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[DS:.*]]: tensor<1x4x4x4xf32>, %[[X7:.*]]: tensor<1x3x7x7xf32>)
func.func @conv2d_grads(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>, %ds: tensor<1x4x4x4xf32>, %x7: tensor<1x3x7x7xf32>) {
  // CHECK-NEXT: df.conv2d_grad_input %[[DY]], %[[W]] : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: df.conv2d_grad_filter %[[X]], %[[DY]] : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  // CHECK-NEXT: df.conv2d_grad_input %[[DS]], %[[W]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: df.conv2d_grad_input %[[DS]], %[[W]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  // CHECK-NEXT: df.conv2d_grad_filter %[[X]], %[[DS]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  // CHECK-NEXT: df.conv2d_grad_filter %[[X7]], %[[DS]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x7x7xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  // CHECK-NEXT: df.conv2d_grad_input %[[DS]], %[[W]] {dilations = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: df.conv2d_grad_filter %[[X]], %[[DS]] {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  // CHECK-NEXT: df.conv2d_grad_input %[[DY]], %[[W]] : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: func.return
  %0 = df.conv2d_grad_input %dy, %w : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  %1 = df.conv2d_grad_filter %x, %dy : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  %2 = df.conv2d_grad_input %ds, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  %3 = df.conv2d_grad_input %ds, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  %4 = df.conv2d_grad_filter %x, %ds {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  %5 = df.conv2d_grad_filter %x7, %ds {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x7x7xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  %6 = df.conv2d_grad_input %ds, %w {dilations = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  %7 = df.conv2d_grad_filter %x, %ds {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  %8 = df.conv2d_grad_input %dy, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// Grouped convolutions: `groups` splits the C input and O output channels into
// that many groups (the filter is O x C/groups x KH x KW); depthwise when groups
// = C. The gradients carry it too; groups = 1 is the default and not printed.

// CHECK-LABEL: func.func @conv2d_grouped(
// CHECK-SAME:      %[[X:.*]]: tensor<1x4x8x8xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>, %[[B:.*]]: tensor<6xf32>, %[[WD:.*]]: tensor<8x1x3x3xf32>, %[[DY:.*]]: tensor<1x6x6x6xf32>)
func.func @conv2d_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %wd: tensor<8x1x3x3xf32>, %dy: tensor<1x6x6x6xf32>) {
  // CHECK-NEXT: df.conv2d %[[X]], %[[W]], %[[B]] {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  // CHECK-NEXT: df.conv2d %[[X]], %[[WD]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  // CHECK-NEXT: df.conv2d_grad_input %[[DY]], %[[W]] {groups = 2 : i64} : (tensor<1x6x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  // CHECK-NEXT: df.conv2d_grad_filter %[[X]], %[[DY]] {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x2x3x3xf32>
  // CHECK-NEXT: df.conv2d %[[X]], %[[W]] {dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x4xf32>
  // CHECK-NEXT: func.return
  %0 = df.conv2d %x, %w, %b {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  %1 = df.conv2d %x, %wd {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  %2 = df.conv2d_grad_input %dy, %w {groups = 2 : i64} : (tensor<1x6x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  %3 = df.conv2d_grad_filter %x, %dy {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x2x3x3xf32>
  %4 = df.conv2d %x, %w {dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x4xf32>
  func.return
}

// CHECK-LABEL: func.func @conv2d_depthwise(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x5x5xf64>, %[[W:.*]]: tensor<3x1x3x3xf64>, %[[B:.*]]: tensor<3xf64>)
func.func @conv2d_depthwise(%x: tensor<2x3x5x5xf64>, %w: tensor<3x1x3x3xf64>, %b: tensor<3xf64>) -> tensor<2x3x5x5xf64> {
  // CHECK-NEXT: %[[C:.*]] = df.conv2d %[[X]], %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>, groups = 3 : i64} : (tensor<2x3x5x5xf64>, tensor<3x1x3x3xf64>, tensor<3xf64>) -> tensor<2x3x5x5xf64>
  // CHECK-NEXT: %{{.*}} = df.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>, groups = 3 : i64} : (tensor<2x3x5x5xf64>, tensor<3x1x3x3xf64>) -> tensor<2x3x5x5xf64>
  // CHECK-NEXT: func.return %[[C]] : tensor<2x3x5x5xf64>
  %0 = df.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 3 : i64} : (tensor<2x3x5x5xf64>, tensor<3x1x3x3xf64>, tensor<3xf64>) -> tensor<2x3x5x5xf64>
  %1 = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 3 : i64} : (tensor<2x3x5x5xf64>, tensor<3x1x3x3xf64>) -> tensor<2x3x5x5xf64>
  func.return %0 : tensor<2x3x5x5xf64>
}

// Pooling: `kernel` is required and always printed; strides and pads default.

// CHECK-LABEL: func.func @pool2d(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[D:.*]]: tensor<2x1x5x4xf64>)
func.func @pool2d(%x: tensor<1x3x8x8xf32>, %d: tensor<2x1x5x4xf64>) {
  // CHECK-NEXT: df.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: df.avg_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: df.max_pool2d %[[X]] {kernel = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  // CHECK-NEXT: df.avg_pool2d %[[X]] {kernel = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  // CHECK-NEXT: df.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: df.avg_pool2d %[[X]] {kernel = array<i64: 3, 2>, pads = array<i64: 2, 0, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32>
  // CHECK-NEXT: df.max_pool2d %[[D]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x1x5x4xf64>) -> tensor<2x1x2x2xf64>
  // CHECK-NEXT: df.avg_pool2d %[[D]] {kernel = array<i64: 5, 4>} : (tensor<2x1x5x4xf64>) -> tensor<2x1x1x1xf64>
  // CHECK-NEXT: df.max_pool2d %[[X]] {kernel = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  // CHECK-NEXT: func.return
  %0 = df.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %1 = df.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %2 = df.max_pool2d %x {kernel = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  %3 = df.avg_pool2d %x {kernel = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  %4 = df.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %5 = df.avg_pool2d %x {kernel = array<i64: 3, 2>, pads = array<i64: 2, 0, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32>
  %6 = df.max_pool2d %d {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x1x5x4xf64>) -> tensor<2x1x2x2xf64>
  %7 = df.avg_pool2d %d {kernel = array<i64: 5, 4>} : (tensor<2x1x5x4xf64>) -> tensor<2x1x1x1xf64>
  %8 = df.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  func.return
}

// -----

// Where each window's maximum lies (i64, h * W + w in the plane), and the gradient
// added there: the result type names the input's.

// CHECK-LABEL: func.func @max_pool2d_indices(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x7x6xf32>, %[[G:.*]]: tensor<2x3x4x3xf32>)
// CHECK-NEXT:    %[[I:.*]] = df.max_pool2d_indices %[[X]] {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>} : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x3xi64>
// CHECK-NEXT:    %{{.*}} = df.max_pool2d_grad_indices %[[G]], %[[I]] {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>} : (tensor<2x3x4x3xf32>, tensor<2x3x4x3xi64>) -> tensor<2x3x7x6xf32>
func.func @max_pool2d_indices(%x: tensor<2x3x7x6xf32>, %g: tensor<2x3x4x3xf32>) -> tensor<2x3x7x6xf32> {
  %i = df.max_pool2d_indices %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>} : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x3xi64>
  %d = df.max_pool2d_grad_indices %g, %i {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>} : (tensor<2x3x4x3xf32>, tensor<2x3x4x3xi64>) -> tensor<2x3x7x6xf32>
  func.return %d : tensor<2x3x7x6xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d_nchwc(
// CHECK:         df.conv2d_nchwc %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5x16xf32>, tensor<3x2x3x3x16x16xf32>, tensor<48xf32>) -> tensor<1x3x3x3x16xf32>
func.func @conv2d_nchwc(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x2x3x3x16x16xf32>, %b: tensor<48xf32>) -> tensor<1x3x3x3x16xf32> {
  %y = df.conv2d_nchwc %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5x16xf32>, tensor<3x2x3x3x16x16xf32>, tensor<48xf32>) -> tensor<1x3x3x3x16xf32>
  func.return %y : tensor<1x3x3x3x16xf32>
}

// CHECK-LABEL: func.func @pools_nchwc(
// CHECK:         df.max_pool2d_nchwc %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x6x16xf32>) -> tensor<1x2x3x3x16xf32>
// CHECK:         df.avg_pool2d_nchwc %{{.*}} {kernel = array<i64: 2, 2>} : (tensor<1x2x5x6x16xf32>) -> tensor<1x2x4x5x16xf32>
func.func @pools_nchwc(%x: tensor<1x2x5x6x16xf32>) -> (tensor<1x2x3x3x16xf32>, tensor<1x2x4x5x16xf32>) {
  %m = df.max_pool2d_nchwc %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x6x16xf32>) -> tensor<1x2x3x3x16xf32>
  %a = df.avg_pool2d_nchwc %x {kernel = array<i64: 2, 2>} : (tensor<1x2x5x6x16xf32>) -> tensor<1x2x4x5x16xf32>
  func.return %m, %a : tensor<1x2x3x3x16xf32>, tensor<1x2x4x5x16xf32>
}
