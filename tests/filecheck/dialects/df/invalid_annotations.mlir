// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// `df.device` must be a string naming a device, `cpu:N` or `gpu:N`, on every
// df op.

// CHECK: {{^}}df.exp: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "tpu:0"{{$}}
func.func @unknown_kind(%x: tensor<4xf32>) {
  %0 = df.exp %x {df.device = "tpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.add: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "cpu"{{$}}
func.func @no_index(%x: tensor<4xf32>) {
  %0 = df.add %x, %x {df.device = "cpu"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got 0 : i64{{$}}
func.func @not_a_string(%x: tensor<4x4xf32>) {
  %0 = df.matmul %x, %x {df.device = 0 : i64, transpose_b = true} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.constant: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "gpu:-1"{{$}}
func.func @negative_index() {
  %0 = df.constant {df.device = "gpu:-1"} dense<1.0> : tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.send: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "cpu:0,gpu:0"{{$}}
func.func @device_list(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "cpu:0", to = "gpu:0", df.device = "cpu:0,gpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.recv: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "GPU:0"{{$}}
func.func @upper_case() {
  %0 = df.recv {key = "k", from = "cpu:0", to = "gpu:0", df.device = "GPU:0"} : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.reduce_sum: df.device must be a string cpu:N or gpu:N (optionally @RANK, as in cpu:0@1), got "gpu:0 "{{$}}
func.func @trailing_space(%x: tensor<4xf32>) {
  %0 = df.reduce_sum %x {df.device = "gpu:0 ", df.backward} : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

// Type errors are reported before annotation errors.
// CHECK: {{^}}df.log: operand must have a floating-point element type, got i64{{$}}
func.func @type_error_first(%x: tensor<4xi64>) {
  %0 = df.log %x {df.device = "npu:0"} : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}
