// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-lower-host -t 'df-llvm{parallel=true}' | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-lower-host -t 'df-llvm{parallel=true}' | %python -c "import sys; from llvmlite import binding as b; [b.parse_assembly(u.split(chr(10), 1)[1]).verify() for m in sys.stdin.read().split('; ----- ')[1:] for u in m.split('// -' '----')[0].split('; ===== unit ')[1:]]"

// -t 'df-llvm{parallel=true}' prints the modules as `dflow run --parallel` compiles
// them (backend/llvm/threads.py): a kernel of enough work (PARALLEL_MIN_WORK) calls
// the dispatcher on a chunk function of its outer parallel loop, the values the
// chunk reads passed in a context of i64 slots; the host's unit defines the thread
// count the runtime sets. The second RUN line verifies every unit with llvmlite.

// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; ===== unit [[K:dflow.k.[0-9a-f]+]]: tanh_0
// CHECK-NEXT:  define void @"[[K]]"(ptr %a0, ptr %a1) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %[[CTX:ctx[0-9]+]] = alloca [2 x i64]
// CHECK-NEXT:    %[[S0:.*]] = getelementptr i64, ptr %[[CTX]], i64 0
// CHECK-NEXT:    store ptr %a0, ptr %[[S0]]
// CHECK-NEXT:    %[[S1:.*]] = getelementptr i64, ptr %[[CTX]], i64 1
// CHECK-NEXT:    store ptr %a1, ptr %[[S1]]
// CHECK-NEXT:    call void @dflow.parallel_for(ptr @"[[K]].[[CHUNK:chunk[0-9]+]]", ptr %[[CTX]], i64 0, i64 512, i64 1)
// CHECK-NEXT:    ret void
// CHECK-NEXT:  }
// CHECK:       define internal void @"[[K]].[[CHUNK]]"(ptr %ctx, i64 %begin, i64 %end) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %a0.slot = getelementptr i64, ptr %ctx, i64 0
// CHECK-NEXT:    %a0 = load ptr, ptr %a0.slot
// CHECK-NEXT:    %a1.slot = getelementptr i64, ptr %ctx, i64 1
// CHECK-NEXT:    %a1 = load ptr, ptr %a1.slot
// CHECK-NEXT:    br label %[[ROWS:loop[0-9]+]]
// CHECK-NEXT:  [[ROWS]]:
// CHECK-NEXT:    %[[ROW:.*]] = phi i64 [ %begin, %entry ], [ %{{.*}}, %{{.*}} ]
// CHECK-NEXT:    %{{.*}} = icmp slt i64 %[[ROW]], %end
// CHECK:         call float @dflow.tanh.f32(
// CHECK:       define internal void @dflow.parallel_for(ptr %fn, ptr %ctx, i64 %lb, i64 %ub, i64 %step) {
// CHECK:         %{{.*}} = load i64, ptr @"dflow.threads"
// CHECK:       declare i32 @pthread_create(ptr, ptr, ptr, ptr)
// CHECK:       ; ===== unit host
// CHECK:       declare void @"[[K]]"(ptr, ptr)
// CHECK-NEXT:  @"dflow.threads" = global i64 1
func.func @big(%x: tensor<512x300xf32>) -> tensor<512x300xf32> {
  %e = df.tanh %x : (tensor<512x300xf32>) -> tensor<512x300xf32>
  func.return %e : tensor<512x300xf32>
}

// -----

// A kernel of little work stays in one piece (its outer loop's trips an argument, as
// a kernel's not split over threads), and a module with no split kernel defines no
// thread count.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"{{dflow.k.[0-9a-f]+}}"(ptr %a0, ptr %a1, i64 %s0) {
// CHECK-NOT:   parallel_for
// CHECK-NOT:   dflow.threads
// CHECK:       ; ===== unit host
// CHECK-NOT:   dflow.threads
func.func @small(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = df.tanh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %e : tensor<2x8xf32>
}
