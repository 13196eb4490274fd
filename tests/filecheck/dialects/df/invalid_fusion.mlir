// RUN: xdsl-opt %s --verify-diagnostics --parsing-diagnostics --split-input-file | filecheck %s

// Errors of df.fused and df.yield: the body's arguments against the operands,
// the yielded values against the results, what the body may hold, how it ends,
// the properties, and the parser's check of the bindings against the type.

// CHECK: {{^}}df.fused: the body has 2 arguments for 1 operands{{$}}
func.func @argument_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "df.fused"(%a) <{kind = "elementwise", name = "k"}> ({
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = df.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    df.yield %s : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: body argument 0 has type tensor<4xf64>, but operand 0 has type tensor<4xf32>{{$}}
func.func @argument_type(%a: tensor<4xf32>) -> tensor<4xf64> {
  %r = "df.fused"(%a) <{kind = "elementwise", name = "k"}> ({
  ^bb0(%x: tensor<4xf64>):
    %s = df.exp %x : (tensor<4xf64>) -> tensor<4xf64>
    df.yield %s : tensor<4xf64>
  }) : (tensor<4xf32>) -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}

// -----

// CHECK: {{^}}df.fused: df.yield gives 2 values for 1 results{{$}}
func.func @yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    %n = df.neg %e : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e, %n : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: df.yield value 0 has type tensor<4xi1>, but result 0 has type tensor<4xf32>{{$}}
func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    %g = df.greater %e, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    df.yield %g : tensor<4xi1>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: the body may hold only df ops with reference semantics, not df.send{{$}}
func.func @send_inside(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.send %e {key = "k0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: the body may hold only df ops with reference semantics, not df.recv{{$}}
func.func @recv_inside() -> tensor<4xf32> {
  %r = df.fused() {kind = "elementwise", name = "k"} : () -> tensor<4xf32> {
    %v = df.recv {key = "k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
    df.yield %v : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: the body may hold only df ops with reference semantics, not df.fused{{$}}
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "outer"} : (tensor<4xf32>) -> tensor<4xf32> {
    %i = df.fused(%y = %x) {kind = "elementwise", name = "inner"} : (tensor<4xf32>) -> tensor<4xf32> {
      %e = df.exp %y : (tensor<4xf32>) -> tensor<4xf32>
      df.yield %e : tensor<4xf32>
    }
    df.yield %i : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: the body may hold only df ops with reference semantics, not arith.constant{{$}}
func.func @not_df(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant 1 : i32
    df.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: Operation df.exp terminates block in single-block region but is not a terminator
func.func @no_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: the body must end with df.yield, found test.termop{{$}}
func.func @other_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    "test.termop"() : () -> ()
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: 'df.yield' must be the last operation in its parent block
func.func @yield_in_the_middle(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    df.yield %x : tensor<4xf32>
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: 'df.yield' expects parent op 'df.fused'
func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  df.yield %a : tensor<4xf32>
}

// -----

// CHECK: Operation using value defined out of its IsolatedFromAbove parent
func.func @not_isolated(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %s = df.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    df.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: df.exp in the body is on "gpu:0", but the op is on "cpu:0"{{$}}
func.func @device_inside(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k", df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e {df.device = "cpu:0"} : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: df.exp in the body is on "gpu:0", but the op is unplaced{{$}}
func.func @placed_inside_unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: kind must be one of "elementwise", "reduction", "contraction", got "loop"{{$}}
func.func @bad_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "loop", name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: {{^}}df.fused: name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got "2-fast"{{$}}
func.func @bad_name(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "2-fast"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: property 'kind' expected in operation 'df.fused'
func.func @no_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {name = "k"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: df.fused binds 1 operands but its type has 2 inputs
func.func @binding_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    df.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: f32 should be of base attribute tensor
func.func @not_a_tensor(%a: f32) -> f32 {
  %r = df.fused(%x = %a) {kind = "elementwise", name = "k"} : (f32) -> f32 {
    df.yield %x : f32
  }
  func.return %r : f32
}

// -----

// CHECK: Operation df.fused contains empty block in single-block region that expects at least a terminator
func.func @empty_body() {
  "df.fused"() <{kind = "elementwise", name = "k"}> ({
  ^bb0:
  }) : () -> ()
  func.return
}
