// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// df.send and df.recv move a value between two devices, matched by `key`.

// CHECK-LABEL: func.func @send(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<2x3xi64>, %[[S:.*]]: tensor<i1>)
func.func @send(%x: tensor<4xf32>, %m: tensor<2x3xi64>, %s: tensor<i1>) {
  // CHECK-NEXT: df.send %[[X]] {key = "k3", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  // CHECK-NEXT: df.send %[[M]] {key = "k4", from = "gpu:1", to = "gpu:0"} : (tensor<2x3xi64>) -> ()
  // CHECK-NEXT: df.send %[[S]] {key = "k5", from = "gpu:12", to = "cpu:3"} : (tensor<i1>) -> ()
  // CHECK-NEXT: func.return
  df.send %x {key = "k3", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  df.send %m {key = "k4", from = "gpu:1", to = "gpu:0"} : (tensor<2x3xi64>) -> ()
  df.send %s {key = "k5", from = "gpu:12", to = "cpu:3"} : (tensor<i1>) -> ()
  func.return
}

// CHECK-LABEL: func.func @recv()
func.func @recv() -> tensor<4xf32> {
  // CHECK-NEXT: %[[V:.*]] = df.recv {key = "k3", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = df.recv {key = "k4", from = "gpu:1", to = "gpu:0"} : () -> tensor<2x3xi64>
  // CHECK-NEXT: %{{.*}} = df.recv {key = "k5", from = "gpu:12", to = "cpu:3"} : () -> tensor<i1>
  // CHECK-NEXT: func.return %[[V]] : tensor<4xf32>
  %v = df.recv {key = "k3", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
  %w = df.recv {key = "k4", from = "gpu:1", to = "gpu:0"} : () -> tensor<2x3xi64>
  %s = df.recv {key = "k5", from = "gpu:12", to = "cpu:3"} : () -> tensor<i1>
  func.return %v : tensor<4xf32>
}

// A partitioned module: one nested module per device, the value crossing from
// cpu:0 to gpu:0 as a send and a receive with the same key.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"}
// CHECK:         func.func @main(%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:      %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      df.send %[[E]] {key = "main/0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"}
// CHECK:         func.func @main() -> tensor<4xf32>
// CHECK-NEXT:      %[[R:.*]] = df.recv {key = "main/0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// CHECK-NEXT:      %[[T:.*]] = df.tanh %[[R]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      func.return %[[T]] : tensor<4xf32>
builtin.module attributes {df.device = "cpu:0"} {
  func.func @main(%x: tensor<4xf32>) {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.send %e {key = "main/0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
    func.return
  }
}
builtin.module attributes {df.device = "gpu:0"} {
  func.func @main() -> tensor<4xf32> {
    %r = df.recv {key = "main/0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
    %t = df.tanh %r : (tensor<4xf32>) -> tensor<4xf32>
    func.return %t : tensor<4xf32>
  }
}
