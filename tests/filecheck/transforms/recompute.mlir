// RUN: xdsl-opt %s --split-input-file -p 'df-recompute' | filecheck %s --check-prefix=HINTS
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic}' | filecheck %s --check-prefix=HEUR
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic},cse' | filecheck %s --check-prefix=HEUR
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=budget budget=12352}' | filecheck %s --check-prefix=BUDGET
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=budget budget=12352 stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: xdsl-opt %s --split-input-file -p 'df-recompute{mode=heuristic stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=HSTATS

// Backward ops (the targets) carry df.backward. Hint mode follows Grappler: %a and
// %b are hinted and feed a target, %c is hinted but feeds only the forward loss.
// The group grows from %b over hinted neighbours to {%a, %b, %c}, then keeps what
// feeds a target: %b and its input %a. The clones go before the first target that
// reads them (%g1) and every target reads the clones. %m (a matmul, no hint) stays.

// HINTS-LABEL: func.func @grappler_group(
// HINTS:         %[[A:.*]] = df.exp %{{.*}} {df.recompute}
// HINTS-NEXT:    %[[B:.*]] = df.tanh %[[A]] {df.recompute}
// HINTS-NEXT:    %[[C:.*]] = df.neg %[[A]] {df.recompute}
// HINTS-NEXT:    %[[M:.*]] = df.matmul %[[B]], %{{.*}} :
// HINTS-NEXT:    %[[S:.*]] = df.reduce_sum %[[M]]
// HINTS-NEXT:    %[[L:.*]] = df.add %[[S]], %{{.*}} :
// HINTS-NEXT:    %[[D:.*]] = df.matmul %{{.*}}, %{{.*}} {df.backward, transpose_b = true}
// HINTS-NEXT:    %[[A2:.*]] = df.exp %{{.*}} {df.recompute, df.recomputed = "grappler_group.r0"}
// HINTS-NEXT:    %[[B2:.*]] = df.tanh %[[A2]] {df.recompute, df.recomputed = "grappler_group.r0"}
// HINTS-NEXT:    %[[G1:.*]] = df.mul %[[D]], %[[B2]] {df.backward}
// HINTS-NEXT:    %[[G2:.*]] = df.mul %[[G1]], %[[B2]] {df.backward}
// HINTS-NEXT:    %[[G3:.*]] = df.mul %[[G2]], %[[M]] {df.backward}
// HINTS-NEXT:    func.return %[[L]], %[[G3]]

// Heuristic mode makes the same group of cheap ops without hints (%a, %b; not the
// matmul %m or the reduction), but keeps a group only where it lowers the planner's
// peak bound in df-schedule's order: this one leaves it at 512 bytes, so the function
// is unchanged (@cheap_ops below works such a case out by hand).

// HEUR-LABEL: func.func @grappler_group(
// HEUR-NOT:     df.recomputed
// HEUR:         func.return

// BUDGET-LABEL: func.func @grappler_group(
// BUDGET-NOT:   df.recomputed
// BUDGET:       func.return
func.func @grappler_group(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = df.exp %x {df.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.tanh %a {df.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.neg %a {df.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.matmul %b, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = df.reduce_sum %m : (tensor<4x8xf32>) -> tensor<f32>
  %l = df.add %s, %c : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = df.matmul %dy, %w {df.backward, transpose_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g1 = df.mul %d, %b {df.backward} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = df.mul %g1, %b {df.backward} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g3 = df.mul %g2, %m {df.backward} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %l, %g3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Two disconnected hinted groups: each is cloned before its own first target
// (r0 before %g0, r1 before %g1). A hinted op that depends on a backward op (%late)
// is never a candidate, nor is a constant, nor a received value (an effect).

// HINTS-LABEL: func.func @two_groups(
// HINTS:         %[[R:.*]] = df.recv {{.*}}df.recompute
// HINTS:         df.mul {{.*}}{df.backward}
// HINTS-NEXT:    %[[P2:.*]] = df.sqrt %{{.*}} {df.recompute, df.recomputed = "two_groups.r0"}
// HINTS-NEXT:    %[[G0:.*]] = df.mul %{{.*}}, %[[P2]] {df.backward}
// HINTS-NEXT:    %[[LATE:.*]] = df.exp %[[G0]] {df.recompute}
// HINTS-NEXT:    %[[Q2:.*]] = df.abs %{{.*}} {df.recompute, df.recomputed = "two_groups.r1"}
// HINTS-NEXT:    %[[G1:.*]] = df.mul %[[LATE]], %[[Q2]] {df.backward}
// HINTS-NEXT:    %[[G2:.*]] = df.mul %[[G1]], %[[LATE]] {df.backward}
// HINTS-NEXT:    %[[G3:.*]] = df.mul %[[G2]], %[[R]] {df.backward}
// HINTS-NEXT:    %[[G4:.*]] = df.mul %[[G3]], %{{.*}} {df.backward}
// HINTS-NEXT:    func.return
func.func @two_groups(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = df.sqrt %x {df.recompute} : (tensor<8xf32>) -> tensor<8xf32>
  %q = df.abs %y {df.recompute} : (tensor<8xf32>) -> tensor<8xf32>
  %r = df.recv {key = "k0", from = "cpu:1", to = "cpu:0", df.recompute} : () -> tensor<8xf32>
  %k = df.constant {df.recompute} dense<2.0> : tensor<8xf32>
  %f = df.add %p, %q : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %seed = df.mul %f, %f {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g0 = df.mul %seed, %p {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %late = df.exp %g0 {df.recompute} : (tensor<8xf32>) -> tensor<8xf32>
  %g1 = df.mul %late, %q {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g2 = df.mul %g1, %late {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g3 = df.mul %g2, %r {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g4 = df.mul %g3, %k {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %f, %g4 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Heuristic mode: relu and the bias add are cheap, the matmul and the reduction are
// not. The backward reads %h (relu) and %s (reduction), so Grappler's group is
// {%hb, %h}, recomputed from the kept matmul result %z. No recomputation lowers the
// peak, so the function is left exactly as written and the statistics say so: the
// 4x8xf32 values take 128 bytes, the scalar %s 64 (a block). As written, %hb and %h
// go in place over %z, then %s (returned: live to the end) joins %h, and %g goes in
// place over %h: 128 + 64 = 192 bytes at most. With the group recomputed, %z must
// stay live until its clone reads it, and %s too: at the clones 128 + 64 bytes again
// (each clone in place over its input), and at %g the same: still 192.

// HINTS-LABEL: func.func @cheap_ops(
// HINTS-NOT:   df.recomputed
// HINTS:       func.return

// HEUR-LABEL: func.func @cheap_ops(
// HEUR-NEXT:    %[[Z:.*]] = df.matmul %{{.*}}, %{{.*}} :
// HEUR-NEXT:    %[[HB:.*]] = df.add %[[Z]], %{{.*}} :
// HEUR-NEXT:    %[[H:.*]] = df.relu %[[HB]] :
// HEUR-NEXT:    %[[S:.*]] = df.reduce_sum %[[H]]
// HEUR-NEXT:    %[[G:.*]] = df.mul %[[H]], %[[S]] {df.backward}
// HEUR-NEXT:    func.return %[[S]], %[[G]]

// HSTATS: df-recompute: @cheap_ops: peak 192 -> 192 bytes; 0 ops recomputed (heuristic: none of 1 group lowers the peak bound of 192 bytes in df-schedule's order; function unchanged), +0 flops = 0.0% of the forward pass
func.func @cheap_ops(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = df.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %hb = df.add %z, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %h = df.relu %hb : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.reduce_sum %h : (tensor<4x8xf32>) -> tensor<f32>
  %g = df.mul %h, %s {df.backward} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %s, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// Heuristic mode takes data movement as cheap too (reshape, transpose, broadcast_to:
// one pass over their data) but not softmax, which reduces along an axis: the three
// make one group, read by the backward ops. It does not lower the peak bound (512
// bytes either way), so the function is unchanged; recompute_heuristic.mlir keeps a
// broadcast.

// HINTS-LABEL: func.func @cheap_shapes(
// HINTS-NOT:   df.recomputed
// HINTS:       func.return

// HEUR-LABEL: func.func @cheap_shapes(
// HEUR-NOT:     df.recomputed
// HEUR:         func.return
func.func @cheap_shapes(%x: tensor<4x8xf32>) -> (tensor<2x8x4xf32>, tensor<4x8xf32>) {
  %r = df.reshape %x : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %t = df.transpose %r {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %b = df.broadcast_to %r : (tensor<8x4xf32>) -> tensor<2x8x4xf32>
  %s = df.softmax %t : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %gb = df.neg %b {df.backward} : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %gs = df.mul %s, %t {df.backward} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %gb, %gs : tensor<2x8x4xf32>, tensor<4x8xf32>
}

// -----

// Budget mode on a chain of four 4 KiB values kept for the backward pass. Without
// recomputation all four are live at the loss: 4 * 4096 + 64 (the loss) = 16448
// bytes. Within 12352 bytes the cheapest plan recomputes only %b (a neg: 1024 flops,
// against 8192 for an exp) just before %g1, its only backward reader: %b then dies
// at %c, and the clone lives from after %g2 to %g1. The forward pass costs
// 3 * 8192 (exp) + 1024 (neg) + 1024 (reduce_sum) = 26624 flops: 1024 is 3.8%.

// REPORT: df-recompute: @chain: peak 16448 -> 12352 bytes; 1 op recomputed ({{.*}}), +1024 flops = 3.8% of the forward pass
// BUDGET-LABEL: func.func @chain(
// BUDGET:         %[[A:.*]] = df.exp %{{.*}} :
// BUDGET-NEXT:    %[[B:.*]] = df.neg %[[A]] :
// BUDGET:         df.mul %{{.*}}, %{{.*}} {df.backward}
// BUDGET-NEXT:    %[[G2:.*]] = df.mul %{{.*}}, %{{.*}} {df.backward}
// BUDGET-NEXT:    %[[B2:.*]] = df.neg %[[A]] {df.recomputed = "chain.r0"}
// BUDGET-NEXT:    %[[G1:.*]] = df.mul %[[G2]], %[[B2]] {df.backward}
// BUDGET-NEXT:    %{{.*}} = df.mul %[[G1]], %[[A]] {df.backward}
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

// Hand-written order: %b comes after the target %t1 (its input %y too). A clone
// must come after its inputs, so only targets after the group's last op (%b) read
// clones: the group {%a, %b} is cloned before %t2, and %t1 keeps reading %a.

// HINTS-LABEL: func.func @late_group(
// HINTS:         %[[A:.*]] = df.exp %{{.*}} {df.recompute}
// HINTS-NEXT:    %[[T1:.*]] = df.mul %{{.*}}, %[[A]] {df.backward}
// HINTS-NEXT:    %[[Y:.*]] = df.neg
// HINTS-NEXT:    %[[B:.*]] = df.tanh %[[Y]] {df.recompute}
// HINTS-NEXT:    %[[C:.*]] = df.add %[[A]], %[[B]] {df.recompute}
// HINTS-NEXT:    %[[A2:.*]] = df.exp %{{.*}} {df.recompute, df.recomputed = "late_group.r0"}
// HINTS-NEXT:    %[[B2:.*]] = df.tanh %[[Y]] {df.recompute, df.recomputed = "late_group.r0"}
// HINTS-NEXT:    %[[T2:.*]] = df.mul %[[T1]], %[[B2]] {df.backward}
// HINTS-NEXT:    %[[T3:.*]] = df.mul %[[T2]], %[[A2]] {df.backward}
func.func @late_group(%x: tensor<8xf32>, %dy: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = df.exp %x {df.recompute} : (tensor<8xf32>) -> tensor<8xf32>
  %t1 = df.mul %dy, %a {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = df.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  %b = df.tanh %y {df.recompute} : (tensor<8xf32>) -> tensor<8xf32>
  %c = df.add %a, %b {df.recompute} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t2 = df.mul %t1, %b {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t3 = df.mul %t2, %a {df.backward} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %c, %t3 : tensor<8xf32>, tensor<8xf32>
}

