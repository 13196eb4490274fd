// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-plan-buffers | filecheck %s
// RUN: dflow opt %s --split-input-file --verify-diagnostics -p df-plan-buffers | filecheck %s --check-prefix=DFLOW

// Every error of df-plan-buffers is one line. A graph function must be one block of
// straight-line df code ending in func.return, over statically shaped tensors; in a
// partitioned module every device's part holds its own @main, so the message names
// the device whose part fails. `dflow opt` prints the same line after the file name.

// A call: the callee would need its own part of the arena.

// CHECK: {{^}}df-plan-buffers: @caller holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: @caller holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Another dialect's op is no call: the message says only what is true of it.

// CHECK: {{^}}df-plan-buffers: @scalar holds arith.constant, not a df op: only df ops are planned{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: @scalar holds arith.constant, not a df op: only df ops are planned{{$}}
func.func @scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = arith.constant 2.0 : f32
  func.return %a : tensor<4xf32>
}

// -----

// Partitioned: cpu:0's @main is fine, cpu:1's calls a function.

// CHECK: {{^}}df-plan-buffers: cpu:1: @main holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: cpu:1: @main holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
    func.func @main(%y: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %b = func.call @callee(%y) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %b : tensor<4xf32>
    }
  }
}

// -----

// Partitioned: another dialect's op on cpu:1.

// CHECK: {{^}}df-plan-buffers: cpu:1: @main holds arith.constant, not a df op: only df ops are planned{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: cpu:1: @main holds arith.constant, not a df op: only df ops are planned{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%y: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %c = arith.constant 2.0 : f32
      %b = df.neg %y {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %b : tensor<4xf32>
    }
  }
}

// -----

// Partitioned: an op with regions on gpu:0.

// CHECK: {{^}}df-plan-buffers: gpu:0: @main: scf.execute_region has regions; only straight-line code{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: gpu:0: @main: scf.execute_region has regions; only straight-line code{{$}}
builtin.module {
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = scf.execute_region -> tensor<4xf32> {
        %n = df.neg %x {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
        scf.yield %n : tensor<4xf32>
      }
      func.return %a : tensor<4xf32>
    }
  }
}

// -----

// Partitioned: several blocks on cpu:0.

// CHECK: {{^}}df-plan-buffers: cpu:0: @main has several blocks; only straight-line code{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: cpu:0: @main has several blocks; only straight-line code{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = df.neg %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      cf.br ^bb1(%a : tensor<4xf32>)
    ^bb1(%b: tensor<4xf32>):
      func.return %b : tensor<4xf32>
    }
  }
}

// -----

// Partitioned: a value with no size (an index argument) on cpu:1.

// CHECK: {{^}}df-plan-buffers: cpu:1: @main: expected a ranked tensor type, got index{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir: error: df-plan-buffers: cpu:1: @main: expected a ranked tensor type, got index{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> attributes {df.arguments = array<i64: 0, 1>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, index) -> tensor<4xf32>} {
      %a = df.neg %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
}

// -----

// Partitioned: a value read before the op that writes it, on cpu:1 (the planner's
// liveness finds it; `dflow opt` refuses it as it reads the program, before any pass).

// CHECK: {{^}}df-plan-buffers: cpu:1: @main: %b is read at step 0 before written{{$}}
// DFLOW: {{^}}{{.*}}invalid_plan_buffers.mlir:{{[0-9]+}}:7: error: df.neg uses a value before its definition (df.exp on line {{[0-9]+}}){{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = df.neg %b {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      %b = df.exp %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
}
