// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p df-widen | filecheck %s

// df-widen computes every op on narrow values (f16, bf16, i8, i16, ui8, ui16,
// ui32) in its wider type (f32, i32, i64) between casts: the reference semantics
// of narrow values, spelt out for the kernels. Casts, constants and reshapes stay.

// An f16 unary op: cast up, the op in f32, cast back (the result keeps its name).
// CHECK-LABEL: func.func @half_exp(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT:    %[[W:.*]] = df.cast %[[X]] : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[W]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %y = df.cast %[[E]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    func.return %y
func.func @half_exp(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = df.exp %x : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// One operand used twice is cast once; i8 computes in i32 and wraps back to i8.
// CHECK-LABEL: func.func @byte_square(
// CHECK-SAME:      %[[X:.*]]: tensor<4xi8>)
// CHECK-NEXT:    %[[W:.*]] = df.cast %[[X]] : (tensor<4xi8>) -> tensor<4xi32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[W]], %[[W]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = df.cast %[[M]] : (tensor<4xi32>) -> tensor<4xi8>
func.func @byte_square(%x: tensor<4xi8>) -> tensor<4xi8> {
  %y = df.mul %x, %x : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// A narrow constant read by a widened op becomes a wide constant holding the
// same values (the narrow one goes once unused); a comparison's i1 result needs
// no cast back.
// CHECK-LABEL: func.func @compare_to_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<2xbf16>)
// CHECK-NEXT:    %[[W:.*]] = df.cast %[[X]] : (tensor<2xbf16>) -> tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[L:.*]] = df.less %[[W]], %[[C]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
// CHECK-NEXT:    func.return %[[L]]
func.func @compare_to_constant(%x: tensor<2xbf16>) -> tensor<2xi1> {
  %c = df.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %l = df.less %x, %c : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xi1>
  func.return %l : tensor<2xi1>
}

// -----

// A reduction of ui16 computes in i32; ui32 in i64; the op keeps its properties.
// CHECK-LABEL: func.func @unsigned_sums(
// CHECK:         df.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<3xi32>) -> tensor<i32>
// CHECK:         df.cast %{{.*}} : (tensor<i32>) -> tensor<ui16>
// CHECK:         df.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<3xi64>) -> tensor<i64>
// CHECK:         df.cast %{{.*}} : (tensor<i64>) -> tensor<ui32>
func.func @unsigned_sums(%a: tensor<3xui16>, %b: tensor<3xui32>) -> (tensor<ui16>, tensor<ui32>) {
  %s = df.reduce_sum %a {axes = array<i64: 0>} : (tensor<3xui16>) -> tensor<ui16>
  %t = df.reduce_sum %b {axes = array<i64: 0>} : (tensor<3xui32>) -> tensor<ui32>
  func.return %s, %t : tensor<ui16>, tensor<ui32>
}

// -----

// What stays: a cast, a reshape, ops on ui64 (nothing wider to compute in) and on
// wide types.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT:    df.cast %{{.*}} : (tensor<4xf16>) -> tensor<4xi8>
// CHECK-NEXT:    df.reshape %{{.*}} : (tensor<4xi8>) -> tensor<2x2xi8>
// CHECK-NEXT:    df.add %{{.*}}, %{{.*}} : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
// CHECK-NEXT:    df.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return
func.func @left_alone(%x: tensor<4xf16>, %u: tensor<4xui64>, %f: tensor<4xf32>)
    -> (tensor<2x2xi8>, tensor<4xui64>, tensor<4xf32>) {
  %c = df.cast %x : (tensor<4xf16>) -> tensor<4xi8>
  %r = df.reshape %c : (tensor<4xi8>) -> tensor<2x2xi8>
  %a = df.add %u, %u : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  %g = df.add %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %a, %g : tensor<2x2xi8>, tensor<4xui64>, tensor<4xf32>
}

// -----

// The casts go where the op is placed.
// CHECK-LABEL: func.func @placed(
// CHECK-NEXT:    df.cast %{{.*}} {df.device = "cpu:1"} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    df.tanh %{{.*}} {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    df.cast %{{.*}} {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf16>
func.func @placed(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = df.tanh %x {df.device = "cpu:1"} : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// The 8- and 4-bit floats compute in f32, the 2- and 4-bit integers in i32.
// CHECK-LABEL: func.func @minifloat_and_nibble(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf8E4M3FN>, %[[Q:.*]]: tensor<4xi4>)
// CHECK-NEXT:    %[[W:.*]] = df.cast %[[X]] : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.tanh %[[W]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %y = df.cast %[[T]] : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CHECK-NEXT:    %[[I:.*]] = df.cast %[[Q]] : (tensor<4xi4>) -> tensor<4xi32>
// CHECK-NEXT:    %[[S:.*]] = df.add %[[I]], %[[I]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %s = df.cast %[[S]] : (tensor<4xi32>) -> tensor<4xi4>
func.func @minifloat_and_nibble(%x: tensor<4xf8E4M3FN>, %q: tensor<4xi4>) -> (tensor<4xf8E4M3FN>, tensor<4xi4>) {
  %y = df.tanh %x : (tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  %s = df.add %q, %q : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
  func.return %y, %s : tensor<4xf8E4M3FN>, tensor<4xi4>
}
