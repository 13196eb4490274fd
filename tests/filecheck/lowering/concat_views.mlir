// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-bufferize,df-plan-buffers | filecheck %s
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-bufferize,df-plan-buffers,df-lower-host | filecheck %s --check-prefix=HOST

// Concatenations without copies: df-bufferize marks `df.view` each df.concat whose
// operands can all be written in place into their slices of its result
// (analysis/memory/concat_views.py) and builds it no kernel; df-plan-buffers
// places each operand at the concatenation's offset plus the bytes before it;
// df-lower-host takes the concatenation's view there and launches nothing.
// tensor<1x16x2x2xf32> is 256 bytes.

// DenseNet: %c1 = (%a, %b) is a prefix of %c2 = (%a, %b, %e), so both are views
// of one block of 768 bytes: %a at 0, %b at 256, %e at 512. The reductions'
// results take the 64 bytes above it.

// CHECK-LABEL: func.func @densenet
// CHECK-SAME:      attributes {df.arena_bytes = 832 : i64}
// CHECK-NEXT:    %a = df.relu %x {df.kernel = @relu_0, df.offset = array<i64: 0>}
// CHECK-NEXT:    %b = df.exp %x {df.kernel = @exp_1, df.offset = array<i64: 256>}
// CHECK-NEXT:    %c1 = df.concat %a, %b {df.view, df.offset = array<i64: 0>, axis = 1 : i64}
// CHECK-NEXT:    %d = df.reduce_sum %c1 {df.kernel = @reduce_sum_2, df.offset = array<i64: 768>
// CHECK-NEXT:    %e = df.broadcast_to %d {{.*}}df.kernel = @broadcast_to_3, df.offset = array<i64: 512>}
// CHECK-NEXT:    %c2 = df.concat %a, %b, %e {df.view, df.offset = array<i64: 0>, axis = 1 : i64}
// CHECK-NOT:   func.func private @concat

// HOST-LABEL: func.func @densenet
// HOST:         %[[ARENA:.*]] = dfrt.arena : memref<832xi8>
// HOST:         %a = dfrt.view %[[ARENA]][0]
// HOST-NEXT:    dfrt.launch @relu_0(%x, %a)
// HOST-NEXT:    %b = dfrt.view %[[ARENA]][256]
// HOST-NEXT:    dfrt.launch @exp_1(%x, %b)
// HOST-NEXT:    %c1 = dfrt.view %[[ARENA]][0] : memref<832xi8> -> memref<1x32x2x2xf32>
// HOST-NEXT:    %d = dfrt.view %[[ARENA]][768]
// HOST-NEXT:    dfrt.launch @reduce_sum_2(%c1, %d)
// HOST-NEXT:    %e = dfrt.view %[[ARENA]][512]
// HOST-NEXT:    dfrt.launch @broadcast_to_3(%d, %e)
// HOST-NEXT:    %c2 = dfrt.view %[[ARENA]][0] : memref<832xi8> -> memref<1x48x2x2xf32>
// HOST-NEXT:    %r = dfrt.output
// HOST-NEXT:    dfrt.launch @reduce_sum_4(%c2, %r)
func.func @densenet(%x: tensor<1x16x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %a = df.relu %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = df.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c1 = df.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = df.reduce_sum %c1 {axes = array<i64: 1>, keepdims = true} : (tensor<1x32x2x2xf32>) -> tensor<1x1x2x2xf32>
  %e = df.broadcast_to %d {shape = array<i64: 1, 16, 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c2 = df.concat %a, %b, %e {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x48x2x2xf32>
  %r = df.reduce_sum %c2 {axes = array<i64: 1>, keepdims = true} : (tensor<1x48x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %r : tensor<1x1x2x2xf32>
}

// -----

// An argument is the caller's array, not arena bytes a step could write into:
// the concatenation copies.

// CHECK-LABEL: func.func @argument
// CHECK:         df.concat %x, %a {df.kernel = @concat_1,
// HOST-LABEL: func.func @argument
// HOST:         dfrt.launch @concat_1(%x, %a, %c)
func.func @argument(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = df.relu %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = df.concat %x, %a {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %n = df.neg %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %n : tensor<1x32x2x2xf32>
}

// -----

// With a batch of two, the operands interleave along axis 1: no operand is one
// run of the result's bytes.

// CHECK-LABEL: func.func @batch
// CHECK:         df.concat %a, %b {df.kernel = @concat_2,
func.func @batch(%x: tensor<2x16x2x2xf32>) -> tensor<2x32x2x2xf32> {
  %a = df.relu %x : (tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %b = df.exp %x : (tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %c = df.concat %a, %b {axis = 1 : i64} : (tensor<2x16x2x2xf32>, tensor<2x16x2x2xf32>) -> tensor<2x32x2x2xf32>
  %n = df.neg %c : (tensor<2x32x2x2xf32>) -> tensor<2x32x2x2xf32>
  func.return %n : tensor<2x32x2x2xf32>
}

// -----

// %b would start 48 bytes into the result, off the plan's 64-byte alignment.

// CHECK-LABEL: func.func @unaligned
// CHECK:         df.concat %a, %b {df.kernel = @concat_2,
func.func @unaligned(%x: tensor<1x3x2x2xf32>) -> tensor<1x6x2x2xf32> {
  %a = df.relu %x : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %b = df.exp %x : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = df.concat %a, %b {axis = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x6x2x2xf32>
  %n = df.neg %c : (tensor<1x6x2x2xf32>) -> tensor<1x6x2x2xf32>
  func.return %n : tensor<1x6x2x2xf32>
}

// -----

// A returned operand is written into an output array of its own on a CPU, so it
// cannot be written into the concatenation too.

// CHECK-LABEL: func.func @returned
// CHECK:         df.concat %a, %b {df.kernel = @concat_2,
func.func @returned(%x: tensor<1x16x2x2xf32>) -> (tensor<1x16x2x2xf32>, tensor<1x32x2x2xf32>) {
  %a = df.relu %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = df.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = df.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %n = df.neg %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %a, %n : tensor<1x16x2x2xf32>, tensor<1x32x2x2xf32>
}
