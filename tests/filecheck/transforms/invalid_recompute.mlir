// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-recompute{mode=budget budget=100}' | filecheck %s
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-recompute{mode=budget}' | filecheck %s --check-prefix=NOBUDGET
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-recompute{func=train}' | filecheck %s --check-prefix=NOFUNC

// Every error of df-recompute is one line. An infeasible budget names the smallest
// peak any plan reached, each judged in the order df-schedule would give it: here
// 12288 bytes, three 4 KiB values, by recomputing %d and %a. The clone of %d feeds
// the backward pass (%g3 over it in place, %g2 over %g3, %g1 over %g2), the clone
// of %a comes just before %g0 (which writes over it), and the original %d and the
// loss move to the end, where %d is written over %c: %b, %c and one more 4 KiB
// value at most are ever live, and the 64-byte loss only once %c is gone.

// CHECK: {{^}}df-recompute: @chain: no plan keeps the peak within 100 bytes; the smallest peak reached is 12288 bytes (exact: 2 ops recomputed){{$}}
// NOBUDGET: {{^}}df-recompute: mode=budget needs budget=BYTES (a positive number of bytes){{$}}
// NOFUNC: {{^}}df-recompute: no function @train{{$}}
func.func @chain(%x: tensor<1024xf32>, %dl: tensor<1024xf32>) -> (tensor<f32>, tensor<1024xf32>) {
  %a = df.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = df.neg %a : (tensor<1024xf32>) -> tensor<1024xf32>
  %c = df.exp %b : (tensor<1024xf32>) -> tensor<1024xf32>
  %d = df.exp %c : (tensor<1024xf32>) -> tensor<1024xf32>
  %l = df.reduce_sum %d : (tensor<1024xf32>) -> tensor<f32>
  %g3 = df.mul %dl, %d {df.backward} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %g2 = df.mul %g3, %c {df.backward} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %g1 = df.mul %g2, %b {df.backward} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %g0 = df.mul %g1, %a {df.backward} : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  func.return %l, %g0 : tensor<f32>, tensor<1024xf32>
}

// -----

// Nothing helps: %a (4 KiB) must exist when %g is computed, in place over it,
// whatever is recomputed, so the smallest peak is the plain one.

// CHECK: {{^}}df-recompute: @flat: no plan keeps the peak within 100 bytes; the smallest peak reached is 4096 bytes (recomputing nothing){{$}}
func.func @flat(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = df.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %g = df.neg %a {df.backward} : (tensor<1024xf32>) -> tensor<1024xf32>
  func.return %g : tensor<1024xf32>
}

// -----

// A function the planner cannot plan (a call) has no peak to meet.

// CHECK: {{^}}df-recompute: mode=budget: @caller holds func.call: only df ops are planned (a callee would need its own part of the arena){{$}}
func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %g = df.neg %y {df.backward} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}
