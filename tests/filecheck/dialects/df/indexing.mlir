// RUN: %xdsl-roundtrip | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Indexing ops: gather, gather_elements and scatter_add, their indices read at
// run time (i32 or i64, any shape); axis 0 is the default and is not printed.

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[T:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<2x3xi32>, %[[J:.*]]: tensor<i64>, %[[B:.*]]: tensor<5x2xi1>)
func.func @gather(%t: tensor<10x4xf32>, %i: tensor<2x3xi32>, %j: tensor<i64>, %b: tensor<5x2xi1>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %[[E:.*]] = df.gather %[[T]], %[[I]] : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = df.gather %[[T]], %[[I]] {axis = 1 : i64} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<10x2x3xf32>
  // CHECK-NEXT: %{{.*}} = df.gather %[[T]], %[[J]] {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i64>) -> tensor<10xf32>
  // CHECK-NEXT: %{{.*}} = df.gather %[[B]], %[[I]] {axis = 1 : i64} : (tensor<5x2xi1>, tensor<2x3xi32>) -> tensor<5x2x3xi1>
  // CHECK-NEXT: func.return %[[E]] : tensor<2x3x4xf32>
  %0 = df.gather %t, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %1 = df.gather %t, %i {axis = 1 : i64} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<10x2x3xf32>
  %2 = df.gather %t, %j {axis = -1 : i64} : (tensor<10x4xf32>, tensor<i64>) -> tensor<10xf32>
  %3 = df.gather %b, %i {axis = 1 : i64} : (tensor<5x2xi1>, tensor<2x3xi32>) -> tensor<5x2x3xi1>
  func.return %0 : tensor<2x3x4xf32>
}

// gather_elements: the result has the indices' shape; off the axis the indices
// may be smaller than the data.

// CHECK-LABEL: func.func @gather_elements(
// CHECK-SAME:      %[[X:.*]]: tensor<3x5xf64>, %[[I:.*]]: tensor<2x3xi64>)
func.func @gather_elements(%x: tensor<3x5xf64>, %i: tensor<2x3xi64>) -> tensor<2x3xf64> {
  // CHECK-NEXT: %[[G:.*]] = df.gather_elements %[[X]], %[[I]] {axis = 1 : i64} : (tensor<3x5xf64>, tensor<2x3xi64>) -> tensor<2x3xf64>
  // CHECK-NEXT: %{{.*}} = df.gather_elements %[[X]], %[[I]] : (tensor<3x5xf64>, tensor<2x3xi64>) -> tensor<2x3xf64>
  // CHECK-NEXT: func.return %[[G]] : tensor<2x3xf64>
  %0 = df.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf64>, tensor<2x3xi64>) -> tensor<2x3xf64>
  %1 = df.gather_elements %x, %i : (tensor<3x5xf64>, tensor<2x3xi64>) -> tensor<2x3xf64>
  func.return %0 : tensor<2x3xf64>
}

// scatter_add: the result type gives the shape scattered into.

// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:      %[[U:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<2x3xi64>, %[[V:.*]]: tensor<7x2x3xi32>)
func.func @scatter_add(%u: tensor<2x3x4xf32>, %i: tensor<2x3xi64>, %v: tensor<7x2x3xi32>) -> tensor<10x4xf32> {
  // CHECK-NEXT: %[[S:.*]] = df.scatter_add %[[U]], %[[I]] : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
  // CHECK-NEXT: %{{.*}} = df.scatter_add %[[V]], %[[I]] {axis = 1 : i64} : (tensor<7x2x3xi32>, tensor<2x3xi64>) -> tensor<7x9xi32>
  // CHECK-NEXT: func.return %[[S]] : tensor<10x4xf32>
  %0 = df.scatter_add %u, %i : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
  %1 = df.scatter_add %v, %i {axis = 1 : i64} : (tensor<7x2x3xi32>, tensor<2x3xi64>) -> tensor<7x9xi32>
  func.return %0 : tensor<10x4xf32>
}
