// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// df.constant: a dense tensor literal whose type is the result type. Floats
// print in exponent form; splats stay splats.

// CHECK-LABEL: func.func @floats()
func.func @floats() -> tensor<1x2xf32> {
  // CHECK-NEXT: %[[C:.*]] = df.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
  // CHECK-NEXT: %{{.*}} = df.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  // CHECK-NEXT: %{{.*}} = df.constant dense<[5.000000e-01, -1.500000e+00, 0.000000e+00]> : tensor<3xf64>
  // CHECK-NEXT: func.return %[[C]] : tensor<1x2xf32>
  %0 = df.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %1 = df.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %2 = df.constant dense<[0.5, -1.5, 0.0]> : tensor<3xf64>
  func.return %0 : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @splats()
func.func @splats() {
  // CHECK-NEXT: df.constant dense<0.000000e+00> : tensor<4x8xf32>
  // CHECK-NEXT: df.constant dense<-2.500000e+00> : tensor<3xf64>
  // CHECK-NEXT: df.constant dense<7> : tensor<2x2xi32>
  // CHECK-NEXT: df.constant dense<-1> : tensor<5xi64>
  // CHECK-NEXT: df.constant dense<true> : tensor<2x3xi1>
  // CHECK-NEXT: func.return
  %0 = df.constant dense<0.0> : tensor<4x8xf32>
  %1 = df.constant dense<-2.5> : tensor<3xf64>
  %2 = df.constant dense<7> : tensor<2x2xi32>
  %3 = df.constant dense<-1> : tensor<5xi64>
  %4 = df.constant dense<true> : tensor<2x3xi1>
  func.return
}

// CHECK-LABEL: func.func @integers_and_bools()
func.func @integers_and_bools() {
  // CHECK-NEXT: df.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-NEXT: df.constant dense<[1, -2, 3]> : tensor<3xi32>
  // CHECK-NEXT: df.constant dense<{{\[\[}}7], [8]]> : tensor<2x1xi64>
  // CHECK-NEXT: df.constant dense<{{\[\[}}true, false, true], [false, false, true]]> : tensor<2x3xi1>
  // CHECK-NEXT: func.return
  %0 = df.constant dense<[true, false]> : tensor<2xi1>
  %1 = df.constant dense<[1, -2, 3]> : tensor<3xi32>
  %2 = df.constant dense<[[7], [8]]> : tensor<2x1xi64>
  %3 = df.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  func.return
}

// Rank-0 constants.

// CHECK-LABEL: func.func @rank0()
func.func @rank0() -> tensor<f32> {
  // CHECK-NEXT: %[[F:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
  // CHECK-NEXT: %{{.*}} = df.constant dense<1.000000e-01> : tensor<f64>
  // CHECK-NEXT: %{{.*}} = df.constant dense<5> : tensor<i32>
  // CHECK-NEXT: %{{.*}} = df.constant dense<-9> : tensor<i64>
  // CHECK-NEXT: %{{.*}} = df.constant dense<false> : tensor<i1>
  // CHECK-NEXT: func.return %[[F]] : tensor<f32>
  %0 = df.constant dense<2.0> : tensor<f32>
  %1 = df.constant dense<0.1> : tensor<f64>
  %2 = df.constant dense<5> : tensor<i32>
  %3 = df.constant dense<-9> : tensor<i64>
  %4 = df.constant dense<false> : tensor<i1>
  func.return %0 : tensor<f32>
}

// A constant feeds other ops like any value.

// CHECK-LABEL: func.func @use(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>)
func.func @use(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<f32>
  // CHECK-NEXT: %[[R:.*]] = df.add %[[X]], %[[ONE]] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK-NEXT: func.return %[[R]] : tensor<4x8xf32>
  %one = df.constant dense<1.0> : tensor<f32>
  %r = df.add %x, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
