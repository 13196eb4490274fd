// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic}' | filecheck %s --check-prefix=HEUR
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic},cse' | filecheck %s --check-prefix=HEUR
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute' | filecheck %s --check-prefix=HINTS
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=HSTATS

// df-recompute{mode=heuristic} keeps a group of cheap ops only where it lowers the
// planner's peak bound in df-schedule's order (recompute.mlir's @cheap_ops: a group
// that does not, and the function left unchanged).

// Heuristic mode keeps a group that lowers the peak and drops one that does not. A
// 8x1024xf32 value takes V = 32768 bytes, a scalar or a 16xf32 one 64. The backward
// reads %b (a broadcast: cheap), %q (a softmax: not cheap, so kept) and %n (a neg:
// cheap). As written, and in any order, %b and %q are live from the forward sum %p
// to the end of the backward, so when %e is computed %b, %q, %s (returned), %d and %e
// are live: 3V + 2 * 64 = 98432 bytes (df-schedule's bound; as written %n adds 64).
// Recomputing %b just before %g, its first backward reader, lets it die at %p (which
// goes over it in place): at %e only %q, %s, %d and %e, 2V + 128 = 65664 bytes; at the
// clone %q, %s, %e and %b's clone, the same (%d is gone). Recomputing %n saves
// nothing: its only reader is the backward %h, so df-schedule computes it just before
// %h anyway. So 1 of 2 groups is kept, +0 flops (a broadcast does no arithmetic), and
// the function is left in df-schedule's order, the one judged: %q first, %n moved
// next to %h.

// HINTS-LABEL: func.func @wide(
// HINTS-NOT:   df.recomputed
// HINTS:       func.return

// HEUR-LABEL: func.func @wide(
// HEUR-NEXT:    %[[Q:.*]] = df.softmax %z :
// HEUR-NEXT:    %[[B:.*]] = df.broadcast_to %x :
// HEUR-NEXT:    %[[P:.*]] = df.add %[[B]], %[[Q]] :
// HEUR-NEXT:    %[[S:.*]] = df.reduce_sum %[[P]] :
// HEUR-NEXT:    %[[D:.*]] = df.mul %dy, %[[S]] {df.backward}
// HEUR-NEXT:    %[[E:.*]] = df.reduce_sum %[[D]] {df.backward}
// HEUR-NEXT:    %[[B2:.*]] = df.broadcast_to %x {df.recomputed = "wide.r0"}
// HEUR-NEXT:    %[[G:.*]] = df.mul %[[B2]], %[[E]] {df.backward}
// HEUR-NEXT:    %[[K:.*]] = df.mul %[[G]], %[[Q]] {df.backward}
// HEUR-NEXT:    %[[N:.*]] = df.neg %y :
// HEUR-NEXT:    %[[H:.*]] = df.mul %[[N]], %[[E]] {df.backward}
// HEUR-NEXT:    func.return %[[S]], %[[K]], %[[H]]

// HSTATS: df-recompute: @wide: peak 98496 -> 65664 bytes; 1 op recomputed (heuristic: 1 of 2 groups kept, the peak bound 98432 -> 65664 bytes in df-schedule's order), +0 flops = 0.0% of the forward pass
func.func @wide(%x: tensor<1024xf32>, %y: tensor<16xf32>, %z: tensor<8x1024xf32>, %dy: tensor<8x1024xf32>) -> (tensor<f32>, tensor<8x1024xf32>, tensor<16xf32>) {
  %b = df.broadcast_to %x : (tensor<1024xf32>) -> tensor<8x1024xf32>
  %q = df.softmax %z : (tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %p = df.add %b, %q : (tensor<8x1024xf32>, tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %s = df.reduce_sum %p : (tensor<8x1024xf32>) -> tensor<f32>
  %n = df.neg %y : (tensor<16xf32>) -> tensor<16xf32>
  %d = df.mul %dy, %s {df.backward} : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8x1024xf32>
  %e = df.reduce_sum %d {df.backward} : (tensor<8x1024xf32>) -> tensor<f32>
  %g = df.mul %b, %e {df.backward} : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8x1024xf32>
  %h = df.mul %n, %e {df.backward} : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %k = df.mul %g, %q {df.backward} : (tensor<8x1024xf32>, tensor<8x1024xf32>) -> tensor<8x1024xf32>
  func.return %s, %k, %h : tensor<f32>, tensor<8x1024xf32>, tensor<16xf32>
}
