// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-partition | filecheck %s

// CHECK: df-partition: df.add %s has no df.device; run df-place-devices first
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %s = df.add %e, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// CHECK: df-partition: the module is already partitioned (it holds nested modules)
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      func.return %x : tensor<4xf32>
    }
  }
}

// -----

// A function of several blocks (a branch): not straight-line code.

// CHECK: {{^}}df-partition: @blocks has several blocks; only straight-line code{{$}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^bb1(%a : tensor<4xf32>)
^bb1(%b: tensor<4xf32>):
  func.return %b : tensor<4xf32>
}
