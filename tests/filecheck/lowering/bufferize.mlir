// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-bufferize | filecheck %s

// df-bufferize outlines every fusion group and computing op into a private
// kernel over memrefs (unit attribute df.kernel), inputs then results; the graph
// op stays and names its kernel in df.kernel = @name. A kernel says which ops it
// computes (df.source) and the cost model's flops and bytes for it (df.work: its
// inputs and outputs only), each figure below counted by hand. Library routines are
// declared once per module, before the kernels. A kernel's index constants are
// made once, at its start (checked in any order: the order is not the point).

// An elementwise group with broadcasting and two results: one scf.parallel
// over the result shape; the 4x1 operand is read at the constant index 0 on its
// size-1 axis, the 8 operand at the inner index only; the splat constant is a
// scalar; both results are computed before either is stored.

// CHECK-LABEL: func.func @elementwise(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = df.fused(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) {df.kernel = @fused_add_0, kind = "elementwise", name = "fused_add_0"}
// CHECK-NOT:   func.func private @dflow_
// CHECK-LABEL: func.func private @fused_add_0(
// CHECK-SAME:      %[[X:.*]]: memref<4x1xf32>, %[[Y:.*]]: memref<8xf32>, %[[C:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<4x8xf32>) attributes {df.kernel, df.source = ["df.add", "df.constant", "df.mul", "df.exp", "df.neg"], df.work = array<i64: 352, 304>} {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"(%[[ZERO]], %[[ZERO]], %[[FOUR]], %[[EIGHT]], %[[ONE]], %[[ONE]]) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[XV:.*]] = memref.load %[[X]][%[[I]], %[[ZERO]]] : memref<4x1xf32>
// CHECK-NEXT:      %[[YV:.*]] = memref.load %[[Y]][%[[J]]] : memref<8xf32>
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[XV]], %[[YV]] : f32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[B:.*]] = arith.mulf %[[A]], %[[TWO]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[B]] : f32
// CHECK-NEXT:      memref.store %[[E]], %[[C]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:      memref.store %[[N]], %[[D]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @elementwise(%x: tensor<4x1xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c, %d = df.fused(%0 = %x, %1 = %y) {kind = "elementwise", name = "fused_add_0"} : (tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %a = df.add %0, %1 : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %two = df.constant dense<2.0> : tensor<f32>
    %b = df.mul %a, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %c_1 = df.exp %b : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %d_1 = df.neg %b : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %c_1, %d_1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %c, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// matmul + bias + relu: the library call writes into the result buffer (cast
// to unranked memrefs, the transpose flags after them), then the epilogue nest
// reads it back, adds the broadcast bias and stores relu in place.

// CHECK-LABEL: func.func @mlp(
// CHECK-NEXT:    %{{.*}} = df.fused({{.*}}) {df.kernel = @fused_matmul_0, kind = "contraction", name = "fused_matmul_0"}
// CHECK:       func.func private @dflow_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
// CHECK-LABEL: func.func private @fused_matmul_0(
// CHECK-SAME:      %[[X:.*]]: memref<4x16xf32>, %[[W:.*]]: memref<16x8xf32>, %[[B:.*]]: memref<8xf32>, %[[R:.*]]: memref<4x8xf32>) attributes {df.kernel, df.source = ["df.matmul", "df.add", "df.relu"], df.work = array<i64: 1088, 928>} {
// CHECK:         %[[UX:.*]] = "memref.cast"(%[[X]]) : (memref<4x16xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[UW:.*]] = "memref.cast"(%[[W]]) : (memref<16x8xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[UR:.*]] = "memref.cast"(%[[R]]) : (memref<4x8xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[TA:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[TB:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.call @dflow_matmul_f32(%[[UX]], %[[UW]], %[[UR]], %[[TA]], %[[TB]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[M:.*]] = memref.load %[[R]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:      %[[BV:.*]] = memref.load %[[B]][%[[J]]] : memref<8xf32>
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[M]], %[[BV]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[RELU:.*]] = arith.maximumf %[[A]], %[[Z]] : f32
// CHECK-NEXT:      memref.store %[[RELU]], %[[R]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })
// CHECK-NEXT:    func.return
func.func @mlp(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = df.fused(%0 = %x, %1 = %w, %2 = %bias) {kind = "contraction", name = "fused_matmul_0"} : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    %m = df.matmul %0, %1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %a = df.add %m, %2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %r_1 = df.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %r_1 : tensor<4x8xf32>
  }
  func.return %r : tensor<4x8xf32>
}

// -----

// A contraction whose value does not fit the epilogue's result (4x1 under
// 4x8) goes to a scratch buffer; transpose_b is the second flag. A contraction
// that is also a result is written there and read back by the epilogue. The
// routine is declared once for both kernels.

// CHECK-LABEL: func.func @scratch(
// CHECK:       func.func @both(
// CHECK:         func.func private @dflow_matmul_f32(
// CHECK-NOT:     func.func private @dflow_matmul_f32(
// CHECK-LABEL: func.func private @fused_matmul_0(
// CHECK-SAME:      %[[B:[^:]*]]: memref<8xf32>, %[[A:.*]]: memref<4x8xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[S:.*]] = memref.alloc() : memref<4x1xf32>
// CHECK:         %[[US:.*]] = "memref.cast"(%[[S]]) : (memref<4x1xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[TA:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[TB:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    func.call @dflow_matmul_f32(%{{.*}}, %{{.*}}, %[[US]], %[[TA]], %[[TB]])
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %{{.*}} = memref.load %[[S]][%[[I]], %[[ZERO]]] : memref<4x1xf32>
// CHECK-NEXT:      %{{.*}} = memref.load %[[B]][%[[J]]] : memref<8xf32>
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store %{{.*}}, %[[A]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-LABEL: func.func private @fused_matmul_1(
// CHECK-SAME:      %[[MM:[^:]*]]: memref<4x8xf32>, %[[TT:.*]]: memref<4x8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[UM:.*]] = "memref.cast"(%[[MM]])
// CHECK:         func.call @dflow_matmul_f32(%{{.*}}, %{{.*}}, %[[UM]], %{{.*}}, %{{.*}})
// CHECK:           %[[V:.*]] = memref.load %[[MM]]
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[V]] : f32
// CHECK-NEXT:      memref.store %[[T]], %[[TT]]
func.func @scratch(%x: tensor<4x16xf32>, %w: tensor<1x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = df.fused(%0 = %x, %1 = %w, %2 = %b) {kind = "contraction", name = "fused_matmul_0"} : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    %m = df.matmul %0, %1 {transpose_b = true} : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x1xf32>
    %a = df.add %m, %2 : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    df.yield %a : tensor<4x8xf32>
  }
  func.return %r : tensor<4x8xf32>
}
func.func @both(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m, %t = df.fused(%0 = %x, %1 = %w) {kind = "contraction", name = "fused_matmul_1"} : (tensor<4x16xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %mm = df.matmul %0, %1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %tt = df.tanh %mm : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %mm, %tt : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %m, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reduction closing a group: a parallel loop over the kept axis, an scf.for
// over the reduced one carrying the sum, the squared value computed inside it,
// one store per kept index.

// CHECK-LABEL: func.func @reduction(
// CHECK-NEXT:    df.fused({{.*}}) {df.kernel = @fused_square_0, kind = "reduction"
// CHECK-LABEL: func.func private @fused_square_0(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>, %[[R:.*]]: memref<4xf32>) attributes {df.kernel, df.source = ["df.square", "df.reduce_sum"], df.work = array<i64: 64, 144>} {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"(%[[ZERO]], %[[FOUR]], %[[ONE]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index):
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[J:.*]] = %[[ZERO]] to %[[EIGHT]] step %[[ONE]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[SUM]], %[[R]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
func.func @reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = df.fused(%0 = %x) {kind = "reduction", name = "fused_square_0"} : (tensor<4x8xf32>) -> tensor<4xf32> {
    %s = df.square %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %r_1 = df.reduce_sum %s {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
    df.yield %r_1 : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// A lone reduce_max over all axes with keepdims: a parallel loop of one
// iteration (rank 0), -inf to start, maximumf through nested loops, stored at
// index 0 of each axis. reduce_mean over the leading axis sums into the result
// row by row (contiguous reads), then divides it by the count.

// CHECK-LABEL: func.func @reduce_all(
// CHECK-NEXT:    df.reduce_max %{{.*}} {df.kernel = @reduce_max_0, keepdims = true}
// CHECK-NEXT:    df.reduce_mean %{{.*}} {df.kernel = @reduce_mean_1, axes = array<i64: 0>}
// CHECK-LABEL: func.func private @reduce_max_0(
// CHECK-SAME:      %[[X:.*]]: memref<2x3xf32>, %[[R:.*]]: memref<1x1xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         "scf.parallel"(%[[ZERO]], %[[ONE]], %[[ONE]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[M:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[INNER:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:          %[[MAX:.*]] = arith.maximumf %[[B]], %[[V]] : f32
// CHECK-NEXT:          scf.yield %[[MAX]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield %[[INNER]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[M]], %[[R]][%[[ZERO]], %[[ZERO]]] : memref<1x1xf32>
// CHECK-LABEL: func.func private @reduce_mean_1(
// CHECK-SAME:      %[[Y:.*]]: memref<4x2xf64>, %[[R:.*]]: memref<2xf64>)
// CHECK:           ^{{.*}}(%[[J:.*]]: index):
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      memref.store %[[INIT]], %[[R]][%[[J]]] : memref<2xf64>
// CHECK-NEXT:      scf.reduce
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      "scf.parallel"
// CHECK-NEXT:      ^{{.*}}(%[[K:.*]]: index):
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[Y]][%[[I]], %[[K]]] : memref<4x2xf64>
// CHECK-NEXT:        %[[A:.*]] = memref.load %[[R]][%[[K]]] : memref<2xf64>
// CHECK-NEXT:        %[[A2:.*]] = arith.addf %[[A]], %[[V]] fastmath<reassoc> : f64
// CHECK-NEXT:        memref.store %[[A2]], %[[R]][%[[K]]] : memref<2xf64>
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.*}}(%[[L:.*]]: index):
// CHECK-NEXT:      %[[S:.*]] = memref.load %[[R]][%[[L]]] : memref<2xf64>
// CHECK-NEXT:      %[[N:.*]] = arith.constant 4.000000e+00 : f64
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[S]], %[[N]] : f64
// CHECK-NEXT:      memref.store %[[Q]], %[[R]][%[[L]]] : memref<2xf64>
func.func @reduce_all(%x: tensor<2x3xf32>, %y: tensor<4x2xf64>) -> (tensor<1x1xf32>, tensor<2xf64>) {
  %m = df.reduce_max %x {keepdims = true} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %n = df.reduce_mean %y {axes = array<i64: 0>} : (tensor<4x2xf64>) -> tensor<2xf64>
  func.return %m, %n : tensor<1x1xf32>, tensor<2xf64>
}

// -----

// softmax along the rows: per row, three loops over the result's row: the input
// stored and its maximum taken, exp(x - max) stored and summed, the division. Each
// fold is one accumulator (`lanes` is 1: LLVM's loop vectorizer folds in vector
// lanes beside the stores), the maximum marked `nsz` (a zero's sign does not change
// the shift), the sum `reassoc` (any order).

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    df.softmax %{{.*}} {df.kernel = @softmax_0, axis = 1 : i64}
// CHECK-LABEL: func.func private @softmax_0(
// CHECK-SAME:      %[[X:.*]]: memref<2x8xf32>, %[[S:.*]]: memref<2x8xf32>) attributes {df.kernel, df.source = ["df.softmax"], df.work = array<i64: 64, 128>} {
// CHECK:         "scf.parallel"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%[[ROW:.*]]: index):
// CHECK-NEXT:      %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[MAX:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[M:.*]] = %[[NINF]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[I]]] : memref<2x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %[[S]][%[[ROW]], %[[I]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[M2:.*]] = arith.maximumf %[[M]], %[[V]] fastmath<nsz> : f32
// CHECK-NEXT:        scf.yield %[[M2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[T:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[S]][%[[ROW]], %[[K]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[V]], %[[MAX]] : f32
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:        memref.store %[[E]], %[[S]][%[[ROW]], %[[K]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[T2:.*]] = arith.addf %[[T]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[T2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[S]][%[[ROW]], %[[N]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[Q:.*]] = arith.divf %[[V]], %[[SUM]] : f32
// CHECK-NEXT:        memref.store %[[Q]], %[[S]][%[[ROW]], %[[N]]] : memref<2x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s = df.softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %s : tensor<2x8xf32>
}

// -----

// A row of 20 folds in one accumulator too (lanes=8, numba's, is
// bufferize_lanes.mlir).

// CHECK-LABEL: func.func @softmax_lanes(
// CHECK-LABEL: func.func private @softmax_0(
// CHECK:         %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[NINF]]) -> (f32) {
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    scf.for
// CHECK:           arith.subf %{{.*}}, %[[MAX]] : f32
func.func @softmax_lanes(%x: tensor<1x20xf32>) -> tensor<1x20xf32> {
  %s = df.softmax %x {axis = 1 : i64} : (tensor<1x20xf32>) -> tensor<1x20xf32>
  func.return %s : tensor<1x20xf32>
}

// -----

// transpose with perm (2, 0, 1): out[i, j, k] = in[j, k, i].

// CHECK-LABEL: func.func @transpose(
// CHECK-NEXT:    df.transpose %{{.*}} {df.kernel = @transpose_0, perm = array<i64: 2, 0, 1>}
// CHECK-LABEL: func.func private @transpose_0(
// CHECK-SAME:      %[[X:.*]]: memref<2x3x4xf32>, %[[T:.*]]: memref<4x2x3xf32>) attributes {df.kernel, df.source = ["df.transpose"], df.work = array<i64: 0, 192>} {
// CHECK:         "scf.parallel"({{.*}}) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[J]], %[[K]], %[[I]]] : memref<2x3x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %[[T]][%[[I]], %[[J]], %[[K]]] : memref<4x2x3xf32>
// CHECK-NEXT:      scf.reduce
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %t = df.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %t : tensor<4x2x3xf32>
}

// -----

// slice from (1, 2, 0): the input is read at the index plus the start; an axis
// starting at 0 needs no add.

// CHECK-LABEL: func.func @slice(
// CHECK-NEXT:    df.slice %{{.*}} {df.kernel = @slice_0,
// CHECK-LABEL: func.func private @slice_0(
// CHECK-SAME:      %[[X:.*]]: memref<4x8x2xf32>, %[[R:.*]]: memref<2x6x2xf32>) attributes {df.kernel, df.source = ["df.slice"], df.work = array<i64: 0, 352>} {
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:      %[[J2:.*]] = arith.addi %[[J]], %[[TWO]] : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[I1]], %[[J2]], %[[K]]] : memref<4x8x2xf32>
// CHECK-NEXT:      memref.store %[[V]], %[[R]][%[[I]], %[[J]], %[[K]]] : memref<2x6x2xf32>
func.func @slice(%x: tensor<4x8x2xf32>) -> tensor<2x6x2xf32> {
  %r = df.slice %x {start = array<i64: 1, 2, 0>, limit = array<i64: 3, 8, 2>} : (tensor<4x8x2xf32>) -> tensor<2x6x2xf32>
  func.return %r : tensor<2x6x2xf32>
}

// -----

// concat along axis 1: one nest per input (2x3, then 2x1), the second stored
// 3 columns on.

// CHECK-LABEL: func.func @concat(
// CHECK-NEXT:    df.concat %{{.*}}, %{{.*}} {df.kernel = @concat_0, axis = 1 : i64}
// CHECK-LABEL: func.func private @concat_0(
// CHECK-SAME:      %[[A:.*]]: memref<2x3xi32>, %[[B:.*]]: memref<2x1xi32>, %[[C:.*]]: memref<2x4xi32>) attributes {df.kernel, df.source = ["df.concat"], df.work = array<i64: 0, 64>} {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[THREE:.*]] = arith.constant 3 : index
// CHECK:         "scf.parallel"(%[[ZERO]], %[[ZERO]], %[[TWO]], %[[THREE]], %[[ONE]], %[[ONE]])
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<2x3xi32>
// CHECK-NEXT:      memref.store %[[V]], %[[C]][%[[I]], %[[J]]] : memref<2x4xi32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })
// CHECK-NEXT:    "scf.parallel"(%[[ZERO]], %[[ZERO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ONE]])
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[J3:.*]] = arith.addi %[[J]], %[[THREE]] : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[B]][%[[I]], %[[J]]] : memref<2x1xi32>
// CHECK-NEXT:      memref.store %[[V]], %[[C]][%[[I]], %[[J3]]] : memref<2x4xi32>
func.func @concat(%a: tensor<2x3xi32>, %b: tensor<2x1xi32>) -> tensor<2x4xi32> {
  %c = df.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
  func.return %c : tensor<2x4xi32>
}

// -----

// reshape 2x3x4 -> 6x4 through the row-major position p = 0 + 4i + 1j:
// the input index is (p / 12 % 2, p / 4 % 3, p / 1 % 4).

// CHECK-LABEL: func.func @reshape(
// CHECK-NEXT:    df.reshape %{{.*}} {df.kernel = @reshape_0}
// CHECK-LABEL: func.func private @reshape_0(
// CHECK-SAME:      %[[X:.*]]: memref<2x3x4xf32>, %[[R:.*]]: memref<6x4xf32>) attributes {df.kernel, df.source = ["df.reshape"], df.work = array<i64: 0, 192>} {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C12:.*]] = arith.constant 12 : index
// CHECK:         ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[T0:.*]] = arith.muli %[[I]], %[[C4]] : index
// CHECK-NEXT:      %[[P1:.*]] = arith.addi %[[C0]], %[[T0]] : index
// CHECK-NEXT:      %[[T1:.*]] = arith.muli %[[J]], %[[C1]] : index
// CHECK-NEXT:      %[[P:.*]] = arith.addi %[[P1]], %[[T1]] : index
// CHECK-NEXT:      %[[Q0:.*]] = arith.divui %[[P]], %[[C12]] : index
// CHECK-NEXT:      %[[A:.*]] = arith.remui %[[Q0]], %[[C2]] : index
// CHECK-NEXT:      %[[Q1:.*]] = arith.divui %[[P]], %[[C4]] : index
// CHECK-NEXT:      %[[B:.*]] = arith.remui %[[Q1]], %[[C3]] : index
// CHECK-NEXT:      %[[Q2:.*]] = arith.divui %[[P]], %[[C1]] : index
// CHECK-NEXT:      %[[C:.*]] = arith.remui %[[Q2]], %[[C4]] : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[A]], %[[B]], %[[C]]] : memref<2x3x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %[[R]][%[[I]], %[[J]]] : memref<6x4xf32>
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %r = df.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  func.return %r : tensor<6x4xf32>
}

// -----

// broadcast_to reads the size-1 axis at 0 and drops the missing leading axis.

// CHECK-LABEL: func.func private @broadcast_to_0(
// CHECK-SAME:      %[[X:.*]]: memref<4x1xf32>, %[[R:.*]]: memref<3x4x8xf32>) attributes {df.kernel, df.source = ["df.broadcast_to"], df.work = array<i64: 0, 400>} {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[J]], %[[ZERO]]] : memref<4x1xf32>
// CHECK-NEXT:      memref.store %[[V]], %[[R]][%[[I]], %[[J]], %[[K]]] : memref<3x4x8xf32>
func.func @broadcast(%x: tensor<4x1xf32>) -> tensor<3x4x8xf32> {
  %r = df.broadcast_to %x : (tensor<4x1xf32>) -> tensor<3x4x8xf32>
  func.return %r : tensor<3x4x8xf32>
}

// -----

// A lone conv2d is one library call, its strides, pads (top, left, bottom,
// right), dilations and groups after the buffers; with a bias it is conv2d_bias.

// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    df.conv2d %{{.*}}, %{{.*}} {df.kernel = @conv2d_0,
// CHECK-NEXT:    df.conv2d %{{.*}}, %{{.*}}, %{{.*}} {df.kernel = @conv2d_1}
// CHECK:       func.func private @dflow_conv2d_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK-NEXT:  func.func private @dflow_conv2d_bias_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK-LABEL: func.func private @conv2d_0(
// CHECK-SAME:      %[[X:.*]]: memref<1x3x8x8xf32>, %[[W:.*]]: memref<4x3x3x3xf32>, %[[C:.*]]: memref<1x4x4x3xf32>) attributes {df.kernel, df.source = ["df.conv2d"], df.work = array<i64: 2592, 1392>} {
// CHECK-NEXT:    %[[UX:.*]] = "memref.cast"(%[[X]])
// CHECK-NEXT:    %[[UW:.*]] = "memref.cast"(%[[W]])
// CHECK-NEXT:    %[[UC:.*]] = "memref.cast"(%[[C]])
// CHECK-NEXT:    %[[SH:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[SW:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[PT:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[PL:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[PB:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[PR:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[DH:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[DW:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[G:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    func.call @dflow_conv2d_f32(%[[UX]], %[[UW]], %[[UC]], %[[SH]], %[[SW]], %[[PT]], %[[PL]], %[[PB]], %[[PR]], %[[DH]], %[[DW]], %[[G]])
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @conv2d_1(
// CHECK-SAME:      %[[X:.*]]: memref<1x3x8x8xf32>, %[[W:.*]]: memref<4x3x3x3xf32>, %[[B:.*]]: memref<4xf32>, %[[D:.*]]: memref<1x4x6x6xf32>)
// CHECK:         func.call @dflow_conv2d_bias_f32(
// CHECK-NEXT:    func.return
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x6x6xf32>) {
  %c = df.conv2d %x, %w {strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32>
  %d = df.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return %c, %d : tensor<1x4x4x3xf32>, tensor<1x4x6x6xf32>
}

// -----

// Every computing op gets a kernel named after it and numbered in the module;
// constants, sends and receives do not. A dense constant is an input buffer.

// CHECK-LABEL: func.func @lone(
// CHECK-NEXT:    %[[K:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf64>
// CHECK-NEXT:    %[[A:.*]] = df.exp %{{.*}} {df.kernel = @exp_0} : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    df.send %[[A]] {key = "main.k0", from = "cpu:0", to = "cpu:1"}
// CHECK-NEXT:    %[[R:.*]] = df.recv {key = "main.k1", from = "cpu:1", to = "cpu:0"}
// CHECK-NEXT:    %[[B:.*]] = df.add %[[R]], %[[K]] {df.kernel = @add_1}
// CHECK-NEXT:    %{{.*}} = df.greater %[[B]], %{{.*}} {df.kernel = @greater_2} : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
// CHECK:       func.func private @exp_0(%{{.*}}: memref<4xf64>, %{{.*}}: memref<4xf64>) attributes {df.kernel, df.source = ["df.exp"], df.work = array<i64: 32, 64>}
// CHECK:       func.func private @add_1(%{{.*}}: memref<4xf64>, %[[KK:.*]]: memref<4xf64>, %{{.*}}: memref<4xf64>) attributes {df.kernel, df.source = ["df.add"], df.work = array<i64: 4, 96>}
// CHECK:         memref.load %[[KK]]
// CHECK:       func.func private @greater_2(%[[BB:.*]]: memref<4xf64>, %[[YY:.*]]: memref<4xf64>, %[[CC:.*]]: memref<4xi1>) attributes {df.kernel, df.source = ["df.greater"], df.work = array<i64: 4, 68>}
// CHECK:         %[[L:.*]] = memref.load %[[BB]]
// CHECK-NEXT:    %[[M:.*]] = memref.load %[[YY]]
// CHECK-NEXT:    %[[G:.*]] = arith.cmpf ogt, %[[L]], %[[M]] : f64
// CHECK-NEXT:    memref.store %[[G]], %[[CC]]{{.*}} : memref<4xi1>
func.func @lone(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xi1> {
  %k = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>
  %a = df.exp %x : (tensor<4xf64>) -> tensor<4xf64>
  df.send %a {key = "main.k0", from = "cpu:0", to = "cpu:1"} : (tensor<4xf64>) -> ()
  %r = df.recv {key = "main.k1", from = "cpu:1", to = "cpu:0"} : () -> tensor<4xf64>
  %b = df.add %r, %k : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %c = df.greater %b, %y : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
  func.return %c : tensor<4xi1>
}

// -----

// A partitioned module: each device module gets its own kernels and library
// declarations; the numbering starts again in each.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"}
// CHECK:         df.matmul %{{.*}}, %{{.*}} {df.device = "cpu:0", df.kernel = @matmul_0}
// CHECK:         func.func private @dflow_matmul_f32(
// CHECK:         func.func private @matmul_0(
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"}
// CHECK:         df.matmul %{{.*}}, %{{.*}} {df.device = "gpu:0", df.kernel = @matmul_0}
// CHECK:         func.func private @dflow_matmul_f32(
// CHECK:         func.func private @matmul_0(
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %m = df.matmul %x, %x {df.device = "cpu:0"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      df.send %m {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : (tensor<2x2xf32>) -> ()
      func.return %m : tensor<2x2xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main() {
      %r = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<2x2xf32>
      %m = df.matmul %r, %r {df.device = "gpu:0"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      func.return
    }
  }
}

// -----

// A module already bufferized is refused.

// CHECK: {{^}}df-bufferize: df.exp already runs a kernel: the module is bufferized{{$}}
func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.kernel = @exp_0} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// The indexing ops are library calls: data, indices and result as unranked
// memrefs (the indices keep their element type, which names the routine too), then
// the axis.

// CHECK-LABEL: func.func @embedding(
// CHECK-NEXT:    %{{.*}} = df.gather %{{.*}}, %{{.*}} {df.kernel = @gather_0} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = df.scatter_add %{{.*}}, %{{.*}} {df.kernel = @scatter_add_1, axis = 1 : i64} : (tensor<2x2x3xf32>, tensor<2x3xi32>) -> tensor<2x7xf32>
// CHECK:       func.func private @dflow_gather_i32_f32(memref<*xf32>, memref<*xi32>, memref<*xf32>, i64) -> ()
// CHECK-NEXT:  func.func private @dflow_scatter_add_i32_f32(memref<*xf32>, memref<*xi32>, memref<*xf32>, i64) -> ()
// CHECK-LABEL: func.func private @gather_0(
// CHECK-SAME:      %[[T:.*]]: memref<10x4xf32>, %[[I:.*]]: memref<2x3xi32>, %[[E:.*]]: memref<2x3x4xf32>) attributes {df.kernel, df.source = ["df.gather"]
// CHECK-NEXT:    %[[UT:.*]] = "memref.cast"(%[[T]]) : (memref<10x4xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[UI:.*]] = "memref.cast"(%[[I]]) : (memref<2x3xi32>) -> memref<*xi32>
// CHECK-NEXT:    %[[UE:.*]] = "memref.cast"(%[[E]]) : (memref<2x3x4xf32>) -> memref<*xf32>
// CHECK-NEXT:    %[[AXIS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.call @dflow_gather_i32_f32(%[[UT]], %[[UI]], %[[UE]], %[[AXIS]])
// CHECK-LABEL: func.func private @scatter_add_1(
// CHECK:         %[[AXIS:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    func.call @dflow_scatter_add_i32_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[AXIS]])
func.func @embedding(%table: tensor<10x4xf32>, %tokens: tensor<2x3xi32>, %u: tensor<2x2x3xf32>) -> (tensor<2x3x4xf32>, tensor<2x7xf32>) {
  %e = df.gather %table, %tokens : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %s = df.scatter_add %u, %tokens {axis = 1 : i64} : (tensor<2x2x3xf32>, tensor<2x3xi32>) -> tensor<2x7xf32>
  func.return %e, %s : tensor<2x3x4xf32>, tensor<2x7xf32>
}

// -----

// ui64 computes as itself (df-widen leaves it): its maxima and comparisons are the
// unsigned ones, and relu is the identity.

// CHECK-LABEL: func.func private @maximum_0(
// CHECK:         %{{.*}} = arith.maxui %{{.*}}, %{{.*}} : ui64
// CHECK-LABEL: func.func private @less_1(
// CHECK:         %{{.*}} = arith.cmpi ult, %{{.*}}, %{{.*}} : ui64
// CHECK-LABEL: func.func private @relu_2(
// CHECK-NOT:     arith.max
// CHECK:         memref.store
func.func @unsigned(%a: tensor<5xui64>, %b: tensor<5xui64>) -> (tensor<5xui64>, tensor<5xi1>, tensor<5xui64>) {
  %m = df.maximum %a, %b : (tensor<5xui64>, tensor<5xui64>) -> tensor<5xui64>
  %l = df.less %a, %b : (tensor<5xui64>, tensor<5xui64>) -> tensor<5xi1>
  %r = df.relu %a : (tensor<5xui64>) -> tensor<5xui64>
  func.return %m, %l, %r : tensor<5xui64>, tensor<5xi1>, tensor<5xui64>
}

// -----

// df.rem is MLIR's arith.remf (C's fmod), which xDSL lacks and dflow defines.
// CHECK-LABEL: func.func private @rem_0(
// CHECK:           %[[A:.*]] = memref.load
// CHECK-NEXT:      %[[B:.*]] = memref.load
// CHECK-NEXT:      %[[R:.*]] = arith.remf %[[A]], %[[B]] : f64
// CHECK-NEXT:      memref.store %[[R]]
func.func @rem(%a: tensor<5xf64>, %b: tensor<5xf64>) -> tensor<5xf64> {
  %r = df.rem %a, %b : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %r : tensor<5xf64>
}

// -----

// layer_norm along the rows, as softmax: per row, three loops over the result's
// row: the input stored (a fused prologue's values, where df-fuse made one) and
// summed (the mean, once), x - mean stored and its squares summed (the variance,
// once), then (x - mean) * rsqrt(var + epsilon) * scale + bias stored.

// CHECK-LABEL: func.func private @layer_norm_0(
// CHECK-SAME:      %[[X:.*]]: memref<2x8xf32>, %[[S:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[Y:.*]]: memref<2x8xf32>) attributes {df.kernel, df.source = ["df.layer_norm"]
// CHECK:         ^{{.*}}(%[[ROW:.*]]: index):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[I]]] : memref<2x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %[[Y]][%[[ROW]], %[[I]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[A2:.*]] = arith.addf %[[A]], %[[V]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[A2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[SUM]], %[[N]] : f32
// CHECK-NEXT:      %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SQUARES:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO2]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[Y]][%[[ROW]], %[[J]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[C:.*]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NEXT:        memref.store %[[C]], %[[Y]][%[[ROW]], %[[J]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[VAR:.*]] = arith.divf %[[SQUARES]], %[[N]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:      %[[INV:.*]] = math.rsqrt %[[SHIFTED]] : f32
// CHECK-NEXT:      scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[Y]][%[[ROW]], %[[K]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[NORM:.*]] = arith.mulf %[[V]], %[[INV]] : f32
// CHECK-NEXT:        %[[SV:.*]] = memref.load %[[S]][%[[K]]] : memref<8xf32>
// CHECK-NEXT:        %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[SV]] : f32
// CHECK-NEXT:        %[[BV:.*]] = memref.load %[[B]][%[[K]]] : memref<8xf32>
// CHECK-NEXT:        %[[OUT:.*]] = arith.addf %[[SCALED]], %[[BV]] : f32
// CHECK-NEXT:        memref.store %[[OUT]], %[[Y]][%[[ROW]], %[[K]]] : memref<2x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
func.func @layer_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %y = df.layer_norm %x, %s, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
