// RUN: xdsl-opt %s --split-input-file -p df-simplify-arith | filecheck %s --check-prefixes=CHECK,SAFE
// RUN: xdsl-opt %s --split-input-file -p 'df-simplify-arith{fastmath=true}' | filecheck %s --check-prefixes=CHECK,FAST
// RUN: xdsl-opt %s --split-input-file -p 'df-simplify-arith{stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// df-simplify-arith: one algebraic identity per pattern. Each pattern has a case
// where it fires and at least one where it must not. CHECK lines hold with and
// without fastmath; SAFE lines only in the default mode, FAST lines only with
// fastmath=true (x*0, x-x and x/x on floats). A rewrite never changes a
// result's type: a constant that broadcasts x to a larger shape keeps the op.

// Statistics: one line per pattern that fired, sorted by name. 8 ops (two
// constants, five df ops and the return) become 3; the two 4-byte splats die.

// STATS:      df-simplify-arith: 4 rewrites; ops 8 -> 3 (-5); constant bytes 8 -> 0 (-8)
// STATS-NEXT:   MulSelfToSquare: 1
// STATS-NEXT:   RemoveAddZero: 1
// STATS-NEXT:   RemoveMulByOne: 1
// STATS-NEXT:   SubNegToAdd: 1
// STATS-NEXT: df-simplify-arith:

// CHECK-LABEL: func.func @stats(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = df.add %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Q:.*]] = df.square %[[S]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[Q]] : tensor<4xf32>
func.func @stats(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %one = df.constant dense<1.0> : tensor<f32>
  %zero = df.constant dense<0.0> : tensor<f32>
  %a = df.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.add %a, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %n = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.sub %b, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = df.mul %c, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// -----

// RemoveMulByOne: x * 1 = 1 * x = x, also with a scalar 1 and on integers.

// CHECK-LABEL: func.func @mul_by_one(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2x2xi32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]], %[[I]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi32>
func.func @mul_by_one(%x: tensor<4xf32>, %i: tensor<2x2xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi32>) {
  %one = df.constant dense<1.0> : tensor<4xf32>
  %scalar = df.constant dense<1.0> : tensor<f32>
  %ione = df.constant dense<1> : tensor<2xi32>
  %a = df.mul %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = df.mul %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.mul %scalar, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %d = df.mul %i, %ione : (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi32>
}

// Not: the 1 broadcasts x to 2x4, so the product is not x; a constant that is
// not a splat of 1.

// CHECK-LABEL: func.func @mul_by_one_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<[1.000000e+00, 2.000000e+00, 1.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.mul %[[ONE]], %[[X]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.mul %[[X]], %[[V]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>
func.func @mul_by_one_kept(%x: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) {
  %one = df.constant dense<1.0> : tensor<2x4xf32>
  %v = df.constant dense<[1.0, 2.0, 1.0, 1.0]> : tensor<4xf32>
  %a = df.mul %x, %one : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = df.mul %one, %x : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %c = df.mul %x, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %b, %c : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>
}

// -----

// RemoveAddZero: x + 0 = 0 + x = x (also -0.0, and on integers).

// CHECK-LABEL: func.func @add_zero(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>, %[[I:.*]]: tensor<3xi64>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]], %[[I]] : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi64>
func.func @add_zero(%x: tensor<3xf64>, %i: tensor<3xi64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi64>) {
  %zero = df.constant dense<0.0> : tensor<f64>
  %negzero = df.constant dense<-0.0> : tensor<3xf64>
  %izero = df.constant dense<0> : tensor<3xi64>
  %a = df.add %x, %zero : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %b = df.add %zero, %x : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
  %c = df.add %x, %negzero : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %d = df.add %izero, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %a, %b, %c, %d : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi64>
}

// Not: the zero broadcasts x to 2x3.

// CHECK-LABEL: func.func @add_zero_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>)
// CHECK-NEXT:    %[[Z:.*]] = df.constant dense<0.000000e+00> : tensor<2x3xf64>
// CHECK-NEXT:    %[[A:.*]] = df.add %[[Z]], %[[X]] : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
// CHECK-NEXT:    func.return %[[A]] : tensor<2x3xf64>
func.func @add_zero_kept(%x: tensor<3xf64>) -> tensor<2x3xf64> {
  %zero = df.constant dense<0.0> : tensor<2x3xf64>
  %a = df.add %zero, %x : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  func.return %a : tensor<2x3xf64>
}

// -----

// RemoveSubZero: x - 0 = x.

// CHECK-LABEL: func.func @sub_zero(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK-NEXT:    func.return %[[X]], %[[I]] : tensor<2x3xf32>, tensor<2xi32>
func.func @sub_zero(%x: tensor<2x3xf32>, %i: tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2xi32>) {
  %zero = df.constant dense<0.0> : tensor<3xf32>
  %izero = df.constant dense<0> : tensor<i32>
  %a = df.sub %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = df.sub %i, %izero : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  func.return %a, %b : tensor<2x3xf32>, tensor<2xi32>
}

// Not: the zero broadcasts x to 4x2x3.

// CHECK-LABEL: func.func @sub_zero_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[Z:.*]] = df.constant dense<0.000000e+00> : tensor<4x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = df.sub %[[X]], %[[Z]] : (tensor<2x3xf32>, tensor<4x1x1xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<4x2x3xf32>
func.func @sub_zero_kept(%x: tensor<2x3xf32>) -> tensor<4x2x3xf32> {
  %zero = df.constant dense<0.0> : tensor<4x1x1xf32>
  %a = df.sub %x, %zero : (tensor<2x3xf32>, tensor<4x1x1xf32>) -> tensor<4x2x3xf32>
  func.return %a : tensor<4x2x3xf32>
}

// -----

// RemoveDivByOne: x / 1 = x.

// CHECK-LABEL: func.func @div_by_one(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    func.return %[[X]] : tensor<4xf32>
func.func @div_by_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = df.constant dense<1.0> : tensor<4xf32>
  %a = df.div %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// Not: the 1 broadcasts x to 3x4 (x/1 is still x*1, a broadcast).

// CHECK-LABEL: func.func @div_by_one_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = df.mul %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[D]] : tensor<3x4xf32>
func.func @div_by_one_kept(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %one = df.constant dense<1.0> : tensor<3x4xf32>
  %a = df.div %x, %one : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %a : tensor<3x4xf32>
}

// -----

// RemovePowOne: pow(x, 1) = x.

// CHECK-LABEL: func.func @pow_one(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NEXT:    func.return %[[X]] : tensor<2x2xf64>
func.func @pow_one(%x: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %one = df.constant dense<1.0> : tensor<f64>
  %a = df.pow %x, %one : (tensor<2x2xf64>, tensor<f64>) -> tensor<2x2xf64>
  func.return %a : tensor<2x2xf64>
}

// Not: the exponent broadcasts x to 3x2x2; pow(1, x) is not x; pow(x, 3).

// CHECK-LABEL: func.func @pow_one_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NEXT:    %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<3x2x2xf64>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<3.000000e+00> : tensor<f64>
// CHECK-NEXT:    %[[A:.*]] = df.pow %[[X]], %[[ONE]] : (tensor<2x2xf64>, tensor<3x2x2xf64>) -> tensor<3x2x2xf64>
// CHECK-NEXT:    %[[B:.*]] = df.pow %[[S]], %[[X]] : (tensor<f64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[C:.*]] = df.pow %[[X]], %[[T]] : (tensor<2x2xf64>, tensor<f64>) -> tensor<2x2xf64>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]] : tensor<3x2x2xf64>, tensor<2x2xf64>, tensor<2x2xf64>
func.func @pow_one_kept(%x: tensor<2x2xf64>) -> (tensor<3x2x2xf64>, tensor<2x2xf64>, tensor<2x2xf64>) {
  %one = df.constant dense<1.0> : tensor<3x2x2xf64>
  %s = df.constant dense<1.0> : tensor<f64>
  %three = df.constant dense<3.0> : tensor<f64>
  %a = df.pow %x, %one : (tensor<2x2xf64>, tensor<3x2x2xf64>) -> tensor<3x2x2xf64>
  %b = df.pow %s, %x : (tensor<f64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %c = df.pow %x, %three : (tensor<2x2xf64>, tensor<f64>) -> tensor<2x2xf64>
  func.return %a, %b, %c : tensor<3x2x2xf64>, tensor<2x2xf64>, tensor<2x2xf64>
}

// -----

// SubFromZeroToNeg: 0 - y = neg(y), on floats and integers.

// CHECK-LABEL: func.func @sub_from_zero(
// CHECK-SAME:      %[[Y:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>)
// CHECK-NEXT:    %[[A:.*]] = df.neg %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.neg %[[I]] : (tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xi64>
func.func @sub_from_zero(%y: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %zero = df.constant dense<0.0> : tensor<f32>
  %izero = df.constant dense<0> : tensor<4xi64>
  %a = df.sub %zero, %y : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %b = df.sub %izero, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %a, %b : tensor<4xf32>, tensor<4xi64>
}

// Not: the zero broadcasts y to 2x4.

// CHECK-LABEL: func.func @sub_from_zero_kept(
// CHECK-SAME:      %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Z:.*]] = df.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = df.sub %[[Z]], %[[Y]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<2x4xf32>
func.func @sub_from_zero_kept(%y: tensor<4xf32>) -> tensor<2x4xf32> {
  %zero = df.constant dense<0.0> : tensor<2x4xf32>
  %a = df.sub %zero, %y : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %a : tensor<2x4xf32>
}

// -----

// MulByMinusOneToNeg: x * -1 = -1 * x = neg(x); the new op keeps the
// annotations of the one it replaces.

// CHECK-LABEL: func.func @mul_by_minus_one(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK-NEXT:    %[[A:.*]] = df.neg %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.neg %[[X]] {df.device = "gpu:0", df.backward} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.neg %[[I]] : (tensor<2xi32>) -> tensor<2xi32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]] : tensor<4xf32>, tensor<4xf32>, tensor<2xi32>
func.func @mul_by_minus_one(%x: tensor<4xf32>, %i: tensor<2xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xi32>) {
  %m = df.constant dense<-1.0> : tensor<f32>
  %im = df.constant dense<-1> : tensor<2xi32>
  %a = df.mul %x, %m : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.mul %m, %x {df.device = "gpu:0", df.backward} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.mul %im, %i : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<2xi32>
}

// Not: -1 broadcasts x to 2x4; -2 is not -1.

// CHECK-LABEL: func.func @mul_by_minus_one_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[M:.*]] = df.constant dense<-1.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[M]] : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.mul %[[X]], %[[T]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<2x4xf32>, tensor<4xf32>
func.func @mul_by_minus_one_kept(%x: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %m = df.constant dense<-1.0> : tensor<2x1xf32>
  %t = df.constant dense<-2.0> : tensor<f32>
  %a = df.mul %x, %m : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %b = df.mul %x, %t : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %a, %b : tensor<2x4xf32>, tensor<4xf32>
}

// -----

// DivOfOneToReciprocal: 1 / y = reciprocal(y).

// CHECK-LABEL: func.func @div_of_one(
// CHECK-SAME:      %[[Y:.*]]: tensor<2x3xf64>)
// CHECK-NEXT:    %[[R:.*]] = df.reciprocal %[[Y]] : (tensor<2x3xf64>) -> tensor<2x3xf64>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf64>
func.func @div_of_one(%y: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %one = df.constant dense<1.0> : tensor<3xf64>
  %a = df.div %one, %y : (tensor<3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  func.return %a : tensor<2x3xf64>
}

// Not: the 1 broadcasts y to 4x2x3; 3 / y.

// CHECK-LABEL: func.func @div_of_one_kept(
// CHECK-SAME:      %[[Y:.*]]: tensor<2x3xf64>)
// CHECK-NEXT:    %[[ONE:.*]] = df.constant dense<1.000000e+00> : tensor<4x1x1xf64>
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<3.000000e+00> : tensor<f64>
// CHECK-NEXT:    %[[A:.*]] = df.div %[[ONE]], %[[Y]] : (tensor<4x1x1xf64>, tensor<2x3xf64>) -> tensor<4x2x3xf64>
// CHECK-NEXT:    %[[B:.*]] = df.div %[[T]], %[[Y]] : (tensor<f64>, tensor<2x3xf64>) -> tensor<2x3xf64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<4x2x3xf64>, tensor<2x3xf64>
func.func @div_of_one_kept(%y: tensor<2x3xf64>) -> (tensor<4x2x3xf64>, tensor<2x3xf64>) {
  %one = df.constant dense<1.0> : tensor<4x1x1xf64>
  %three = df.constant dense<3.0> : tensor<f64>
  %a = df.div %one, %y : (tensor<4x1x1xf64>, tensor<2x3xf64>) -> tensor<4x2x3xf64>
  %b = df.div %three, %y : (tensor<f64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  func.return %a, %b : tensor<4x2x3xf64>, tensor<2x3xf64>
}

// -----

// MulSelfToSquare: x * x = square(x).

// CHECK-LABEL: func.func @mul_self(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[A:.*]] = df.square %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.square %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xi32>
func.func @mul_self(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %a = df.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = df.mul %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %a, %b : tensor<4xf32>, tensor<4xi32>
}

// Not: two different values (even of the same type).

// CHECK-LABEL: func.func @mul_self_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @mul_self_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// PowTwoToSquare: pow(x, 2) = square(x).

// CHECK-LABEL: func.func @pow_two(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf32>)
// CHECK-NEXT:    %[[S:.*]] = df.square %[[X]] : (tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<2x2xf32>
func.func @pow_two(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %two = df.constant dense<2.0> : tensor<2xf32>
  %a = df.pow %x, %two : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  func.return %a : tensor<2x2xf32>
}

// Not: the 2 broadcasts x to 3x2x2; pow(2, x); a non-splat exponent.

// CHECK-LABEL: func.func @pow_two_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf32>)
// CHECK-NEXT:    %[[TWO:.*]] = df.constant dense<2.000000e+00> : tensor<3x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[A:.*]] = df.pow %[[X]], %[[TWO]] : (tensor<2x2xf32>, tensor<3x1x1xf32>) -> tensor<3x2x2xf32>
// CHECK-NEXT:    %[[B:.*]] = df.pow %[[S]], %[[X]] : (tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.pow %[[X]], %[[V]] : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]] : tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
func.func @pow_two_kept(%x: tensor<2x2xf32>) -> (tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %two = df.constant dense<2.0> : tensor<3x1x1xf32>
  %s = df.constant dense<2.0> : tensor<f32>
  %v = df.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %a = df.pow %x, %two : (tensor<2x2xf32>, tensor<3x1x1xf32>) -> tensor<3x2x2xf32>
  %b = df.pow %s, %x : (tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = df.pow %x, %v : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  func.return %a, %b, %c : tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// PowMinusOneToReciprocal: pow(x, -1) = reciprocal(x).

// CHECK-LABEL: func.func @pow_minus_one(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>)
// CHECK-NEXT:    %[[R:.*]] = df.reciprocal %[[X]] : (tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    func.return %[[R]] : tensor<3xf64>
func.func @pow_minus_one(%x: tensor<3xf64>) -> tensor<3xf64> {
  %m = df.constant dense<-1.0> : tensor<f64>
  %a = df.pow %x, %m : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  func.return %a : tensor<3xf64>
}

// Not: the -1 broadcasts x to 2x3.

// CHECK-LABEL: func.func @pow_minus_one_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>)
// CHECK-NEXT:    %[[M:.*]] = df.constant dense<-1.000000e+00> : tensor<2x1xf64>
// CHECK-NEXT:    %[[P:.*]] = df.pow %[[X]], %[[M]] : (tensor<3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
// CHECK-NEXT:    func.return %[[P]] : tensor<2x3xf64>
func.func @pow_minus_one_kept(%x: tensor<3xf64>) -> tensor<2x3xf64> {
  %m = df.constant dense<-1.0> : tensor<2x1xf64>
  %a = df.pow %x, %m : (tensor<3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  func.return %a : tensor<2x3xf64>
}

// -----

// DivBySqrtToMulRsqrt: x / sqrt(y) = x * rsqrt(y), also when y broadcasts.

// CHECK-LABEL: func.func @div_by_sqrt(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.rsqrt %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[X]], %[[R]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[M]] : tensor<2x4xf32>
func.func @div_by_sqrt(%x: tensor<2x4xf32>, %y: tensor<4xf32>) -> tensor<2x4xf32> {
  %s = df.sqrt %y : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.div %x, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %a : tensor<2x4xf32>
}

// Not: the sqrt has another use (it would be computed twice); sqrt(y) / x.

// CHECK-LABEL: func.func @div_by_sqrt_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = df.sqrt %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = df.div %[[X]], %[[S]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.sqrt %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.div %[[T]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[S]], %[[B]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @div_by_sqrt_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = df.sqrt %y : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.div %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = df.sqrt %y : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.div %t, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %s, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// DivByPowerOfTwoToMul: x / 2^k = x * 2^-k, exact: 4 -> 0.25, -0.5 -> -2,
// 8 (f64) -> 0.125; a divisor that broadcasts gives a scale of its type; the
// new constant and product keep the annotations of the division.

// CHECK-LABEL: func.func @div_by_power_of_two(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<2xf64>)
// CHECK-NEXT:    %[[Q:.*]] = df.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[Q]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[M2:.*]] = df.constant {df.device = "cpu:0"} dense<-2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.mul %[[X]], %[[M2]] {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[H:.*]] = df.constant dense<5.000000e-01> : tensor<3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.mul %[[X]], %[[H]] : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.constant dense<1.250000e-01> : tensor<f64>
// CHECK-NEXT:    %[[F:.*]] = df.mul %[[D]], %[[E]] : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[F]] : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<2xf64>
func.func @div_by_power_of_two(%x: tensor<4xf32>, %d: tensor<2xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<2xf64>) {
  %four = df.constant dense<4.0> : tensor<f32>
  %half = df.constant dense<-0.5> : tensor<4xf32>
  %two = df.constant dense<2.0> : tensor<3x4xf32>
  %eight = df.constant dense<8.0> : tensor<f64>
  %a = df.div %x, %four : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.div %x, %half {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.div %x, %two : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %e = df.div %d, %eight : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  func.return %a, %b, %c, %e : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<2xf64>
}

// Not: 3 (1/3 is inexact), 0, the smallest f32 subnormal 2^-149 (its
// reciprocal overflows), a non-splat divisor, 2 / x.

// CHECK-LABEL: func.func @div_by_power_of_two_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[T:.*]] = df.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[Z:.*]] = df.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<1.401300e-45> : tensor<f32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = df.div %[[X]], %[[T]] : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = df.div %[[X]], %[[Z]] : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.div %[[X]], %[[S]] : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[D:.*]] = df.div %[[X]], %[[V]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[E:.*]] = df.div %[[W]], %[[X]] : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
func.func @div_by_power_of_two_kept(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %three = df.constant dense<3.0> : tensor<f32>
  %zero = df.constant dense<0.0> : tensor<f32>
  %tiny = df.constant dense<1.401298e-45> : tensor<f32>
  %v = df.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %two = df.constant dense<2.0> : tensor<f32>
  %a = df.div %x, %three : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %b = df.div %x, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %c = df.div %x, %tiny : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %d = df.div %x, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %e = df.div %two, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %a, %b, %c, %d, %e : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// AddNegToSub: x + neg(y) = neg(y) + x = x - y; a neg with another use stays
// for that use.

// CHECK-LABEL: func.func @add_neg(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.sub %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.sub %[[Z]], %[[Y]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[N]] : tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>
func.func @add_neg(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>) {
  %n = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.add %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.add %m, %z : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %a, %b, %m : tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>
}

// Not: neither term is a negation.

// CHECK-LABEL: func.func @add_neg_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = df.abs %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = df.add %[[X]], %[[E]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @add_neg_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = df.abs %y : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.add %x, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// SubNegToAdd: x - neg(y) = x + y.

// CHECK-LABEL: func.func @sub_neg(
// CHECK-SAME:      %[[X:.*]]: tensor<3xi32>, %[[Y:.*]]: tensor<3xi32>)
// CHECK-NEXT:    %[[A:.*]] = df.add %[[X]], %[[Y]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:    func.return %[[A]] : tensor<3xi32>
func.func @sub_neg(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %n = df.neg %y : (tensor<3xi32>) -> tensor<3xi32>
  %a = df.sub %x, %n : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %a : tensor<3xi32>
}

// Not: the negation is the minuend, neg(y) - x.

// CHECK-LABEL: func.func @sub_neg_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<3xi32>, %[[Y:.*]]: tensor<3xi32>)
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[Y]] : (tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:    %[[A:.*]] = df.sub %[[N]], %[[X]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:    func.return %[[A]] : tensor<3xi32>
func.func @sub_neg_kept(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %n = df.neg %y : (tensor<3xi32>) -> tensor<3xi32>
  %a = df.sub %n, %x : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %a : tensor<3xi32>
}

// -----

// MulOfNegsToMul: neg(x) * neg(y) = x * y; neg(x) * neg(x) = x * x, then
// MulSelfToSquare makes it square(x).

// CHECK-LABEL: func.func @mul_of_negs(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<2x1xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[X]], %[[Y]] : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.square %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<2x4xf32>, tensor<4xf32>
func.func @mul_of_negs(%x: tensor<4xf32>, %y: tensor<2x1xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %nx = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %ny = df.neg %y : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = df.mul %nx, %ny : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %b = df.mul %nx, %nx : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %b : tensor<2x4xf32>, tensor<4xf32>
}

// Not: only one factor is negated.

// CHECK-LABEL: func.func @mul_of_negs_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = df.mul %[[N]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @mul_of_negs_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %n = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.mul %n, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// MergeAddChainIntoAddN: a chain of adds (and addns) of one type becomes one
// addn, its terms left to right, whichever way the chain is nested.

// CHECK-LABEL: func.func @add_chain(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[L:.*]] = df.addn %[[A]], %[[B]], %[[C]], %[[D]] : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.addn %[[A]], %[[B]], %[[C]], %[[D]] : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.addn %[[D]], %[[A]], %[[B]], %[[C]] : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[L]], %[[R]], %[[N]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @add_chain(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = df.add %0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = df.add %1, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = df.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = df.add %b, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = df.add %a, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = df.addn %a, %b, %c : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = df.add %d, %4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %l, %r, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A sum of one type inside a sum that broadcasts to a larger type is merged
// on its own.

// CHECK-LABEL: func.func @add_chain_inside_broadcast(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[N:.*]] = df.addn %[[A]], %[[B]], %[[C]] : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.add %[[N]], %[[M]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x4xf32>
func.func @add_chain_inside_broadcast(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %m: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = df.add %0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = df.add %1, %m : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}

// The same when the outer add keeps the type but one of its terms is a
// broadcast scalar: (a + b) + c is still merged, the scalar add stays.

// CHECK-LABEL: func.func @add_chain_under_scalar_term(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[N:.*]] = df.addn %[[A]], %[[B]], %[[C]] : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.add %[[N]], %[[S]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf32>
func.func @add_chain_under_scalar_term(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %0 = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = df.add %0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = df.add %1, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// Not: an inner sum with another use is a term of its own (here the chain
// keeps two terms, so nothing changes); a broadcast term inside the chain.

// CHECK-LABEL: func.func @add_chain_kept(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[T:.*]] = df.add %[[A]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[U:.*]] = df.add %[[T]], %[[C]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[V:.*]] = df.add %[[A]], %[[S]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[W:.*]] = df.add %[[V]], %[[C]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[U]], %[[T]], %[[W]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @add_chain_kept(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = df.add %t, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = df.add %a, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %w = df.add %v, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %u, %t, %w : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// HoistCommonFactor: x*a + x*b = x*(a + b) and x*a - x*b = x*(a - b), the
// common factor on either side of each product.

// CHECK-LABEL: func.func @hoist(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[S:.*]] = df.add %[[A]], %[[B]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.mul %[[X]], %[[S]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[D:.*]] = df.sub %[[A]], %[[B]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Q:.*]] = df.mul %[[X]], %[[D]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[P]], %[[Q]] : tensor<4xf32>, tensor<4xf32>
func.func @hoist(%x: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %xa = df.mul %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %xb = df.mul %x, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s = df.add %xa, %xb : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %ya = df.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %yb = df.mul %b, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %d = df.sub %ya, %yb : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %d : tensor<4xf32>, tensor<4xf32>
}

// Not: a product with another use (it is needed anyway); no common factor.

// CHECK-LABEL: func.func @hoist_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[XA:.*]] = df.mul %[[X]], %[[A]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[XB:.*]] = df.mul %[[X]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = df.add %[[XA]], %[[XB]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[YB:.*]] = df.mul %[[Y]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.sub %[[XA]], %[[YB]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[S]], %[[T]] : tensor<4xf32>, tensor<4xf32>
func.func @hoist_kept(%x: tensor<4xf32>, %y: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %xa = df.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %xb = df.mul %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = df.add %xa, %xb : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %yb = df.mul %y, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = df.sub %xa, %yb : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %t : tensor<4xf32>, tensor<4xf32>
}

// -----

// FoldScaleIntoMatmul: matmul(x, W) * s = matmul(x, W * s) for a constant W
// used once and a constant s scaling whole columns.
// W = [[1, 2, 3], [4, 5, 6]] times s = [2, 3, 4] per column:
// [[2, 6, 12], [8, 15, 24]].

// CHECK-LABEL: func.func @scale_into_matmul(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[2.000000e+00, 6.000000e+00, 1.200000e+01], [8.000000e+00, 1.500000e+01, 2.400000e+01]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[M]] : tensor<5x3xf32>
func.func @scale_into_matmul(%x: tensor<5x2xf32>) -> tensor<5x3xf32> {
  %w = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = df.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %m = df.matmul %x, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r = df.mul %m, %s : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  func.return %r : tensor<5x3xf32>
}

// A scalar scale on the left, and transpose_b (W is 3x2, the columns of the
// product are its rows): [[1, 2], [3, 4], [5, 6]] * 0.5 and
// [[1, 2], [3, 4], [5, 6]] rows times [2, 3, 4] = [[2, 4], [9, 12], [20, 24]].
// transpose_a and annotations are kept.

// CHECK-LABEL: func.func @scale_into_matmul_transposed(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf64>, %[[XT:.*]]: tensor<2x5xf64>)
// CHECK-NEXT:    %[[W1:.*]] = df.constant {df.device = "gpu:1"} dense<{{\[}}[5.000000e-01, 1.000000e+00], [1.500000e+00, 2.000000e+00], [2.500000e+00, 3.000000e+00]]> : tensor<3x2xf64>
// CHECK-NEXT:    %[[A:.*]] = df.matmul %[[XT]], %[[W1]] {df.device = "gpu:1", transpose_a = true, transpose_b = true} : (tensor<2x5xf64>, tensor<3x2xf64>) -> tensor<5x3xf64>
// CHECK-NEXT:    %[[W2:.*]] = df.constant dense<{{\[}}[2.000000e+00, 4.000000e+00], [9.000000e+00, 1.200000e+01], [2.000000e+01, 2.400000e+01]]> : tensor<3x2xf64>
// CHECK-NEXT:    %[[B:.*]] = df.matmul %[[X]], %[[W2]] {transpose_b = true} : (tensor<5x2xf64>, tensor<3x2xf64>) -> tensor<5x3xf64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<5x3xf64>, tensor<5x3xf64>
func.func @scale_into_matmul_transposed(%x: tensor<5x2xf64>, %xt: tensor<2x5xf64>) -> (tensor<5x3xf64>, tensor<5x3xf64>) {
  %w1 = df.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf64>
  %w2 = df.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf64>
  %half = df.constant dense<0.5> : tensor<f64>
  %s = df.constant dense<[[2.0, 3.0, 4.0]]> : tensor<1x3xf64>
  %m1 = df.matmul %xt, %w1 {transpose_a = true, transpose_b = true} : (tensor<2x5xf64>, tensor<3x2xf64>) -> tensor<5x3xf64>
  %a = df.mul %half, %m1 {df.device = "gpu:1"} : (tensor<f64>, tensor<5x3xf64>) -> tensor<5x3xf64>
  %m2 = df.matmul %x, %w2 {transpose_b = true} : (tensor<5x2xf64>, tensor<3x2xf64>) -> tensor<5x3xf64>
  %b = df.mul %m2, %s : (tensor<5x3xf64>, tensor<1x3xf64>) -> tensor<5x3xf64>
  func.return %a, %b : tensor<5x3xf64>, tensor<5x3xf64>
}

// Batched (a 2x2x3 weight, one scale per column for both batches:
// [1, 2, 4]) and on integers (the scale on the left: [[1, 2], [3, 4]] times
// [3, -1] per column = [[3, -2], [9, -4]]).

// CHECK-LABEL: func.func @scale_into_matmul_batched_int(
// CHECK-SAME:      %[[X:.*]]: tensor<2x5x2xf32>, %[[I:.*]]: tensor<2x2xi32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[\[\[}}1.000000e+00, 4.000000e+00, 1.200000e+01], [4.000000e+00, 1.000000e+01, 2.400000e+01]], {{\[\[}}1.000000e+00, 2.000000e+00, 4.000000e+00], [2.000000e+00, 4.000000e+00, 8.000000e+00]]]> : tensor<2x2x3xf32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<2x5x2xf32>, tensor<2x2x3xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<{{\[\[}}3, -2], [9, -4]]> : tensor<2x2xi32>
// CHECK-NEXT:    %[[N:.*]] = df.matmul %[[I]], %[[V]] : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
// CHECK-NEXT:    func.return %[[M]], %[[N]] : tensor<2x5x3xf32>, tensor<2x2xi32>
func.func @scale_into_matmul_batched_int(%x: tensor<2x5x2xf32>, %i: tensor<2x2xi32>) -> (tensor<2x5x3xf32>, tensor<2x2xi32>) {
  %w = df.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]]> : tensor<2x2x3xf32>
  %s = df.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %v = df.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %t = df.constant dense<[3, -1]> : tensor<2xi32>
  %m = df.matmul %x, %w : (tensor<2x5x2xf32>, tensor<2x2x3xf32>) -> tensor<2x5x3xf32>
  %r = df.mul %m, %s : (tensor<2x5x3xf32>, tensor<3xf32>) -> tensor<2x5x3xf32>
  %n = df.matmul %i, %v : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %q = df.mul %t, %n : (tensor<2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  func.return %r, %q : tensor<2x5x3xf32>, tensor<2x2xi32>
}

// Not: a weight that is not a constant.

// CHECK-LABEL: func.func @scale_into_matmul_weight_not_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf32>, %[[W:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<[2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R:.*]] = df.mul %[[M]], %[[S]] : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<5x3xf32>
func.func @scale_into_matmul_weight_not_constant(%x: tensor<5x2xf32>, %w: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %s = df.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %m = df.matmul %x, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r = df.mul %m, %s : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  func.return %r : tensor<5x3xf32>
}

// Not: the weight has another use (scaling it would change that use).

// CHECK-LABEL: func.func @scale_into_matmul_weight_shared(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf32>, %[[Y:.*]]: tensor<5x2xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[N:.*]] = df.matmul %[[Y]], %[[W]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R:.*]] = df.mul %[[M]], %[[S]] : (tensor<5x3xf32>, tensor<f32>) -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[R]], %[[N]] : tensor<5x3xf32>, tensor<5x3xf32>
func.func @scale_into_matmul_weight_shared(%x: tensor<5x2xf32>, %y: tensor<5x2xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  %w = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = df.constant dense<2.0> : tensor<f32>
  %m = df.matmul %x, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %n = df.matmul %y, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r = df.mul %m, %s : (tensor<5x3xf32>, tensor<f32>) -> tensor<5x3xf32>
  func.return %r, %n : tensor<5x3xf32>, tensor<5x3xf32>
}

// Not: the product has another use.

// CHECK-LABEL: func.func @scale_into_matmul_product_shared(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R:.*]] = df.mul %[[M]], %[[S]] : (tensor<5x3xf32>, tensor<f32>) -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[R]], %[[M]] : tensor<5x3xf32>, tensor<5x3xf32>
func.func @scale_into_matmul_product_shared(%x: tensor<5x2xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  %w = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = df.constant dense<2.0> : tensor<f32>
  %m = df.matmul %x, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r = df.mul %m, %s : (tensor<5x3xf32>, tensor<f32>) -> tensor<5x3xf32>
  func.return %r, %m : tensor<5x3xf32>, tensor<5x3xf32>
}

// Not: a scale per row (5x1), per element (5x3), one that broadcasts the
// product to 2x5x3, and a scale with a zero (it would zero a weight column and
// turn inf * 0 into 0 instead of NaN).

// CHECK-LABEL: func.func @scale_into_matmul_not_per_column(
// CHECK-SAME:      %[[X:.*]]: tensor<5x2xf32>)
// CHECK-NEXT:    %[[W1:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[W2:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[W3:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[W4:.*]] = df.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[ROW:.*]] = df.constant dense<2.000000e+00> : tensor<5x1xf32>
// CHECK-NEXT:    %[[ALL:.*]] = df.constant dense<2.000000e+00> : tensor<5x3xf32>
// CHECK-NEXT:    %[[BIG:.*]] = df.constant dense<2.000000e+00> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = df.constant dense<[2.000000e+00, 0.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[M1:.*]] = df.matmul %[[X]], %[[W1]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = df.mul %[[M1]], %[[ROW]] : (tensor<5x3xf32>, tensor<5x1xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[M2:.*]] = df.matmul %[[X]], %[[W2]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R2:.*]] = df.mul %[[M2]], %[[ALL]] : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[M3:.*]] = df.matmul %[[X]], %[[W3]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R3:.*]] = df.mul %[[M3]], %[[BIG]] : (tensor<5x3xf32>, tensor<2x1x1xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT:    %[[M4:.*]] = df.matmul %[[X]], %[[W4]] : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[R4:.*]] = df.mul %[[M4]], %[[ZERO]] : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[R1]], %[[R2]], %[[R3]], %[[R4]] : tensor<5x3xf32>, tensor<5x3xf32>, tensor<2x5x3xf32>, tensor<5x3xf32>
func.func @scale_into_matmul_not_per_column(%x: tensor<5x2xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<2x5x3xf32>, tensor<5x3xf32>) {
  %w1 = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w2 = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w3 = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w4 = df.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %row = df.constant dense<2.0> : tensor<5x1xf32>
  %all = df.constant dense<2.0> : tensor<5x3xf32>
  %big = df.constant dense<2.0> : tensor<2x1x1xf32>
  %zero = df.constant dense<[2.0, 0.0, 4.0]> : tensor<3xf32>
  %m1 = df.matmul %x, %w1 : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r1 = df.mul %m1, %row : (tensor<5x3xf32>, tensor<5x1xf32>) -> tensor<5x3xf32>
  %m2 = df.matmul %x, %w2 : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r2 = df.mul %m2, %all : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  %m3 = df.matmul %x, %w3 : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r3 = df.mul %m3, %big : (tensor<5x3xf32>, tensor<2x1x1xf32>) -> tensor<2x5x3xf32>
  %m4 = df.matmul %x, %w4 : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %r4 = df.mul %m4, %zero : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  func.return %r1, %r2, %r3, %r4 : tensor<5x3xf32>, tensor<5x3xf32>, tensor<2x5x3xf32>, tensor<5x3xf32>
}

// -----

// FoldScaleIntoConv: conv2d(x, W, b) * s = conv2d(x, W * s, b * s) for a
// constant W (and b), each used once, and s constant per output channel.
// W (2x1x1x1) = [1, 2] per channel, b = [0.5, 1], s = [3, 4]:
// W * s = [3, 8], b * s = [1.5, 4]. Strides and pads are kept.

// CHECK-LABEL: func.func @scale_into_conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[{{\[}}[3.000000e+00]]], [{{\[}}[8.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = df.constant dense<[1.500000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<1x2x3x3xf32>
func.func @scale_into_conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %w = df.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = df.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %s = df.constant dense<[[[3.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = df.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r = df.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}

// Without a bias, a scalar scale on the left: W (2x1x1x2) =
// [[1, 2]], [[3, 4]] times 0.5 = [[0.5, 1]], [[1.5, 2]]; dilations kept.

// CHECK-LABEL: func.func @scale_into_conv_no_bias(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x3x5xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[{{\[}}[5.000000e-01, 1.000000e+00]]], [{{\[}}[1.500000e+00, 2.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d %[[X]], %[[W]] {dilations = array<i64: 1, 2>} : (tensor<1x1x3x5xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<1x2x3x3xf32>
func.func @scale_into_conv_no_bias(%x: tensor<1x1x3x5xf32>) -> tensor<1x2x3x3xf32> {
  %w = df.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %s = df.constant dense<0.5> : tensor<f32>
  %c = df.conv2d %x, %w {dilations = array<i64: 1, 2>} : (tensor<1x1x3x5xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x3x3xf32>
  %r = df.mul %s, %c : (tensor<f32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}

// A depthwise conv2d (groups = 2) scales the same way, its groups kept.

// CHECK-LABEL: func.func @scale_into_depthwise_conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[{{\[}}[3.000000e+00]]], [{{\[}}[8.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d %[[X]], %[[W]] {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<1x2x4x4xf32>
func.func @scale_into_depthwise_conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = df.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = df.constant dense<[[[3.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %c = df.conv2d %x, %w {groups = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = df.mul %c, %s : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// Not: a filter that is not constant; a bias that is not constant; a filter
// with another use.

// CHECK-LABEL: func.func @scale_into_conv_not_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x3x3xf32>, %[[F:.*]]: tensor<2x1x1x1xf32>, %[[BIAS:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[V:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[C1:.*]] = df.conv2d %[[X]], %[[F]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = df.mul %[[C1]], %[[S]] : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[C2:.*]] = df.conv2d %[[X]], %[[W]], %[[BIAS]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R2:.*]] = df.mul %[[C2]], %[[S]] : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[C3:.*]] = df.conv2d %[[X]], %[[V]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R3:.*]] = df.mul %[[C3]], %[[S]] : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[D3:.*]] = df.conv2d %[[X]], %[[V]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[R1]], %[[R2]], %[[R3]], %[[D3]] : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
func.func @scale_into_conv_not_constant(%x: tensor<1x1x3x3xf32>, %f: tensor<2x1x1x1xf32>, %bias: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = df.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %v = df.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = df.constant dense<3.0> : tensor<f32>
  %c1 = df.conv2d %x, %f : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r1 = df.mul %c1, %s : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %c2 = df.conv2d %x, %w, %bias : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r2 = df.mul %c2, %s : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %c3 = df.conv2d %x, %v : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r3 = df.mul %c3, %s : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %d3 = df.conv2d %x, %v : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %r1, %r2, %r3, %d3 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Not: a bias with another use (scaling it would change that use).

// CHECK-LABEL: func.func @scale_into_conv_bias_shared(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = df.constant dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = df.mul %[[C]], %[[S]] : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[R]], %[[B]] : tensor<1x2x3x3xf32>, tensor<2xf32>
func.func @scale_into_conv_bias_shared(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32>) {
  %w = df.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = df.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %s = df.constant dense<2.0> : tensor<f32>
  %c = df.conv2d %x, %w, %b : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r = df.mul %c, %s : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  func.return %r, %b : tensor<1x2x3x3xf32>, tensor<2xf32>
}

// Not: a scale along the width (shape [3] aligns with W, not with the
// channels), one along the height, and a per-channel scale with a zero.

// CHECK-LABEL: func.func @scale_into_conv_not_per_channel(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:    %[[W1:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]], [{{\[}}[3.000000e+00]]]]> : tensor<3x1x1x1xf32>
// CHECK-NEXT:    %[[W2:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]], [{{\[}}[3.000000e+00]]]]> : tensor<3x1x1x1xf32>
// CHECK-NEXT:    %[[W3:.*]] = df.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], [{{\[}}[2.000000e+00]]], [{{\[}}[3.000000e+00]]]]> : tensor<3x1x1x1xf32>
// CHECK-NEXT:    %[[SW:.*]] = df.constant dense<[2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[SH:.*]] = df.constant dense<{{\[}}[2.000000e+00], [3.000000e+00], [4.000000e+00]]> : tensor<3x1xf32>
// CHECK-NEXT:    %[[SZ:.*]] = df.constant dense<{{\[}}[{{\[}}[2.000000e+00]], {{\[}}[0.000000e+00]], {{\[}}[4.000000e+00]]]]> : tensor<1x3x1x1xf32>
// CHECK-NEXT:    %[[C1:.*]] = df.conv2d %[[X]], %[[W1]] : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[R1:.*]] = df.mul %[[C1]], %[[SW]] : (tensor<1x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[C2:.*]] = df.conv2d %[[X]], %[[W2]] : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[R2:.*]] = df.mul %[[C2]], %[[SH]] : (tensor<1x3x3x3xf32>, tensor<3x1xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[C3:.*]] = df.conv2d %[[X]], %[[W3]] : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %[[R3:.*]] = df.mul %[[SZ]], %[[C3]] : (tensor<1x3x1x1xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    func.return %[[R1]], %[[R2]], %[[R3]] : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>
func.func @scale_into_conv_not_per_channel(%x: tensor<1x1x3x3xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) {
  %w1 = df.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]]]> : tensor<3x1x1x1xf32>
  %w2 = df.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]]]> : tensor<3x1x1x1xf32>
  %w3 = df.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]]]> : tensor<3x1x1x1xf32>
  %sw = df.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %sh = df.constant dense<[[2.0], [3.0], [4.0]]> : tensor<3x1xf32>
  %sz = df.constant dense<[[[[2.0]], [[0.0]], [[4.0]]]]> : tensor<1x3x1x1xf32>
  %c1 = df.conv2d %x, %w1 : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
  %r1 = df.mul %c1, %sw : (tensor<1x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %c2 = df.conv2d %x, %w2 : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
  %r2 = df.mul %c2, %sh : (tensor<1x3x3x3xf32>, tensor<3x1xf32>) -> tensor<1x3x3x3xf32>
  %c3 = df.conv2d %x, %w3 : (tensor<1x1x3x3xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
  %r3 = df.mul %sz, %c3 : (tensor<1x3x1x1xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %r1, %r2, %r3 : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>
}

// -----

// MulByZeroToZero: x * 0 = 0 is wrong for x NaN or ±Inf, so on floats it
// needs fastmath; on integers it always holds. The zero takes the result's
// type, also when the 0 broadcasts x.

// CHECK-LABEL: func.func @mul_by_zero_f32(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// SAFE-NEXT:     %[[Z:.*]] = df.constant dense<0.000000e+00> : tensor<f32>
// SAFE-NEXT:     %[[W:.*]] = df.constant dense<0.000000e+00> : tensor<2x4xf32>
// SAFE-NEXT:     %[[A:.*]] = df.mul %[[X]], %[[Z]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// SAFE-NEXT:     %[[B:.*]] = df.mul %[[W]], %[[X]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// SAFE-NEXT:     func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<2x4xf32>
// FAST-NEXT:     %[[A:.*]] = df.constant dense<0.000000e+00> : tensor<4xf32>
// FAST-NEXT:     %[[B:.*]] = df.constant dense<0.000000e+00> : tensor<2x4xf32>
// FAST-NEXT:     func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<2x4xf32>
func.func @mul_by_zero_f32(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %z = df.constant dense<0.0> : tensor<f32>
  %w = df.constant dense<0.0> : tensor<2x4xf32>
  %a = df.mul %x, %z : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.mul %w, %x : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @mul_by_zero_int(
// CHECK-SAME:      %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<2xi64>)
// CHECK-NEXT:    %[[A:.*]] = df.constant dense<0> : tensor<4xi32>
// CHECK-NEXT:    %[[B:.*]] = df.constant {df.device = "cpu:1"} dense<0> : tensor<3x2xi64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<4xi32>, tensor<3x2xi64>
func.func @mul_by_zero_int(%i: tensor<4xi32>, %j: tensor<2xi64>) -> (tensor<4xi32>, tensor<3x2xi64>) {
  %z = df.constant dense<0> : tensor<i32>
  %w = df.constant dense<0> : tensor<3x1xi64>
  %a = df.mul %i, %z : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %b = df.mul %w, %j {df.device = "cpu:1"} : (tensor<3x1xi64>, tensor<2xi64>) -> tensor<3x2xi64>
  func.return %a, %b : tensor<4xi32>, tensor<3x2xi64>
}

// -----

// SubSelfToZero: x - x = 0, on floats only with fastmath.

// CHECK-LABEL: func.func @sub_self(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>, %[[I:.*]]: tensor<3xi64>)
// SAFE-NEXT:     %[[A:.*]] = df.sub %[[X]], %[[X]] : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// SAFE-NEXT:     %[[B:.*]] = df.constant dense<0> : tensor<3xi64>
// FAST-NEXT:     %[[A:.*]] = df.constant dense<0.000000e+00> : tensor<2x2xf64>
// FAST-NEXT:     %[[B:.*]] = df.constant dense<0> : tensor<3xi64>
// CHECK-NEXT:    func.return %[[A]], %[[B]] : tensor<2x2xf64>, tensor<3xi64>
func.func @sub_self(%x: tensor<2x2xf64>, %i: tensor<3xi64>) -> (tensor<2x2xf64>, tensor<3xi64>) {
  %a = df.sub %x, %x : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %b = df.sub %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %a, %b : tensor<2x2xf64>, tensor<3xi64>
}

// Not, even with fastmath: two different values.

// CHECK-LABEL: func.func @sub_self_kept(
// CHECK-SAME:      %[[I:.*]]: tensor<3xi64>, %[[J:.*]]: tensor<3xi64>)
// CHECK-NEXT:    %[[A:.*]] = df.sub %[[I]], %[[J]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    func.return %[[A]] : tensor<3xi64>
func.func @sub_self_kept(%i: tensor<3xi64>, %j: tensor<3xi64>) -> tensor<3xi64> {
  %a = df.sub %i, %j : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %a : tensor<3xi64>
}

// -----

// DivSelfToOne: x / x = 1 is wrong for 0, NaN and ±Inf: fastmath only (div is
// defined on floats only).

// CHECK-LABEL: func.func @div_self(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// SAFE-NEXT:     %[[A:.*]] = df.div %[[X]], %[[X]] {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// FAST-NEXT:     %[[A:.*]] = df.constant {df.device = "gpu:0"} dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @div_self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.div %x, %x {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// Not, even with fastmath: x / y.

// CHECK-LABEL: func.func @div_self_kept(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.div %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @div_self_kept(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.div %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// The dialect's canonical forms run too (canonicalize.mlir tests each one):
// identity erased, two transposes cancel, neg(neg(x)) = x, then x * 1 = x.
// An identity that copies a cpu:0 value to gpu:0 stays.

// CHECK-LABEL: func.func @canonical_forms(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "cpu:0"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[P:.*]] = df.identity %[[E]] {df.device = "gpu:0"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[X]], %[[P]] : tensor<2x3xf32>, tensor<2x3xf32>
func.func @canonical_forms(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = df.constant dense<1.0> : tensor<f32>
  %i = df.identity %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = df.transpose %i {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %u = df.transpose %t {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %n = df.neg %u : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = df.neg %n : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = df.mul %m, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = df.identity %e {df.device = "gpu:0"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r, %p : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CancelDoubleReciprocal: reciprocal(reciprocal(x)) = x (up to the last bit: it is
// an arithmetic rewrite, not a canonical form). A reciprocal of something else stays.

// CHECK-LABEL: func.func @double_reciprocal(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[X]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    %[[R:.*]] = df.reciprocal %[[N]] : (tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT:    func.return %[[X]], %[[R]] : tensor<2x2xf64>, tensor<2x2xf64>
func.func @double_reciprocal(%x: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %a = df.reciprocal %x : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %b = df.reciprocal %a : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %n = df.neg %x : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %c = df.reciprocal %n : (tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %b, %c : tensor<2x2xf64>, tensor<2x2xf64>
}

// -----

// Rewrites keep placements: the matmul that absorbs a scale keeps its own device,
// and the rsqrt that replaces a sqrt keeps the sqrt's.

// CHECK-LABEL: func.func @rewrites_keep_devices(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<6.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] {df.device = "gpu:0"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %[[R:.*]] = df.rsqrt %[[Y]] {df.device = "cpu:1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = df.mul %[[X]], %[[R]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[M]], %[[D]]
func.func @rewrites_keep_devices(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  %w = df.constant dense<2.0> : tensor<3x2xf32>
  %m = df.matmul %x, %w {df.device = "gpu:0"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %s = df.constant dense<3.0> : tensor<f32>
  %ms = df.mul %m, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %r = df.sqrt %y {df.device = "cpu:1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = df.div %x, %r : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %ms, %d : tensor<2x2xf32>, tensor<2x3xf32>
}
