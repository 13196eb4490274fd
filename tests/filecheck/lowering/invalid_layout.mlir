// RUN: xdsl-opt %s --verify-diagnostics -p 'df-layout{block=0}' | filecheck %s

// CHECK: df-layout: block 0 must be at least 1
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
