// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-bufferize,df-plan-buffers,df-lower-host | filecheck %s
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-bufferize,df-plan-buffers,df-lower-host --print-between-passes | filecheck %s --check-prefix=STAGES
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-partition,df-bufferize,df-plan-buffers,df-lower-host | filecheck %s --check-prefix=PART

// df-lower-host turns each planned graph function into a host function of dfrt
// ops over memrefs: the arena of df.arena_bytes, a view per result at its
// df.offset, a launch of the op's kernel, memref.global for constants. On a CPU a
// returned value is computed straight into a dfrt.output buffer (its planned block
// stays unused) and returned as is; returned arguments and constants, and every
// result on a GPU, go through dfrt.fetch. Errors are in invalid_lower_host.mlir.
// The PART run partitions first: only the placed module (the last) passes it.

// STAGES takes the arena size and offsets the planner printed and checks that
// the host function uses exactly those. CHECK has them written out, computed by
// hand: blocks are 64-byte aligned; %m, %a, %e (4x8xf32, 128 bytes) share [0,
// 128) in place; %s (16 bytes) takes [128, 192), %b (4xf64, 32 bytes) [192,
// 256), %g (4xi1, 4 bytes) [256, 320): %s is a result and %e is still read when
// %s is made, so none of these share. 320 bytes in all.

// STAGES-LABEL: IR after df-plan-buffers:
// STAGES:         func.func @main({{.*}} attributes {df.arena_bytes = [[SIZE:[0-9]+]] : i64} {
// STAGES-NEXT:      %k = df.constant
// STAGES-NEXT:      %m = df.matmul {{.*}}df.offset = array<i64: [[M:[0-9]+]]>
// STAGES-NEXT:      %a = df.add {{.*}}df.offset = array<i64: [[A:[0-9]+]]>
// STAGES-NEXT:      %e = df.exp {{.*}}df.offset = array<i64: [[E:[0-9]+]]>
// STAGES-NEXT:      %s = df.reduce_sum {{.*}}df.offset = array<i64: [[S:[0-9]+]]>
// STAGES-NEXT:      %b = df.cast {{.*}}df.offset = array<i64: [[B:[0-9]+]]>
// STAGES-NEXT:      %g = df.greater {{.*}}df.offset = array<i64: [[G:[0-9]+]]>
// STAGES:         func.func @main(
// STAGES-NEXT:      %[[ARENA:.*]] = dfrt.arena : memref<[[SIZE]]xi8>
// STAGES-NEXT:      %{{.*}} = memref.get_global
// STAGES-NEXT:      %{{.*}} = dfrt.view %[[ARENA]]{{\[}}[[M]]{{\]}} : memref<[[SIZE]]xi8> -> memref<4x8xf32>
// STAGES-NEXT:      dfrt.launch @matmul_0
// STAGES-NEXT:      %{{.*}} = dfrt.view %[[ARENA]]{{\[}}[[A]]{{\]}} : memref<[[SIZE]]xi8> -> memref<4x8xf32>
// STAGES-NEXT:      dfrt.launch @add_1
// STAGES-NEXT:      %{{.*}} = dfrt.output : memref<4x8xf32>
// STAGES-NEXT:      dfrt.launch @exp_2
// STAGES-NEXT:      %{{.*}} = dfrt.output : memref<4xf32>
// STAGES-NEXT:      dfrt.launch @reduce_sum_3
// STAGES-NEXT:      %{{.*}} = dfrt.view %[[ARENA]]{{\[}}[[B]]{{\]}} : memref<[[SIZE]]xi8> -> memref<4xf64>
// STAGES-NEXT:      dfrt.launch @cast_4
// STAGES-NEXT:      %{{.*}} = dfrt.view %[[ARENA]]{{\[}}[[G]]{{\]}} : memref<[[SIZE]]xi8> -> memref<4xi1>
// STAGES-NEXT:      dfrt.launch @greater_5

// The constant becomes a private constant memref.global named after the
// function, placed first in the module and read with memref.get_global; the
// graph function's place is taken by the host function, after the kernels.

// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    "memref.global"() <{sym_name = "main_cst0", type = memref<8xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-NEXT:    func.func private @dflow_matmul_f32(
// CHECK-NOT:     = df.
// CHECK-NOT:     df.offset
// CHECK-NOT:     df.kernel =
// CHECK:         func.func private @greater_5(
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x8xf32>) -> (memref<4x8xf32>, memref<4xf32>) attributes {df.arena_bytes = 320 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = dfrt.arena : memref<320xi8>
// CHECK-NEXT:    %[[K:.*]] = memref.get_global @main_cst0 : memref<8xf32>
// CHECK-NEXT:    %[[M:.*]] = dfrt.view %[[ARENA]][0] : memref<320xi8> -> memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @matmul_0(%[[X]], %[[W]], %[[M]]) : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    %[[A:.*]] = dfrt.view %[[ARENA]][0] : memref<320xi8> -> memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @add_1(%[[M]], %[[K]], %[[A]]) : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    %[[E:.*]] = dfrt.output : memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @exp_2(%[[A]], %[[E]]) : (memref<4x8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = dfrt.output : memref<4xf32>
// CHECK-NEXT:    dfrt.launch @reduce_sum_3(%[[E]], %[[S]]) : (memref<4x8xf32>, memref<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = dfrt.view %[[ARENA]][192] : memref<320xi8> -> memref<4xf64>
// CHECK-NEXT:    dfrt.launch @cast_4(%[[S]], %[[B]]) : (memref<4xf32>, memref<4xf64>)
// CHECK-NEXT:    %[[G:.*]] = dfrt.view %[[ARENA]][256] : memref<320xi8> -> memref<4xi1>
// CHECK-NEXT:    dfrt.launch @greater_5(%[[B]], %[[B]], %[[G]]) : (memref<4xf64>, memref<4xf64>, memref<4xi1>)
// CHECK-NEXT:    func.return %[[E]], %[[S]] : memref<4x8xf32>, memref<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT: }
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %k = df.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %m = df.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a = df.add %m, %k : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %e = df.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.reduce_sum %e {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %b = df.cast %s : (tensor<4xf32>) -> tensor<4xf64>
  %g = df.greater %b, %b : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
  func.return %e, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A fusion group with two results: an output for the returned one and a view
// for the other (offset 128, the planner's array in result order), one launch
// writing both. Results that are an argument or a constant are fetched. The globals of all functions
// are numbered in the module.

// CHECK-LABEL: builtin.module {
// CHECK-NEXT:    "memref.global"() <{sym_name = "pass_cst0", type = memref<2xf32>, initial_value = dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>, sym_visibility = "private", constant}>
// CHECK-NEXT:    "memref.global"() <{sym_name = "fused_cst1", type = memref<8xf32>, initial_value = dense<1.000000e+00> : tensor<8xf32>, sym_visibility = "private", constant}>
// CHECK-LABEL: func.func @pass(
// CHECK-SAME:      %[[X:.*]]: memref<2xf32>) -> (memref<2xf32>, memref<2xf32>, memref<2xf32>) attributes {df.arena_bytes = 64 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = dfrt.arena : memref<64xi8>
// CHECK-NEXT:    %[[K:.*]] = memref.get_global @pass_cst0 : memref<2xf32>
// CHECK-NEXT:    %[[N:.*]] = dfrt.output : memref<2xf32>
// CHECK-NEXT:    dfrt.launch @neg_0(%[[X]], %[[N]])
// CHECK-NEXT:    %[[R0:.*]] = dfrt.fetch %[[X]] : memref<2xf32>
// CHECK-NEXT:    %[[R1:.*]] = dfrt.fetch %[[K]] : memref<2xf32>
// CHECK-NEXT:    func.return %[[R0]], %[[R1]], %[[N]]
// CHECK-LABEL: func.func @fused(
// CHECK-SAME:      %[[X:.*]]: memref<4x1xf32>, %[[Y:.*]]: memref<8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) attributes {df.arena_bytes = 256 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = dfrt.arena : memref<256xi8>
// CHECK-NEXT:    %[[K:.*]] = memref.get_global @fused_cst1 : memref<8xf32>
// CHECK-NEXT:    %[[C:.*]] = dfrt.output : memref<4x8xf32>
// CHECK-NEXT:    %[[D:.*]] = dfrt.view %[[ARENA]][128] : memref<256xi8> -> memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @fused_add_0(%[[X]], %[[Y]], %[[C]], %[[D]]) : (memref<4x1xf32>, memref<8xf32>, memref<4x8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = dfrt.output : memref<4x8xf32>
// CHECK-NEXT:    dfrt.launch @sub_1(%[[D]], %[[K]], %[[S]])
// CHECK-NEXT:    func.return %[[C]], %[[S]]
func.func @pass(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %k = df.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %n = df.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %x, %k, %n : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @fused(%x: tensor<4x1xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %k = df.constant dense<1.0> : tensor<8xf32>
  %c, %d = df.fused(%0 = %x, %1 = %y) {kind = "elementwise", name = "fused_add_0"} : (tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %a = df.add %0, %1 : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %e = df.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %a, %e : tensor<4x8xf32>, tensor<4x8xf32>
  }
  %s = df.sub %d, %k : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %c, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reshape of an arena value is a view at its input's offset: no kernel, no
// launch, no kernel (the kernels are numbered in order: %v takes no number). A
// reshape of an argument copies through its kernel, and so does a reshape whose
// result is returned (into the caller's output).

// CHECK-LABEL: func.func @flatten(
// CHECK-SAME:      %[[X:.*]]: memref<2x8xf32>)
// CHECK-NEXT:    %[[ARENA:.*]] = dfrt.arena : memref<128xi8>
// CHECK-NEXT:    %[[E:.*]] = dfrt.view %[[ARENA]][0] : memref<128xi8> -> memref<2x8xf32>
// CHECK-NEXT:    dfrt.launch @exp_0(%[[X]], %[[E]])
// CHECK-NEXT:    %[[V:.*]] = dfrt.view %[[ARENA]][0] : memref<128xi8> -> memref<16xf32>
// CHECK-NEXT:    %[[C:.*]] = dfrt.view %[[ARENA]][64] : memref<128xi8> -> memref<16xf32>
// CHECK-NEXT:    dfrt.launch @reshape_1(%[[X]], %[[C]])
// CHECK-NEXT:    %[[A:.*]] = dfrt.view %[[ARENA]][0] : memref<128xi8> -> memref<16xf32>
// CHECK-NEXT:    dfrt.launch @add_2(%[[V]], %[[C]], %[[A]])
// CHECK-NEXT:    %[[O:.*]] = dfrt.output : memref<4x4xf32>
// CHECK-NEXT:    dfrt.launch @reshape_3(%[[A]], %[[O]])
// CHECK-NEXT:    func.return %[[O]]
func.func @flatten(%x: tensor<2x8xf32>) -> tensor<4x4xf32> {
  %e = df.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v = df.reshape %e : (tensor<2x8xf32>) -> tensor<16xf32>
  %c = df.reshape %x : (tensor<2x8xf32>) -> tensor<16xf32>
  %a = df.add %v, %c : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %o = df.reshape %a : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %o : tensor<4x4xf32>
}

// -----

// A placed module, partitioned first (PART): each device module gets its own
// arena, globals and kernels. On cpu:0 the arguments are used as they are;
// df.send and df.recv become dfrt.send of the value's view and dfrt.recv into a
// view of their own; the result is computed into an output. On gpu:0 the
// argument and the constant are copied to the device first (dfrt.to_device), the
// kernels launched on the copies, and the result fetched from the arena.

// PART-LABEL: builtin.module attributes {df.device = "cpu:0", df.arena_bytes = 64 : i64} {
// PART-NEXT:    func.func private @exp_0(
// PART:         func.func private @neg_1(
// PART:         func.func @main(%[[X:.*]]: memref<4xf32>) -> memref<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>), df.arena_bytes = 64 : i64} {
// PART-NEXT:      %[[ARENA:.*]] = dfrt.arena : memref<64xi8>
// PART-NEXT:      %[[A:.*]] = dfrt.view %[[ARENA]][0] : memref<64xi8> -> memref<4xf32>
// PART-NEXT:      dfrt.launch @exp_0(%[[X]], %[[A]]) : (memref<4xf32>, memref<4xf32>)
// PART-NEXT:      dfrt.send %[[A]] {key = "main.k0", to = "gpu:0"} : memref<4xf32>
// PART-NEXT:      %[[C:.*]] = dfrt.view %[[ARENA]][0] : memref<64xi8> -> memref<4xf32>
// PART-NEXT:      dfrt.recv %[[C]] {key = "main.k1", from = "gpu:0"} : memref<4xf32>
// PART-NEXT:      %[[D:.*]] = dfrt.output : memref<4xf32>
// PART-NEXT:      dfrt.launch @neg_1(%[[C]], %[[D]]) : (memref<4xf32>, memref<4xf32>)
// PART-NEXT:      func.return %[[D]] : memref<4xf32>
// PART-NEXT:    }
// PART-NEXT:  }
// PART-NEXT:  builtin.module attributes {df.device = "gpu:0", df.arena_bytes = 128 : i64} {
// PART-NEXT:    "memref.global"() <{sym_name = "main_cst0", type = memref<4xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>, sym_visibility = "private", constant}> : () -> ()
// PART-NEXT:    func.func private @add_0(
// PART:         func.func private @mul_1(
// PART:         func.func @main(%[[Y:.*]]: memref<4xf32>) -> memref<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>), df.arena_bytes = 128 : i64} {
// PART-NEXT:      %[[ARENA:.*]] = dfrt.arena : memref<128xi8>
// PART-NEXT:      %[[YD:.*]] = dfrt.to_device %[[Y]] : memref<4xf32>
// PART-NEXT:      %[[KH:.*]] = memref.get_global @main_cst0 : memref<4xf32>
// PART-NEXT:      %[[KD:.*]] = dfrt.to_device %[[KH]] : memref<4xf32>
// PART-NEXT:      %[[A:.*]] = dfrt.view %[[ARENA]][0] : memref<128xi8> -> memref<4xf32>
// PART-NEXT:      dfrt.recv %[[A]] {key = "main.k0", from = "cpu:0"} : memref<4xf32>
// PART-NEXT:      %[[B:.*]] = dfrt.view %[[ARENA]][0] : memref<128xi8> -> memref<4xf32>
// PART-NEXT:      dfrt.launch @add_0(%[[A]], %[[YD]], %[[B]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>)
// PART-NEXT:      %[[C:.*]] = dfrt.view %[[ARENA]][64] : memref<128xi8> -> memref<4xf32>
// PART-NEXT:      dfrt.launch @mul_1(%[[B]], %[[KD]], %[[C]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>)
// PART-NEXT:      dfrt.send %[[C]] {key = "main.k1", to = "cpu:0"} : memref<4xf32>
// PART-NEXT:      %[[R:.*]] = dfrt.fetch %[[B]] : memref<4xf32>
// PART-NEXT:      func.return %[[R]] : memref<4xf32>
// PART-NEXT:    }
// PART-NEXT:  }
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = df.constant {df.device = "gpu:0"} dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.add %a, %y {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.mul %b, %k {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = df.neg %c {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %d, %b : tensor<4xf32>, tensor<4xf32>
}
