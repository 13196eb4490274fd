// RUN: xdsl-opt %s --verify-diagnostics --parsing-diagnostics --split-input-file | filecheck %s

// Errors of df.send and df.recv: device names, a transfer to the same device,
// missing or ill-typed properties, and types outside the dialect.

// CHECK: {{^}}df.send: device 'tpu:0' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @send_bad_from(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "tpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.send: device 'gpu' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @send_bad_to(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "cpu:0", to = "gpu"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.recv: device 'cpu:a' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @recv_bad_from() {
  %0 = df.recv {key = "k", from = "cpu:a", to = "gpu:0"} : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.recv: device 'GPU:0' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @recv_bad_to() {
  %0 = df.recv {key = "k", from = "cpu:0", to = "GPU:0"} : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.send: device 'cpu:0 ' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @send_trailing_space(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "gpu:1", to = "cpu:0 "} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.send: sends from cpu:0 to itself{{$}}
func.func @send_to_itself(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "cpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.recv: sends from gpu:1 to itself{{$}}
func.func @recv_from_itself() {
  %0 = df.recv {key = "k", from = "gpu:1", to = "gpu:1"} : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}property 'key' expected in operation 'df.send'{{$}}
func.func @send_no_key(%x: tensor<4xf32>) {
  df.send %x {from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}property 'to' expected in operation 'df.recv'{{$}}
func.func @recv_no_to() {
  %0 = df.recv {key = "k", from = "cpu:0"} : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}3 : i64 should be of base attribute string{{$}}
func.func @send_key_not_string(%x: tensor<4xf32>) {
  df.send %x {key = 3 : i64, from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// CHECK: {{^}}df.recv: element type f80 is not one of f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1{{$}}
func.func @recv_f80() {
  %0 = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf80>
  func.return
}

// -----

// CHECK: {{^}}df.send: expected a static shape, got tensor<?xf32>{{$}}
func.func @send_dynamic(%x: tensor<?xf32>) {
  df.send %x {key = "k", from = "cpu:0", to = "gpu:0"} : (tensor<?xf32>) -> ()
  func.return
}

// -----

// df.send has no result.
// CHECK: {{^}}  df.send %x {key = "k", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}Expected '('{{$}}
func.func @send_result(%x: tensor<4xf32>) {
  df.send %x {key = "k", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
