// RUN: xdsl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Verifier errors of matmul, conv2d, its gradients and pooling. Each case
// checks the whole line of its error message.

// CHECK: {{^}}df.matmul: contracted dimensions of 4x8 and 7x16 differ (8 vs 7){{$}}
func.func @matmul_contracted(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  %0 = df.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: contracted dimensions of 4x8 and 8x16 differ (8 vs 16){{$}}
func.func @matmul_contracted_transpose_b(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: contracted dimensions of 4x8 and 8x16 differ (4 vs 8){{$}}
func.func @matmul_contracted_transpose_a(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b {transpose_a = true} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: batch dimensions of 2x4x8 and 3x8x16 differ{{$}}
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  %0 = df.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: operands 8 and 8x16 must both have the same rank, at least 2{{$}}
func.func @matmul_rank1(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  func.return
}

// -----

// Batch axes are not broadcast: both operands need the same rank.
// CHECK: {{^}}df.matmul: operands 2x4x8 and 8x16 must both have the same rank, at least 2{{$}}
func.func @matmul_rank_differs(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: result type tensor<4x8xf32> does not match tensor<4x16xf32> inferred from tensor<4x8xf32>, tensor<8x16xf32>{{$}}
func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: operands tensor<4x8xf32>, tensor<8x16xf64> must have the same element type{{$}}
func.func @matmul_mixed(%a: tensor<4x8xf32>, %b: tensor<8x16xf64>) {
  %0 = df.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf64>) -> tensor<4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.matmul: operands must have a numeric element type, got i1{{$}}
func.func @matmul_i1(%a: tensor<4x8xi1>, %b: tensor<8x16xi1>) {
  %0 = df.matmul %a, %b : (tensor<4x8xi1>, tensor<8x16xi1>) -> tensor<4x16xi1>
  func.return
}

// -----

// A property of the wrong attribute type fails the property constraint.
// CHECK: {{^}}Expected attribute i1 but got i64{{$}}
func.func @matmul_transpose_not_bool(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = df.matmul %a, %b {transpose_a = 1 : i64} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: groups 0 must be at least 1{{$}}
func.func @conv2d_zero_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = df.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input 1x4x8x8 has 4 channels but filter 4x1x3x3 in 2 groups expects 2{{$}}
func.func @conv2d_group_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %0 = df.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: filter 6x1x3x3 has 6 output channels, not divisible by 4 groups{{$}}
func.func @conv2d_group_outputs(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  %0 = df.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: bias tensor<4xf32> must be a vector of 8 f32 (one per output channel){{$}}
func.func @conv2d_depthwise_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<8x1x3x3xf32>, %b: tensor<4xf32>) {
  %0 = df.conv2d %x, %w, %b {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: input 1x4x8x8 has 4 channels but filter 6x2x3x3 in 3 groups expects 6{{$}}
func.func @conv2d_grad_input_groups(%dy: tensor<1x6x6x6xf32>, %w: tensor<6x2x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w {groups = 3 : i64} : (tensor<1x6x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_filter: filter 6x2x3x3 has 6 output channels, not divisible by 4 groups{{$}}
func.func @conv2d_grad_filter_groups(%x: tensor<1x8x8x8xf32>, %dy: tensor<1x6x6x6xf32>) {
  %0 = df.conv2d_grad_filter %x, %dy {groups = 4 : i64} : (tensor<1x8x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x2x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}2.000000e+00 : f32 should be of base attribute integer{{$}}
func.func @conv2d_groups_not_integer(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %0 = df.conv2d %x, %w {groups = 2.0 : f32} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input 1x3x8x8 has 3 channels but filter 4x2x3x3 expects 2{{$}}
func.func @conv2d_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %0 = df.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input 3x8x8 and filter 4x3x3x3 must both be 4-D (NCHW and OIHW){{$}}
func.func @conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: bias tensor<3xf32> must be a vector of 4 f32 (one per output channel){{$}}
func.func @conv2d_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  %0 = df.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: bias tensor<4xf64> must be a vector of 4 f32 (one per output channel){{$}}
func.func @conv2d_bias_element(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf64>) {
  %0 = df.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf64>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: bias tensor<1x4xf32> must be a vector of 4 f32 (one per output channel){{$}}
func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  %0 = df.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input 1x3x2x8 and filter 4x3x3x3: window of extent 3 is larger than the padded input 2{{$}}
func.func @conv2d_input_too_small(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x0x6xf32>
  func.return
}

// -----

// Dilation 4 spreads a 3-wide filter over 9 columns; the padding gives 8.
// CHECK: {{^}}df.conv2d: input 1x3x16x6 and filter 4x3x3x3: window of extent 9 is larger than the padded input 8{{$}}
func.func @conv2d_dilated_too_large(%x: tensor<1x3x16x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w {pads = array<i64: 0, 1, 0, 1>, dilations = array<i64: 1, 4>} : (tensor<1x3x16x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x14x1xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input {{.*}}: strides and dilations need 2 values and pads 4 (top, left, bottom, right){{$}}
func.func @conv2d_strides_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w {strides = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_filter: input {{.*}}: strides and dilations need 2 values and pads 4 (top, left, bottom, right){{$}}
func.func @conv2d_pads_count(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x8x8xf32>) {
  %0 = df.conv2d_grad_filter %x, %dy {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: input {{.*}}: strides and dilations need 2 values and pads 4 (top, left, bottom, right){{$}}
func.func @conv2d_dilations_count(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w {dilations = array<i64: 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input {{.*}}: strides [0, 1] and dilations [1, 1] must be positive and pads [0, 0, 0, 0] non-negative{{$}}
func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input {{.*}}: strides [1, 1] and dilations [1, 1] must be positive and pads [0, -1, 0, 0] non-negative{{$}}
func.func @conv2d_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: input {{.*}}: strides [1, 1] and dilations [0, 1] must be positive and pads [0, 0, 0, 0] non-negative{{$}}
func.func @conv2d_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w {dilations = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: result type tensor<1x4x8x8xf32> does not match tensor<1x4x6x6xf32> inferred from tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>{{$}}
func.func @conv2d_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: result type tensor<1x4x6x6xf32> does not match tensor<1x4x4x4xf32> inferred from tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>{{$}}
func.func @conv2d_result_strided(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  %0 = df.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: operands must have a floating-point element type, got i32{{$}}
func.func @conv2d_i32(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) {
  %0 = df.conv2d %x, %w : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d: operands tensor<1x3x8x8xf32>, tensor<4x3x3x3xf64> must have the same element type{{$}}
func.func @conv2d_mixed(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf64>) {
  %0 = df.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf64>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: output gradient tensor<1x4x5x5xf32> does not match tensor<1x4x6x6xf32>, the conv2d output of input tensor<1x3x8x8xf32> and filter tensor<4x3x3x3xf32>{{$}}
func.func @grad_input_shape(%dy: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: output gradient tensor<1x4x6x6xf32> does not match tensor<1x4x4x4xf32>, the conv2d output of input tensor<1x3x8x8xf32> and filter tensor<4x3x3x3xf32>{{$}}
func.func @grad_input_strides(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: input 1x2x8x8 has 2 channels but filter 4x3x3x3 expects 3{{$}}
func.func @grad_input_channels(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w : (tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_input: output gradient tensor<1x4x6x6xf64> does not match tensor<1x4x6x6xf32>, the conv2d output of input tensor<1x3x8x8xf32> and filter tensor<4x3x3x3xf32>{{$}}
func.func @grad_input_element(%dy: tensor<1x4x6x6xf64>, %w: tensor<4x3x3x3xf32>) {
  %0 = df.conv2d_grad_input %dy, %w : (tensor<1x4x6x6xf64>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_filter: output gradient tensor<1x4x6x6xf32> does not match tensor<1x4x4x4xf32>, the conv2d output of input tensor<1x3x8x8xf32> and filter tensor<4x3x5x5xf32>{{$}}
func.func @grad_filter_shape(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = df.conv2d_grad_filter %x, %dy : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x5x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_filter: output gradient tensor<1x5x6x6xf32> does not match tensor<1x4x6x6xf32>, the conv2d output of input tensor<1x3x8x8xf32> and filter tensor<4x3x3x3xf32>{{$}}
func.func @grad_filter_out_channels(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x5x6x6xf32>) {
  %0 = df.conv2d_grad_filter %x, %dy : (tensor<1x3x8x8xf32>, tensor<1x5x6x6xf32>) -> tensor<4x3x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_grad_filter: input 1x3x8x8 has 3 channels but filter 4x1x3x3 expects 1{{$}}
func.func @grad_filter_channels(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = df.conv2d_grad_filter %x, %dy : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x1x3x3xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d: pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]{{$}}
func.func @pool_pad_top(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d: pads [0, 0, 0, 3] must be smaller than the kernel [3, 3]{{$}}
func.func @pool_pad_right(%x: tensor<1x3x8x8xf32>) {
  %0 = df.avg_pool2d %x {kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x9xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d: kernel [2] must be 2 positive sizes{{$}}
func.func @pool_kernel_count(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d %x {kernel = array<i64: 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d: kernel [0, 2] must be 2 positive sizes{{$}}
func.func @pool_kernel_zero(%x: tensor<1x3x8x8xf32>) {
  %0 = df.avg_pool2d %x {kernel = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d: input 3x8x8 must be 4-D (NCHW){{$}}
func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  %0 = df.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<3x8x8xf32>) -> tensor<3x7x7xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d: input 1x3x8x8 and kernel [9, 1]: window of extent 9 is larger than the padded input 8{{$}}
func.func @pool_kernel_too_large(%x: tensor<1x3x8x8xf32>) {
  %0 = df.avg_pool2d %x {kernel = array<i64: 9, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x0x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d: input {{.*}}: strides [2, 0] and dilations [1, 1] must be positive and pads [0, 0, 0, 0] non-negative{{$}}
func.func @pool_zero_stride(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d: input {{.*}}: strides and dilations need 2 values and pads 4 (top, left, bottom, right){{$}}
func.func @pool_pads_count(%x: tensor<1x3x8x8xf32>) {
  %0 = df.avg_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x9xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d: result type tensor<1x3x8x8xf32> does not match tensor<1x3x4x4xf32> inferred from tensor<1x3x8x8xf32>{{$}}
func.func @pool_result(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d: operand must have a floating-point element type, got i32{{$}}
func.func @pool_i32(%x: tensor<1x3x8x8xi32>) {
  %0 = df.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x3x8x8xi32>) -> tensor<1x3x7x7xi32>
  func.return
}

// -----

// CHECK: {{^}}property 'kernel' expected in operation 'df.max_pool2d'{{$}}
func.func @pool_no_kernel(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_nchwc: input 1x2x5x5x16 and filter 3x2x3x16x16 must be 5-D and 6-D (NCHWc and OIHW{bi}i{bo}o){{$}}
func.func @conv2d_nchwc_rank(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x2x3x16x16xf32>) {
  %0 = "df.conv2d_nchwc"(%x, %w) : (tensor<1x2x5x5x16xf32>, tensor<3x2x3x16x16xf32>) -> tensor<1x3x3x3x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_nchwc: filter 3x2x3x3x8x8 must take the input's block of 16 channels (input 1x2x5x5x16) into a block of at least one{{$}}
func.func @conv2d_nchwc_block(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x2x3x3x8x8xf32>) {
  %0 = df.conv2d_nchwc %x, %w : (tensor<1x2x5x5x16xf32>, tensor<3x2x3x3x8x8xf32>) -> tensor<1x3x3x3x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_nchwc: input 1x2x5x5x16 has 2 blocks but filter 3x4x3x3x16x16 expects 4{{$}}
func.func @conv2d_nchwc_channels(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x4x3x3x16x16xf32>) {
  %0 = df.conv2d_nchwc %x, %w : (tensor<1x2x5x5x16xf32>, tensor<3x4x3x3x16x16xf32>) -> tensor<1x3x3x3x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_nchwc: bias tensor<32xf32> must be a vector of 48 f32 (one per output channel){{$}}
func.func @conv2d_nchwc_bias(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x2x3x3x16x16xf32>, %b: tensor<32xf32>) {
  %0 = df.conv2d_nchwc %x, %w, %b : (tensor<1x2x5x5x16xf32>, tensor<3x2x3x3x16x16xf32>, tensor<32xf32>) -> tensor<1x3x3x3x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.conv2d_nchwc: filter 3x1x3x3x16x16 has 3 output blocks, not divisible by 2 groups{{$}}
func.func @conv2d_nchwc_groups(%x: tensor<1x2x5x5x16xf32>, %w: tensor<3x1x3x3x16x16xf32>) {
  %0 = df.conv2d_nchwc %x, %w {groups = 2 : i64} : (tensor<1x2x5x5x16xf32>, tensor<3x1x3x3x16x16xf32>) -> tensor<1x3x3x3x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_nchwc: input 1x32x5x6 must be 5-D (NCHWc){{$}}
func.func @max_pool2d_nchwc_rank(%x: tensor<1x32x5x6xf32>) {
  %0 = "df.max_pool2d_nchwc"(%x) {kernel = array<i64: 2, 2>} : (tensor<1x32x5x6xf32>) -> tensor<1x32x4x5xf32>
  func.return
}

// -----

// CHECK: {{^}}df.avg_pool2d_nchwc: pads [2, 2, 2, 2] must be smaller than the kernel [2, 2]{{$}}
func.func @avg_pool2d_nchwc_pads(%x: tensor<1x2x5x6x16xf32>) {
  %0 = df.avg_pool2d_nchwc %x {kernel = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x2x5x6x16xf32>) -> tensor<1x2x8x9x16xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_indices: result type tensor<1x3x4x4xi32> does not match tensor<1x3x4x4xi64> inferred from tensor<1x3x8x8xf32>{{$}}
func.func @max_pool2d_indices_i32(%x: tensor<1x3x8x8xf32>) {
  %0 = df.max_pool2d_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xi32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_indices: input tensor<1x3x0x8xf32> has an empty plane: its windows hold no element{{$}}
func.func @max_pool2d_indices_empty_plane(%x: tensor<1x3x0x8xf32>) {
  %0 = df.max_pool2d_indices %x {kernel = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>} : (tensor<1x3x0x8xf32>) -> tensor<1x3x1x7xi64>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_indices: operand must have a floating-point element type, got i64{{$}}
func.func @max_pool2d_indices_of_integers(%x: tensor<1x3x8x8xi64>) {
  %0 = df.max_pool2d_indices %x {kernel = array<i64: 2, 2>} : (tensor<1x3x8x8xi64>) -> tensor<1x3x7x7xi64>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_grad_indices: indices tensor<1x3x4x4xi32> must be tensor<1x3x4x4xi64>, one per output gradient{{$}}
func.func @max_pool2d_grad_indices_i32(%i: tensor<1x3x4x4xi32>, %g: tensor<1x3x4x4xf32>) {
  %0 = df.max_pool2d_grad_indices %g, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}df.max_pool2d_grad_indices: output gradient tensor<1x3x4x4xf32> does not match tensor<1x3x3x3xf32>, the pooled output of input tensor<1x3x6x6xf32>{{$}}
func.func @max_pool2d_grad_indices_window(%i: tensor<1x3x4x4xi64>, %g: tensor<1x3x4x4xf32>) {
  %0 = df.max_pool2d_grad_indices %g, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>) -> tensor<1x3x6x6xf32>
  func.return
}
