// RUN: xdsl-opt %s --split-input-file -p canonicalize | filecheck %s

// Upstream `canonicalize` on df: each op folds when its operands are constants
// (through its reference semantics, under the size policy of
// dialects/df/folding.py) and applies the dialect's canonical forms
// (dialects/df/canonicalization.py), each of which holds bit for bit. Each
// canonical form has a case where it fires and one where it must not.

// EraseIdentity: identity(x) = x, also when it is on the device of its
// producer.

// CHECK-LABEL: func.func @erase_identity(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<2xi1>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[E]], %[[B]] : tensor<4xf32>, tensor<4xf32>, tensor<2xi1>
func.func @erase_identity(%x: tensor<4xf32>, %b: tensor<2xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xi1>) {
  %i = df.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  %j = df.identity %i : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %k = df.identity %e {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %l = df.identity %b : (tensor<2xi1>) -> tensor<2xi1>
  func.return %j, %k, %l : tensor<4xf32>, tensor<4xf32>, tensor<2xi1>
}

// Not: an identity that pins a copy onto another device than its producer's
// (cpu:0 -> gpu:0), than an unplaced producer's, or than a function argument's.

// CHECK-LABEL: func.func @identity_pins_device(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[I:.*]] = df.identity %[[E]] {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.tanh %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[J:.*]] = df.identity %[[T]] {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[K:.*]] = df.identity %[[X]] {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[I]], %[[J]], %[[K]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @identity_pins_device(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %i = df.identity %e {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %t = df.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  %j = df.identity %t {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %k = df.identity %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %i, %j, %k : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CancelDoubleNegation: neg(neg(x)) = x; four negations cancel in pairs.

// CHECK-LABEL: func.func @double_negation(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK-NEXT:    func.return %[[X]], %[[I]] : tensor<4xf32>, tensor<2xi32>
func.func @double_negation(%x: tensor<4xf32>, %i: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.neg %b : (tensor<4xf32>) -> tensor<4xf32>
  %d = df.neg %c : (tensor<4xf32>) -> tensor<4xf32>
  %j = df.neg %i : (tensor<2xi32>) -> tensor<2xi32>
  %k = df.neg %j : (tensor<2xi32>) -> tensor<2xi32>
  func.return %d, %k : tensor<4xf32>, tensor<2xi32>
}

// Not: an op between the two negations; three negations leave one.

// CHECK-LABEL: func.func @double_negation_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.neg %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.neg %[[R]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.neg %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[B]], %[[E]] : tensor<4xf32>, tensor<4xf32>
func.func @double_negation_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = df.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %r : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %d = df.neg %c : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.neg %d : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %e : tensor<4xf32>, tensor<4xf32>
}

// -----

// reciprocal(reciprocal(x)) is not a canonical form: 1/(1/x) may differ from x in
// the last bit, and canonical forms are exact (df-simplify-arith does it).

// CHECK-LABEL: func.func @double_reciprocal(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NEXT:    %[[A:.*]] = df.reciprocal %[[X]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[B:.*]] = df.reciprocal %[[A]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    func.return %[[B]] : tensor<2x2xf64>
func.func @double_reciprocal(%x: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %a = df.reciprocal %x : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %b = df.reciprocal %a : (tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %b : tensor<2x2xf64>
}

// Not: reciprocal(sqrt(x)) (no rsqrt among the canonical forms), and
// reciprocal(neg(reciprocal(x))).

// CHECK-LABEL: func.func @double_reciprocal_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NEXT:    %[[S:.*]] = df.sqrt %[[X]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[A:.*]] = df.reciprocal %[[S]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[R:.*]] = df.reciprocal %[[X]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[R]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[B:.*]] = df.reciprocal %[[N]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<2x2xf64>, tensor<2x2xf64>
func.func @double_reciprocal_kept(%x: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %s = df.sqrt %x : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %a = df.reciprocal %s : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %r = df.reciprocal %x : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %n = df.neg %r : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %b = df.reciprocal %n : (tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %a, %b : tensor<2x2xf64>, tensor<2x2xf64>
}

// -----

// CollapseRepeatedRelu: relu(relu(x)) = relu(x), relu(relu(relu(x))) too.

// CHECK-LABEL: func.func @repeated_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[R]] : tensor<4xf32>, tensor<4xf32>
func.func @repeated_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.relu %b : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}

// Not: relu(neg(relu(x))).

// CHECK-LABEL: func.func @repeated_relu_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.relu %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.relu %[[N]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[B]] : tensor<4xf32>
func.func @repeated_relu_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.relu %n : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// -----

// CollapseRepeatedAbs: abs(abs(x)) = abs(x).

// CHECK-LABEL: func.func @repeated_abs(
// CHECK-SAME:      %[[I:.*]]: tensor<3xi64>)
// CHECK-NEXT:    %[[A:.*]] = df.abs %[[I]] : (tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    func.return %[[A]] : tensor<3xi64>
func.func @repeated_abs(%i: tensor<3xi64>) -> tensor<3xi64> {
  %a = df.abs %i : (tensor<3xi64>) -> tensor<3xi64>
  %b = df.abs %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %b : tensor<3xi64>
}

// Not: abs(relu(x)) (also equal to relu(x), but not a canonical form).

// CHECK-LABEL: func.func @repeated_abs_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[X]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[A:.*]] = df.abs %[[R]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<3xf32>
func.func @repeated_abs_kept(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = df.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  %a = df.abs %r : (tensor<3xf32>) -> tensor<3xf32>
  func.return %a : tensor<3xf32>
}

// -----

// DropNegationUnderEvenFunction: abs(neg(x)) = abs(x), square(neg(x)) =
// square(x); a negation with another use stays for it; annotations are kept.

// CHECK-LABEL: func.func @even_of_negation(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK-NEXT:    %[[A:.*]] = df.abs %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[I]] : (tensor<2xi32>) -> tensor<2xi32>
// CHECK-NEXT:    %[[S:.*]] = df.square %[[I]] {df.device = "gpu:0"} : (tensor<2xi32>) -> tensor<2xi32>
// CHECK-NEXT:    func.return %[[A]], %[[S]], %[[N]] : tensor<4xf32>, tensor<2xi32>, tensor<2xi32>
func.func @even_of_negation(%x: tensor<4xf32>, %i: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>, tensor<2xi32>) {
  %n = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.abs %n : (tensor<4xf32>) -> tensor<4xf32>
  %m = df.neg %i : (tensor<2xi32>) -> tensor<2xi32>
  %s = df.square %m {df.device = "gpu:0"} : (tensor<2xi32>) -> tensor<2xi32>
  func.return %a, %s, %m : tensor<4xf32>, tensor<2xi32>, tensor<2xi32>
}

// Not: neg(square(x)) and relu(neg(x)) (relu is not even).

// CHECK-LABEL: func.func @even_of_negation_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = df.square %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = df.neg %[[S]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.relu %[[N]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
func.func @even_of_negation_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = df.square %x : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.neg %s : (tensor<4xf32>) -> tensor<4xf32>
  %n = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.relu %n : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// ComposeTransposes: transpose(transpose(x, p), q) = transpose(x, r) with
// r[i] = p[q[i]]: p = q = [1, 2, 0] gives r = [2, 0, 1] (2x3x4 -> 3x4x2 ->
// 4x2x3); p = [1, 2, 0], q = [2, 0, 1] gives the identity, so x. The outer
// transpose's annotations are kept.

// CHECK-LABEL: func.func @compose_transposes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[X]] {df.device = "gpu:1", perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]], %[[X]] : tensor<4x2x3xf32>, tensor<2x3x4xf32>
func.func @compose_transposes(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = df.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = df.transpose %a {df.device = "gpu:1", perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  %c = df.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// Not: a transpose of a reshape.

// CHECK-LABEL: func.func @compose_transposes_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<6x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.reshape %[[X]] : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[R]] {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<6x4xf32>
func.func @compose_transposes_kept(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %r = df.reshape %x : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %t = df.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  func.return %t : tensor<6x4xf32>
}

// -----

// RemoveIdentityTranspose: transpose(x, [0, 1, 2]) = x.

// CHECK-LABEL: func.func @identity_transpose(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xi32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3x4xi32>
func.func @identity_transpose(%x: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  %t = df.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xi32>) -> tensor<2x3x4xi32>
  func.return %t : tensor<2x3x4xi32>
}

// Not: [1, 0] on a square matrix keeps the type but moves elements.

// CHECK-LABEL: func.func @identity_transpose_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<3x3xf32>)
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<3x3xf32>
func.func @identity_transpose_kept(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %t = df.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %t : tensor<3x3xf32>
}

// -----

// ComposeReshapes: reshape(reshape(x)) = reshape(x) to the last shape; back to
// the original shape it is x (then RemoveNoopReshape).

// CHECK-LABEL: func.func @compose_reshapes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.reshape %[[X]] {df.recompute} : (tensor<2x6xf32>) -> tensor<12xf32>
// CHECK-NEXT:    func.return %[[R]], %[[X]] : tensor<12xf32>, tensor<2x6xf32>
func.func @compose_reshapes(%x: tensor<2x6xf32>) -> (tensor<12xf32>, tensor<2x6xf32>) {
  %a = df.reshape %x : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %b = df.reshape %a {df.recompute} : (tensor<3x4xf32>) -> tensor<12xf32>
  %c = df.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>
  %d = df.reshape %c : (tensor<12xf32>) -> tensor<4x3xf32>
  %e = df.reshape %d : (tensor<4x3xf32>) -> tensor<2x6xf32>
  func.return %b, %e : tensor<12xf32>, tensor<2x6xf32>
}

// Not: a reshape of a transpose (the order of the elements differs).

// CHECK-LABEL: func.func @compose_reshapes_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32>)
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<6x2xf32>
// CHECK-NEXT:    %[[R:.*]] = df.reshape %[[T]] : (tensor<6x2xf32>) -> tensor<12xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<12xf32>
func.func @compose_reshapes_kept(%x: tensor<2x6xf32>) -> tensor<12xf32> {
  %t = df.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<6x2xf32>
  %r = df.reshape %t : (tensor<6x2xf32>) -> tensor<12xf32>
  func.return %r : tensor<12xf32>
}

// -----

// ComposeBroadcasts: broadcast_to(broadcast_to(x, 3x4), 2x3x4) =
// broadcast_to(x, 2x3x4).

// CHECK-LABEL: func.func @compose_broadcasts(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = df.broadcast_to %[[X]] : (tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %[[B]] : tensor<2x3x4xf32>
func.func @compose_broadcasts(%x: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %a = df.broadcast_to %x : (tensor<4xf32>) -> tensor<3x4xf32>
  %b = df.broadcast_to %a : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// Not: a broadcast of a reshape.

// CHECK-LABEL: func.func @compose_broadcasts_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.reshape %[[X]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[B:.*]] = df.broadcast_to %[[R]] : (tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[B]] : tensor<4x3xf32>
func.func @compose_broadcasts_kept(%x: tensor<4xf32>) -> tensor<4x3xf32> {
  %r = df.reshape %x : (tensor<4xf32>) -> tensor<4x1xf32>
  %b = df.broadcast_to %r : (tensor<4x1xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// -----

// RemoveNoopReshape: reshape(x) = x when the result has x's type.

// CHECK-LABEL: func.func @noop_reshape(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3xf32>
func.func @noop_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = df.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// Not: 2x3 -> 3x2 (same elements, another type).

// CHECK-LABEL: func.func @noop_reshape_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<3x2xf32>
func.func @noop_reshape_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = df.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %a : tensor<3x2xf32>
}

// -----

// RemoveNoopBroadcast: broadcast_to(x) = x when the result has x's type.

// CHECK-LABEL: func.func @noop_broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xi64>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x3xi64>
func.func @noop_broadcast(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %a = df.broadcast_to %x : (tensor<2x3xi64>) -> tensor<2x3xi64>
  func.return %a : tensor<2x3xi64>
}

// Not: 1x3 -> 2x3.

// CHECK-LABEL: func.func @noop_broadcast_kept(
// CHECK-SAME:      %[[Y:.*]]: tensor<1x3xi64>)
// CHECK-NEXT:    %[[B:.*]] = df.broadcast_to %[[Y]] : (tensor<1x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:    func.return %[[B]] : tensor<2x3xi64>
func.func @noop_broadcast_kept(%y: tensor<1x3xi64>) -> tensor<2x3xi64> {
  %b = df.broadcast_to %y : (tensor<1x3xi64>) -> tensor<2x3xi64>
  func.return %b : tensor<2x3xi64>
}

// -----

// RemoveNoopCast: cast(x) = x when the element type does not change (f32 and
// i1 here).

// CHECK-LABEL: func.func @noop_cast(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<3xi1>)
// CHECK-NEXT:    func.return %[[X]], %[[I]] : tensor<2x3xf32>, tensor<3xi1>
func.func @noop_cast(%x: tensor<2x3xf32>, %i: tensor<3xi1>) -> (tensor<2x3xf32>, tensor<3xi1>) {
  %c = df.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = df.cast %i : (tensor<3xi1>) -> tensor<3xi1>
  func.return %c, %d : tensor<2x3xf32>, tensor<3xi1>
}

// Not: f32 -> i32 (truncates), f32 -> f64, and f32 -> i32 -> f32 (not x).

// CHECK-LABEL: func.func @noop_cast_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[C:.*]] = df.cast %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[D:.*]] = df.cast %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf64>
// CHECK-NEXT:    %[[E:.*]] = df.cast %[[C]] : (tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[C]], %[[D]], %[[E]] : tensor<2x3xi32>, tensor<2x3xf64>, tensor<2x3xf32>
func.func @noop_cast_kept(%x: tensor<2x3xf32>) -> (tensor<2x3xi32>, tensor<2x3xf64>, tensor<2x3xf32>) {
  %c = df.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %d = df.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf64>
  %e = df.cast %c : (tensor<2x3xi32>) -> tensor<2x3xf32>
  func.return %c, %d, %e : tensor<2x3xi32>, tensor<2x3xf64>, tensor<2x3xf32>
}

// -----

// canonicalize does not apply the arithmetic rewrites of df-simplify-arith:
// x * 1, x + 0 and x * x stay.

// CHECK-LABEL: func.func @no_arithmetic_rewrites(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ZERO:.*]] = df.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.add %[[A]], %[[ZERO]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.mul %[[B]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<4xf32>
func.func @no_arithmetic_rewrites(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = df.constant dense<1.0> : tensor<f32>
  %zero = df.constant dense<0.0> : tensor<f32>
  %a = df.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.add %a, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = df.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// Folding: ops whose operands are all constants become constants; the
// inputs die. [1, 2] + [3, 4] = [4, 6]; 2 * 3 = 6 stays a splat;
// [1, 2, 3] > 2 = [false, false, true]; neg(neg(c)) = c; a chain of shape ops.

// CHECK-LABEL: func.func @fold(
// CHECK-NEXT:    %[[A:.*]] = df.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = df.constant dense<6.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-NEXT:    %[[D:.*]] = df.constant dense<[1, -2]> : tensor<2xi64>
// CHECK-NEXT:    %[[E:.*]] = df.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]] : tensor<2xf32>, tensor<2x2xf32>, tensor<3xi1>, tensor<2xi64>, tensor<2x2xf32>
func.func @fold() -> (tensor<2xf32>, tensor<2x2xf32>, tensor<3xi1>, tensor<2xi64>, tensor<2x2xf32>) {
  %c12 = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c34 = df.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %a = df.add %c12, %c34 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %two = df.constant dense<2.0> : tensor<2x2xf32>
  %three = df.constant dense<3.0> : tensor<f32>
  %b = df.mul %two, %three : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %v = df.constant dense<[1, 2, 3]> : tensor<3xi32>
  %t = df.constant dense<2> : tensor<i32>
  %c = df.greater %v, %t : (tensor<3xi32>, tensor<i32>) -> tensor<3xi1>
  %i = df.constant dense<[1, -2]> : tensor<2xi64>
  %n = df.neg %i : (tensor<2xi64>) -> tensor<2xi64>
  %d = df.neg %n : (tensor<2xi64>) -> tensor<2xi64>
  %m = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = df.reshape %m : (tensor<4xf32>) -> tensor<2x2xf32>
  %e = df.transpose %r {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %a, %b, %c, %d, %e : tensor<2xf32>, tensor<2x2xf32>, tensor<3xi1>, tensor<2xi64>, tensor<2x2xf32>
}

// Folding stops at an operand that is not a constant (neg(c) folds, x + c
// does not); a broadcast that would grow a 16-byte constant into a 16 KiB one
// is not folded, one of a splat (which stays 4 bytes) and one to a small
// result are.

// CHECK-LABEL: func.func @fold_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.constant dense<[-1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[A:.*]] = df.add %[[X]], %[[N]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = df.broadcast_to %[[V]] : (tensor<4xf32>) -> tensor<1024x4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.constant dense<2.500000e+00> : tensor<1024x4xf32>
// CHECK-NEXT:    %[[Q:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[P]], %[[Q]], %[[C]] : tensor<2xf32>, tensor<1024x4xf32>, tensor<1024x4xf32>, tensor<2x2xf32>, tensor<2xf32>
func.func @fold_kept(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<1024x4xf32>, tensor<1024x4xf32>, tensor<2x2xf32>, tensor<2xf32>) {
  %c = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %h = df.constant dense<2.5> : tensor<f32>
  %n = df.neg %c : (tensor<2xf32>) -> tensor<2xf32>
  %a = df.add %x, %n : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = df.broadcast_to %v : (tensor<4xf32>) -> tensor<1024x4xf32>
  %p = df.broadcast_to %h : (tensor<f32>) -> tensor<1024x4xf32>
  %q = df.broadcast_to %c : (tensor<2xf32>) -> tensor<2x2xf32>
  func.return %a, %b, %p, %q, %c : tensor<2xf32>, tensor<1024x4xf32>, tensor<1024x4xf32>, tensor<2x2xf32>, tensor<2xf32>
}
