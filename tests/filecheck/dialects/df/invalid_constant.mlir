// RUN: xdsl-opt %s --verify-diagnostics --parsing-diagnostics --split-input-file | filecheck %s

// Errors of df.constant: element types outside the dialect, a value whose type
// is not the result type, and malformed dense literals (parse errors, printed
// after the source line and a caret).

// CHECK: {{^}}df.constant: element type si32 is not one of f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1{{$}}
func.func @si32() {
  %0 = df.constant dense<1> : tensor<2xsi32>
  func.return
}

// -----

// CHECK: {{^}}df.constant: element type i3 is not one of f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1{{$}}
func.func @i3() {
  %0 = df.constant dense<[1, 2]> : tensor<2xi3>
  func.return
}

// -----

// The result type must be the value's type (checked by the shared constraint).
// CHECK: {{^}}attribute tensor<3xf32> expected from variable 'T', but got tensor<2xf32>{{$}}
func.func @result_type() {
  %0 = "df.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

// CHECK: {{^}}vector<2xf32> should be of base attribute tensor{{$}}
func.func @vector() {
  %0 = df.constant dense<1.0> : vector<2xf32>
  func.return
}

// -----

// CHECK: {{^}}{{.*}}invalid_constant.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK: {{^ +}}Shape mismatch in dense literal. Expected [3] shape from the type, but got [2] shape.{{$}}
func.func @dense_shape() {
  %0 = df.constant dense<[1.0, 2.0]> : tensor<3xf32>
  func.return
}

// -----

// CHECK: {{^}}  %0 = df.constant dense<1.5> : tensor<2xi32>{{$}}
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}Expected integer value{{$}}
func.func @float_in_integer() {
  %0 = df.constant dense<1.5> : tensor<2xi32>
  func.return
}

// -----

// CHECK: {{^}}  %0 = df.constant dense<{{\[\[}}1.0], [2.0, 3.0]]> : tensor<2x2xf32>{{$}}
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}Tensor literal has inconsistent ranks between elements{{$}}
func.func @ragged() {
  %0 = df.constant dense<[[1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}  %0 = df.constant : tensor<2xf32>{{$}}
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}attribute expected{{$}}
func.func @no_value() {
  %0 = df.constant : tensor<2xf32>
  func.return
}
