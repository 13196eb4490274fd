// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-inline | filecheck %s

// df-inline replaces every call of a defined function by the callee's body,
// the callee's own calls first; callees stay (unused), declarations are called.

// CHECK-LABEL: func.func @leaf(
// CHECK-NEXT:    df.exp
// CHECK-NEXT:    func.return

// @mid's call of @leaf is inlined.
// CHECK-LABEL: func.func @mid(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.add %[[A]], %[[Y]]
// CHECK-NEXT:    func.return %[[B]], %[[X]]

// In @main, @mid (with @leaf inside it) then @leaf again: the results of a call
// become the values the callee returns, here an argument passed through.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     func.call @mid
// CHECK-NOT:     func.call @leaf
// CHECK-NEXT:    %[[A:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.add %[[A]], %[[X]]
// CHECK-NEXT:    %[[S:.*]] = df.exp %[[B]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.mul %[[S]], %[[X]]
// CHECK-NEXT:    %[[U:.*]] = func.call @ext(%[[T]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[U]]
// CHECK:         func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
func.func @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
func.func @mid(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.add %a, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r:2 = func.call @mid(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %s = func.call @leaf(%r#0) : (tensor<4xf32>) -> tensor<4xf32>
  %t = df.mul %s, %r#1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = func.call @ext(%t) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %u : tensor<4xf32>
}
func.func private @ext(tensor<4xf32>) -> tensor<4xf32>

// -----

// The callee's constants and attributes come along; a call used twice is
// inlined once, its result replaced everywhere.

// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[K:.*]] = df.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[X]], %[[K]] {df.device = "cpu:0"}
// CHECK-NEXT:    %[[S:.*]] = df.add %[[M]], %[[M]]
// CHECK-NEXT:    func.return %[[S]]
func.func @scale(%x: tensor<2xf32>) -> tensor<2xf32> {
  %k = df.constant dense<3.0> : tensor<2xf32>
  %m = df.mul %x, %k {df.device = "cpu:0"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %m : tensor<2xf32>
}
func.func @caller(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = func.call @scale(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %s = df.add %c, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %s : tensor<2xf32>
}

// -----

// In a partitioned module a call finds its callee in its own device module.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"}
// CHECK:         func.func @main(%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:      %[[A:.*]] = df.exp %[[X]]
// CHECK-NEXT:      func.return %[[A]]
// CHECK-LABEL: builtin.module attributes {df.device = "cpu:1"}
// CHECK:         func.func @main(%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:      %[[A:.*]] = df.neg %[[X]]
// CHECK-NEXT:      func.return %[[A]]
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
  }
}

// -----

// Recursion cannot be inlined: an error naming the cycle.

// CHECK: {{^}}df-inline: recursive calls a -> b -> a{{$}}
func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @a(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df-inline: recursive calls main -> self -> self{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
