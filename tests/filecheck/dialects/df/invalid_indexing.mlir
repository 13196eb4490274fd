// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Verifier errors of the indexing ops. Each case checks the whole line of its
// error message.

// CHECK: {{^}}df.gather: indices must have an i32 or i64 element type, got f32{{$}}
func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  %0 = df.gather %t, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather: the indexed tensor must have rank 1 or more, got a scalar{{$}}
func.func @gather_from_scalar(%t: tensor<f32>, %i: tensor<3xi64>) {
  %0 = df.gather %t, %i : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather: axis 2 is out of range for rank 2{{$}}
func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  %0 = df.gather %t, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather: result type tensor<3x4xf32> does not match tensor<2x3x4xf32> inferred from tensor<10x4xf32>, tensor<2x3xi64>{{$}}
func.func @gather_result_shape(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) {
  %0 = df.gather %t, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather: result type tensor<2x4xf64> does not match tensor<2x4xf32> inferred from tensor<10x4xf32>, tensor<2xi32>{{$}}
func.func @gather_result_element(%t: tensor<10x4xf32>, %i: tensor<2xi32>) {
  %0 = df.gather %t, %i : (tensor<10x4xf32>, tensor<2xi32>) -> tensor<2x4xf64>
  func.return
}

// -----

// CHECK: {{^}}df.gather_elements: indices 2 must have the rank of data 3x5, at least 1{{$}}
func.func @gather_elements_rank(%x: tensor<3x5xf32>, %i: tensor<2xi64>) {
  %0 = df.gather_elements %x, %i : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather_elements: indices 4x2 exceed data 3x5 off axis 1{{$}}
func.func @gather_elements_larger(%x: tensor<3x5xf32>, %i: tensor<4x2xi64>) {
  %0 = df.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  func.return
}

// -----

// CHECK: {{^}}df.gather_elements: indices must have an i32 or i64 element type, got i1{{$}}
func.func @gather_elements_bool_indices(%x: tensor<3x5xf32>, %i: tensor<3x5xi1>) {
  %0 = df.gather_elements %x, %i : (tensor<3x5xf32>, tensor<3x5xi1>) -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.scatter_add: updates tensor<2x4xf32> must have shape 3x4: the result's with the indices' shape 3 in place of axis 0{{$}}
func.func @scatter_add_updates(%u: tensor<2x4xf32>, %i: tensor<3xi64>) {
  %0 = df.scatter_add %u, %i : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<10x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.scatter_add: result type tensor<10x4xf64> must keep the element type of tensor<3x4xf32>{{$}}
func.func @scatter_add_element(%u: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %0 = df.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<10x4xf64>
  func.return
}

// -----

// CHECK: {{^}}df.scatter_add: updates must have a numeric element type, got i1{{$}}
func.func @scatter_add_bool(%u: tensor<3x4xi1>, %i: tensor<3xi64>) {
  %0 = df.scatter_add %u, %i : (tensor<3x4xi1>, tensor<3xi64>) -> tensor<10x4xi1>
  func.return
}

// -----

// CHECK: {{^}}df.scatter_add: the indexed tensor must have rank 1 or more, got a scalar{{$}}
func.func @scatter_add_scalar(%u: tensor<f32>, %i: tensor<i64>) {
  %0 = df.scatter_add %u, %i : (tensor<f32>, tensor<i64>) -> tensor<f32>
  func.return
}
