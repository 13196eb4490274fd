// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Errors of the dfrt ops: views outside the arena or misaligned, launches of
// what is not a kernel of the module or with the wrong buffers, devices of
// send/recv, arenas that are not memref<Nxi8>, copies that change the type.

// 16 floats take 64 bytes: at offset 32 they end past a 64-byte arena.
// CHECK: {{^}}view of 64 bytes at offset 32 ends at 96, past the arena's 64 bytes{{$}}
func.func @view_past_end() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[32] : memref<64xi8> -> memref<4x4xf32>
  func.return
}

// -----

// An i1 takes one byte: 5 of them at offset 4 end at 9.
// CHECK: {{^}}view of 5 bytes at offset 4 ends at 9, past the arena's 8 bytes{{$}}
func.func @view_i1_past_end() {
  %arena = dfrt.arena : memref<8xi8>
  %v = dfrt.view %arena[4] : memref<8xi8> -> memref<5xi1>
  func.return
}

// -----

// CHECK: {{^}}offset 2 is not a multiple of the element width 4{{$}}
func.func @view_misaligned() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[2] : memref<64xi8> -> memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}offset 12 is not a multiple of the element width 8{{$}}
func.func @view_misaligned_f64() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[12] : memref<64xi8> -> memref<2xf64>
  func.return
}

// -----

// CHECK: {{^}}offset -4 is negative{{$}}
func.func @view_negative() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[-4] : memref<64xi8> -> memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}a view must be a statically shaped memref, got memref<?xf32>{{$}}
func.func @view_dynamic() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[0] : memref<64xi8> -> memref<?xf32>
  func.return
}

// -----

// CHECK: {{^}}a view is contiguous, without a layout: got memref<4xf32, strided<[2]>>{{$}}
func.func @view_strided() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[0] : memref<64xi8> -> memref<4xf32, strided<[2]>>
  func.return
}

// -----

// A view is taken of an arena, not of any buffer.
// CHECK: {{^}}the arena is a memref<Nxi8>, got memref<2x64xi8>{{$}}
func.func @view_of_non_arena(%x: memref<2x64xi8>) {
  %v = dfrt.view %x[0] : memref<2x64xi8> -> memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}kernel @nowhere is not a func.func of this module{{$}}
func.func @launch_unknown() {
  %arena = dfrt.arena : memref<64xi8>
  %v = dfrt.view %arena[0] : memref<64xi8> -> memref<4xf32>
  dfrt.launch @nowhere(%v) : (memref<4xf32>)
  func.return
}

// -----

// CHECK: {{^}}kernel @k is not a func.func of this module{{$}}
builtin.module {
  "memref.global"() <{sym_name = "k", type = memref<4xf32>, initial_value = dense<0.0> : tensor<4xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @launch_global(%x: memref<4xf32>) {
    dfrt.launch @k(%x) : (memref<4xf32>)
    func.return
  }
}

// -----

// A kernel of another device module is not this module's.
// CHECK: {{^}}kernel @k is not a func.func of this module{{$}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func private @k(%o: memref<4xf32>) attributes {df.kernel} {
      func.return
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @launch_elsewhere(%x: memref<4xf32>) {
      dfrt.launch @k(%x) : (memref<4xf32>)
      func.return
    }
  }
}

// -----

// CHECK: {{^}}kernel @k takes (memref<4xf32>, memref<4xf32>) and returns nothing; launched with (memref<4xf64>, memref<4xf32>){{$}}
builtin.module {
  func.func private @k(%a: memref<4xf32>, %o: memref<4xf32>) {
    func.return
  }
  func.func @launch_types(%x: memref<4xf64>) {
    %arena = dfrt.arena : memref<64xi8>
    %v = dfrt.view %arena[0] : memref<64xi8> -> memref<4xf32>
    dfrt.launch @k(%x, %v) : (memref<4xf64>, memref<4xf32>)
    func.return
  }
}

// -----

// CHECK: {{^}}kernel @k takes (memref<4xf32>, memref<4xf32>) and returns nothing; launched with (memref<4xf32>){{$}}
builtin.module {
  func.func private @k(%a: memref<4xf32>, %o: memref<4xf32>) {
    func.return
  }
  func.func @launch_count(%x: memref<4xf32>) {
    dfrt.launch @k(%x) : (memref<4xf32>)
    func.return
  }
}

// -----

// A kernel returns nothing: it writes its last buffers.
// CHECK: {{^}}kernel @k takes (memref<4xf32>) and returns nothing; launched with (memref<4xf32>){{$}}
builtin.module {
  func.func private @k(%o: memref<4xf32>) -> memref<4xf32> {
    func.return %o : memref<4xf32>
  }
  func.func @launch_returning(%x: memref<4xf32>) {
    dfrt.launch @k(%x) : (memref<4xf32>)
    func.return
  }
}

// -----

// CHECK: {{^}}device 'tpu:0' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @send_bad_device(%x: memref<4xf32>) {
  dfrt.send %x {key = "main.k0", to = "tpu:0"} : memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}device 'cpu' is not of the form cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
func.func @recv_bad_device(%x: memref<4xf32>) {
  dfrt.recv %x {key = "main.k0", from = "cpu"} : memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}the arena is a memref<Nxi8>, got memref<64xf32>{{$}}
func.func @arena_element() {
  %arena = dfrt.arena : memref<64xf32>
  func.return
}

// -----

// CHECK: {{^}}the arena is a memref<Nxi8>, got memref<8x8xi8>{{$}}
func.func @arena_rank() {
  %arena = dfrt.arena : memref<8x8xi8>
  func.return
}

// -----

// CHECK: {{^}}the arena must be a statically shaped memref, got memref<?xi8>{{$}}
func.func @arena_dynamic() {
  %arena = dfrt.arena : memref<?xi8>
  func.return
}

// -----

// A fetch and a copy to the device keep the buffer's type.
// CHECK: attribute memref<4xf32> expected from variable 'T', but got memref<4xf64>
func.func @fetch_type(%x: memref<4xf32>) {
  %r = "dfrt.fetch"(%x) : (memref<4xf32>) -> memref<4xf64>
  func.return
}

// -----

// CHECK: attribute memref<4xf32> expected from variable 'T', but got memref<8xf32>
func.func @to_device_type(%x: memref<4xf32>) {
  %r = "dfrt.to_device"(%x) : (memref<4xf32>) -> memref<8xf32>
  func.return
}

// -----

// CHECK: {{^}}an output must be a statically shaped memref, got memref<?x4xf32>{{$}}
func.func @dynamic_output() {
  %o = dfrt.output : memref<?x4xf32>
  func.return
}
