// RUN: dflow opt %s --split-input-file | filecheck %s
// RUN: dflow opt %s --split-input-file -p 'df-optimize{max-iterations=2}' | filecheck %s --check-prefix=OPT
// RUN: cat %s | dflow opt - --split-input-file | filecheck %s

// `dflow opt` is xdsl-opt through dflow's front door: it reads a file or `-`,
// splits it at `// -----` like xdsl-opt (line numbers stay those of the file),
// and prints each chunk's module, separated by `// -----`.

// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %[[Y:.*]] = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf32>
// CHECK:       // -----
// OPT-LABEL:   func.func @relu
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// x * 1 is x once df-optimize has run; without passes the module is unchanged.
// CHECK-LABEL: func.func @scale
// CHECK:         df.mul
// OPT-LABEL:   func.func @scale
// OPT-NOT:       df.mul
// OPT:           func.return %x : tensor<4xf32>
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = df.constant dense<1.0> : tensor<4xf32>
  %y = df.mul %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
