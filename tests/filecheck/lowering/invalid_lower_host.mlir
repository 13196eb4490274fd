// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-lower-host | filecheck %s

// df-lower-host needs df-bufferize (df.kernel on each computing op) and
// df-plan-buffers (df.arena_bytes on the function, df.offset on each op with
// results in the arena), and refuses a module it has already lowered.

// CHECK: {{^}}df-lower-host: @main has no df.arena_bytes: run df-plan-buffers first{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.kernel = @exp_0} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
func.func private @exp_0(%x: memref<4xf32>, %a: memref<4xf32>) attributes {df.kernel} {
  func.return
}

// -----

// CHECK: {{^}}df-lower-host: df.exp has no df.offset: run df-plan-buffers first{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arena_bytes = 64 : i64} {
  %a = df.exp %x {df.kernel = @exp_0} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
func.func private @exp_0(%x: memref<4xf32>, %a: memref<4xf32>) attributes {df.kernel} {
  func.return
}

// -----

// A receive writes a view too.
// CHECK: {{^}}df-lower-host: df.recv has no df.offset: run df-plan-buffers first{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main() -> tensor<4xf32> attributes {df.arena_bytes = 64 : i64} {
      %r = df.recv {df.device = "cpu:1", key = "main.k0", from = "cpu:0", to = "cpu:1"} : () -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
  }
}

// -----

// CHECK: {{^}}df-lower-host: df.exp has no kernel: run df-bufferize first{{$}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arena_bytes = 64 : i64} {
  %a = df.exp %x {df.offset = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// CHECK: {{^}}df-lower-host: @main is already a host function: the module is lowered{{$}}
builtin.module {
  func.func private @exp_0(%x: memref<4xf32>, %a: memref<4xf32>) attributes {df.kernel} {
    func.return
  }
  func.func @main(%x: memref<4xf32>) -> memref<4xf32> attributes {df.arena_bytes = 64 : i64} {
    %arena = dfrt.arena : memref<64xi8>
    %a = dfrt.view %arena[0] : memref<64xi8> -> memref<4xf32>
    dfrt.launch @exp_0(%x, %a) : (memref<4xf32>, memref<4xf32>)
    %r = dfrt.fetch %a : memref<4xf32>
    func.return %r : memref<4xf32>
  }
}

// -----

// A function of several blocks (a branch): not straight-line code.

// CHECK: {{^}}df-lower-host: @blocks has several blocks; only straight-line code{{$}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^bb1(%a : tensor<4xf32>)
^bb1(%b: tensor<4xf32>):
  func.return %b : tensor<4xf32>
}
