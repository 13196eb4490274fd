// RUN: xdsl-opt %s --split-input-file -t df-llvm | filecheck %s
// RUN: xdsl-opt %s --split-input-file -t df-llvm | %python -c "import sys; from llvmlite import binding as b; [b.parse_assembly(u.split(chr(10), 1)[1]).verify() for m in sys.stdin.read().split('; ----- ')[1:] for u in m.split('// -' '----')[0].split('; ===== unit ')[1:]]"

// Kernels written with explicit vectors (backend/llvm/vectors.py): vector<16xf32> is
// LLVM's <16 x float>; a load or store of one at an index of a buffer is one access
// at that element's address; a broadcast inserts into lane 0 and shuffles; vector.fma
// is llvm.fma of the vector type; a splat constant is LLVM's splat; arith ops take
// vectors. The second RUN line verifies each unit with llvmlite.

// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; ===== unit [[K:dflow.k.[0-9a-f]+]]: axpy
// CHECK-NEXT:  define void @"[[K]]"(ptr %[[X:.*]], ptr %[[Y:.*]]) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %[[PA:.*]] = getelementptr float, ptr %[[X]], i64 0
// CHECK-NEXT:    %[[A:.*]] = load <16 x float>, ptr %[[PA]], align 4
// CHECK-NEXT:    %[[PB:.*]] = getelementptr float, ptr %[[Y]], i64 16
// CHECK-NEXT:    %[[B:.*]] = load <16 x float>, ptr %[[PB]], align 4
// CHECK-NEXT:    %[[PS:.*]] = getelementptr float, ptr %[[X]], i64 16
// CHECK-NEXT:    %[[S:.*]] = load float, ptr %[[PS]]
// CHECK-NEXT:    %[[I:.*]] = insertelement <16 x float> poison, float %[[S]], i64 0
// CHECK-NEXT:    %[[T:.*]] = shufflevector <16 x float> %[[I]], <16 x float> poison, <16 x i32> zeroinitializer
// CHECK-NEXT:    %[[F:.*]] = call <16 x float> @llvm.fma.v16f32(<16 x float> %[[A]], <16 x float> splat (float 0x4000000000000000), <16 x float> %[[B]])
// CHECK-NEXT:    %[[G:.*]] = fadd <16 x float> %[[F]], %[[T]]
// CHECK-NEXT:    %[[PO:.*]] = getelementptr float, ptr %[[Y]], i64 0
// CHECK-NEXT:    store <16 x float> %[[G]], ptr %[[PO]], align 4
// CHECK-NEXT:    ret void
// CHECK:       declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
func.func private @axpy(%x: memref<32xf32>, %y: memref<32xf32>) attributes {df.kernel} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant dense<2.0> : vector<16xf32>
  %a = vector.load %x[%c0] : memref<32xf32>, vector<16xf32>
  %b = vector.load %y[%c16] : memref<32xf32>, vector<16xf32>
  %s = memref.load %x[%c16] : memref<32xf32>
  %t = vector.broadcast %s : f32 to vector<16xf32>
  %f = vector.fma %a, %two, %b : vector<16xf32>
  %g = arith.addf %f, %t : vector<16xf32>
  vector.store %g, %y[%c0] : memref<32xf32>, vector<16xf32>
  func.return
}

// -----

// Vectors carried by a loop are phis of the vector type (a microkernel's
// accumulators); f64 vectors are <N x double>.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; ===== unit [[K:dflow.k.[0-9a-f]+]]: sum_rows
// CHECK-NEXT:  define void @"[[K]]"(ptr %[[X:.*]], ptr %[[R:.*]]) {
// CHECK:         %[[ACC:.*]] = phi <8 x double> [ splat (double 0x0000000000000000), %entry ], [ %[[NEXT:.*]], %[[BODY:body[0-9]+]] ]
// CHECK:       [[BODY]]:
// CHECK:         %[[V:.*]] = load <8 x double>, ptr %{{.*}}, align 8
// CHECK-NEXT:    %[[NEXT]] = fadd <8 x double> %[[ACC]], %[[V]]
// CHECK:         store <8 x double> %[[ACC]], ptr %{{.*}}, align 8
func.func private @sum_rows(%x: memref<4x8xf64>, %r: memref<8xf64>) attributes {df.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : vector<8xf64>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (vector<8xf64>) {
    %v = vector.load %x[%i, %c0] : memref<4x8xf64>, vector<8xf64>
    %n = arith.addf %acc, %v : vector<8xf64>
    scf.yield %n : vector<8xf64>
  }
  vector.store %sum, %r[%c0] : memref<8xf64>, vector<8xf64>
  func.return
}
