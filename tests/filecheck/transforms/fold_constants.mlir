// RUN: xdsl-opt %s --split-input-file -p df-fold-constants | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p 'df-fold-constants{max-bytes=32}' | filecheck %s --check-prefix=LIMIT
// RUN: xdsl-opt %s --split-input-file -p 'df-fold-constants{stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// df-fold-constants: an op whose operands are all df.constant becomes one
// df.constant holding its value (computed by the op's reference semantics);
// constants left without a use are erased. A splat result prints as
// `dense<v>`. Folds stay within `max-bytes` of constants in the module, and a
// fold that turns small constants into a larger one is only done when the
// result takes at most 1024 bytes.

// Statistics: 5 ops (two constants, mul, neg, return) become 2; the 8 + 4
// bytes of the inputs become the 8 bytes of the result.

// STATS:      df-fold-constants: 2 rewrites; ops 5 -> 2 (-3); constant bytes 12 -> 8 (-4)
// STATS-NEXT:   FoldConstantOperands: 2
// STATS-NEXT: df-fold-constants:

// [1, 2] * 3 = [3, 6], negated: [-3, -6].

// CHECK-LABEL: func.func @stats()
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[-3.000000e+00, -6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<2xf32>
func.func @stats() -> tensor<2xf32> {
  %a = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = df.constant dense<3.0> : tensor<f32>
  %m = df.mul %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %n = df.neg %m : (tensor<2xf32>) -> tensor<2xf32>
  func.return %n : tensor<2xf32>
}

// -----

// Elementwise ops: neg [1, -2, 3] = [-1, 2, -3]; relu = [1, 0, 3];
// abs [-3, 4] = [3, 4]; sqrt of a splat 4 is a splat 2; [5, 7] - [-3, 4] =
// [8, 3]; 1 / [2, 4] = [0.5, 0.25]; maximum([1, -2, 3], 0.5) = [1, 0.5, 3];
// pow([2, 4], 3) = [8, 64]; addn([5, 7], [-3, 4], [5, 7]) = [7, 18].

// CHECK-LABEL: func.func @elementwise()
// CHECK-NEXT:    %[[NEG:.*]] = df.constant dense<[-1.000000e+00, 2.000000e+00, -3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[RELU:.*]] = df.constant dense<[1.000000e+00, 0.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[ABS:.*]] = df.constant dense<[3, 4]> : tensor<2xi32>
// CHECK-NEXT:    %[[SQRT:.*]] = df.constant dense<2.000000e+00> : tensor<2x2xf64>
// CHECK-NEXT:    %[[SUB:.*]] = df.constant dense<[8, 3]> : tensor<2xi32>
// CHECK-NEXT:    %[[DIV:.*]] = df.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf64>
// CHECK-NEXT:    %[[MAX:.*]] = df.constant dense<[1.000000e+00, 5.000000e-01, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[POW:.*]] = df.constant dense<[8.000000e+00, 6.400000e+01]> : tensor<2xf64>
// CHECK-NEXT:    %[[ADDN:.*]] = df.constant dense<[7, 18]> : tensor<2xi32>
// CHECK-NEXT:    func.return %[[NEG]], %[[RELU]], %[[ABS]], %[[SQRT]], %[[SUB]], %[[DIV]], %[[MAX]], %[[POW]], %[[ADDN]] :
func.func @elementwise() -> (tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<2x2xf64>, tensor<2xi32>, tensor<2xf64>, tensor<3xf32>, tensor<2xf64>, tensor<2xi32>) {
  %f = df.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf32>
  %i = df.constant dense<[-3, 4]> : tensor<2xi32>
  %j = df.constant dense<[5, 7]> : tensor<2xi32>
  %four = df.constant dense<4.0> : tensor<2x2xf64>
  %d = df.constant dense<[2.0, 4.0]> : tensor<2xf64>
  %one = df.constant dense<1.0> : tensor<f64>
  %three = df.constant dense<3.0> : tensor<f64>
  %half = df.constant dense<0.5> : tensor<f32>
  %neg = df.neg %f : (tensor<3xf32>) -> tensor<3xf32>
  %relu = df.relu %f : (tensor<3xf32>) -> tensor<3xf32>
  %abs = df.abs %i : (tensor<2xi32>) -> tensor<2xi32>
  %sqrt = df.sqrt %four : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %sub = df.sub %j, %i : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %div = df.div %one, %d : (tensor<f64>, tensor<2xf64>) -> tensor<2xf64>
  %max = df.maximum %f, %half : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %pow = df.pow %d, %three : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  %addn = df.addn %j, %i, %j : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %neg, %relu, %abs, %sqrt, %sub, %div, %max, %pow, %addn : tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<2x2xf64>, tensor<2xi32>, tensor<2xf64>, tensor<3xf32>, tensor<2xf64>, tensor<2xi32>
}

// -----

// Contractions: [[1, 2], [3, 4]] . [[5, 6], [7, 8]] = [[19, 22], [43, 50]];
// with transpose_b (i32): [[17, 23], [39, 53]]; conv2d of [[1, 2], [3, 4]]
// with a 1x1 filter 2 and bias 1: [[3, 5], [7, 9]].

// CHECK-LABEL: func.func @contractions()
// CHECK-NEXT:    %[[M:.*]] = df.constant dense<{{\[}}[1.900000e+01, 2.200000e+01], [4.300000e+01, 5.000000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<{{\[}}[17, 23], [39, 53]]> : tensor<2x2xi32>
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<{{\[}}[{{\[}}[3.000000e+00, 5.000000e+00], [7.000000e+00, 9.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    func.return %[[M]], %[[T]], %[[C]] : tensor<2x2xf32>, tensor<2x2xi32>, tensor<1x1x2x2xf32>
func.func @contractions() -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<1x1x2x2xf32>) {
  %a = df.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = df.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %ai = df.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %bi = df.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %x = df.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %w = df.constant dense<2.0> : tensor<1x1x1x1xf32>
  %bias = df.constant dense<1.0> : tensor<1xf32>
  %m = df.matmul %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %t = df.matmul %ai, %bi {transpose_b = true} : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %c = df.conv2d %x, %w, %bias : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %m, %t, %c : tensor<2x2xf32>, tensor<2x2xi32>, tensor<1x1x2x2xf32>
}

// -----

// Reductions and shape ops on c = [[1, 2, 3], [4, 5, 6]]: row sums [6, 15];
// the mean 21 / 6 = 3.5; the column maxima [[4, 5, 6]] (keepdims); the
// transpose [[1, 4], [2, 5], [3, 6]]; the reshape to 3x2 [[1, 2], [3, 4],
// [5, 6]]; [10, 20, 30, 40][1:3] = [20, 30]; concat([1, 2], [10, 20, 30, 40]).

// CHECK-LABEL: func.func @shape_ops()
// CHECK-NEXT:    %[[SUM:.*]] = df.constant dense<[6.000000e+00, 1.500000e+01]> : tensor<2xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = df.constant dense<3.500000e+00> : tensor<f32>
// CHECK-NEXT:    %[[MAX:.*]] = df.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[R:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<[20, 30]> : tensor<2xi32>
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[1, 2, 10, 20, 30, 40]> : tensor<6xi32>
// CHECK-NEXT:    func.return %[[SUM]], %[[MEAN]], %[[MAX]], %[[T]], %[[R]], %[[S]], %[[C]] :
func.func @shape_ops() -> (tensor<2xf32>, tensor<f32>, tensor<1x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xi32>, tensor<6xi32>) {
  %c = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %v = df.constant dense<[10, 20, 30, 40]> : tensor<4xi32>
  %w = df.constant dense<[1, 2]> : tensor<2xi32>
  %sum = df.reduce_sum %c {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %mean = df.reduce_mean %c : (tensor<2x3xf32>) -> tensor<f32>
  %max = df.reduce_max %c {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %t = df.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = df.reshape %c : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s = df.slice %v {start = array<i64: 1>, limit = array<i64: 3>} : (tensor<4xi32>) -> tensor<2xi32>
  %cat = df.concat %w, %v {axis = 0 : i64} : (tensor<2xi32>, tensor<4xi32>) -> tensor<6xi32>
  func.return %sum, %mean, %max, %t, %r, %s, %cat : tensor<2xf32>, tensor<f32>, tensor<1x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xi32>, tensor<6xi32>
}

// -----

// select([true, false, true], [1, 2, 3], [10, 20, 30]) = [1, 20, 3]; casts
// truncate toward zero ([1.5, -2.7] -> [1, -2]), to i1 test != 0 ([0, 2] ->
// [false, true]), i32 -> f64; comparisons give i1: [1, 2, 3] < 2 =
// [true, false, false], [1.5, -2.7] == [1.5, 0] = [true, false], and
// x >= x is a splat true.

// CHECK-LABEL: func.func @select_cast_compare()
// CHECK-NEXT:    %[[SEL:.*]] = df.constant dense<[1, 20, 3]> : tensor<3xi64>
// CHECK-NEXT:    %[[CI:.*]] = df.constant dense<[1, -2]> : tensor<2xi32>
// CHECK-NEXT:    %[[CB:.*]] = df.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NEXT:    %[[CD:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>
// CHECK-NEXT:    %[[LT:.*]] = df.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-NEXT:    %[[EQ:.*]] = df.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %[[GE:.*]] = df.constant dense<true> : tensor<3xi1>
// CHECK-NEXT:    func.return %[[SEL]], %[[CI]], %[[CB]], %[[CD]], %[[LT]], %[[EQ]], %[[GE]] :
func.func @select_cast_compare() -> (tensor<3xi64>, tensor<2xi32>, tensor<2xi1>, tensor<2xf64>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>) {
  %cond = df.constant dense<[true, false, true]> : tensor<3xi1>
  %a = df.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = df.constant dense<[10, 20, 30]> : tensor<3xi64>
  %f = df.constant dense<[1.5, -2.7]> : tensor<2xf32>
  %g = df.constant dense<[1.5, 0.0]> : tensor<2xf32>
  %z = df.constant dense<[0.0, 2.0]> : tensor<2xf64>
  %i = df.constant dense<[1, 2]> : tensor<2xi32>
  %two = df.constant dense<2> : tensor<i64>
  %sel = df.select %cond, %a, %b : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %ci = df.cast %f : (tensor<2xf32>) -> tensor<2xi32>
  %cb = df.cast %z : (tensor<2xf64>) -> tensor<2xi1>
  %cd = df.cast %i : (tensor<2xi32>) -> tensor<2xf64>
  %lt = df.less %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %eq = df.equal %f, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %ge = df.greater_equal %a, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  func.return %sel, %ci, %cb, %cd, %lt, %eq, %ge : tensor<3xi64>, tensor<2xi32>, tensor<2xi1>, tensor<2xf64>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>
}

// -----

// A chain folds to one constant: ((1 + 2) * 4) - 2 = 10, a splat of the
// result type; splats stay splats, also when broadcast to a large shape
// (4 bytes either way); a concat of splats is not a splat: [1, 1, 2].

// CHECK-LABEL: func.func @chain_and_splats()
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<1.000000e+01> : tensor<2x2xf32>
// CHECK-NEXT:    %[[B:.*]] = df.constant dense<2.000000e+00> : tensor<1024x4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    func.return %[[C]], %[[B]], %[[E]] : tensor<2x2xf32>, tensor<1024x4xf32>, tensor<3xf32>
func.func @chain_and_splats() -> (tensor<2x2xf32>, tensor<1024x4xf32>, tensor<3xf32>) {
  %one = df.constant dense<1.0> : tensor<2x2xf32>
  %two = df.constant dense<2.0> : tensor<f32>
  %four = df.constant dense<4.0> : tensor<f32>
  %a = df.add %one, %two : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %b = df.mul %a, %four : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %c = df.sub %b, %two : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %big = df.broadcast_to %two : (tensor<f32>) -> tensor<1024x4xf32>
  %ones = df.constant dense<1.0> : tensor<2xf32>
  %twos = df.constant dense<2.0> : tensor<1xf32>
  %e = df.concat %ones, %twos {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>
  func.return %c, %big, %e : tensor<2x2xf32>, tensor<1024x4xf32>, tensor<3xf32>
}

// -----

// Broadcasts of non-splat constants: to 1024x4 (16 KiB from 16 bytes) is not
// folded; to 2x2 (16 bytes) is; an i32 [1, 2, 3, 4] to 64x4 (exactly 1024
// bytes) is folded, to 65x4 (1040 bytes) is not. A constant this large prints
// its little-endian bytes in hex: the row 1, 2, 3, 4 is 16 bytes, 64 times.

// CHECK-LABEL: func.func @broadcast_policy()
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[I:.*]] = df.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK-NEXT:    %[[BIG:.*]] = df.broadcast_to %[[V]] : (tensor<4xf32>) -> tensor<1024x4xf32>
// CHECK-NEXT:    %[[SMALL:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[EDGE:.*]] = df.constant dense<"0x{{(01000000020000000300000004000000){64}"}}> : tensor<64x4xi32>
// CHECK-NEXT:    %[[OVER:.*]] = df.broadcast_to %[[I]] : (tensor<4xi32>) -> tensor<65x4xi32>
// CHECK-NEXT:    func.return %[[BIG]], %[[SMALL]], %[[EDGE]], %[[OVER]] : tensor<1024x4xf32>, tensor<2x2xf32>, tensor<64x4xi32>, tensor<65x4xi32>
func.func @broadcast_policy() -> (tensor<1024x4xf32>, tensor<2x2xf32>, tensor<64x4xi32>, tensor<65x4xi32>) {
  %v = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = df.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %big = df.broadcast_to %v : (tensor<4xf32>) -> tensor<1024x4xf32>
  %small = df.broadcast_to %w : (tensor<2xf32>) -> tensor<2x2xf32>
  %edge = df.broadcast_to %i : (tensor<4xi32>) -> tensor<64x4xi32>
  %over = df.broadcast_to %i : (tensor<4xi32>) -> tensor<65x4xi32>
  func.return %big, %small, %edge, %over : tensor<1024x4xf32>, tensor<2x2xf32>, tensor<64x4xi32>, tensor<65x4xi32>
}

// -----

// The byte budget. The module starts with 16 + 4 + 4 = 24 bytes of constants.
// With max-bytes=32: a * 2 = [2, 4, 6, 8] adds 16 bytes and frees the 4 of
// the splat (a is still returned): 36 > 32, not folded; a + a would add 16:
// not folded; neg of a splat used once frees as much as it adds: folded.
// Without the limit everything folds.

// CHECK-LABEL: func.func @budget()
// CHECK-NEXT:    %[[A:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = df.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[K:.*]] = df.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.constant dense<-3.000000e+00> : tensor<f32>
// CHECK-NEXT:    func.return %[[A]], %[[M]], %[[K]], %[[N]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>

// LIMIT-LABEL: func.func @budget()
// LIMIT-NEXT:    %[[A:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// LIMIT-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// LIMIT-NEXT:    %[[M:.*]] = df.mul %[[A]], %[[S]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// LIMIT-NEXT:    %[[K:.*]] = df.add %[[A]], %[[A]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// LIMIT-NEXT:    %[[N:.*]] = df.constant dense<-3.000000e+00> : tensor<f32>
// LIMIT-NEXT:    func.return %[[A]], %[[M]], %[[K]], %[[N]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>
func.func @budget() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
  %a = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = df.constant dense<2.0> : tensor<f32>
  %t = df.constant dense<3.0> : tensor<f32>
  %m = df.mul %a, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %k = df.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = df.neg %t : (tensor<f32>) -> tensor<f32>
  func.return %a, %m, %k, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>
}

// -----

// Not folded: an op with a non-constant operand (only the constant part
// [1, 2] + [3, 4] = [4, 6] folds), and the ops with effects (df.send of a
// constant, df.recv) and what depends on a receive.

// CHECK-LABEL: func.func @partial(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[D:.*]] = df.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[A:.*]] = df.add %[[X]], %[[S]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[A]], %[[C]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    df.send %[[D]] {key = "k0", from = "cpu:0", to = "gpu:0"} : (tensor<2xf32>) -> ()
// CHECK-NEXT:    %[[R:.*]] = df.recv {key = "k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<2xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[R]] : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[M]], %[[N]] : tensor<2xf32>, tensor<2xf32>
func.func @partial(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = df.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = df.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %s = df.add %c, %d : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %a = df.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m = df.mul %a, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  df.send %d {key = "k0", from = "cpu:0", to = "gpu:0"} : (tensor<2xf32>) -> ()
  %r = df.recv {key = "k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<2xf32>
  %n = df.neg %r : (tensor<2xf32>) -> tensor<2xf32>
  func.return %m, %n : tensor<2xf32>, tensor<2xf32>
}

// -----

// The folded constant keeps the annotations of the op it replaces (placement,
// colocation, backward mark), not those of its inputs.

// CHECK-LABEL: func.func @annotations()
// CHECK-NEXT:    %[[N:.*]] = df.constant {df.device = "gpu:0", df.colocate = "g"} dense<[-1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[M:.*]] = df.constant {df.backward} dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[N]], %[[M]] : tensor<2xf32>, tensor<2xf32>
func.func @annotations() -> (tensor<2xf32>, tensor<2xf32>) {
  %c = df.constant {df.device = "cpu:0"} dense<[1.0, 2.0]> : tensor<2xf32>
  %n = df.neg %c {df.device = "gpu:0", df.colocate = "g"} : (tensor<2xf32>) -> tensor<2xf32>
  %m = df.mul %c, %c {df.backward} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %n, %m : tensor<2xf32>, tensor<2xf32>
}
