// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-schedule' | filecheck %s
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-schedule{strategy=exact stats=true}' | filecheck %s
// RUN: not dflow opt %s -p 'df-schedule{strategy=fastest}' 2>&1 | filecheck %s --check-prefix=STRATEGY
// RUN: not dflow opt %s -p 'df-schedule{stats=yes}' 2>&1 | filecheck %s --check-prefix=FLAG

// Every error of df-schedule is one line. df-schedule orders what df-plan-buffers
// plans, so it refuses what the planner cannot plan: a graph function must be one
// block of straight-line df code ending in func.return, over statically shaped
// tensors. Every strategy checks the same (the second RUN line).

// A bad option value is refused before any input is read. xdsl-opt reports it with
// a Python traceback (xDSL's option parser); `dflow opt` with one line:
// STRATEGY: {{^}}{{.*}}invalid_schedule.mlir: error: df-schedule: strategy=fastest is not one of best, exact, written, post-order, dfs, bfs, greedy, lpmf, random{{$}}
// FLAG:     {{^}}{{.*}}invalid_schedule.mlir: error: df-schedule: stats=yes is not true or false{{$}}

// A call: the callee would need its own part of the arena. The declaration itself
// is no graph function and is skipped.

// CHECK: {{^}}df-schedule: @caller holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %g = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// -----

// Any other op outside the df dialect (but the return) is refused too, for what it
// is: not a df op (no callee is involved).

// CHECK: {{^}}df-schedule: @scalar holds arith.constant, not a df op: only df ops are planned{{$}}
func.func @scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = arith.constant 2.0 : f32
  func.return %a : tensor<4xf32>
}

// -----

// An op with regions (other than df.fused, one step) is not straight-line code.

// CHECK: {{^}}df-schedule: @region: scf.execute_region has regions; only straight-line code{{$}}
func.func @region(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = scf.execute_region -> tensor<4xf32> {
    %n = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  func.return %a : tensor<4xf32>
}

// -----

// Several blocks: no single order of the ops to choose.

// CHECK: {{^}}df-schedule: @blocks has several blocks; only straight-line code{{$}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^bb1(%a : tensor<4xf32>)
^bb1(%b: tensor<4xf32>):
  func.return %b : tensor<4xf32>
}

// -----

// Every value is sized, arguments too (though not in the arena): an index has no
// bytes the planner knows.

// CHECK: {{^}}df-schedule: @index: expected a ranked tensor type, got index{{$}}
func.func @index(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// A dynamic shape has no size to plan.

// CHECK: {{^}}df-schedule: @dynamic: expected a static shape, got tensor<?xf32>{{$}}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  func.return %x : tensor<?xf32>
}

// -----

// In a partitioned module each device's functions are checked: the call on gpu:0
// fails though cpu:0's @main is fine. Both devices hold an @main: the message names
// the device too.

// CHECK: {{^}}df-schedule: gpu:0: @main holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
    func.func @main(%y: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %b = func.call @callee(%y) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %b : tensor<4xf32>
    }
  }
}

// -----

// A value read before the op that writes it (xDSL's verifier lets a graph region
// through): no order of the ops is a schedule.

// CHECK: {{^}}df-schedule: @early: %b is read at step 0 before written{{$}}
func.func @early(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %b : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// The same in one device's part of a partitioned module: the order chosen for
// cpu:1's @main finds it, and the message names the device.

// CHECK: {{^}}df-schedule: cpu:1: @main: %b is read at step 0 before written{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>) -> tensor<4xf32>} {
      %a = df.neg %b {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      %b = df.exp %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %a : tensor<4xf32>
    }
  }
}
