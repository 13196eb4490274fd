// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-lower-host -t df-llvm | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-lower-host -t df-llvm | %python -c "import sys; from llvmlite import binding as b; [b.parse_assembly(u.split(chr(10), 1)[1]).verify() for m in sys.stdin.read().split('; ----- ')[1:] for u in m.split('// -' '----')[0].split('; ===== unit ')[1:]]"

// The df-llvm target prints each CPU device's LLVM module as the llvm target
// compiles it: its kernels, and its host launches gathered into segments. Buffers are pointers indexed row-major by
// their static shapes, scf.for a loop whose carried values are phis (the back edge
// from wherever the body ended), scf.parallel nested loops. The second RUN line
// parses and verifies every unit of every module with llvmlite.

// A row sum: the outer parallel loop, the inner loop carrying the sum, its add
// `reassoc` as df-bufferize marks a float sum (so that LLVM may fold it in vector
// lanes). Both loops
// run at most 64 times a call (2 rows, 2x8 sums), so both are marked not to be
// vectorized (kernel.py's SCALAR_LOOP_MAX_TRIPS): LLVM would spend milliseconds to
// save nanoseconds. The outer loop's trips are the kernel's argument (%s0), which
// the segment passes (2): a kernel that differs only in them prints the same.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; ===== unit [[K:dflow.k.[0-9a-f]+]]: reduce_sum_0
// CHECK-NEXT:  define void @"[[K]]"(ptr %[[X:.*]], ptr %[[R:.*]], i64 %s0) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    br label %[[OUTER:loop[0-9]+]]
// CHECK-NEXT:  [[OUTER]]:
// CHECK-NEXT:    %[[ROW:.*]] = phi i64 [ 0, %entry ], [ %[[NEXTROW:.*]], %[[LATCH:done[0-9]+]] ]
// CHECK-NEXT:    %[[T:.*]] = icmp slt i64 %[[ROW]], %s0
// CHECK-NEXT:    br i1 %[[T]], label %[[OBODY:body[0-9]+]], label %[[OEXIT:done[0-9]+]]
// CHECK-NEXT:  [[OBODY]]:
// CHECK-NEXT:    br label %[[INNER:loop[0-9]+]]
// CHECK-NEXT:  [[INNER]]:
// CHECK-NEXT:    %[[I:.*]] = phi i64 [ 0, %[[OBODY]] ], [ %[[NEXTI:.*]], %[[IBODY:body[0-9]+]] ]
// CHECK-NEXT:    %[[SUM:.*]] = phi float [ 0x0000000000000000, %[[OBODY]] ], [ %[[ADDED:.*]], %[[IBODY]] ]
// CHECK:       [[IBODY]]:
// CHECK-NEXT:    %[[O1:.*]] = mul i64 %[[ROW]], 8
// CHECK-NEXT:    %[[O2:.*]] = add i64 %[[O1]], %[[I]]
// CHECK-NEXT:    %[[P:.*]] = getelementptr float, ptr %[[X]], i64 %[[O2]]
// CHECK-NEXT:    %[[V:.*]] = load float, ptr %[[P]]
// CHECK-NEXT:    %[[ADDED]] = fadd reassoc float %[[SUM]], %[[V]]
// CHECK-NEXT:    %[[NEXTI]] = add i64 %[[I]], 1
// CHECK-NEXT:    br label %[[INNER]], !llvm.loop ![[IL:[0-9]+]]
// CHECK-NEXT:  [[LATCH]]:
// CHECK-NEXT:    %[[Q:.*]] = getelementptr float, ptr %[[R]], i64 %[[ROW]]
// CHECK-NEXT:    store float %[[SUM]], ptr %[[Q]]
// CHECK-NEXT:    %[[NEXTROW]] = add i64 %[[ROW]], 1
// CHECK-NEXT:    br label %[[OUTER]], !llvm.loop ![[OL:[0-9]+]]
// CHECK-NEXT:  [[OEXIT]]:
// CHECK-NEXT:    ret void
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  !0 = !{!"llvm.loop.vectorize.enable", i1 false}
// CHECK-DAG:   ![[IL]] = distinct !{![[IL]], !0}
// CHECK-DAG:   ![[OL]] = distinct !{![[OL]], !0}
// CHECK:       ; ===== unit host
// CHECK:         call void @"[[K]]"(ptr %{{.*}}, ptr %{{.*}}, i64 2)
// CHECK:       declare void @"[[K]]"(ptr, ptr, i64)
func.func @sum_rows(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %r = df.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// exp, log and tanh call the target's vectorizable functions (backend/llvm/vmath.py,
// defined once each at the end of the module, internal and always inlined); f16 is
// LLVM's half, widened by fpext; constants are the hex of their double, rounded to
// their type. exp converts its rounded multiple of ln 2 by a plain fptosi (one vector
// instruction; llvm.fptosi.sat is a scalar loop on x86), frozen for a NaN.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:         %[[H:.*]] = load half, ptr
// CHECK-NEXT:    %[[W:.*]] = fpext half %[[H]] to float
// CHECK-NEXT:    %[[E:.*]] = call float @dflow.exp.f32(float %[[W]])
// CHECK-NEXT:    %[[T:.*]] = call float @dflow.tanh.f32(float %[[E]])
// CHECK-NEXT:    %[[S:.*]] = fmul float %[[T]], 0x3FB99999A0000000
// CHECK-NEXT:    %[[N:.*]] = fptrunc float %[[S]] to half
// CHECK-NEXT:    %[[P:.*]] = getelementptr half, ptr %{{.*}}, i64 %{{.*}}
// CHECK-NEXT:    store half %[[N]], ptr %[[P]]
// CHECK-DAG:   define internal float @dflow.exp.f32(float %x) alwaysinline {
// CHECK-DAG:   define internal float @dflow.tanh.f32(float %x) alwaysinline {
// CHECK-DAG:     = fptosi float %{{t[0-9]+}} to i32
// CHECK-DAG:     = freeze i32 %{{t[0-9]+}}
// CHECK-NOT:   fptosi.sat
func.func @half_tanh(%h: tensor<16xf16>) -> tensor<16xf16> {
  %w = df.cast %h : (tensor<16xf16>) -> tensor<16xf32>
  %e = df.exp %w : (tensor<16xf32>) -> tensor<16xf32>
  %t = df.tanh %e : (tensor<16xf32>) -> tensor<16xf32>
  %c = df.constant dense<0.1> : tensor<f32>
  %s = df.mul %t, %c : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %n = df.cast %s : (tensor<16xf32>) -> tensor<16xf16>
  func.return %n : tensor<16xf16>
}

// -----

// erf of float is the target's too (one select between x·P(x²) and ±(1 - exp(Q(|x|))):
// it calls the module's exp, takes llvm.fabs and llvm.copysign); erf of double stays
// the C library's, a call per element.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:         call float @dflow.erf.f32(float %{{.*}})
// CHECK-DAG:   declare float @llvm.copysign.f32(float, float)
// CHECK-DAG:   define internal float @dflow.erf.f32(float %x) alwaysinline {
// CHECK-DAG:     call float @dflow.exp.f32(float %{{t[0-9]+}})
// CHECK-DAG:     call float @llvm.copysign.f32(float %{{t[0-9]+}}, float %x)
// CHECK-DAG:   define internal float @dflow.exp.f32(float %x) alwaysinline {
// CHECK:         call double @erf(double %{{.*}})
// CHECK:       declare double @erf(double)
func.func @erf_both(%x: tensor<16xf32>, %y: tensor<16xf64>) -> (tensor<16xf32>, tensor<16xf64>) {
  %a = df.erf %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.erf %y : (tensor<16xf64>) -> tensor<16xf64>
  func.return %a, %b : tensor<16xf32>, tensor<16xf64>
}

// -----

// A float product is one call of NumPy's OpenBLAS, its sizes and leading dimensions
// constants; a batched one a loop of calls, one per matrix. Each kernel is a unit of
// its own, with what it declares, its function named after the digest of its text
// (the unit's line names the kernels it computes); the host function's launches are
// one segment, a function of the arena and the other buffers, in the host's unit,
// which declares the kernels it calls.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; ===== unit [[MM:dflow.k.[0-9a-f]+]]: fused_matmul_0
// CHECK-NEXT:  define void @"[[MM]]"(ptr %[[A:a[0-9]]], ptr %[[B:a[0-9]]], ptr %[[C:a[0-9]]], i64 %s0) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    call void @scipy_cblas_sgemm64_(i32 101, i32 111, i32 111, i64 4, i64 3, i64 8, float 0x3FF0000000000000, ptr %[[A]], i64 8, ptr %[[B]], i64 3, float 0x0000000000000000, ptr %[[C]], i64 3)
// CHECK:         call float @dflow.tanh.f32(
// CHECK:       declare void @scipy_cblas_sgemm64_(i32, i32, i32, i64, i64, i64, float, ptr, i64, ptr, i64, float, ptr, i64)
// CHECK:       ; ===== unit [[BMM:dflow.k.[0-9a-f]+]]: matmul_0
// CHECK-NEXT:  define void @"[[BMM]]"(
// CHECK:         %[[I:.*]] = phi i64 [ 0, %entry ]
// CHECK:         icmp slt i64 %[[I]], 2
// CHECK:         call void @scipy_cblas_dgemm64_(i32 101, i32 111, i32 112, i64 3, i64 5, i64 8,
// CHECK:       declare void @scipy_cblas_dgemm64_(i32, i32, i32, i64, i64, i64, double, ptr, i64, ptr, i64, double, ptr, i64)
// CHECK:       ; ===== unit host
// CHECK-NEXT:  define void @"dflow.segment.mm.0"(ptr %arena.array, ptr %b0.array, ptr %b1.array, ptr %b2.array, ptr %b3.array, ptr %b4.array, ptr %b5.array) {
// CHECK-NEXT:  entry:
// CHECK:         %b5 = load ptr, ptr %b5.data
// CHECK-NEXT:    call void @"[[MM]]"(ptr %b0, ptr %b1, ptr %b2, i64 4)
// CHECK-NEXT:    call void @"[[BMM]]"(ptr %b3, ptr %b4, ptr %b5)
// CHECK-NEXT:    ret void
// CHECK-DAG:   declare void @"[[MM]]"(ptr, ptr, ptr, i64)
// CHECK-DAG:   declare void @"[[BMM]]"(ptr, ptr, ptr)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<2x3x8xf64>, %d: tensor<2x5x8xf64>) -> (tensor<4x3xf32>, tensor<2x3x5xf64>) {
  %r = df.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %t = df.tanh %r : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = df.matmul %c, %d {transpose_b = true} : (tensor<2x3x8xf64>, tensor<2x5x8xf64>) -> tensor<2x3x5xf64>
  func.return %t, %s : tensor<4x3xf32>, tensor<2x3x5xf64>
}

// -----

// A dilated convolution's library call is made from Python (numba's routine), said
// in a comment; the views of the arena a segment uses are offsets from the data of its
// first argument, and each argument's data is read from its NumPy array object.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK-NEXT:  ; dflow: the program of device cpu:0 (emitted by the llvm target)
// CHECK-NEXT:  ; @conv2d_0 makes its library calls from Python
// CHECK:       define void @"dflow.segment.conv.0"(ptr %arena.array, ptr %b0.array) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %arena.data = getelementptr i8, ptr %arena.array, i64 16
// CHECK-NEXT:    %arena = load ptr, ptr %arena.data
// CHECK-NEXT:    %b0.data = getelementptr i8, ptr %b0.array, i64 16
// CHECK-NEXT:    %b0 = load ptr, ptr %b0.data
// CHECK-NEXT:    %[[Y:.*]] = getelementptr i8, ptr %arena, i64 0
// CHECK-NEXT:    %[[S:.*]] = getelementptr i8, ptr %arena, i64 128
// CHECK-NEXT:    call void @"dflow.k.{{[0-9a-f]+}}"(ptr %[[Y]], ptr %[[S]])
// CHECK-NEXT:    call void @"dflow.k.{{[0-9a-f]+}}"(ptr %[[Y]], ptr %[[S]], ptr %b0)
func.func @conv(%x: tensor<1x2x7x7xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %y = df.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %s = df.reduce_sum %y {axes = array<i64: 1>, keepdims = true} : (tensor<1x3x3x3xf32>) -> tensor<1x1x3x3xf32>
  %e = df.sub %y, %s : (tensor<1x3x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %e : tensor<1x3x3x3xf32>
}

// -----

// Loops that run more than 64 times a call are left to LLVM's vectorizer: no loop
// property. Here the inner loop of an exp over 4 rows of 32 (128 in all); the outer
// one, run 4 times, is marked: its trips are the kernel's argument, counted as the 4
// the segment passes.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"[[K:dflow.k.[0-9a-f]+]]"(ptr %a0, ptr %a1, i64 %s0) {
// CHECK:         br label %[[OUTER:loop[0-9]+]]{{$}}
// CHECK:         icmp slt i64 %{{.*}}, %s0
// CHECK:         br label %[[INNER:loop[0-9]+]]{{$}}
// CHECK:         icmp slt i64 %{{.*}}, 32
// CHECK:         br label %[[INNER]]{{$}}
// CHECK:         br label %[[OUTER]], !llvm.loop ![[OL:[0-9]+]]
// CHECK:       !0 = !{!"llvm.loop.vectorize.enable", i1 false}
// CHECK-NEXT:  ![[OL]] = distinct !{![[OL]], !0}
// CHECK-NOT:   distinct
func.func @exp_rows(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %e = df.exp %x : (tensor<4x32xf32>) -> tensor<4x32xf32>
  func.return %e : tensor<4x32xf32>
}

// -----

// df.maximum and df.minimum are NumPy's: the first operand where it is greater (less)
// or NaN, else the second (so a NaN of either propagates, and of equal zeros the
// second is kept), a compare and a select that x86 makes one max and a blend; not
// llvm.maximum, which orders -0 below +0.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:         %[[A:.*]] = load float, ptr
// CHECK:         %[[B:.*]] = load float, ptr
// CHECK-NEXT:    %[[GT:.*]] = fcmp ogt float %[[A]], %[[B]]
// CHECK-NEXT:    %[[NAN:.*]] = fcmp uno float %[[A]], %[[A]]
// CHECK-NEXT:    %[[KEEP:.*]] = or i1 %[[GT]], %[[NAN]]
// CHECK-NEXT:    %[[MAX:.*]] = select i1 %[[KEEP]], float %[[A]], float %[[B]]
// CHECK-NEXT:    %[[LT:.*]] = fcmp olt float %[[MAX]], %[[B]]
// CHECK-NEXT:    %[[NAN2:.*]] = fcmp uno float %[[MAX]], %[[MAX]]
// CHECK-NEXT:    %[[KEEP2:.*]] = or i1 %[[LT]], %[[NAN2]]
// CHECK-NEXT:    %{{.*}} = select i1 %[[KEEP2]], float %[[MAX]], float %[[B]]
// CHECK-NOT:     llvm.maximum
func.func @extrema(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %m = df.maximum %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %n = df.minimum %m, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %n : tensor<8xf32>
}
