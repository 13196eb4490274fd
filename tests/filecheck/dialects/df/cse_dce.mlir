// RUN: xdsl-opt %s -p cse | filecheck %s --check-prefix=CSE
// RUN: xdsl-opt %s -p dce | filecheck %s --check-prefix=DCE

// df ops are Pure unless they have an effect, so upstream cse merges identical
// ones and dce removes unused ones; df.send and df.recv have effects and stay.

// CSE-LABEL: func.func @merge(
// CSE-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CSE-NEXT:    %[[A:.*]] = df.add %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    %[[M:.*]] = df.mul %[[A]], %[[A]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    func.return %[[M]] : tensor<4x8xf32>

// DCE-LABEL: func.func @merge(
// DCE-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// DCE-NEXT:    %[[A:.*]] = df.add %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// DCE-NEXT:    %[[B:.*]] = df.add %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// DCE-NEXT:    %[[M:.*]] = df.mul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// DCE-NEXT:    func.return %[[M]] : tensor<4x8xf32>
func.func @merge(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = df.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %m : tensor<4x8xf32>
}

// Constants and ops with equal properties merge; different properties or
// different placements do not.

// CSE-LABEL: func.func @merge_properties(
// CSE-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<16x8xf32>)
// CSE-NEXT:    %[[C:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CSE-NEXT:    %[[M:.*]] = df.matmul %[[A]], %[[B]] {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CSE-NEXT:    %[[S0:.*]] = df.reduce_sum %[[M]] {axes = array<i64: 0>} : (tensor<4x16xf32>) -> tensor<16xf32>
// CSE-NEXT:    %[[S1:.*]] = df.reduce_sum %[[M]] {axes = array<i64: 1>} : (tensor<4x16xf32>) -> tensor<4xf32>
// CSE-NEXT:    %[[G:.*]] = df.exp %[[A]] {df.device = "gpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    %[[H:.*]] = df.exp %[[A]] {df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    %[[P:.*]] = df.mul %[[S0]], %[[C]] : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
// CSE-NEXT:    %[[Q:.*]] = df.mul %[[S1]], %[[C]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CSE-NEXT:    %[[E:.*]] = df.add %[[G]], %[[H]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    func.return %[[P]], %[[Q]], %[[E]] : tensor<16xf32>, tensor<4xf32>, tensor<4x8xf32>
func.func @merge_properties(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> (tensor<16xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %c1 = df.constant dense<2.0> : tensor<f32>
  %c2 = df.constant dense<2.0> : tensor<f32>
  %m1 = df.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %m2 = df.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s0 = df.reduce_sum %m1 {axes = array<i64: 0>} : (tensor<4x16xf32>) -> tensor<16xf32>
  %s1 = df.reduce_sum %m2 {axes = array<i64: 1>} : (tensor<4x16xf32>) -> tensor<4xf32>
  %g = df.exp %a {df.device = "gpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = df.exp %a {df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = df.mul %s0, %c1 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %q = df.mul %s1, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = df.add %g, %h : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %p, %q, %e : tensor<16xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// Unused pure ops go (a whole dead chain, a constant); an unused df.recv and a
// df.send stay, and cse does not merge two receives of the same key.

// DCE-LABEL: func.func @effects(
// DCE-SAME:      %[[X:.*]]: tensor<4xf32>)
// DCE-NEXT:    %[[R1:.*]] = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// DCE-NEXT:    %[[R2:.*]] = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// DCE-NEXT:    df.send %[[X]] {key = "k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
// DCE-NEXT:    %[[T:.*]] = df.tanh %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// DCE-NEXT:    func.return %[[T]] : tensor<4xf32>

// CSE-LABEL: func.func @effects(
// CSE-SAME:      %[[X:.*]]: tensor<4xf32>)
// CSE:         %[[R1:.*]] = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// CSE-NEXT:    %[[R2:.*]] = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
// CSE-NEXT:    df.send %[[X]] {key = "k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
// CSE-NEXT:    %[[T:.*]] = df.tanh %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CSE-NEXT:    func.return %[[T]] : tensor<4xf32>
func.func @effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = df.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r1 = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
  %r2 = df.recv {key = "k", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
  df.send %x {key = "k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
  %t = df.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}
