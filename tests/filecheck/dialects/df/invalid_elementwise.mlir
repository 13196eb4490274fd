// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Verifier errors of the elementwise ops. xdsl-opt prints each split's error
// message on a line of its own (then the module with the error in a box), so
// each case checks that whole line.

// CHECK: {{^}}df.add: shapes 4x2 and 3 do not broadcast{{$}}
func.func @no_broadcast(%x: tensor<4x2xf32>, %y: tensor<3xf32>) {
  %0 = df.add %x, %y : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.mul: shapes 2x4x1 and 3x8 do not broadcast{{$}}
func.func @no_broadcast_ranks(%x: tensor<2x4x1xf32>, %y: tensor<3x8xf32>) {
  %0 = df.mul %x, %y : (tensor<2x4x1xf32>, tensor<3x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.add: result type tensor<4x1xf32> does not match tensor<4x8xf32> inferred from tensor<4x1xf32>, tensor<1x8xf32>{{$}}
func.func @binary_wrong_result(%x: tensor<4x1xf32>, %y: tensor<1x8xf32>) {
  %0 = df.add %x, %y : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: {{^}}df.sub: result type tensor<4x8xf64> does not match tensor<4x8xf32> inferred from tensor<4x8xf32>, tensor<f32>{{$}}
func.func @binary_wrong_result_element(%x: tensor<4x8xf32>, %y: tensor<f32>) {
  %0 = df.sub %x, %y : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf64>
  func.return
}

// -----

// CHECK: {{^}}df.neg: result type tensor<4xf64> does not match tensor<4xf32> inferred from tensor<4xf32>{{$}}
func.func @unary_wrong_result_element(%x: tensor<4xf32>) {
  %0 = df.neg %x : (tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

// CHECK: {{^}}df.relu: result type tensor<8x4xf32> does not match tensor<4x8xf32> inferred from tensor<4x8xf32>{{$}}
func.func @unary_wrong_result_shape(%x: tensor<4x8xf32>) {
  %0 = df.relu %x : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.exp: operand must have a floating-point element type, got i32{{$}}
func.func @exp_i32(%x: tensor<4xi32>) {
  %0 = df.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.erf: operand must have a floating-point element type, got i32{{$}}
func.func @erf_i32(%x: tensor<4xi32>) {
  %0 = df.erf %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.round: operand must have a floating-point element type, got i32{{$}}
func.func @round_i32(%x: tensor<4xi32>) {
  %0 = df.round %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.sigmoid: operand must have a floating-point element type, got i64{{$}}
func.func @sigmoid_i64(%x: tensor<4xi64>) {
  %0 = df.sigmoid %x : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// CHECK: {{^}}df.neg: operand must have a numeric element type, got i1{{$}}
func.func @neg_i1(%x: tensor<4xi1>) {
  %0 = df.neg %x : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}df.div: operands must have a floating-point element type, got i32{{$}}
func.func @div_i32(%x: tensor<4xi32>) {
  %0 = df.div %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.pow: operands must have a floating-point element type, got i64{{$}}
func.func @pow_i64(%x: tensor<4xi64>) {
  %0 = df.pow %x, %x : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// df.rem is fmod, of floats; ONNX's Mod of integers is composed of other ops.
// CHECK: {{^}}df.rem: operands must have a floating-point element type, got i32{{$}}
func.func @rem_i32(%x: tensor<4xi32>) {
  %0 = df.rem %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.maximum: operands must have a numeric element type, got i1{{$}}
func.func @maximum_i1(%x: tensor<4xi1>) {
  %0 = df.maximum %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}df.add: operands tensor<4xf32>, tensor<4xf64> must have the same element type{{$}}
func.func @mixed_elements(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  %0 = df.add %x, %y : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.greater: result type tensor<4xf32> does not match tensor<4xi1> inferred from tensor<4xf32>, tensor<4xf32>{{$}}
func.func @compare_not_i1(%x: tensor<4xf32>) {
  %0 = df.greater %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.less_equal: result type tensor<4x1xi1> does not match tensor<4x8xi1> inferred from tensor<4x1xi32>, tensor<8xi32>{{$}}
func.func @compare_wrong_shape(%x: tensor<4x1xi32>, %y: tensor<8xi32>) {
  %0 = df.less_equal %x, %y : (tensor<4x1xi32>, tensor<8xi32>) -> tensor<4x1xi1>
  func.return
}

// -----

// CHECK: {{^}}df.equal: operands tensor<3xi32>, tensor<3xi64> must have the same element type{{$}}
func.func @compare_mixed(%x: tensor<3xi32>, %y: tensor<3xi64>) {
  %0 = df.equal %x, %y : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi1>
  func.return
}

// -----

// CHECK: {{^}}df.greater_equal: shapes 5 and 3 do not broadcast{{$}}
func.func @compare_no_broadcast(%x: tensor<5xf64>, %y: tensor<3xf64>) {
  %0 = df.greater_equal %x, %y : (tensor<5xf64>, tensor<3xf64>) -> tensor<5xi1>
  func.return
}

// -----

// CHECK: {{^}}df.select: condition tensor<4xf32> must have element type i1{{$}}
func.func @select_condition_f32(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  %0 = df.select %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.select: condition tensor<4xi32> must have element type i1{{$}}
func.func @select_condition_i32(%c: tensor<4xi32>, %x: tensor<4xi32>) {
  %0 = df.select %c, %x, %x : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.select: operands tensor<4xf32>, tensor<4xi32> must have the same element type{{$}}
func.func @select_mixed(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) {
  %0 = df.select %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.select: shapes scalar and 3 and 4 do not broadcast{{$}}
func.func @select_no_broadcast(%c: tensor<i1>, %x: tensor<3xf32>, %y: tensor<4xf32>) {
  %0 = df.select %c, %x, %y : (tensor<i1>, tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.select: result type tensor<1x8xf32> does not match tensor<4x8xf32> inferred from tensor<4x1xi1>, tensor<1x8xf32>, tensor<f32>{{$}}
func.func @select_wrong_result(%c: tensor<4x1xi1>, %x: tensor<1x8xf32>, %y: tensor<f32>) {
  %0 = df.select %c, %x, %y : (tensor<4x1xi1>, tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.cast: result type tensor<3x2xi32> must have the shape of the operand tensor<2x3xf32>{{$}}
func.func @cast_shape(%x: tensor<2x3xf32>) {
  %0 = df.cast %x : (tensor<2x3xf32>) -> tensor<3x2xi32>
  func.return
}

// -----

// CHECK: {{^}}df.addn: operand type tensor<4xf64> differs from result type tensor<4xf32>{{$}}
func.func @addn_mixed(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  %0 = df.addn %x, %y : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// addn does not broadcast.
// CHECK: {{^}}df.addn: operand type tensor<4x1xf32> differs from result type tensor<4x8xf32>{{$}}
func.func @addn_broadcast(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>) {
  %0 = df.addn %x, %y : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.addn: operands must have a numeric element type, got i1{{$}}
func.func @addn_i1(%x: tensor<4xi1>) {
  %0 = df.addn %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}df.addn: needs at least one operand{{$}}
func.func @addn_empty() {
  %0 = df.addn : () -> tensor<4xf32>
  func.return
}

// -----

// Types outside the dialect: f80 elements, dynamic shapes.

// CHECK: {{^}}df.abs: element type f80 is not one of f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1{{$}}
func.func @f80(%x: tensor<4xf80>) {
  %0 = df.abs %x : (tensor<4xf80>) -> tensor<4xf80>
  func.return
}

// -----

// CHECK: {{^}}df.tanh: expected a static shape, got tensor<?x4xf32>{{$}}
func.func @dynamic(%x: tensor<?x4xf32>) {
  %0 = df.tanh %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.add: element type i3 is not one of f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1{{$}}
func.func @i3_result(%x: tensor<4xi32>) {
  %0 = df.add %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi3>
  func.return
}

// -----

// A non-tensor operand is rejected by the operand constraint, before the df
// verifier runs, so the message does not name the op.
// CHECK: {{^}}memref<4xf32> should be of base attribute tensor{{$}}
func.func @memref(%x: memref<4xf32>) {
  %0 = df.sqrt %x : (memref<4xf32>) -> memref<4xf32>
  func.return
}
