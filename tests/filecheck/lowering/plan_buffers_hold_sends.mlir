// RUN: xdsl-opt %s --split-input-file -p 'df-plan-buffers{hold-sends=true}' | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p df-plan-buffers | filecheck %s --check-prefix=FREE

// With hold-sends, a sent value keeps its block to the end of the function: a
// transport between processes reads it from the arena while the function runs on.
// %b would otherwise reuse the block of %a (dead once sent): 64 bytes, not 128.

// CHECK-LABEL: func.func @reuse_after_send
// CHECK-SAME:      df.arena_bytes = 128 : i64
// CHECK-NEXT:    %a = df.exp %x {df.device = "cpu:0", df.offset = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT:    df.send %a
// CHECK-NEXT:    %b = df.sqrt %x {df.device = "cpu:0", df.offset = array<i64: [[B:[0-9]+]]>}
// CHECK-NOT:     df.offset = array<i64: [[A]]>
// CHECK:         func.return %b

// FREE-LABEL: func.func @reuse_after_send
// FREE-SAME:      df.arena_bytes = 64 : i64
// FREE-NEXT:    %a = df.exp %x {df.device = "cpu:0", df.offset = array<i64: [[A:[0-9]+]]>}
// FREE-NEXT:    df.send %a
// FREE-NEXT:    %b = df.sqrt %x {df.device = "cpu:0", df.offset = array<i64: [[A]]>}
builtin.module attributes {df.device = "cpu:0"} {
  func.func @reuse_after_send(%x: tensor<16xf32>) -> tensor<16xf32> {
    %a = df.exp %x {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
    df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "cpu:0@1"} : (tensor<16xf32>) -> ()
    %b = df.sqrt %x {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
    func.return %b : tensor<16xf32>
  }
}

// -----

// An elementwise op may write over an operand that dies there; a sent operand
// does not die there when sends are held, so %n takes its own block.

// CHECK-LABEL: func.func @no_inplace_over_sent
// CHECK-NEXT:    %a = df.exp %x {df.device = "cpu:0", df.offset = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT:    df.send %a
// CHECK-NEXT:    %n = df.neg %a {df.device = "cpu:0", df.offset = array<i64: [[N:[0-9]+]]>}
// CHECK-NOT:     df.offset = array<i64: [[A]]>
// CHECK:         func.return %n

// FREE-LABEL: func.func @no_inplace_over_sent
// FREE-NEXT:    %a = df.exp %x {df.device = "cpu:0", df.offset = array<i64: [[A:[0-9]+]]>}
// FREE-NEXT:    df.send %a
// FREE-NEXT:    %n = df.neg %a {df.device = "cpu:0", df.offset = array<i64: [[A]]>}
builtin.module attributes {df.device = "cpu:0"} {
  func.func @no_inplace_over_sent(%x: tensor<16xf32>) -> tensor<16xf32> {
    %a = df.exp %x {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
    df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "cpu:0@1"} : (tensor<16xf32>) -> ()
    %n = df.neg %a {df.device = "cpu:0"} : (tensor<16xf32>) -> tensor<16xf32>
    func.return %n : tensor<16xf32>
  }
}
