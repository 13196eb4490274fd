// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Verifier errors of the shape ops and reductions. Each case checks the whole
// line of its error message.

// CHECK: {{^}}df.transpose: perm [0, 0, 1] is not a permutation of the 3 axes of 2x3x4{{$}}
func.func @transpose_repeated(%x: tensor<2x3x4xf32>) {
  %0 = df.transpose %x {perm = array<i64: 0, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.transpose: perm [1, 0] is not a permutation of the 3 axes of 2x3x4{{$}}
func.func @transpose_short(%x: tensor<2x3x4xf32>) {
  %0 = df.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.transpose: perm [0, 2] is not a permutation of the 2 axes of 3x5{{$}}
func.func @transpose_out_of_range(%x: tensor<3x5xf32>) {
  %0 = df.transpose %x {perm = array<i64: 0, 2>} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.transpose: result type tensor<2x3x4xf32> does not match tensor<4x2x3xf32> inferred from tensor<2x3x4xf32>{{$}}
func.func @transpose_result(%x: tensor<2x3x4xf32>) {
  %0 = df.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.transpose: result type tensor<3x2xf64> does not match tensor<3x2xf32> inferred from tensor<2x3xf32>{{$}}
func.func @transpose_element(%x: tensor<2x3xf32>) {
  %0 = df.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf64>
  func.return
}

// -----

// CHECK: {{^}}df.reshape: cannot reshape 2x3x4 (24 elements) to 5x5 (25 elements){{$}}
func.func @reshape_count(%x: tensor<2x3x4xf32>) {
  %0 = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<5x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.reshape: cannot reshape scalar (1 elements) to 2 (2 elements){{$}}
func.func @reshape_scalar(%x: tensor<i64>) {
  %0 = df.reshape %x : (tensor<i64>) -> tensor<2xi64>
  func.return
}

// -----

// CHECK: {{^}}df.reshape: result type tensor<6x4xi32> must keep the element type of tensor<2x3x4xf32>{{$}}
func.func @reshape_element(%x: tensor<2x3x4xf32>) {
  %0 = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.broadcast_to: 4x2 does not broadcast to 4x8{{$}}
func.func @broadcast_to_incompatible(%x: tensor<4x2xf32>) {
  %0 = df.broadcast_to %x : (tensor<4x2xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.broadcast_to: 4x8 does not broadcast to 8{{$}}
func.func @broadcast_to_lower_rank(%x: tensor<4x8xf32>) {
  %0 = df.broadcast_to %x : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// A target dimension of 1 cannot hold a source dimension of 4 (NumPy refuses it too).
// CHECK: {{^}}df.broadcast_to: 4x8 does not broadcast to 1x8{{$}}
func.func @broadcast_to_smaller(%x: tensor<4x8xf32>) {
  %0 = df.broadcast_to %x : (tensor<4x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.broadcast_to: 3 does not broadcast to scalar{{$}}
func.func @broadcast_to_scalar(%x: tensor<3xi32>) {
  %0 = df.broadcast_to %x : (tensor<3xi32>) -> tensor<i32>
  func.return
}

// -----

// CHECK: {{^}}df.broadcast_to: result type tensor<4x8xf64> must keep the element type of tensor<4x1xf32>{{$}}
func.func @broadcast_to_element(%x: tensor<4x1xf32>) {
  %0 = df.broadcast_to %x : (tensor<4x1xf32>) -> tensor<4x8xf64>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_sum: axis 3 is out of range for rank 3{{$}}
func.func @reduce_axis_too_large(%x: tensor<2x3x4xf32>) {
  %0 = df.reduce_sum %x {axes = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_max: axis -4 is out of range for rank 3{{$}}
func.func @reduce_axis_too_negative(%x: tensor<2x3x4xf32>) {
  %0 = df.reduce_max %x {axes = array<i64: 0, -4>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_mean: axis 0 is out of range for rank 0{{$}}
func.func @reduce_scalar_axis(%x: tensor<f32>) {
  %0 = df.reduce_mean %x {axes = array<i64: 0>} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_sum: axes [1, 1] repeat an axis{{$}}
func.func @reduce_repeated(%x: tensor<2x3x4xf32>) {
  %0 = df.reduce_sum %x {axes = array<i64: 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// -3 and 0 name the same axis of a rank-3 tensor.
// CHECK: {{^}}df.reduce_mean: axes [0, -3] repeat an axis{{$}}
func.func @reduce_repeated_negative(%x: tensor<2x3x4xf32>) {
  %0 = df.reduce_mean %x {axes = array<i64: 0, -3>} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_mean: operand must have a floating-point element type, got i32{{$}}
func.func @reduce_mean_i32(%x: tensor<2x3xi32>) {
  %0 = df.reduce_mean %x : (tensor<2x3xi32>) -> tensor<i32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_sum: operand must have a numeric element type, got i1{{$}}
func.func @reduce_sum_i1(%x: tensor<2x3xi1>) {
  %0 = df.reduce_sum %x : (tensor<2x3xi1>) -> tensor<i1>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_max: operand must have a numeric element type, got i1{{$}}
func.func @reduce_max_i1(%x: tensor<2x3xi1>) {
  %0 = df.reduce_max %x : (tensor<2x3xi1>) -> tensor<i1>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_sum: result type tensor<2x4xf32> does not match tensor<2x1x4xf32> inferred from tensor<2x3x4xf32>{{$}}
func.func @reduce_keepdims_result(%x: tensor<2x3x4xf32>) {
  %0 = df.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// Without axes every axis is reduced.
// CHECK: {{^}}df.reduce_max: result type tensor<2xf32> does not match tensor<f32> inferred from tensor<2x3xf32>{{$}}
func.func @reduce_all_result(%x: tensor<2x3xf32>) {
  %0 = df.reduce_max %x : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}df.softmax: axis 2 is out of range for rank 2{{$}}
func.func @softmax_axis(%x: tensor<2x3xf32>) {
  %0 = df.softmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.softmax: axis -3 is out of range for rank 2{{$}}
func.func @softmax_negative_axis(%x: tensor<2x3xf64>) {
  %0 = df.softmax %x {axis = -3 : i64} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  func.return
}

// -----

// The default axis -1 does not exist on a rank-0 tensor.
// CHECK: {{^}}df.softmax: axis -1 is out of range for rank 0{{$}}
func.func @softmax_scalar(%x: tensor<f32>) {
  %0 = df.softmax %x : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}df.softmax: operand must have a floating-point element type, got i32{{$}}
func.func @softmax_i32(%x: tensor<2x3xi32>) {
  %0 = df.softmax %x : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

// CHECK: {{^}}df.softmax: result type tensor<3x2xf32> does not match tensor<2x3xf32> inferred from tensor<2x3xf32>{{$}}
func.func @softmax_result(%x: tensor<2x3xf32>) {
  %0 = df.softmax %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// CHECK: {{^}}df.concat: shapes 2x3 and 3x3 differ outside axis 1{{$}}
func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  %0 = df.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// The message names the axis normalized into [0, rank).
// CHECK: {{^}}df.concat: shapes 2x3x4 and 2x5x4 differ outside axis 2{{$}}
func.func @concat_mismatch_negative_axis(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) {
  %0 = df.concat %a, %b {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.concat: shapes 2x3 and 6 differ outside axis 0{{$}}
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<6xf32>) {
  %0 = df.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<6xf32>) -> tensor<8x3xf32>
  func.return
}

// -----

// The third operand is compared with the first.
// CHECK: {{^}}df.concat: shapes 1x4 and 1x5 differ outside axis 0{{$}}
func.func @concat_third(%a: tensor<1x4xi64>, %b: tensor<2x4xi64>, %c: tensor<1x5xi64>) {
  %0 = df.concat %a, %b, %c {axis = 0 : i64} : (tensor<1x4xi64>, tensor<2x4xi64>, tensor<1x5xi64>) -> tensor<4x4xi64>
  func.return
}

// -----

// CHECK: {{^}}df.concat: axis 2 is out of range for rank 2{{$}}
func.func @concat_axis(%a: tensor<2x3xf32>) {
  %0 = df.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.concat: operands tensor<2x3xf32>, tensor<2x3xi32> must have the same element type{{$}}
func.func @concat_mixed(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  %0 = df.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.concat: result type tensor<2x6xf32> does not match tensor<4x3xf32> inferred from tensor<2x3xf32>, tensor<2x3xf32>{{$}}
func.func @concat_result(%a: tensor<2x3xf32>) {
  %0 = df.concat %a, %a {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.concat: needs at least one operand{{$}}
func.func @concat_empty() {
  %0 = df.concat {axis = 0 : i64} : () -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}property 'axis' expected in operation 'df.concat'{{$}}
func.func @concat_no_axis(%a: tensor<2x3xf32>) {
  %0 = df.concat %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.slice: start [0, 0] and limit [5, 8] must satisfy 0 <= start <= limit <= dim for 4x8{{$}}
func.func @slice_limit_out_of_bounds(%x: tensor<4x8xf32>) {
  %0 = df.slice %x {start = array<i64: 0, 0>, limit = array<i64: 5, 8>} : (tensor<4x8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.slice: start [-1, 0] and limit [2, 8] must satisfy 0 <= start <= limit <= dim for 4x8{{$}}
func.func @slice_negative_start(%x: tensor<4x8xf32>) {
  %0 = df.slice %x {start = array<i64: -1, 0>, limit = array<i64: 2, 8>} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.slice: start [0, 6] and limit [4, 2] must satisfy 0 <= start <= limit <= dim for 4x8{{$}}
func.func @slice_start_after_limit(%x: tensor<4x8xf32>) {
  %0 = df.slice %x {start = array<i64: 0, 6>, limit = array<i64: 4, 2>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  func.return
}

// -----

// CHECK: {{^}}df.slice: start [0] and limit [4] need one entry per axis of 4x8{{$}}
func.func @slice_count(%x: tensor<4x8xf32>) {
  %0 = df.slice %x {start = array<i64: 0>, limit = array<i64: 4>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.slice: result type tensor<2x8xf32> does not match tensor<2x6xf32> inferred from tensor<4x8xf32>{{$}}
func.func @slice_result(%x: tensor<4x8xf32>) {
  %0 = df.slice %x {start = array<i64: 1, 2>, limit = array<i64: 3, 8>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.layer_norm: scale must be tensor<8xf32> (the last axis of tensor<2x8xf32>), got tensor<2x8xf32>{{$}}
func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %b: tensor<8xf32>) {
  %0 = df.layer_norm %x, %x, %b : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.layer_norm: bias must be tensor<8xf32> (the last axis of tensor<2x8xf32>), got tensor<8xf64>{{$}}
func.func @layer_norm_bias_type(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf64>) {
  %0 = df.layer_norm %x, %s, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf64>) -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.layer_norm: operand must have a floating-point element type, got i32{{$}}
func.func @layer_norm_integers(%x: tensor<2x8xi32>, %s: tensor<8xi32>) {
  %0 = df.layer_norm %x, %s, %s : (tensor<2x8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
  func.return
}

// -----

// CHECK: {{^}}df.layer_norm: the input tensor<f32> has no axis to normalize{{$}}
func.func @layer_norm_scalar(%x: tensor<f32>) {
  %0 = df.layer_norm %x, %x, %x : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}df.layer_norm: epsilon must not be negative, got -1.0{{$}}
func.func @layer_norm_epsilon(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  %0 = df.layer_norm %x, %s, %s {epsilon = -1.0 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}
