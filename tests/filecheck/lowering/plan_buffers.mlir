// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-plan-buffers | filecheck %s

// An elementwise chain writes in place: every link at the same offset. The
// constant is static data and the argument the caller's: neither gets an offset.
// tensor<16xf32> takes 64 bytes, one aligned block.

// CHECK-LABEL: func.func @chain
// CHECK-SAME:      attributes {df.arena_bytes = 64 : i64}
// CHECK-NEXT:    %a = df.exp %x {df.offset = array<i64: 0>}
// CHECK-NEXT:    %b = df.neg %a {df.offset = array<i64: 0>}
// CHECK-NEXT:    %k = df.constant dense<2.000000e+00> : tensor<16xf32>
// CHECK-NEXT:    %c = df.mul %b, %k {df.offset = array<i64: 0>}
// CHECK-NEXT:    %d = df.cast %c {df.offset = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xi32>
// CHECK-NEXT:    func.return %d
func.func @chain(%x: tensor<16xf32>) -> tensor<16xi32> {
  %a = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %k = df.constant dense<2.0> : tensor<16xf32>
  %c = df.mul %b, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %d = df.cast %c : (tensor<16xf32>) -> tensor<16xi32>
  func.return %d : tensor<16xi32>
}

// -----

// A diamond: %a is still read by %c when %b is made, so they must not share;
// %c takes over %a where %a dies, and %d over %b (its first operand).

// CHECK-LABEL: func.func @diamond
// CHECK-SAME:      attributes {df.arena_bytes = 128 : i64}
// CHECK-NEXT:    %a = df.exp %x {df.offset = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT:    %b = df.neg %a {df.offset = array<i64: [[B:[0-9]+]]>}
// CHECK-NEXT:    %c = df.tanh %a {df.offset = array<i64: [[A]]>}
// CHECK-NEXT:    %d = df.add %b, %c {df.offset = array<i64: [[B]]>}
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = df.tanh %a : (tensor<16xf32>) -> tensor<16xf32>
  %d = df.add %b, %c : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %d : tensor<16xf32>
}

// -----

// Results live to the end and arguments are never written: %r is returned, so %n
// cannot take its block; %s reads only the argument, so it gets a block of its own.

// CHECK-LABEL: func.func @keep
// CHECK-SAME:      attributes {df.arena_bytes = 192 : i64}
// CHECK-NEXT:    %r = df.exp %x {df.offset = array<i64: 0>}
// CHECK-NEXT:    %n = df.neg %r {df.offset = array<i64: 64>}
// CHECK-NEXT:    %s = df.sqrt %x {df.offset = array<i64: 128>}
// CHECK-NEXT:    func.return %r, %n, %s
func.func @keep(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %r = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %n = df.neg %r : (tensor<16xf32>) -> tensor<16xf32>
  %s = df.sqrt %x : (tensor<16xf32>) -> tensor<16xf32>
  func.return %r, %n, %s : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Only an operand of the result's exact type is overwritten: not the broadcast %v
// (64 bytes under a 256-byte result), not a matmul's operand, not an f32 operand
// under an i1 result (4x16xi1 takes 64 bytes, a byte per element). Blocks whose
// values are never live together share: %p takes %v's, %g %s's.

// CHECK-LABEL: func.func @types
// CHECK-SAME:      attributes {df.arena_bytes = 512 : i64}
// CHECK-NEXT:    %v = df.exp %x {df.offset = array<i64: 256>}
// CHECK-NEXT:    %m = df.neg %w {df.offset = array<i64: 0>}
// CHECK-NEXT:    %s = df.add %v, %m {df.offset = array<i64: 0>}
// CHECK-NEXT:    %p = df.matmul %s, %t {df.offset = array<i64: 256>}
// CHECK-NEXT:    %g = df.greater %p, %p {df.offset = array<i64: 0>}
// CHECK-NEXT:    func.return %g
func.func @types(%x: tensor<16xf32>, %w: tensor<4x16xf32>, %t: tensor<16x16xf32>) -> tensor<4x16xi1> {
  %v = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %m = df.neg %w : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %s = df.add %v, %m : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = df.matmul %s, %t : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %g = df.greater %p, %p : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
  func.return %g : tensor<4x16xi1>
}

// -----

// A partitioned module: one arena per device, its size on the device module (the
// largest of its functions'). A receive writes a block; a send only reads (no
// offset). On cpu:0, %a is still live when %c arrives; on gpu:0 one block does.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0", df.arena_bytes = 128 : i64}
// CHECK-NEXT:    func.func @main
// CHECK-SAME:        df.arena_bytes = 128 : i64
// CHECK-NEXT:      %a = df.exp %x {df.device = "cpu:0", df.offset = array<i64: 0>}
// CHECK-NEXT:      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"}
// CHECK-NEXT:      %c = df.recv {df.device = "cpu:0", df.offset = array<i64: 64>, key = "main.k1"
// CHECK-NEXT:      %d = df.add %c, %a {df.device = "cpu:0", df.offset = array<i64: 64>}
// CHECK:         func.func @other
// CHECK-SAME:        df.arena_bytes = 64 : i64
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0", df.arena_bytes = 64 : i64}
// CHECK-NEXT:    func.func @main() attributes {df.arena_bytes = 64 : i64}
// CHECK-NEXT:      %r = df.recv {df.device = "gpu:0", df.offset = array<i64: 0>, key = "main.k0"
// CHECK-NEXT:      %b = df.sqrt %r {df.device = "gpu:0", df.offset = array<i64: 0>}
// CHECK-NEXT:      df.send %b {df.device = "gpu:0", key
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : (tensor<16xf32>) -> ()
      %c = df.recv {df.device = "cpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<16xf32>
      %d = df.add %c, %a {df.device = "cpu:0"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      func.return %d : tensor<16xf32>
    }
    func.func @other(%x: tensor<16xf32>) -> tensor<16xf32> {
      %y = df.exp %x {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
      func.return %y : tensor<16xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main() {
      %r = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<16xf32>
      %b = df.sqrt %r {df.device = "gpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
      df.send %b {df.device = "gpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : (tensor<16xf32>) -> ()
      func.return
    }
  }
}

// -----

// A reshape of a value in the arena is a view: same offset as its input, and
// the block lives until both are dead. %n cannot overwrite %a (whose last
// reader it is) since the view %r is read after it; %s overwrites %r, and %a
// with it, once both die; %t then overwrites %s. A reshape of the argument, or
// whose result is returned, is a copy with its own block: %copy takes the bytes
// of %n and its view %m, dead by then. Three blocks of 64 bytes.

// CHECK-LABEL: func.func @views
// CHECK-SAME:      attributes {df.arena_bytes = 192 : i64}
// CHECK-NEXT:    %a = df.exp %x {df.offset = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT:    %r = df.reshape %a {df.offset = array<i64: [[A]]>}
// CHECK-NEXT:    %n = df.neg %a {df.offset = array<i64: [[N:[0-9]+]]>}
// CHECK-NEXT:    %s = df.sqrt %r {df.offset = array<i64: [[A]]>}
// CHECK-NEXT:    %m = df.reshape %n {df.offset = array<i64: [[N]]>}
// CHECK-NEXT:    %t = df.add %s, %m {df.offset = array<i64: [[A]]>}
// CHECK-NEXT:    %copy = df.reshape %x {df.offset = array<i64: [[N]]>}
// CHECK-NEXT:    %out = df.reshape %t {df.offset = array<i64: [[O:[0-9]+]]>}
// CHECK-NEXT:    func.return %out, %copy
func.func @views(%x: tensor<4x4xf32>) -> (tensor<16xf32>, tensor<2x8xf32>) {
  %a = df.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = df.reshape %a : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %n = df.neg %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = df.sqrt %r : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %m = df.reshape %n : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %t = df.add %s, %m : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %copy = df.reshape %x : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %out = df.reshape %t : (tensor<2x8xf32>) -> tensor<16xf32>
  func.return %out, %copy : tensor<16xf32>, tensor<2x8xf32>
}

// -----

// CHECK: df-plan-buffers: @main holds func.call: only df ops are planned (a callee would need its own part of the arena)
func.func @f(%v: tensor<4xf32>) -> tensor<4xf32> {
  func.return %v : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
