// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-bufferize{lanes=0}' | filecheck %s
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-bufferize,df-bufferize' | filecheck %s --check-prefix=TWICE

// df-bufferize folds rows in at least one accumulator, and refuses a module it has
// already bufferized.

// CHECK: {{^}}df-bufferize: lanes must be at least 1, not 0{{$}}
// TWICE: {{^}}df-bufferize: df.exp already runs a kernel: the module is bufferized{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
