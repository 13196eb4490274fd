// RUN: xdsl-opt %s --split-input-file -p df-layout | filecheck %s

// df-layout puts convolutions and the elementwise ops after them in NCHWc
// (blocks of 16 channels; a chain starts at a convolution larger than 1x1 with at
// least 64 outputs, and a 1x1 one joins it): the input reordered once, the filter packed at compile
// time, per-channel constants packed, values broadcast along the channels reshaped,
// and a blocked value reordered back once where an NCHW op or the return reads it.

// A residual block: conv, relu, a per-channel scale, the residual add, then back.
// CHECK-LABEL: func.func @block(
// CHECK-SAME:      %[[X:.*]]: tensor<1x64x4x4xf32>)
// CHECK:         %[[B:.*]] = df.constant dense<2.500000e-01> : tensor<64xf32>
// CHECK-NEXT:    %[[SPLIT:.*]] = df.reshape %[[X]] : (tensor<1x64x4x4xf32>) -> tensor<1x4x16x4x4xf32>
// CHECK-NEXT:    %[[XB:.*]] = df.transpose %[[SPLIT]] {perm = array<i64: 0, 1, 3, 4, 2>} : (tensor<1x4x16x4x4xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<5.000000e-01> : tensor<4x4x3x3x16x16xf32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d_nchwc %[[XB]], %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4x16xf32>, tensor<4x4x3x3x16x16xf32>, tensor<64xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[C]] : (tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[S:.*]] = df.constant dense<2.000000e+00> : tensor<1x4x1x1x16xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[R]], %[[S]] : (tensor<1x4x4x4x16xf32>, tensor<1x4x1x1x16xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[A:.*]] = df.add %[[M]], %[[XB]] : (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[A]] {perm = array<i64: 0, 1, 4, 2, 3>} : (tensor<1x4x4x4x16xf32>) -> tensor<1x4x16x4x4xf32>
// CHECK-NEXT:    %a = df.reshape %[[T]] : (tensor<1x4x16x4x4xf32>) -> tensor<1x64x4x4xf32>
// CHECK-NEXT:    func.return %a
func.func @block(%x: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %w = df.constant dense<0.5> : tensor<64x64x3x3xf32>
  %b = df.constant dense<0.25> : tensor<64xf32>
  %s = df.constant dense<2.0> : tensor<1x64x1x1xf32>
  %c = df.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x4x4xf32>
  %r = df.relu %c : (tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %m = df.mul %r, %s : (tensor<1x64x4x4xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x4x4xf32>
  %a = df.add %m, %x : (tensor<1x64x4x4xf32>, tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  func.return %a : tensor<1x64x4x4xf32>
}

// -----

// A 3x3 convolution of 64 outputs starts a chain, the 1x1 after it joins: no
// reorder between them. A scalar and a spatial map (one channel) are reshaped to
// broadcast over the blocks.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[C1:.*]] = df.conv2d_nchwc
// CHECK-NEXT:    %[[H:.*]] = df.reshape %h : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4x1xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[C1]], %[[H]] : (tensor<1x4x4x4x16xf32>, tensor<1x1x4x4x1xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[S:.*]] = df.sub %[[M]], %k : (tensor<1x4x4x4x16xf32>, tensor<f32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[W2:.*]] = df.constant {{.*}} : tensor<1x4x1x1x16x16xf32>
// CHECK-NEXT:    %[[C2:.*]] = df.conv2d_nchwc %[[S]], %[[W2]] : (tensor<1x4x4x4x16xf32>, tensor<1x4x1x1x16x16xf32>) -> tensor<1x1x4x4x16xf32>
// CHECK-NEXT:    df.transpose %[[C2]]
// CHECK-NOT:     df.transpose
func.func @chain(%x: tensor<1x16x4x4xf32>, %h: tensor<1x1x4x4xf32>, %k: tensor<f32>) -> tensor<1x16x4x4xf32> {
  %w = df.constant dense<0.5> : tensor<64x16x3x3xf32>
  %v = df.constant dense<1.5> : tensor<16x64x1x1xf32>
  %c = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x4x4xf32>
  %m = df.mul %c, %h : (tensor<1x64x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x64x4x4xf32>
  %s = df.sub %m, %k : (tensor<1x64x4x4xf32>, tensor<f32>) -> tensor<1x64x4x4xf32>
  %d = df.conv2d %s, %v : (tensor<1x64x4x4xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %d : tensor<1x16x4x4xf32>
}

// -----

// A blocked value the return reads: reordered back once, where it is made. The
// pool of it and the exp after that stay blocked.
// CHECK-LABEL: func.func @pool_after(
// CHECK:         %[[C:.*]] = df.conv2d_nchwc
// CHECK-NEXT:    %[[T:.*]] = df.transpose %[[C]]
// CHECK-NEXT:    %c = df.reshape %[[T]] : (tensor<1x4x16x4x4xf32>) -> tensor<1x64x4x4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.max_pool2d_nchwc %[[C]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4x16xf32>) -> tensor<1x4x2x2x16xf32>
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[P]] : (tensor<1x4x2x2x16xf32>) -> tensor<1x4x2x2x16xf32>
// CHECK-NEXT:    %[[U:.*]] = df.transpose %[[E]]
// CHECK-NEXT:    %e = df.reshape %[[U]] : (tensor<1x4x16x2x2xf32>) -> tensor<1x64x2x2xf32>
// CHECK-NEXT:    func.return %c, %e
func.func @pool_after(%x: tensor<1x16x4x4xf32>) -> (tensor<1x64x4x4xf32>, tensor<1x64x2x2xf32>) {
  %w = df.constant dense<0.5> : tensor<64x16x3x3xf32>
  %c = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x4x4xf32>
  %p = df.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x64x4x4xf32>) -> tensor<1x64x2x2xf32>
  %e = df.exp %p : (tensor<1x64x2x2xf32>) -> tensor<1x64x2x2xf32>
  func.return %c, %e : tensor<1x64x4x4xf32>, tensor<1x64x2x2xf32>
}

// -----

// An average pool stays blocked too; one of an NCHW value stays NCHW.
// CHECK-LABEL: func.func @pools(
// CHECK:         df.avg_pool2d_nchwc %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4x16xf32>) -> tensor<1x4x2x2x16xf32>
// CHECK:         df.avg_pool2d %x
func.func @pools(%x: tensor<1x16x4x4xf32>) -> (tensor<1x64x2x2xf32>, tensor<1x16x2x2xf32>) {
  %w = df.constant dense<0.5> : tensor<64x16x3x3xf32>
  %c = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x4x4xf32>
  %p = df.avg_pool2d %c {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf32>) -> tensor<1x64x2x2xf32>
  %q = df.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>) -> tensor<1x16x2x2xf32>
  func.return %p, %q : tensor<1x64x2x2xf32>, tensor<1x16x2x2xf32>
}

// -----

// A channel concatenation of blocked values stays blocked (along the blocks).
// CHECK-LABEL: func.func @concat(
// CHECK:         %[[A:.*]] = df.conv2d_nchwc
// CHECK:         %[[B:.*]] = df.conv2d_nchwc %[[A]]
// CHECK-NEXT:    %[[J:.*]] = df.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<1x4x4x4x16xf32>, tensor<1x2x4x4x16xf32>) -> tensor<1x6x4x4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[J]]
// CHECK-NEXT:    df.transpose %[[R]]
func.func @concat(%x: tensor<1x16x4x4xf32>) -> tensor<1x96x4x4xf32> {
  %w = df.constant dense<0.5> : tensor<64x16x3x3xf32>
  %v = df.constant dense<0.5> : tensor<32x64x1x1xf32>
  %a = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x4x4xf32>
  %b = df.conv2d %a, %v : (tensor<1x64x4x4xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x4x4xf32>
  %j = df.concat %a, %b {axis = 1 : i64} : (tensor<1x64x4x4xf32>, tensor<1x32x4x4xf32>) -> tensor<1x96x4x4xf32>
  %r = df.relu %j : (tensor<1x96x4x4xf32>) -> tensor<1x96x4x4xf32>
  func.return %r : tensor<1x96x4x4xf32>
}

// -----

// A first convolution of 3 channels reads its NCHW input as NCHWc of block 1 (a
// reshape, no reorder), its filter packed as [O/16, C, KH, KW, 1, 16].
// CHECK-LABEL: func.func @stem(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>)
// CHECK-NEXT:    %[[XB:.*]] = df.reshape %[[X]] : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8x1xf32>
// CHECK-NEXT:    %[[W:.*]] = df.constant dense<5.000000e-01> : tensor<4x3x7x7x1x16xf32>
// CHECK-NEXT:    %[[C:.*]] = df.conv2d_nchwc %[[XB]], %[[W]] {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x8x8x1xf32>, tensor<4x3x7x7x1x16xf32>) -> tensor<1x4x4x4x16xf32>
func.func @stem(%x: tensor<1x3x8x8xf32>) -> tensor<1x64x4x4xf32> {
  %w = df.constant dense<0.5> : tensor<64x3x7x7xf32>
  %c = df.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x8x8xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x4x4xf32>
  func.return %c : tensor<1x64x4x4xf32>
}

// -----

// Groups of whole blocks stay grouped in NCHWc: here 4 groups of 16 channels.
// CHECK-LABEL: func.func @grouped(
// CHECK:         df.conv2d_nchwc %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x4x4x16xf32>, tensor<4x1x3x3x16x16xf32>) -> tensor<1x4x4x4x16xf32>
func.func @grouped(%x: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %w = df.constant dense<0.5> : tensor<64x16x3x3xf32>
  %c = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x64x4x4xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x4x4xf32>
  func.return %c : tensor<1x64x4x4xf32>
}

// -----

// Left as they are: 16 outputs of 3 channels (fewer than a tile's 64), a filter
// that is an argument, two groups of 2 blocks each, a dilation, float64, a 1x1 of an NCHW input, 32
// outputs.
// CHECK-LABEL: func.func @unchanged(
// CHECK-NOT:     df.conv2d_nchwc
// CHECK-NOT:     df.transpose
// CHECK:         func.return
func.func @unchanged(%x: tensor<1x3x4x4xf32>, %y: tensor<1x64x4x4xf32>, %f: tensor<64x64x3x3xf32>, %z: tensor<1x64x4x4xf64>) -> (tensor<1x16x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x64x2x2xf32>, tensor<1x64x4x4xf64>, tensor<1x64x4x4xf32>, tensor<1x32x4x4xf32>) {
  %w = df.constant dense<0.5> : tensor<16x3x3x3xf32>
  %g = df.constant dense<0.5> : tensor<64x32x3x3xf32>
  %d = df.constant dense<0.5> : tensor<64x64x2x2xf32>
  %e = df.constant dense<0.5> : tensor<64x64x3x3xf64>
  %o = df.constant dense<0.5> : tensor<64x64x1x1xf32>
  %t = df.constant dense<0.5> : tensor<32x64x3x3xf32>
  %a = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x4x4xf32>
  %b = df.conv2d %y, %f {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x4x4xf32>
  %c = df.conv2d %y, %g {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x64x4x4xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x4x4xf32>
  %k = df.conv2d %y, %d {dilations = array<i64: 2, 2>} : (tensor<1x64x4x4xf32>, tensor<64x64x2x2xf32>) -> tensor<1x64x2x2xf32>
  %l = df.conv2d %z, %e {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf64>, tensor<64x64x3x3xf64>) -> tensor<1x64x4x4xf64>
  %m = df.conv2d %y, %o : (tensor<1x64x4x4xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x4x4xf32>
  %n = df.conv2d %y, %t {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf32>, tensor<32x64x3x3xf32>) -> tensor<1x32x4x4xf32>
  func.return %a, %b, %c, %k, %l, %m, %n : tensor<1x16x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x64x2x2xf32>, tensor<1x64x4x4xf64>, tensor<1x64x4x4xf32>, tensor<1x32x4x4xf32>
}
