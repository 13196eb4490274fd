// RUN: xdsl-opt %s --split-input-file -p df-partition | filecheck %s

// One value used twice on another device is sent once and received once there,
// right before its first use; the send follows its producer at once.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"} {
// CHECK-NEXT:    func.func @main(%[[X:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {df.arguments = array<i64: 0, 2>, df.results = array<i64: 0, 2>, df.function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)} {
// CHECK-NEXT:      %[[A:.*]] = df.exp %[[X]] {df.device = "cpu:0"}
// CHECK-NEXT:      df.send %[[A]] {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
// CHECK-NEXT:      %[[C:.*]] = df.recv {df.device = "cpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<4xf32>
// CHECK-NEXT:      %[[D:.*]] = df.neg %[[C]] {df.device = "cpu:0"}
// CHECK-NEXT:      func.return %[[D]], %[[Z]] : tensor<4xf32>, tensor<4xf32>
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"} {
// CHECK-NEXT:    func.func @main(%[[Y:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>
// CHECK-NEXT:      %[[RA:.*]] = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// CHECK-NEXT:      %[[B:.*]] = df.add %[[RA]], %[[Y]] {df.device = "gpu:0"}
// CHECK-NEXT:      %[[M:.*]] = df.mul %[[RA]], %[[B]] {df.device = "gpu:0"}
// CHECK-NEXT:      df.send %[[M]] {df.device = "gpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
// CHECK-NEXT:      func.return %[[B]] : tensor<4xf32>
// CHECK-NOT:   df.recv
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.add %a, %y {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.mul %a, %b {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = df.neg %c {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %d, %b, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// One value sent to two devices: one send per destination, in device order;
// an argument used on two devices is an argument of both parts.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"} {
// CHECK:         %[[S:.*]] = df.sqrt %{{.*}} {df.device = "cpu:0"}
// CHECK-NEXT:    df.send %[[S]] {df.device = "cpu:0", key = "fan.k0", from = "cpu:0", to = "cpu:1"}
// CHECK-NEXT:    df.send %[[S]] {df.device = "cpu:0", key = "fan.k1", from = "cpu:0", to = "gpu:1"}
// CHECK-NEXT:    func.return
// CHECK-LABEL: builtin.module attributes {df.device = "cpu:1"} {
// CHECK-NEXT:    func.func @fan(%[[X1:.*]]: tensor<2xf64>) -> tensor<2xf64> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>
// CHECK-NEXT:      %[[R1:.*]] = df.recv {df.device = "cpu:1", key = "fan.k0", from = "cpu:0", to = "cpu:1"}
// CHECK-NEXT:      %[[P:.*]] = df.add %[[R1]], %[[X1]]
// CHECK-NEXT:      func.return %[[P]]
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:1"} {
// CHECK-NEXT:    func.func @fan(%[[X2:.*]]: tensor<2xf64>) -> tensor<2xf64> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 1>
// CHECK-NEXT:      %[[R2:.*]] = df.recv {df.device = "gpu:1", key = "fan.k1", from = "cpu:0", to = "gpu:1"}
// CHECK-NEXT:      %[[Q:.*]] = df.mul %[[R2]], %[[X2]]
// CHECK-NEXT:      func.return %[[Q]]
func.func @fan(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %s = df.sqrt %x {df.device = "cpu:0"} : (tensor<2xf64>) -> tensor<2xf64>
  %p = df.add %s, %x {df.device = "cpu:1"} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %q = df.mul %s, %x {df.device = "gpu:1"} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  func.return %p, %q : tensor<2xf64>, tensor<2xf64>
}

// -----

// Every function is split, each under its own name and with its own keys; a
// device holding no op of a function still gets its (empty) part.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"} {
// CHECK-NEXT:    func.func @f(%{{.*}}: tensor<f32>) attributes {df.arguments = array<i64: 0>, df.results = array<i64>
// CHECK-NEXT:      %[[E:.*]] = df.exp
// CHECK-NEXT:      df.send %[[E]] {df.device = "cpu:0", key = "f.k0", from = "cpu:0", to = "cpu:1"}
// CHECK-NEXT:      func.return
// CHECK:         func.func @g() attributes {df.arguments = array<i64>, df.results = array<i64>
// CHECK-NEXT:      func.return
// CHECK-LABEL: builtin.module attributes {df.device = "cpu:1"} {
// CHECK-NEXT:    func.func @f() -> tensor<f32> attributes {df.arguments = array<i64>, df.results = array<i64: 0>
// CHECK-NEXT:      %[[R:.*]] = df.recv {df.device = "cpu:1", key = "f.k0", from = "cpu:0", to = "cpu:1"}
// CHECK-NEXT:      %[[L:.*]] = df.log %[[R]]
// CHECK-NEXT:      func.return %[[L]]
// CHECK:         func.func @g(%{{.*}}: tensor<f32>) -> tensor<f32>
// CHECK-NEXT:      %{{.*}} = df.neg %{{.*}} {df.device = "cpu:1"}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %a = df.exp %x {df.device = "cpu:0"} : (tensor<f32>) -> tensor<f32>
  %b = df.log %a {df.device = "cpu:1"} : (tensor<f32>) -> tensor<f32>
  func.return %b : tensor<f32>
}
func.func @g(%x: tensor<f32>) -> tensor<f32> {
  %n = df.neg %x {df.device = "cpu:1"} : (tensor<f32>) -> tensor<f32>
  func.return %n : tensor<f32>
}
