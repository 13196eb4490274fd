// RUN: xdsl-opt %s --split-input-file -p df-optimize | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p 'df-optimize{max-iterations=1}' | filecheck %s --check-prefix=ONCE
// RUN: xdsl-opt %s --split-input-file -p 'df-optimize{fastmath=true}' | filecheck %s --check-prefix=FAST
// RUN: xdsl-opt %s --split-input-file -p 'df-optimize{max-bytes=8}' | filecheck %s --check-prefix=SMALL
// RUN: xdsl-opt %s --split-input-file -p 'df-optimize{stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// df-optimize: folding, the arithmetic rewrites, cse and dead-op removal,
// repeated until a round changes nothing.
//
// Round 1: x*0.25 + x*0.75 = x*(0.25 + 0.75) (HoistCommonFactor); the new
// sum of constants folds to 1; x*1 = x. Now exp(s) is exp(x), a duplicate,
// and abs(i) is duplicated from the start: cse merges both pairs.
// Round 2: exp(x)*exp(x) is e*e = square(e); abs(i) - abs(i) on integers is
// a - a = 0; 0 * 5 folds to 0; 0 + i = i. Round 3 changes nothing.

// STATS:      df-optimize: 9 rewrites; ops 15 -> 3 (-12); constant bytes 12 -> 0 (-12)
// STATS-NEXT:   CommonSubexpressions: 2
// STATS-NEXT:   FoldConstantOperands: 2
// STATS-NEXT:   HoistCommonFactor: 1
// STATS-NEXT:   MulSelfToSquare: 1
// STATS-NEXT:   RemoveAddZero: 1
// STATS-NEXT:   RemoveMulByOne: 1
// STATS-NEXT:   SubSelfToZero: 1
// STATS-NEXT:   (rounds: 3)
// STATS-NEXT: df-optimize:

// CHECK-LABEL: func.func @fixed_point(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.square %[[E]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[P]], %[[I]] : tensor<4xf32>, tensor<4xi32>

// After one round: the products are gone and the duplicates merged, but
// what cse exposed is not rewritten yet.

// ONCE-LABEL: func.func @fixed_point(
// ONCE-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// ONCE-NEXT:    %[[C5:.*]] = df.constant dense<5> : tensor<i32>
// ONCE-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// ONCE-NEXT:    %[[P:.*]] = df.mul %[[E]], %[[E]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// ONCE-NEXT:    %[[A:.*]] = df.abs %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
// ONCE-NEXT:    %[[Z:.*]] = df.sub %[[A]], %[[A]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// ONCE-NEXT:    %[[W:.*]] = df.mul %[[Z]], %[[C5]] : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// ONCE-NEXT:    %[[V:.*]] = df.add %[[W]], %[[I]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// ONCE-NEXT:    func.return %[[P]], %[[V]] : tensor<4xf32>, tensor<4xi32>
func.func @fixed_point(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %q = df.constant dense<0.25> : tensor<f32>
  %t = df.constant dense<0.75> : tensor<f32>
  %c5 = df.constant dense<5> : tensor<i32>
  %xq = df.mul %x, %q : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %xt = df.mul %x, %t : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s = df.add %xq, %xt : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e1 = df.exp %s : (tensor<4xf32>) -> tensor<4xf32>
  %e2 = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %p = df.mul %e1, %e2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a1 = df.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  %a2 = df.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  %z = df.sub %a1, %a2 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %w = df.mul %z, %c5 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %v = df.add %w, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %p, %v : tensor<4xf32>, tensor<4xi32>
}

// -----

// The options of the two passes it runs. x - x on floats needs fastmath (then
// 0 + e = e). concat([1, 2], [1, 2]) = [1, 2, 1, 2] adds 16 bytes and frees
// 8: under max-bytes=8 it is not folded. Identities go, as in df-prune.

// CHECK-LABEL: func.func @options(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Z:.*]] = df.sub %[[X]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.add %[[Z]], %[[E]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[W]] : tensor<4xf32>, tensor<4xf32>

// FAST-LABEL: func.func @options(
// FAST-SAME:      %[[X:.*]]: tensor<4xf32>)
// FAST-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// FAST-NEXT:    %[[W:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<4xf32>
// FAST-NEXT:    func.return %[[E]], %[[W]] : tensor<4xf32>, tensor<4xf32>

// SMALL-LABEL: func.func @options(
// SMALL-SAME:      %[[X:.*]]: tensor<4xf32>)
// SMALL-NEXT:    %[[V:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// SMALL-NEXT:    %[[Z:.*]] = df.sub %[[X]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// SMALL-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// SMALL-NEXT:    %[[R:.*]] = df.add %[[Z]], %[[E]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// SMALL-NEXT:    %[[W:.*]] = df.concat %[[V]], %[[V]] {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
// SMALL-NEXT:    func.return %[[R]], %[[W]] : tensor<4xf32>, tensor<4xf32>
func.func @options(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %v = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %z = df.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %i = df.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.exp %i : (tensor<4xf32>) -> tensor<4xf32>
  %r = df.add %z, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = df.concat %v, %v {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %r, %w : tensor<4xf32>, tensor<4xf32>
}
