// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-autodiff{func=main wrt=0,1}' | filecheck %s

// Every error of df-autodiff is one line naming the function, argument or op.

// CHECK: {{^}}df-autodiff: no function @main (functions: @train){{$}}
func.func @train(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = df.reduce_sum %x : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: wrt argument 1 is out of range: @main has 1 argument{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = df.reduce_sum %x : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: argument 1 of @main has type tensor<4xi32>; only floating-point arguments can be differentiated{{$}}
func.func @main(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<f32> {
  %0 = df.reduce_sum %x : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: the loss (result 0 of @main) must be a scalar, got tensor<4xf32>{{$}}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = df.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK: {{^}}df-autodiff: the loss (result 0 of @main) must be a scalar, got tensor<1xi64>{{$}}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %n: tensor<1xi64>) -> tensor<1xi64> {
  func.return %n : tensor<1xi64>
}

// -----

// CHECK: {{^}}df-autodiff: @main has no results; its result 0 must be the scalar loss{{$}}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  func.return
}

// -----

// CHECK: {{^}}df-autodiff: func.call has no gradient rule (on the path from argument 1 to the loss){{$}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = func.call @f(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = df.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = df.reduce_sum %1 : (tensor<4xf32>) -> tensor<f32>
  func.return %2 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: df.max_pool2d_grad has no gradient rule (on the path from argument 0 to the loss){{$}}
func.func @main(%x: tensor<1x1x4x4xf32>, %g: tensor<1x1x2x2xf32>) -> tensor<f32> {
  %0 = df.max_pool2d_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %1 = df.reduce_sum %0 : (tensor<1x1x4x4xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: no gradient through df.cast from i32 (on the path from argument 0 to the loss){{$}}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = df.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %1 = df.cast %0 : (tensor<4xi32>) -> tensor<4xf32>
  %2 = df.mul %1, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = df.reduce_sum %2 : (tensor<4xf32>) -> tensor<f32>
  func.return %3 : tensor<f32>
}

// -----

// CHECK: {{^}}df-autodiff: @main_grad already exists{{$}}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = df.reduce_sum %x : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
func.func @main_grad(%x: tensor<4xf32>) {
  func.return
}
