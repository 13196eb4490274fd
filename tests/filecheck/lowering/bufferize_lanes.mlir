// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'df-bufferize{lanes=8}' | filecheck %s

// df-bufferize{lanes=8}, the numba target's: each row fold of a softmax or layer
// norm in eight independent accumulators (numba has no per-op fast-math, so LLVM
// cannot fold in vector lanes for it), so a sum runs at the adder's throughput;
// a pass stores (the input, the exp) and the next folds what it stored, since the
// stores' work vectorizes only in a loop of its own there: five passes a row.

// A row of 20 (at least twice LANES = 8): each reduction in eight accumulators over
// 2 chunks of 8, the 4 left over into lane 0, then folded pairwise (0+4, 1+5, ...).

// CHECK-LABEL: func.func @softmax_lanes(
// CHECK-LABEL: func.func private @softmax_0(
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[L0:[^,]*]], %[[L1:[^,]*]], %[[L2:[^,]*]], %[[L3:[^,]*]], %[[L4:[^,]*]], %[[L5:[^,]*]], %[[L6:[^,]*]], %[[L7:[^ ]*]] = scf.for %[[C:.*]] = %{{.*}} to %[[TWO:[^ ]*]] step %{{.*}} iter_args(%{{.*}} = %[[NINF]], {{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK-COUNT-8:   arith.addi %[[BASE]], %{{.*}} : index
// CHECK-COUNT-8:   arith.maximumf
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[L0]]) -> (f32) {
// CHECK:         }
// CHECK-NEXT:    %[[A:.*]] = arith.maximumf %[[T]], %[[L4]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[B:.*]] = arith.maximumf %[[L1]], %[[L5]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[C2:.*]] = arith.maximumf %[[L2]], %[[L6]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[D:.*]] = arith.maximumf %[[L3]], %[[L7]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[E:.*]] = arith.maximumf %[[A]], %[[C2]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[F:.*]] = arith.maximumf %[[B]], %[[D]] fastmath<nsz> : f32
// CHECK-NEXT:    %[[MAX:.*]] = arith.maximumf %[[E]], %[[F]] fastmath<nsz> : f32
// CHECK-NEXT:    scf.for
// CHECK:           arith.subf %{{.*}}, %[[MAX]] : f32
func.func @softmax_lanes(%x: tensor<1x20xf32>) -> tensor<1x20xf32> {
  %s = df.softmax %x {axis = 1 : i64} : (tensor<1x20xf32>) -> tensor<1x20xf32>
  func.return %s : tensor<1x20xf32>
}

//
