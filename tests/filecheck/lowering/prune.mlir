// RUN: xdsl-opt %s --split-input-file -p 'df-inline,df-prune,df-fuse' | filecheck %s

// df-prune as the lowering runs it (`LOWERING_PIPELINE`: after df-inline, before
// df-fuse): values nothing uses, and whole groups of them, are gone before
// fusion, so no df.fused is left without results and no lone kernel computes a
// value nobody reads. df.send and df.recv stay, used or not: they are effects.

// Two chained unused elementwise ops (which would fuse into a df.fused with no
// results) and an unused softmax go; the returned relu stays, alone.

// CHECK-LABEL: func.func @unused_chain_and_softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[Y:.*]] = df.relu %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @unused_chain_and_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = df.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// A whole unused contraction group (matmul, bias, relu, row sum) goes with the
// constant only it read; the used part fuses as before, and the unused value
// computed from a used one (the tanh) goes without touching it.

// CHECK-LABEL: func.func @unused_group(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>)
// CHECK-NEXT:    %[[F:.*]] = df.fused(%{{.*}} = %[[X]]) {kind = "elementwise", name = "fused_exp_0"} : (tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:      df.exp
// CHECK-NEXT:      df.neg
// CHECK-NEXT:      df.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[F]] : tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @unused_group(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %bias = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = df.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %h = df.add %m, %bias : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = df.relu %h : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = df.reduce_sum %r {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  %e = df.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = df.neg %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = df.tanh %n : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %n : tensor<2x3xf32>
}

// -----

// An entry that returns nothing computes nothing.

// CHECK-LABEL: func.func @returns_nothing(
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @returns_nothing(%x: tensor<2x4xf32>) {
  %a = df.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = df.matmul %a, %a {transpose_b = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// After inlining, what only a callee's unused result needed goes from the
// caller; the callee itself keeps all its results (it is an entry too).

// CHECK-LABEL: func.func @callee(
// CHECK:         df.exp
// CHECK-NEXT:    df.sqrt
// CHECK:         func.return %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[E]], %[[E]] : tensor<4xf32>, tensor<4xf32>
func.func @callee(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = df.sqrt %e : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e, %s : tensor<4xf32>, tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = func.call @callee(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A partitioned module: on cpu:1 the ops after the receive are unused and go,
// the receive stays (its send on cpu:0 waits for it); on cpu:0 the send keeps
// the exp it sends.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"}
// CHECK:         %[[A:.*]] = df.exp
// CHECK-NEXT:    df.send %[[A]]
// CHECK-NEXT:    %[[Y:.*]] = df.relu
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-LABEL: builtin.module attributes {df.device = "cpu:1"}
// CHECK:         df.recv
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "cpu:1"} : (tensor<4xf32>) -> ()
      %y = df.relu %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main() attributes {df.arguments = array<i64>, df.results = array<i64>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = df.recv {df.device = "cpu:1", key = "main.k0", from = "cpu:0", to = "cpu:1"} : () -> tensor<4xf32>
      %b = df.neg %a {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      %c = df.tanh %b {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return
    }
  }
}
