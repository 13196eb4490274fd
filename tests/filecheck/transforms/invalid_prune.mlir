// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=3}' | filecheck %s --check-prefix=RANGE
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=-1}' | filecheck %s --check-prefix=NEGATIVE
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=0 entry=sink}' | filecheck %s --check-prefix=EMPTY
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=1,0,1}' | filecheck %s --check-prefix=REPEAT
// RUN: xdsl-opt %s --verify-diagnostics --split-input-file -p 'df-prune{fetches=0 entry=nothere}' | filecheck %s --check-prefix=UNKNOWN
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=0 entry=helper}' | filecheck %s --check-prefix=CALLED
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-prune{fetches=0 entry=ext}' | filecheck %s --check-prefix=DECLARATION

// df-prune fails, naming the problem, when `fetches` cannot be applied to the
// entry function; under --verify-diagnostics xdsl-opt prints the message
// (and no module) and exits 0. Each check is the whole line.

// A fetch must index a result of the entry: @main has 2, @sink none.
// RANGE:    {{^}}df-prune: fetch 3 is out of range: @main has 2 results{{$}}
// RANGE-NOT: func.func
// NEGATIVE: {{^}}df-prune: fetch -1 is out of range: @main has 2 results{{$}}
// NEGATIVE-NOT: func.func
// EMPTY:    {{^}}df-prune: fetch 0 is out of range: @sink has 0 results{{$}}
// EMPTY-NOT: func.func

// A result may be fetched once.
// REPEAT:   {{^}}df-prune: fetches [1, 0, 1] repeat a result{{$}}
// REPEAT-NOT: func.func

// The entry must exist; the message lists the functions there are, in order
// (the second split has none).
// UNKNOWN:      {{^}}df-prune: no function @nothere (functions: @helper, @main, @sink, @ext){{$}}
// UNKNOWN-NEXT: {{^//}} {{-----$}}
// UNKNOWN-NEXT: {{^}}df-prune: no function @nothere (functions: none){{$}}

// Dropping results of a function that is called would break its callers.
// CALLED:   {{^}}df-prune: cannot drop results of @helper: it is called 2 time(s) in the module{{$}}
// CALLED-NOT: func.func

// A declaration has no body whose results could be dropped: the pass must
// fail with a message naming it (today it crashes on an assertion in
// FuncOp.update_function_type).
// DECLARATION: {{^}}df-prune: {{.*}}@ext{{.*$}}
// DECLARATION-NOT: func.func

func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}

func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}

func.func @sink(%x: tensor<4xf32>) {
  df.send %x {key = "k0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  func.return
}

func.func private @ext(tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)

// -----

builtin.module {
}
