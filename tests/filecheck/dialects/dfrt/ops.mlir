// RUN: xdsl-opt %s --split-input-file | filecheck %s
// RUN: xdsl-opt %s --split-input-file --print-op-generic | xdsl-opt --split-input-file | xdsl-opt --split-input-file | filecheck %s
// RUN: xdsl-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every dfrt op, printed, re-parsed and printed again (also through the generic
// form): a host function takes the arena, views into it, copies arguments to
// the device, launches kernels, sends and receives buffers, fetches results and
// hands out output buffers.

// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    func.func private @fused_add_0(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<4x8xf32>) attributes {df.kernel} {
// CHECK:         func.func private @nothing() attributes {df.kernel} {

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[ARG:.*]]: memref<4x8xf32>, %[[C:.*]]: memref<8xf32>) -> (memref<4x8xf32>, memref<2x3xi64>) {
// CHECK-NEXT:    %[[ARENA:.*]] = dfrt.arena : memref<4096xi8>
// CHECK-NEXT:    %[[V:.*]] = dfrt.view %[[ARENA]][128] : memref<4096xi8> -> memref<4x8xf32>
// CHECK-NEXT:    %[[W:.*]] = dfrt.view %[[ARENA]][0] : memref<4096xi8> -> memref<4x8xf32>
// CHECK-NEXT:    %[[X:.*]] = dfrt.to_device %[[ARG]] : memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @fused_add_0(%[[X]], %[[C]], %[[V]]) : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    dfrt.launch @nothing() : ()
// CHECK-NEXT:    dfrt.send %[[V]] {key = "main.k1", to = "cpu:1"} : memref<4x8xf32>
// CHECK-NEXT:    dfrt.recv %[[W]] {key = "main.k0", from = "gpu:12"} : memref<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = dfrt.fetch %[[W]] : memref<4x8xf32>
// CHECK-NEXT:    %[[O:.*]] = dfrt.output : memref<2x3xi64>
// CHECK-NEXT:    func.return %[[R]], %[[O]] : memref<4x8xf32>, memref<2x3xi64>

// GENERIC-LABEL: "func.func"() <{sym_name = "main"
// GENERIC:         %[[ARENA:.*]] = "dfrt.arena"() : () -> memref<4096xi8>
// GENERIC-NEXT:    %[[V:.*]] = "dfrt.view"(%[[ARENA]]) <{offset = 128 : i64}> : (memref<4096xi8>) -> memref<4x8xf32>
// GENERIC-NEXT:    %[[W:.*]] = "dfrt.view"(%[[ARENA]]) <{offset = 0 : i64}> : (memref<4096xi8>) -> memref<4x8xf32>
// GENERIC-NEXT:    %[[X:.*]] = "dfrt.to_device"(%{{.*}}) : (memref<4x8xf32>) -> memref<4x8xf32>
// GENERIC-NEXT:    "dfrt.launch"(%[[X]], %{{.*}}, %[[V]]) <{callee = @fused_add_0}> : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>) -> ()
// GENERIC-NEXT:    "dfrt.launch"() <{callee = @nothing}> : () -> ()
// GENERIC-NEXT:    "dfrt.send"(%[[V]]) <{key = "main.k1", to = "cpu:1"}> : (memref<4x8xf32>) -> ()
// GENERIC-NEXT:    "dfrt.recv"(%[[W]]) <{key = "main.k0", from = "gpu:12"}> : (memref<4x8xf32>) -> ()
// GENERIC-NEXT:    %{{.*}} = "dfrt.fetch"(%[[W]]) : (memref<4x8xf32>) -> memref<4x8xf32>
// GENERIC-NEXT:    %{{.*}} = "dfrt.output"() : () -> memref<2x3xi64>
builtin.module {
  func.func private @fused_add_0(%a: memref<4x8xf32>, %b: memref<8xf32>, %o: memref<4x8xf32>) attributes {df.kernel} {
    func.return
  }
  func.func private @nothing() attributes {df.kernel} {
    func.return
  }
  func.func @main(%arg0: memref<4x8xf32>, %c: memref<8xf32>) -> (memref<4x8xf32>, memref<2x3xi64>) {
    %arena = dfrt.arena : memref<4096xi8>
    %v = dfrt.view %arena[128] : memref<4096xi8> -> memref<4x8xf32>
    %w = dfrt.view %arena[0] : memref<4096xi8> -> memref<4x8xf32>
    %x = dfrt.to_device %arg0 : memref<4x8xf32>
    dfrt.launch @fused_add_0(%x, %c, %v) : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>)
    dfrt.launch @nothing() : ()
    dfrt.send %v {key = "main.k1", to = "cpu:1"} : memref<4x8xf32>
    dfrt.recv %w {key = "main.k0", from = "gpu:12"} : memref<4x8xf32>
    %r = dfrt.fetch %w : memref<4x8xf32>
    %o = dfrt.output : memref<2x3xi64>
    func.return %r, %o : memref<4x8xf32>, memref<2x3xi64>
  }

  // Views of every element type, up to the arena's last byte: a rank-0 f64 at
  // 8, i64 at 16, i32 at 4, i1 (a byte each) at any offset, 4 bytes ending at 32.

  // CHECK-LABEL: func.func @views()
  // CHECK-NEXT:    %[[A:.*]] = dfrt.arena : memref<32xi8>
  // CHECK-NEXT:    %{{.*}} = dfrt.view %[[A]][8] : memref<32xi8> -> memref<f64>
  // CHECK-NEXT:    %{{.*}} = dfrt.view %[[A]][16] : memref<32xi8> -> memref<2xi64>
  // CHECK-NEXT:    %{{.*}} = dfrt.view %[[A]][4] : memref<32xi8> -> memref<1xi32>
  // CHECK-NEXT:    %{{.*}} = dfrt.view %[[A]][3] : memref<32xi8> -> memref<1x1xi1>
  // CHECK-NEXT:    %{{.*}} = dfrt.view %[[A]][28] : memref<32xi8> -> memref<2x2xi1>
  // CHECK-NEXT:    func.return
  func.func @views() {
    %a = dfrt.arena : memref<32xi8>
    %s = dfrt.view %a[8] : memref<32xi8> -> memref<f64>
    %l = dfrt.view %a[16] : memref<32xi8> -> memref<2xi64>
    %i = dfrt.view %a[4] : memref<32xi8> -> memref<1xi32>
    %b = dfrt.view %a[3] : memref<32xi8> -> memref<1x1xi1>
    %e = dfrt.view %a[28] : memref<32xi8> -> memref<2x2xi1>
    func.return
  }
}

// -----

// A partitioned module: a launch finds its kernel in its own device module.

// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"} {
// CHECK-NEXT:    func.func private @neg_0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) attributes {df.kernel} {
// CHECK:         func.func @main(%[[X:.*]]: memref<16xf32>) -> memref<16xf32> {
// CHECK-NEXT:      %[[A:.*]] = dfrt.arena : memref<64xi8>
// CHECK-NEXT:      %[[D:.*]] = dfrt.to_device %[[X]] : memref<16xf32>
// CHECK-NEXT:      %[[V:.*]] = dfrt.view %[[A]][0] : memref<64xi8> -> memref<16xf32>
// CHECK-NEXT:      dfrt.launch @neg_0(%[[D]], %[[V]]) : (memref<16xf32>, memref<16xf32>)
// CHECK-NEXT:      %[[R:.*]] = dfrt.fetch %[[V]] : memref<16xf32>
// CHECK-NEXT:      func.return %[[R]] : memref<16xf32>
builtin.module {
  builtin.module attributes {df.device = "gpu:0"} {
    func.func private @neg_0(%x: memref<16xf32>, %o: memref<16xf32>) attributes {df.kernel} {
      func.return
    }
    func.func @main(%x: memref<16xf32>) -> memref<16xf32> {
      %a = dfrt.arena : memref<64xi8>
      %d = dfrt.to_device %x : memref<16xf32>
      %v = dfrt.view %a[0] : memref<64xi8> -> memref<16xf32>
      dfrt.launch @neg_0(%d, %v) : (memref<16xf32>, memref<16xf32>)
      %r = dfrt.fetch %v : memref<16xf32>
      func.return %r : memref<16xf32>
    }
  }
}
