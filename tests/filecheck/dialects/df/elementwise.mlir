// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Elementwise ops of the df dialect: unary ops (same type out), binary ops with
// NumPy broadcasting, comparisons (i1 result), select, cast and addn. Each op
// prints as `%r = df.NAME %a, %b : (types) -> type`.

// CHECK-LABEL: func.func @unary_f32(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>)
func.func @unary_f32(%x: tensor<4x8xf32>) {
  // CHECK-NEXT: %{{.*}} = df.neg %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.reciprocal %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.exp %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.log %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sqrt %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.rsqrt %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.tanh %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.erf %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sigmoid %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.floor %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.ceil %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.round %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sin %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.cos %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.relu %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.abs %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.square %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.identity %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: func.return
  %0 = df.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = df.reciprocal %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = df.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = df.log %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = df.sqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = df.rsqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = df.tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = df.erf %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = df.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %floor = df.floor %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ceil = df.ceil %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %round = df.round %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sin = df.sin %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %cos = df.cos %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = df.abs %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = df.square %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %11 = df.identity %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// Rank 0 and f64: every unary op is defined on floats.

// CHECK-LABEL: func.func @unary_f64_rank0(
// CHECK-SAME:      %[[X:.*]]: tensor<f64>) -> tensor<f64>
func.func @unary_f64_rank0(%x: tensor<f64>) -> tensor<f64> {
  // CHECK-NEXT: %[[A:.*]] = df.neg %[[X]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[B:.*]] = df.reciprocal %[[A]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[C:.*]] = df.exp %[[B]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[D:.*]] = df.log %[[C]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[E:.*]] = df.sqrt %[[D]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[F:.*]] = df.rsqrt %[[E]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[G:.*]] = df.tanh %[[F]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[H:.*]] = df.sigmoid %[[G]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[I:.*]] = df.relu %[[H]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[J:.*]] = df.abs %[[I]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[K:.*]] = df.square %[[J]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: %[[L:.*]] = df.identity %[[K]] : (tensor<f64>) -> tensor<f64>
  // CHECK-NEXT: func.return %[[L]] : tensor<f64>
  %a = df.neg %x : (tensor<f64>) -> tensor<f64>
  %b = df.reciprocal %a : (tensor<f64>) -> tensor<f64>
  %c = df.exp %b : (tensor<f64>) -> tensor<f64>
  %d = df.log %c : (tensor<f64>) -> tensor<f64>
  %e = df.sqrt %d : (tensor<f64>) -> tensor<f64>
  %f = df.rsqrt %e : (tensor<f64>) -> tensor<f64>
  %g = df.tanh %f : (tensor<f64>) -> tensor<f64>
  %h = df.sigmoid %g : (tensor<f64>) -> tensor<f64>
  %i = df.relu %h : (tensor<f64>) -> tensor<f64>
  %j = df.abs %i : (tensor<f64>) -> tensor<f64>
  %k = df.square %j : (tensor<f64>) -> tensor<f64>
  %l = df.identity %k : (tensor<f64>) -> tensor<f64>
  func.return %l : tensor<f64>
}

// Integers: neg, abs, square, relu and identity are numeric; identity also
// takes i1.

// CHECK-LABEL: func.func @unary_integers(
// CHECK-SAME:      %[[I32:.*]]: tensor<3xi32>, %[[I64:.*]]: tensor<2x2xi64>, %[[B:.*]]: tensor<5xi1>)
func.func @unary_integers(%i: tensor<3xi32>, %j: tensor<2x2xi64>, %b: tensor<5xi1>) {
  // CHECK-NEXT: df.neg %[[I32]] : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.abs %[[I32]] : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.square %[[I32]] : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.relu %[[I32]] : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.identity %[[I32]] : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.neg %[[I64]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK-NEXT: df.abs %[[I64]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK-NEXT: df.square %[[I64]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK-NEXT: df.relu %[[I64]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK-NEXT: df.identity %[[I64]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK-NEXT: df.identity %[[B]] : (tensor<5xi1>) -> tensor<5xi1>
  // CHECK-NEXT: func.return
  %0 = df.neg %i : (tensor<3xi32>) -> tensor<3xi32>
  %1 = df.abs %i : (tensor<3xi32>) -> tensor<3xi32>
  %2 = df.square %i : (tensor<3xi32>) -> tensor<3xi32>
  %3 = df.relu %i : (tensor<3xi32>) -> tensor<3xi32>
  %4 = df.identity %i : (tensor<3xi32>) -> tensor<3xi32>
  %5 = df.neg %j : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %6 = df.abs %j : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %7 = df.square %j : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %8 = df.relu %j : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %9 = df.identity %j : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %10 = df.identity %b : (tensor<5xi1>) -> tensor<5xi1>
  func.return
}

// Binary ops broadcast 4x1 with 1x8 to 4x8.

// CHECK-LABEL: func.func @binary_broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<1x8xf32>)
func.func @binary_broadcast(%x: tensor<4x1xf32>, %y: tensor<1x8xf32>) {
  // CHECK-NEXT: %{{.*}} = df.add %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sub %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.mul %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.div %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.maximum %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.minimum %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.pow %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sub %[[Y]], %[[X]] : (tensor<1x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.rem %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: func.return
  %0 = df.add %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %1 = df.sub %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %2 = df.mul %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %3 = df.div %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %4 = df.maximum %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %5 = df.minimum %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %6 = df.pow %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %7 = df.sub %y, %x : (tensor<1x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = df.rem %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}

// Broadcasting across ranks: a rank-0 tensor and a vector against a matrix.

// CHECK-LABEL: func.func @binary_ranks(
// CHECK-SAME:      %[[S:.*]]: tensor<f32>, %[[V:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<2x4x8xf32>)
func.func @binary_ranks(%s: tensor<f32>, %v: tensor<8xf32>, %m: tensor<2x4x8xf32>) -> tensor<f32> {
  // CHECK-NEXT: %[[SS:.*]] = df.add %[[S]], %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = df.mul %[[S]], %[[M]] : (tensor<f32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.sub %[[M]], %[[V]] : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.div %[[V]], %[[S]] : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  // CHECK-NEXT: func.return %[[SS]] : tensor<f32>
  %0 = df.add %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = df.mul %s, %m : (tensor<f32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %2 = df.sub %m, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %3 = df.div %v, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %0 : tensor<f32>
}

// Element types: add, sub, mul, maximum and minimum are numeric; div and pow
// take floats only.

// CHECK-LABEL: func.func @binary_element_types(
// CHECK-SAME:      %[[D:.*]]: tensor<3xf64>, %[[I:.*]]: tensor<3xi32>, %[[J:.*]]: tensor<3xi64>)
func.func @binary_element_types(%d: tensor<3xf64>, %i: tensor<3xi32>, %j: tensor<3xi64>) {
  // CHECK-NEXT: df.add %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.sub %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.mul %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.div %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.maximum %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.minimum %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.pow %[[D]], %[[D]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: df.add %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.sub %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.mul %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.maximum %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.minimum %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: df.add %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: df.sub %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: df.mul %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: df.maximum %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: df.minimum %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: func.return
  %0 = df.add %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = df.sub %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %2 = df.mul %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %3 = df.div %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %4 = df.maximum %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %5 = df.minimum %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %6 = df.pow %d, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %7 = df.add %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %8 = df.sub %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %9 = df.mul %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %10 = df.maximum %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %11 = df.minimum %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %12 = df.add %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %13 = df.sub %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %14 = df.mul %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %15 = df.maximum %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %16 = df.minimum %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return
}

// Comparisons give i1 of the broadcast shape, on every element type.

// CHECK-LABEL: func.func @compare(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<1x8xf32>, %[[D:.*]]: tensor<f64>, %[[I:.*]]: tensor<3xi32>, %[[J:.*]]: tensor<3xi64>, %[[B:.*]]: tensor<3xi1>)
func.func @compare(%x: tensor<4x1xf32>, %y: tensor<1x8xf32>, %d: tensor<f64>, %i: tensor<3xi32>, %j: tensor<3xi64>, %b: tensor<3xi1>) {
  // CHECK-NEXT: df.greater %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: df.greater_equal %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: df.less %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: df.less_equal %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: df.equal %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: df.less %[[D]], %[[D]] : (tensor<f64>, tensor<f64>) -> tensor<i1>
  // CHECK-NEXT: df.greater_equal %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  // CHECK-NEXT: df.less_equal %[[J]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  // CHECK-NEXT: df.equal %[[B]], %[[B]] : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK-NEXT: df.greater %[[B]], %[[B]] : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK-NEXT: func.return
  %0 = df.greater %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  %1 = df.greater_equal %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  %2 = df.less %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  %3 = df.less_equal %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  %4 = df.equal %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xi1>
  %5 = df.less %d, %d : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %6 = df.greater_equal %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  %7 = df.less_equal %j, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %8 = df.equal %b, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %9 = df.greater %b, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// select broadcasts its condition and both values together.

// CHECK-LABEL: func.func @select(
// CHECK-SAME:      %[[C:.*]]: tensor<4x1xi1>, %[[X:.*]]: tensor<1x8xf32>, %[[Y:.*]]: tensor<f32>, %[[S:.*]]: tensor<i1>, %[[I:.*]]: tensor<3xi64>)
func.func @select(%c: tensor<4x1xi1>, %x: tensor<1x8xf32>, %y: tensor<f32>, %s: tensor<i1>, %i: tensor<3xi64>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[R:.*]] = df.select %[[C]], %[[X]], %[[Y]] : (tensor<4x1xi1>, tensor<1x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.select %[[S]], %[[I]], %[[I]] : (tensor<i1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: %{{.*}} = df.select %[[S]], %[[S]], %[[C]] : (tensor<i1>, tensor<i1>, tensor<4x1xi1>) -> tensor<4x1xi1>
  // CHECK-NEXT: func.return %[[R]] : tensor<4x8xf32>
  %0 = df.select %c, %x, %y : (tensor<4x1xi1>, tensor<1x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = df.select %s, %i, %i : (tensor<i1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %2 = df.select %s, %s, %c : (tensor<i1>, tensor<i1>, tensor<4x1xi1>) -> tensor<4x1xi1>
  func.return %0 : tensor<4x8xf32>
}

// cast keeps the shape and converts between any two element types.

// CHECK-LABEL: func.func @cast(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<i1>)
func.func @cast(%x: tensor<2x3xf32>, %s: tensor<i1>) {
  // CHECK-NEXT: %[[I:.*]] = df.cast %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %[[D:.*]] = df.cast %[[I]] : (tensor<2x3xi32>) -> tensor<2x3xf64>
  // CHECK-NEXT: %[[J:.*]] = df.cast %[[D]] : (tensor<2x3xf64>) -> tensor<2x3xi64>
  // CHECK-NEXT: %[[B:.*]] = df.cast %[[J]] : (tensor<2x3xi64>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = df.cast %[[B]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = df.cast %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = df.cast %[[S]] : (tensor<i1>) -> tensor<f64>
  // CHECK-NEXT: func.return
  %i = df.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %d = df.cast %i : (tensor<2x3xi32>) -> tensor<2x3xf64>
  %j = df.cast %d : (tensor<2x3xf64>) -> tensor<2x3xi64>
  %b = df.cast %j : (tensor<2x3xi64>) -> tensor<2x3xi1>
  %f = df.cast %b : (tensor<2x3xi1>) -> tensor<2x3xf32>
  %same = df.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s64 = df.cast %s : (tensor<i1>) -> tensor<f64>
  func.return
}

// addn sums one or more tensors of one numeric type.

// CHECK-LABEL: func.func @addn(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<i32>, %[[J:.*]]: tensor<2xi64>, %[[D:.*]]: tensor<2xf64>)
func.func @addn(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>, %i: tensor<i32>, %j: tensor<2xi64>, %d: tensor<2xf64>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %{{.*}} = df.addn %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[S:.*]] = df.addn %[[X]], %[[Y]], %[[Z]] : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = df.addn %[[I]], %[[I]] : (tensor<i32>, tensor<i32>) -> tensor<i32>
  // CHECK-NEXT: %{{.*}} = df.addn %[[J]], %[[J]] : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // CHECK-NEXT: %{{.*}} = df.addn %[[D]], %[[D]] : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  // CHECK-NEXT: func.return %[[S]] : tensor<4x8xf32>
  %0 = df.addn %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = df.addn %x, %y, %z : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = df.addn %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %3 = df.addn %j, %j : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %4 = df.addn %d, %d : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  func.return %1 : tensor<4x8xf32>
}
