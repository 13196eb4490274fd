// RUN: %xdsl-roundtrip | filecheck %s

// CHECK-LABEL: func.func @smoke
func.func @smoke(%x: tensor<4x1xf32>, %y: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[S:.*]] = df.add %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %s = df.add %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: func.return %[[S]]
  func.return %s : tensor<4x8xf32>
}
