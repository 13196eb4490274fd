// RUN: xdsl-opt %s --split-input-file -p df-fuse | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p 'df-fuse{max-ops=2}' | filecheck %s --check-prefix=LIMIT
// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-fuse | filecheck %s

// df-fuse groups elementwise ops, reductions closing them and contraction
// epilogues into df.fused ops. Running it twice changes nothing more.

// A chain becomes one group; the splat constant is cloned into the body, the
// dense one stays outside as an operand.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BX:.*]] = %[[X]], %[[BY:.*]] = %[[Y]], %[[BW:.*]] = %[[W]]) {kind = "elementwise", name = "fused_add_0"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:      %[[A:.*]] = df.add %[[BX]], %[[BY]]
// CHECK-NEXT:      %[[TWO:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:      %[[B:.*]] = df.mul %[[A]], %[[TWO]]
// CHECK-NEXT:      %[[C:.*]] = df.sub %[[B]], %[[BW]]
// CHECK-NEXT:      %[[D:.*]] = df.tanh %[[C]]
// CHECK-NEXT:      df.yield %[[D]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x8xf32>

// At most two ops per group: the chain splits in two.
// LIMIT-LABEL: func.func @chain(
// LIMIT:         %[[R1:.*]] = df.fused({{.*}}) {kind = "elementwise", name = "fused_add_0"}
// LIMIT-NEXT:      df.add
// LIMIT-NEXT:      df.constant
// LIMIT-NEXT:      df.mul
// LIMIT-NEXT:      df.yield
// LIMIT-NEXT:    }
// LIMIT-NEXT:    %[[R2:.*]] = df.fused(%{{.*}} = %[[R1]], %{{.*}} = %{{.*}}) {kind = "elementwise", name = "fused_sub_1"}
// LIMIT-NEXT:      df.sub
// LIMIT-NEXT:      df.tanh
// LIMIT-NEXT:      df.yield
// LIMIT-NEXT:    }
// LIMIT-NEXT:    func.return %[[R2]]
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = df.constant dense<2.0> : tensor<f32>
  %w = df.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %a = df.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.mul %a, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %c = df.sub %b, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %d = df.tanh %c : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// -----

// Broadcasting inside a group: values of several shapes, compare, select and cast.

// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf64>, %[[Y:.*]]: tensor<8xf64>, %[[S:.*]]: tensor<f64>)
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BX:.*]] = %[[X]], %[[BY:.*]] = %[[Y]], %[[BS:.*]] = %[[S]]) {kind = "elementwise", name = "fused_mul_0"} : (tensor<4x1xf64>, tensor<8xf64>, tensor<f64>) -> tensor<4x8xi1> {
// CHECK-NEXT:      %[[A:.*]] = df.mul %[[BX]], %[[BY]] : (tensor<4x1xf64>, tensor<8xf64>) -> tensor<4x8xf64>
// CHECK-NEXT:      %[[B:.*]] = df.exp %[[BY]] : (tensor<8xf64>) -> tensor<8xf64>
// CHECK-NEXT:      %[[C:.*]] = df.greater %[[A]], %[[B]] : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xi1>
// CHECK-NEXT:      %[[D:.*]] = df.select %[[C]], %[[A]], %[[BS]] : (tensor<4x8xi1>, tensor<4x8xf64>, tensor<f64>) -> tensor<4x8xf64>
// CHECK-NEXT:      %[[E:.*]] = df.cast %[[D]] : (tensor<4x8xf64>) -> tensor<4x8xi1>
// CHECK-NEXT:      df.yield %[[E]] : tensor<4x8xi1>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x8xi1>
func.func @broadcast(%x: tensor<4x1xf64>, %y: tensor<8xf64>, %s: tensor<f64>) -> tensor<4x8xi1> {
  %a = df.mul %x, %y : (tensor<4x1xf64>, tensor<8xf64>) -> tensor<4x8xf64>
  %b = df.exp %y : (tensor<8xf64>) -> tensor<8xf64>
  %c = df.greater %a, %b : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xi1>
  %d = df.select %c, %a, %s : (tensor<4x8xi1>, tensor<4x8xf64>, tensor<f64>) -> tensor<4x8xf64>
  %e = df.cast %d : (tensor<4x8xf64>) -> tensor<4x8xi1>
  func.return %e : tensor<4x8xi1>
}

// -----

// A diamond (one value used by two ops that meet again) is one group.

// CHECK-LABEL: func.func @diamond(
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BX:.*]] = %{{.*}}) {kind = "elementwise", name = "fused_abs_0"} : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK-NEXT:      %[[A:.*]] = df.abs %[[BX]]
// CHECK-NEXT:      %[[B:.*]] = df.sqrt %[[A]]
// CHECK-NEXT:      %[[C:.*]] = df.square %[[A]]
// CHECK-NEXT:      %[[D:.*]] = df.addn %[[A]], %[[B]], %[[C]]
// CHECK-NEXT:      df.yield %[[D]] : tensor<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = df.abs %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.sqrt %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = df.square %a : (tensor<16xf32>) -> tensor<16xf32>
  %d = df.addn %a, %b, %c : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %d : tensor<16xf32>
}

// -----

// %c may not join the group of %a and %b: the transpose, outside, reads %a and
// feeds %c, so the group would run both before and after it. The group splits.

// CHECK-LABEL: func.func @cycle(
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]] = df.fused(%{{.*}} = %{{.*}}) {kind = "elementwise", name = "fused_exp_0"} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
// CHECK-NEXT:      %[[IA:.*]] = df.exp
// CHECK-NEXT:      %[[IB:.*]] = df.neg %[[IA]]
// CHECK-NEXT:      df.yield %[[IA]], %[[IB]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[A]]
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BB:.*]] = %[[B]], %[[BT:.*]] = %[[T]]) {kind = "elementwise", name = "fused_add_1"}
// CHECK-NEXT:      %[[C:.*]] = df.add %[[BB]], %[[BT]]
// CHECK-NEXT:      %[[D:.*]] = df.relu %[[C]]
// CHECK-NEXT:      df.yield %[[D]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = df.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = df.neg %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = df.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = df.add %b, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = df.relu %c : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %d : tensor<4x4xf32>
}

// -----

// A reduction closes its group: the sqrt of its result starts a new group,
// which a softmax closes in turn. %a, used outside its group, is a result.

// CHECK-LABEL: func.func @reduction(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4x1xf32>)
// CHECK-NEXT:    %[[A:.*]], %[[R:.*]] = df.fused(%[[BX:.*]] = %[[X]], %[[BM:.*]] = %[[M]]) {kind = "reduction", name = "fused_sub_0"} : (tensor<4x8xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
// CHECK-NEXT:      %[[IA:.*]] = df.sub %[[BX]], %[[BM]]
// CHECK-NEXT:      %[[IB:.*]] = df.square %[[IA]]
// CHECK-NEXT:      %[[IR:.*]] = df.reduce_mean %[[IB]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:      df.yield %[[IA]], %[[IR]] : tensor<4x8xf32>, tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]], %[[P:.*]] = df.fused(%[[BR:.*]] = %[[R]], %[[BA:.*]] = %[[A]]) {kind = "reduction", name = "fused_sqrt_1"} : (tensor<4x1xf32>, tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:      %[[IS:.*]] = df.sqrt %[[BR]]
// CHECK-NEXT:      %[[IN:.*]] = df.div %[[BA]], %[[IS]]
// CHECK-NEXT:      %[[IP:.*]] = df.softmax %[[IN]]
// CHECK-NEXT:      df.yield %[[IS]], %[[IP]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[S]], %[[P]]
func.func @reduction(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %a = df.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %b = df.square %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = df.reduce_mean %b {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = df.sqrt %r : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = df.div %a, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p = df.softmax %n : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s, %p : tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// A reduction alone still closes its group: the scaling of its result is not
// fused with it.

// CHECK-LABEL: func.func @reduction_alone(
// CHECK-NEXT:    %[[T:.*]] = df.transpose
// CHECK-NEXT:    %[[R:.*]] = df.reduce_max %[[T]]
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = df.mul %[[R]], %[[C]]
// CHECK-NEXT:    func.return %[[S]]
func.func @reduction_alone(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %t = df.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %r = df.reduce_max %t {axes = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8xf32>
  %c = df.constant dense<0.125> : tensor<f32>
  %s = df.mul %r, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}

// -----

// A matmul heads its group with its epilogue (bias, relu); the relu before it
// stays alone (a contraction comes first in its group), and so does the second
// matmul, which has no epilogue.

// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[BIAS:.*]]: tensor<16xf32>, %[[V:.*]]: tensor<16x2xf32>)
// CHECK-NEXT:    %[[P:.*]] = df.relu %[[X]]
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BP:.*]] = %[[P]], %[[BW:.*]] = %[[W]], %[[BB:.*]] = %[[BIAS]]) {kind = "contraction", name = "fused_matmul_0"} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:      %[[M:.*]] = df.matmul %[[BP]], %[[BW]]
// CHECK-NEXT:      %[[A:.*]] = df.add %[[M]], %[[BB]]
// CHECK-NEXT:      %[[IR:.*]] = df.relu %[[A]]
// CHECK-NEXT:      df.yield %[[IR]] : tensor<4x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N:.*]] = df.matmul %[[R]], %[[V]]
// CHECK-NEXT:    func.return %[[N]]
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %bias: tensor<16xf32>, %v: tensor<16x2xf32>) -> tensor<4x2xf32> {
  %p = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.matmul %p, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = df.add %m, %bias : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = df.relu %a : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = df.matmul %r, %v : (tensor<4x16xf32>, tensor<16x2xf32>) -> tensor<4x2xf32>
  func.return %n : tensor<4x2xf32>
}

// -----

// One contraction per group: the second matmul heads a group of its own. A
// conv2d takes its epilogue as a matmul does; a splat constant it reads stays an
// operand, so the contraction is the first op of the body.

// CHECK-LABEL: func.func @two_contractions(
// CHECK:         %[[R1:.*]] = df.fused({{.*}}) {kind = "contraction", name = "fused_matmul_0"}
// CHECK-NEXT:      df.matmul
// CHECK-NEXT:      df.tanh
// CHECK-NEXT:      df.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R2:.*]] = df.fused(%{{.*}} = %[[R1]], {{.*}}) {kind = "contraction", name = "fused_matmul_1"}
// CHECK-NEXT:      df.matmul
// CHECK-NEXT:      df.tanh
// CHECK-NEXT:      df.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R2]]
func.func @two_contractions(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = df.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = df.tanh %m : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = df.matmul %t, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = df.tanh %n : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %u : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5xf32>, %[[B:.*]]: tensor<3x1x1xf32>)
// CHECK-NEXT:    %[[F:.*]] = df.constant dense<1.000000e+00> : tensor<3x2x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = df.fused(%[[BX:.*]] = %[[X]], %[[BF:.*]] = %[[F]], %[[BB:.*]] = %[[B]]) {kind = "contraction", name = "fused_conv2d_2"} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3x1x1xf32>) -> tensor<1x3x3x3xf32> {
// CHECK-NEXT:      %[[C:.*]] = df.conv2d %[[BX]], %[[BF]]
// CHECK-NEXT:      %[[A:.*]] = df.add %[[C]], %[[BB]]
// CHECK-NEXT:      %[[S:.*]] = df.sigmoid %[[A]]
// CHECK-NEXT:      df.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @conv(%x: tensor<1x2x5x5xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x3x3xf32> {
  %f = df.constant dense<1.0> : tensor<3x2x3x3xf32>
  %c = df.conv2d %x, %f : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %a = df.add %c, %b : (tensor<1x3x3x3xf32>, tensor<3x1x1xf32>) -> tensor<1x3x3x3xf32>
  %s = df.sigmoid %a : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %s : tensor<1x3x3x3xf32>
}

// -----

// Ops on two devices never share a group; each group keeps its device, on the
// fused op, its body and its yield.

// CHECK-LABEL: func.func @devices(
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]] = df.fused(%{{.*}} = %{{.*}}) {df.device = "cpu:0", kind = "elementwise", name = "fused_exp_0"}
// CHECK-NEXT:      %[[IA:.*]] = df.exp %{{.*}} {df.device = "cpu:0"}
// CHECK-NEXT:      %[[IB:.*]] = df.neg %[[IA]] {df.device = "cpu:0"}
// CHECK-NEXT:      df.yield %[[IA]], %[[IB]] {df.device = "cpu:0"}
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[D:.*]] = df.fused(%[[BB:.*]] = %[[B]]) {df.device = "gpu:0", kind = "elementwise", name = "fused_abs_1"}
// CHECK-NEXT:      %[[C:.*]] = df.abs %[[BB]] {df.device = "gpu:0"}
// CHECK-NEXT:      %[[ID:.*]] = df.sqrt %[[C]] {df.device = "gpu:0"}
// CHECK-NEXT:      df.yield %[[ID]] {df.device = "gpu:0"}
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[E:.*]] = df.add %[[D]], %[[A]] {df.device = "cpu:0"}
// CHECK-NEXT:    func.return %[[E]]
func.func @devices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.abs %b {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %d = df.sqrt %c {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.add %d, %a {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// Every value of the group used outside it is a result, in program order; the
// ops outside move after the fused op that feeds them.

// CHECK-LABEL: func.func @outputs(
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]], %[[C:.*]] = df.fused(%{{.*}} = %{{.*}}) {kind = "elementwise", name = "fused_exp_0"} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:      %[[IA:.*]] = df.exp
// CHECK-NEXT:      %[[IB:.*]] = df.neg %[[IA]]
// CHECK-NEXT:      %[[IC:.*]] = df.mul %[[IB]], %[[IA]]
// CHECK-NEXT:      df.yield %[[IA]], %[[IB]], %[[IC]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = df.reshape %[[B]]
// CHECK-NEXT:    %[[U:.*]] = df.reshape %[[T]]
// CHECK-NEXT:    func.return %[[C]], %[[A]], %[[U]]
func.func @outputs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %t = df.reshape %b : (tensor<4xf32>) -> tensor<2x2xf32>
  %c = df.mul %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = df.reshape %t : (tensor<2x2xf32>) -> tensor<4xf32>
  func.return %c, %a, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Constants stay outside: a dense one is an operand; a splat one used by two
// groups is cloned into both and goes, while one also used outside stays.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    %[[D:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[K:.*]] = df.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[R1:.*]] = df.fused(%{{.*}} = %{{.*}}, %[[BD:.*]] = %[[D]]) {kind = "elementwise", name = "fused_add_0"}
// CHECK-NEXT:      df.add %{{.*}}, %[[BD]]
// CHECK-NEXT:      %[[H1:.*]] = df.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:      df.mul %{{.*}}, %[[H1]]
// CHECK-NEXT:      %[[K1:.*]] = df.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      df.sub %{{.*}}, %[[K1]]
// CHECK-NEXT:      df.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[R1]]
// CHECK-NEXT:    %[[R2:.*]] = df.fused(%{{.*}} = %[[T]]) {kind = "elementwise", name = "fused_exp_1"}
// CHECK-NEXT:      df.exp
// CHECK-NEXT:      %[[H2:.*]] = df.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:      df.mul %{{.*}}, %[[H2]]
// CHECK-NEXT:      df.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R2]], %[[K]]
// CHECK-NOT:     df.constant
func.func @constants(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %d = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %h = df.constant dense<0.5> : tensor<f32>
  %k = df.constant dense<3.0> : tensor<2xf32>
  %a = df.add %x, %d : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %b = df.mul %a, %h : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %c = df.sub %b, %k : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %t = df.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = df.exp %t : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %f = df.mul %e, %h : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  func.return %f, %k : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// An empty constant (`dense<>`, a splat of nothing) stays an operand: there is no
// scalar to clone into the body (found by generated programs: the kernel read
// element 0 of it).

// CHECK-LABEL: func.func @empty_constant(
// CHECK-NEXT:    %[[E:.*]] = df.constant dense<> : tensor<0x3xf32>
// CHECK-NEXT:    df.fused(%{{.*}} = %{{.*}}, %{{.*}} = %[[E]]) {kind = "elementwise", name = "fused_add_0"}
// CHECK-NEXT:      df.add
// CHECK-NEXT:      df.neg
// CHECK-NEXT:      df.yield
func.func @empty_constant(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %e = df.constant dense<> : tensor<0x3xf32>
  %a = df.add %x, %e : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  %n = df.neg %a : (tensor<0x3xf32>) -> tensor<0x3xf32>
  func.return %n : tensor<0x3xf32>
}

// -----

// Lone ops stay as they are: no df.fused of one op, a lone matmul included.

// CHECK-LABEL: func.func @alone(
// CHECK-NEXT:    %[[A:.*]] = df.exp
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[A]]
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[T]]
// CHECK-NEXT:    func.return %[[M]]
// CHECK-NOT:     df.fused
func.func @alone(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = df.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = df.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = df.matmul %t, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}

// -----

// A partitioned module is fused per device, with sends and receives as edges:
// on cpu:0, %b may not join the group of %a and %c, since it waits for a value
// gpu:0 computes from %a. Each device's part keeps its sends and receives.

// CHECK-LABEL: builtin.module attributes {df.device = "cpu:0"} {
// CHECK-NEXT:    func.func @main(
// CHECK-NEXT:      %[[A:.*]], %[[C:.*]] = df.fused(%{{.*}} = %{{.*}}) {df.device = "cpu:0", kind = "elementwise", name = "fused_exp_0"}
// CHECK-NEXT:        df.exp
// CHECK-NEXT:        df.neg
// CHECK-NEXT:        df.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      df.send %[[A]] {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"}
// CHECK-NEXT:      %[[V:.*]] = df.recv {df.device = "cpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"}
// CHECK-NEXT:      %[[D:.*]] = df.fused(%{{.*}} = %[[C]], %{{.*}} = %[[V]], %{{.*}} = %[[A]]) {df.device = "cpu:0", kind = "elementwise", name = "fused_add_2"}
// CHECK-NEXT:        df.add
// CHECK-NEXT:        df.mul
// CHECK-NEXT:        df.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      func.return %[[D]], %[[C]]
// CHECK-LABEL: builtin.module attributes {df.device = "gpu:0"} {
// CHECK-NEXT:    func.func @main(
// CHECK-NEXT:      %[[RA:.*]] = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"}
// CHECK-NEXT:      %[[W:.*]] = df.fused(%{{.*}} = %[[RA]]) {df.device = "gpu:0", kind = "elementwise", name = "fused_sqrt_1"}
// CHECK-NEXT:        df.sqrt
// CHECK-NEXT:        df.tanh
// CHECK-NEXT:        df.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      df.send %[[W]] {df.device = "gpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"}
// CHECK-NEXT:      func.return
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0, 1>, df.function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
      %c = df.neg %a {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      %v = df.recv {df.device = "cpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<4xf32>
      %b = df.add %c, %v {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %d = df.mul %b, %a {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %d, %c : tensor<4xf32>, tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main() attributes {df.arguments = array<i64>, df.results = array<i64>, df.function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
      %w = df.sqrt %a {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      %v = df.tanh %w {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      df.send %v {df.device = "gpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
      func.return
    }
  }
}

// -----

// A function of several blocks (which the lowering refuses later) is fused block
// by block: the chain in each block becomes one group, nothing crosses a branch.

// CHECK-LABEL: func.func @blocks(
// CHECK:         df.fused
// CHECK:         cf.br ^{{.*}}(%{{.*}} : tensor<4xf32>)
// CHECK:       ^{{.*}}(%{{.*}}: tensor<4xf32>):
// CHECK:         df.fused
// CHECK:         func.return
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^bb1(%b : tensor<4xf32>)
^bb1(%c: tensor<4xf32>):
  %d = df.tanh %c : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.abs %d : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// layer_norm closes its group like softmax: its elementwise prologue (the relu) is
// fused in front, its scale and bias are inputs of the group, and the tanh after
// it is left out.

// CHECK-LABEL: func.func @layer_norm_closes(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[Y:.*]] = df.fused(%[[BX:.*]] = %[[X]], %[[BS:.*]] = %[[S]], %[[BB:.*]] = %[[B]]) {kind = "reduction", name = "fused_relu_0"}
// CHECK-NEXT:      %[[R:.*]] = df.relu %[[BX]]
// CHECK-NEXT:      %[[N:.*]] = df.layer_norm %[[R]], %[[BS]], %[[BB]]
// CHECK-NEXT:      df.yield %[[N]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = df.tanh %[[Y]]
// CHECK-NEXT:    func.return %[[T]]
func.func @layer_norm_closes(%x: tensor<4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = df.layer_norm %r, %s, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = df.tanh %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}
