// RUN: xdsl-opt %s --split-input-file -p df-bufferize,df-plan-buffers,df-collapse-loops | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p 'df-bufferize,df-plan-buffers,df-collapse-loops{stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// A select with a scalar branch: the rank-0 load moves before the loop, and the
// nest over three buffers of the loop's shape becomes one loop over 32 elements.

// CHECK-LABEL: func.func private @select_0
// CHECK-SAME:      (%[[M:.*]]: memref<4x8xi1>, %[[A:.*]]: memref<4x8xf32>, %[[Z:.*]]: memref<f32>, %[[R:.*]]: memref<4x8xf32>)
// CHECK-NOT:     arith.constant
// CHECK:         %[[S:.*]] = memref.load %[[Z]][] : memref<f32>
// CHECK-NEXT:    %[[FM:.*]] = memref.collapse_shape %[[M]] {{\[\[}}0 : i64, 1 : i64]] : memref<4x8xi1> into memref<32xi1>
// CHECK-NEXT:    %[[FA:.*]] = memref.collapse_shape %[[A]] {{\[\[}}0 : i64, 1 : i64]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT:    %[[FR:.*]] = memref.collapse_shape %[[R]] {{\[\[}}0 : i64, 1 : i64]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%[[LO]], %[[HI]], %[[STEP]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index):
// CHECK-NEXT:      %[[C:.*]] = memref.load %[[FM]][%[[I]]] : memref<32xi1>
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[FA]][%[[I]]] : memref<32xf32>
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[C]], %[[V]], %[[S]] : f32
// CHECK-NEXT:      memref.store %[[W]], %[[FR]][%[[I]]] : memref<32xf32>
// CHECK-NEXT:      scf.reduce
// STATS:       df-collapse-loops: 2 rewrites
// STATS-NEXT:    CollapseContiguousParallel: 1
// STATS-NEXT:    HoistInvariantLoad: 1
func.func @select_scalar(%m: tensor<4x8xi1>, %a: tensor<4x8xf32>, %z: tensor<f32>) -> tensor<4x8xf32> {
  %r = df.select %m, %a, %z : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// A broadcast operand is read at an index of its own (a column of the row): the
// nest stays as it is.

// CHECK-LABEL: func.func private @add_0
// CHECK-NOT:     memref.collapse_shape
// CHECK:         "scf.parallel"({{.*}}) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}>
// CHECK:           memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK:           memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// STATS:       df-collapse-loops: 0 rewrites
func.func @broadcast_row(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = df.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// A loop of one dimension has nothing to collapse.

// CHECK-LABEL: func.func private @exp_0
// CHECK-NOT:     memref.collapse_shape
// CHECK:         "scf.parallel"({{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index):
// CHECK-NEXT:      memref.load %{{.*}}[%[[I]]] : memref<16xf32>
// STATS:       df-collapse-loops: 0 rewrites
func.func @rank_one(%a: tensor<16xf32>) -> tensor<16xf32> {
  %r = df.exp %a : (tensor<16xf32>) -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}

// -----

// A reduction's loops carry its accumulator through an `scf.for` indexed by its
// own induction variable: not collapsed.

// CHECK-LABEL: func.func private @reduce_sum_0
// CHECK-NOT:     memref.collapse_shape
// CHECK:         scf.for
// STATS:       df-collapse-loops: 0 rewrites
func.func @row_sums(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = df.reduce_sum %a {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A GPU kernel is left alone: each iteration of its loop is a thread, and a load
// before the loop would run on the host.

// CHECK-LABEL: func.func private @select_0
// CHECK-NOT:     memref.collapse_shape
// CHECK:         "scf.parallel"({{.*}}) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}>
// CHECK:           memref.load %{{.*}}[] : memref<f32>
// STATS:       df-collapse-loops: 0 rewrites
builtin.module {
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @on_gpu(%m: tensor<4x8xi1>, %a: tensor<4x8xf32>, %z: tensor<f32>) -> tensor<4x8xf32> attributes {df.arguments = array<i64: 0, 1, 2>, df.results = array<i64: 0>, df.function_type = (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>} {
      %r = df.select %m, %a, %z {df.device = "gpu:0"} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
      func.return %r : tensor<4x8xf32>
    }
  }
}
