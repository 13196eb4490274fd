// RUN: dflow opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not dflow opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: not dflow opt %s -p 'df-fusee' 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not dflow opt %s -p 'df-recompute{mode=foo}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not dflow opt %s -p 'df-optimize{max-iters=3}' 2>&1 | filecheck %s --check-prefix=OPTION

// Every failure of `dflow opt` is one line in MLIR's diagnostic form,
// FILE:LINE:COL: error: message (FILE: error: where no line applies). With
// --verify-diagnostics each chunk's error is printed in its place on stdout and
// the exit status is 0; without it, the first error ends the run with status 1.

// FIRST:  {{^}}{{.*}}invalid_opt.mlir:21:3: error: df.add uses a value before its definition (df.neg on line 22){{$}}
// FIRST-NOT: error
// PASS:   {{^}}{{.*}}invalid_opt.mlir: error: unknown pass 'df-fusee' (did you mean df-fuse{{.*}}?){{$}}
// VALUE:  {{^}}{{.*}}invalid_opt.mlir: error: df-recompute: mode=foo is not one of hints, heuristic, budget{{$}}
// OPTION: {{^}}{{.*}}invalid_opt.mlir: error: df-optimize has no option 'max-iters' (options: max-iterations, fastmath, max-bytes, stats){{$}}

// A value used before the op that defines it (xDSL's verifier lets it through).
// CHECK: {{^}}{{.*}}invalid_opt.mlir:21:3: error: df.add uses a value before its definition (df.neg on line 22){{$}}
func.func @before(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = df.add %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Recursion through func.call, reported at the call that closes the cycle.
// CHECK: {{^}}{{.*}}invalid_opt.mlir:35:3: error: recursive call (@f -> @g -> @f): dflow inlines calls, so none may recurse{{$}}
func.func @f(%v: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @g(%v) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @g(%v: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @f(%v) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A value used with another type than its op declares is reported at the op,
// naming both types and the use where the parser noticed it.
// CHECK: {{^}}{{.*}}invalid_opt.mlir:45:3: error: %y is defined here as tensor<5xf32> but used as tensor<4xf32> at {{.*}}invalid_opt.mlir:46:15: one of the two types is wrong{{$}}
func.func @wrong_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x : (tensor<4xf32>) -> tensor<5xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A dense literal of the wrong size is reported on its own line.
// CHECK: {{^}}{{.*}}invalid_opt.mlir:54:3: error: Shape mismatch in dense literal. Expected [2] shape from the type, but got [3] shape.{{$}}
func.func @wrong_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = df.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>
  %y = df.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

// A type error an op's verifier finds.
// CHECK: {{^}}{{.*}}invalid_opt.mlir:64:3: error: df.add: shapes 4 and 3 do not broadcast{{$}}
func.func @no_broadcast(%x: tensor<4xf32>, %z: tensor<3xf32>) -> tensor<4xf32> {
  %y = df.add %x, %z : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
