// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-collapse-loops,df-lower-host -t df-llvm | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p df-fuse,df-bufferize,df-plan-buffers,df-collapse-loops,df-lower-host -t df-llvm | %python -c "import sys; from llvmlite import binding as b; [b.parse_assembly(u.split(chr(10), 1)[1]).verify() for m in sys.stdin.read().split('; ----- ')[1:] for u in m.split('// -' '----')[0].split('; ===== unit ')[1:]]"

// A float32 convolution of stride 1, dilation 1 and one group is a direct convolution
// generated for its shapes (backend/llvm/convolution.py), defined in the kernel's unit
// and named after them. Each image's input is copied into a zero-padded buffer of rows
// Wp = 6 + 2 long (5 + 2 rows, 56 floats a channel), so that tap (i, j) of the output
// position p reads p + i * Wp + j. A tile is 8 output channels by 2 vectors of 16
// positions, 16 accumulators that start from the bias and take one FMA per tap, input
// channel and accumulator; the last 2 of the 10 channels make a narrower tile. Rows
// of the scratch (its positions 5 * 8 = 40, rounded up to two tiles of 32) are
// copied out.
// The second RUN line verifies every unit with llvmlite.

// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"{{dflow.k.[0-9a-f]+}}"(ptr %[[X:a[0-9]]], ptr %[[W:a[0-9]]], ptr %[[B:a[0-9]]], ptr %[[Y:a[0-9]]]) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    call void @"[[CONV:dflow.conv.1x2x5x6.10x3x3.p1.1.1.1.bias]]"(ptr %[[X]], ptr %[[W]], ptr %[[B]], ptr %[[Y]])
// CHECK-NEXT:    ret void
// CHECK:       define internal void @"[[CONV]]"(ptr %x, ptr %w, ptr %bias, ptr %y) {
// CHECK:         %xp = call ptr @malloc(i64 812)
// CHECK-NEXT:    %yp = call ptr @malloc(i64 2560)
// CHECK:       rows:
// CHECK:         %r.start = mul i64 %r.shifted, 8
// CHECK:         call void @llvm.memcpy.p0.p0.i64(ptr %r.to, ptr %r.from, i64 24, i1 0)
// CHECK:       ktile:
// CHECK:         %ktile.b0.s = load float, ptr %ktile.b0.p
// CHECK:       ktile.chan:
// CHECK-NEXT:    %ktile.ci = phi i64 [ 0, %ktile ], [ %ktile.ci.next, %ktile.chan ]
// CHECK-NEXT:    %ktile.a0.0 = phi <16 x float> [ %ktile.b0, %ktile ], [ %ktile.a0.0.t8, %ktile.chan ]
// CHECK-COUNT-15: phi <16 x float>
// CHECK:         %ktile.t4.off0 = add i64 %ktile.base0, 9
// CHECK-COUNT-16: call <16 x float> @llvm.fma.v16f32(
// CHECK:         br i1 %ktile.ci.more, label %ktile.chan, label %ktile.store
// CHECK:       ktile.store:
// CHECK-COUNT-16: store <16 x float>
// CHECK:       tail.chan:
// CHECK-COUNT-4: phi <16 x float>
// CHECK-NOT:     phi <16 x float>
// CHECK:       out.row:
// CHECK:         call void @llvm.memcpy.p0.p0.i64(ptr %o.to, ptr %o.from, i64 24, i1 0)
// CHECK:         call void @free(ptr %xp)
func.func @conv(%x: tensor<1x2x5x6xf32>, %w: tensor<10x2x3x3xf32>, %b: tensor<10xf32>) -> tensor<1x10x5x6xf32> {
  %y = df.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x6xf32>, tensor<10x2x3x3xf32>, tensor<10xf32>) -> tensor<1x10x5x6xf32>
  func.return %y : tensor<1x10x5x6xf32>
}

// -----

// Of stride 2, the padded input (6 x 6) is held as 4 phases of 3 x 3 (each channel's
// plane 9 floats, a phase 2 x 9 = 18): each row goes to its phase row, its even and
// odd columns each in a loop of their own (3 each) to their phase, and tap (i, j)
// reads phase (i % 2, j % 2) at p + (i / 2) * 3 + j / 2, so tap (1, 2) at phase 2's
// 36 plus 0 * 3 + 1.
// The ReLU after it is fused (see @residual): the convolution is the kernel's own,
// named after the kernel and its shapes.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"{{dflow.k.[0-9a-f]+}}.conv.1x2x6x6.4x3x3.p0.0.0.0.s2.2"(ptr %x, ptr %w, ptr %y, ptr %e0) {
// CHECK:       rows:
// CHECK:         %r.prow = urem i64 %r.row, 2
// CHECK:         %r.phase = mul i64 %r.prow, 36
// CHECK:       c0:
// CHECK:         %c0.step = mul i64 %c0.t, 2
// CHECK:         %c0.more = icmp ult i64 %c0.t.next, 3
// CHECK:       c1:
// CHECK:         %c1.dst.col = add i64 %c1.t, 18
// CHECK:         %c1.more = icmp ult i64 %c1.t.next, 3
// CHECK:       tail.chan:
// CHECK:         %tail.t5.off0 = add i64 %tail.base0, 37
func.func @strided(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %y = df.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
  %r = df.relu %y : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %r : tensor<1x4x2x2xf32>
}

// -----

// The elementwise rest of a convolution's kernel (the residual add and the ReLU) runs
// on each output row as the convolution copies it out, while it is in the cache: the
// kernel's loop becomes @<kernel>.elementwise on the elements [f0, f1) of the output,
// one run of its innermost loop after the other (the loop collapsed to one run of
// the 120 elements: each row's run starts at f % 120 and takes the row's 6), and the
// kernel calls its own convolution with the loop's buffers (the output, then the
// residual). No loop is left in the kernel.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"[[K:dflow.k.[0-9a-f]+]]"(ptr %a0, ptr %a1, ptr %a2, ptr %[[R:a[0-9]]], ptr %[[Y:a[0-9]]]) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    call void @"[[K]].[[CONV:conv.1x4x5x6.4x3x3.p1.1.1.1.bias]]"(ptr %a0, ptr %a1, ptr %a2, ptr %[[Y]], ptr %[[Y]], ptr %[[R]])
// CHECK-NEXT:    ret void
// CHECK:       define internal void @"[[K]].elementwise"(ptr %e0, ptr %e1, i64 %f0, i64 %f1) alwaysinline {
// CHECK:       run:
// CHECK-NEXT:    %f = phi i64 [ %f0, %entry ], [ %[[NEXT:v[0-9]+]], %{{done[0-9]+}} ]
// CHECK-NEXT:    %[[START:v[0-9]+]] = urem i64 %f, 120
// CHECK-NEXT:    %[[ROOM:v[0-9]+]] = sub i64 120, %[[START]]
// CHECK-NEXT:    %[[LEFT:v[0-9]+]] = sub i64 %f1, %f
// CHECK:         phi i64 [ %[[START]], %run ]
// CHECK:         %[[S:v[0-9]+]] = load float, ptr %{{p[0-9]+}}
// CHECK:         %[[RES:v[0-9]+]] = load float, ptr %{{p[0-9]+}}
// CHECK:         fadd float %[[S]], %[[RES]]
// CHECK:         select i1
// CHECK:         store float
// CHECK:         br label %{{loop[0-9]+}}, !llvm.loop ![[FOLDED:[0-9]+]]
// CHECK:         %[[NEXT]] = add i64 %f, %{{v[0-9]+}}
// CHECK-NEXT:    %[[MORE:v[0-9]+]] = icmp ult i64 %[[NEXT]], %f1
// CHECK-NEXT:    br i1 %[[MORE]], label %run, label %exit
// The run's loop is vectorized 16 lanes wide with its tail masked, not left to a
// scalar loop after the vector one (a row of 6 would run scalar).
// CHECK:       ![[FOLDED]] = distinct !{![[FOLDED]], !{!"llvm.loop.vectorize.enable", i1 true}, !{!"llvm.loop.vectorize.width", i32 16}, !{!"llvm.loop.interleave.count", i32 1}, !{!"llvm.loop.vectorize.predicate.enable", i1 true}}
// CHECK:       define internal void @"[[K]].[[CONV]]"(ptr %x, ptr %w, ptr %bias, ptr %y, ptr %e0, ptr %e1) {
// CHECK:       out.row:
// CHECK:         call void @llvm.memcpy.p0.p0.i64(ptr %o.to, ptr %o.from, i64 24, i1 0)
// CHECK-NEXT:    %o.dst.end = add i64 %o.dst, 6
// CHECK-NEXT:    call void @"[[K]].elementwise"(ptr %e0, ptr %e1, i64 %o.dst, i64 %o.dst.end)
func.func @residual(%x: tensor<1x4x5x6xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %r: tensor<1x4x5x6xf32>) -> tensor<1x4x5x6xf32> {
  %y = df.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x6xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x6xf32>
  %s = df.add %y, %r : (tensor<1x4x5x6xf32>, tensor<1x4x5x6xf32>) -> tensor<1x4x5x6xf32>
  %a = df.relu %s : (tensor<1x4x5x6xf32>) -> tensor<1x4x5x6xf32>
  func.return %a : tensor<1x4x5x6xf32>
}

// -----

// Written in place (a 1x1 filter), a small image's output (16 channels of 20
// positions) is handed over whole once its tiles are written: one call of the rest
// (here a ReLU6) on its 320 elements.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"[[K:dflow.k.[0-9a-f]+]].elementwise"(ptr %e0, i64 %f0, i64 %f1) alwaysinline {
// CHECK:         fcmp ogt float
// CHECK:         fcmp olt float %{{v[0-9]+}}, 0x4018000000000000
// CHECK:       define internal void @"[[K]].conv.1x8x4x5.16x1x1.p0.0.0.0"(ptr %x, ptr %w, ptr %y, ptr %e0) {
// CHECK-NOT:     elementwise
// CHECK:       out.done:
// CHECK-NEXT:    %y.at.end = add i64 %y.at, 320
// CHECK-NEXT:    call void @"[[K]].elementwise"(ptr %e0, i64 %y.at, i64 %y.at.end)
func.func @pointwise_relu6(%x: tensor<1x8x4x5xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x4x5xf32> {
  %y = df.conv2d %x, %w : (tensor<1x8x4x5xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x5xf32>
  %lo = df.constant dense<0.0> : tensor<f32>
  %hi = df.constant dense<6.0> : tensor<f32>
  %m = df.maximum %y, %lo : (tensor<1x16x4x5xf32>, tensor<f32>) -> tensor<1x16x4x5xf32>
  %c = df.minimum %m, %hi : (tensor<1x16x4x5xf32>, tensor<f32>) -> tensor<1x16x4x5xf32>
  func.return %c : tensor<1x16x4x5xf32>
}

// -----

// A larger image (16 channels of 512 x 520 positions, past the 4,194,304 elements
// handed over whole) hands each tile over as it is written: after its stores, a loop
// over the tile's 8 channels calls the rest on the tile's 32 positions of each.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"[[K:dflow.k.[0-9a-f]+]].conv.1x8x512x520.16x1x1.p0.0.0.0"(ptr %x, ptr %w, ptr %y, ptr %e0) {
// CHECK:       ktile.store:
// CHECK:       ktile.e:
// CHECK-NEXT:    %ktile.e.q = phi i64 [ 0, %ktile.store ], [ %ktile.e.q.next, %ktile.e ]
// CHECK-NEXT:    %ktile.e.k = add i64 %ktile.first, %ktile.e.q
// CHECK-NEXT:    %ktile.e.kp = mul i64 %ktile.e.k, 266240
// CHECK-NEXT:    %ktile.e.p = add i64 %ktile.e.kp, %pbase
// CHECK-NEXT:    %ktile.e.f = add i64 %y.at, %ktile.e.p
// CHECK-NEXT:    %ktile.e.f.end = add i64 %ktile.e.f, 32
// CHECK-NEXT:    call void @"[[K]].elementwise"(ptr %e0, i64 %ktile.e.f, i64 %ktile.e.f.end)
// CHECK:         %ktile.e.q.more = icmp ult i64 %ktile.e.q.next, 8
// CHECK:       out.done:
// CHECK-NOT:     elementwise
// CHECK:         ret void
func.func @pointwise_large(%x: tensor<1x8x512x520xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x512x520xf32> {
  %y = df.conv2d %x, %w : (tensor<1x8x512x520xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x512x520xf32>
  %r = df.relu %y : (tensor<1x16x512x520xf32>) -> tensor<1x16x512x520xf32>
  func.return %r : tensor<1x16x512x520xf32>
}

// -----

// An addend that varies along rows but not columns keeps the rest's loop a nest whose
// innermost run is a row (5 elements), while the convolution, written in place,
// hands over tiles of 20 positions across rows: the function takes the tile's rows
// one run after the other, each run's row index rebuilt from its first element.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"[[K:dflow.k.[0-9a-f]+]].elementwise"(ptr %e0, ptr %e1, i64 %f0, i64 %f1) alwaysinline {
// CHECK:       run:
// CHECK:         %[[ROWS:v[0-9]+]] = udiv i64 %f, 5
// CHECK-NEXT:    %[[ROW:v[0-9]+]] = urem i64 %[[ROWS]], 4
// CHECK-NEXT:    %[[START:v[0-9]+]] = urem i64 %f, 5
// CHECK-NEXT:    %{{v[0-9]+}} = sub i64 5, %[[START]]
// CHECK:       define internal void @"[[K]].conv.1x8x4x5.16x1x1.p0.0.0.0"(ptr %x, ptr %w, ptr %y, ptr %e0, ptr %e1) {
func.func @rows_apart(%x: tensor<1x8x4x5xf32>, %w: tensor<16x8x1x1xf32>, %r: tensor<1x1x4x1xf32>) -> tensor<1x16x4x5xf32> {
  %y = df.conv2d %x, %w : (tensor<1x8x4x5xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x5xf32>
  %s = df.add %y, %r : (tensor<1x16x4x5xf32>, tensor<1x1x4x1xf32>) -> tensor<1x16x4x5xf32>
  func.return %s : tensor<1x16x4x5xf32>
}

// -----

// Not fused: a squeeze-and-excitation gate's rest runs over the gated input's 150
// elements, not over the convolution's 6 (which it broadcasts), so it is not the
// convolution's elementwise rest. The convolution is the shared one, named after its
// shapes, into a scratch buffer, and the loop stays in the kernel after its call.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"{{dflow.k.[0-9a-f]+}}"(ptr %a0, ptr %a1, ptr %a2, ptr %a3) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %[[S:scratch[0-9]+]] = call ptr @malloc(i64 24)
// CHECK-NEXT:    call void @"dflow.conv.1x3x1x1.6x1x1.p0.0.0.0"(ptr %a0, ptr %a1, ptr %[[S]])
// CHECK-NEXT:    br label %loop
// CHECK-NOT:   elementwise
func.func @gate(%p: tensor<1x3x1x1xf32>, %w: tensor<6x3x1x1xf32>, %x: tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  %y = df.conv2d %p, %w : (tensor<1x3x1x1xf32>, tensor<6x3x1x1xf32>) -> tensor<1x6x1x1xf32>
  %s = df.sigmoid %y : (tensor<1x6x1x1xf32>) -> tensor<1x6x1x1xf32>
  %g = df.mul %s, %x : (tensor<1x6x1x1xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  func.return %g : tensor<1x6x5x5xf32>
}

// -----

// A depthwise convolution (each output channel reading one input channel) has no
// copies: each output row is computed from the input in vectors of 16 columns, tap
// (i, j) of the vector from column c reading input row oh + i - 1 from column
// c + j - 1 on. Its masks drop the columns past either edge (lane 0 of the first
// vector's first tap column, lanes 3 on of the second's last), rows past the top
// and bottom read a row of zeros (20 floats, 32 into a constant of 116, so that a
// masked-off lane never reaches a page not mapped), and the second vector stores
// its 4 columns.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       @"[[DW:dflow.conv.1x2x4x20.2x3x3.p1.1.1.1.g2.bias]].zeros" = internal constant [116 x float] zeroinitializer
// CHECK:       define internal void @"[[DW]]"(ptr %x, ptr %w, ptr %bias, ptr %y) {
// CHECK-NOT:     malloc
// CHECK:       row:
// CHECK:         %rp0.ih = add i64 %rp0.oh, -1
// CHECK-NEXT:    %rp0.ok = icmp ult i64 %rp0.ih, 4
// CHECK:         %rp0 = select i1 %rp0.ok, ptr %rp0.in, ptr getelementptr inbounds ([116 x float], ptr @"[[DW]].zeros", i64 0, i64 32)
// CHECK:         %x0.0.0.p = getelementptr float, ptr %rp0, i64 -1
// CHECK-NEXT:    %x0.0.0 = call <16 x float> @llvm.masked.load.v16f32.p0(ptr %x0.0.0.p, i32 4, <16 x i1> <i1 false, i1 true, {{.*}}>, <16 x float> zeroinitializer)
// CHECK-NEXT:    %v0.0.0 = call <16 x float> @llvm.fma.v16f32(<16 x float> %w0, <16 x float> %x0.0.0, <16 x float> %b)
// CHECK:         %x0.0.1 = load <16 x float>, ptr %x0.0.1.p, align 4
// CHECK:         store <16 x float> %v0.2.2, ptr %y0.p, align 4
// CHECK:         %x1.0.2.p = getelementptr float, ptr %rp0, i64 17
// CHECK-NEXT:    %x1.0.2 = call <16 x float> @llvm.masked.load.v16f32.p0(ptr %x1.0.2.p, i32 4, <16 x i1> <i1 true, i1 true, i1 true, i1 false, {{.*}}>, <16 x float> zeroinitializer)
// CHECK:         call void @llvm.masked.store.v16f32.p0(<16 x float> %v1.2.2, ptr %y1.p, i32 4, <16 x i1> <i1 true, i1 true, i1 true, i1 true, i1 false, {{.*}}>)
// CHECK-NOT:     memcpy
// CHECK:         ret void
func.func @depthwise_rows(%x: tensor<1x2x4x20xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x20xf32> {
  %y = df.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x4x20xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x20xf32>
  func.return %y : tensor<1x2x4x20xf32>
}

// -----

// A dilated convolution is numba's routine, called from Python before the kernel's
// LLVM epilogue (the ReLU).
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       ; @fused_conv2d_0 makes its library calls from Python, then its epilogue @fused_conv2d_0.epilogue
// CHECK-NOT:   dflow.conv.
func.func @dilated(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %y = df.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
  %r = df.relu %y : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %r : tensor<1x4x2x2xf32>
}

// -----

// A 1x1 filter of stride 1 and no pads needs no copy: its input is its own padded
// input (each channel's plane its 4 x 5 = 20 positions) and its output the tiles'
// layout, so the tiles read x and write y. The 20 positions, fewer than a tile of 32,
// make one masked tile: its second vector loads and stores its first 4 lanes only.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"dflow.conv.1x8x4x5.16x1x1.p0.0.0.0"(ptr %x, ptr %w, ptr %y) {
// CHECK-NOT:     malloc
// CHECK:         %xp = getelementptr float, ptr %x, i64 %x.at
// CHECK:         %yp = getelementptr float, ptr %y, i64 %y.at
// CHECK-NOT:     memcpy
// CHECK:       mktile.chan:
// CHECK:         %mktile.t0.x0.0 = load <16 x float>, ptr %mktile.t0.p0.0, align 4
// CHECK:         %mktile.t0.x0.1 = call <16 x float> @llvm.masked.load.v16f32.p0(ptr %mktile.t0.p0.1, i32 4, <16 x i1> <i1 true, i1 true, i1 true, i1 true, i1 false, {{.*}}>, <16 x float> zeroinitializer)
// CHECK:       mktile.store:
// CHECK:         %mktile.y0.row = mul i64 %mktile.k0, 20
// CHECK:         store <16 x float> %mktile.a0.0.t0, ptr %mktile.y0.0, align 4
// CHECK:         call void @llvm.masked.store.v16f32.p0(<16 x float> %mktile.a0.1.t0, ptr %mktile.y0.1, i32 4, <16 x i1> <i1 true, i1 true, i1 true, i1 true, i1 false, {{.*}}>)
// CHECK-NOT:     memcpy
// CHECK:         ret void
func.func @pointwise(%x: tensor<1x8x4x5xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x4x5xf32> {
  %y = df.conv2d %x, %w : (tensor<1x8x4x5xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x5xf32>
  func.return %y : tensor<1x16x4x5xf32>
}

// -----

// A max pool is generated the same way, each channel its own plane: the padded input
// filled with -inf (no window's maximum takes the padding over a number), then per
// tap the input taken where it is greater or NaN (NumPy's maximum), 3 x 3 taps of 2
// vectors each. The 3x3/2 pool of an 8 x 8 input with pads of 1 reads phases of 5 x 5.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       call void @"[[POOL:dflow.max_pool.1x4x8x8.4x3x3.p1.1.1.1.s2.2]]"(ptr %{{.*}}, ptr %{{.*}})
// CHECK:       define internal void @"[[POOL]]"(ptr %x, ptr %y) {
// CHECK:       fill:
// CHECK:         store float 0xFFF0000000000000, ptr %f.at
// CHECK:       pool:
// CHECK:         %pk.plane = mul i64 %pk, 25
// CHECK:         %pk.t0.0.x = load <16 x float>, ptr %pk.t0.0.p, align 4
// CHECK-NEXT:    %pk.t0.0.gt = fcmp ogt <16 x float> %pk.t0.0.x, splat (float 0xFFF0000000000000)
// CHECK-NEXT:    %pk.t0.0.nan = fcmp uno <16 x float> %pk.t0.0.x, %pk.t0.0.x
// CHECK-NEXT:    %pk.t0.0.keep = or <16 x i1> %pk.t0.0.gt, %pk.t0.0.nan
// CHECK-NEXT:    %pk.t0.0 = select <16 x i1> %pk.t0.0.keep, <16 x float> %pk.t0.0.x, <16 x float> splat (float 0xFFF0000000000000)
// CHECK:         %pk.t8.1.gt = fcmp ogt <16 x float> %pk.t8.1.x, %pk.t7.1
// CHECK:         store <16 x float> %pk.t8.1, ptr %pk.s1, align 4
// CHECK-NOT:     lib.max_pool
func.func @pool(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %y = df.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// A grouped convolution (2 groups of 2 channels): each channel of the tile reads its
// own group's input planes (8 x 8 padded floats each), one input load per channel and
// tap, and the loop over a group's input channels runs twice.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define internal void @"dflow.conv.1x4x6x6.4x3x3.p1.1.1.1.g2"(ptr %x, ptr %w, ptr %y) {
// CHECK:         %tail.base1.g = udiv i64 %tail.k1, 2
// CHECK:         %tail.base1.plane = mul i64 %tail.base1.c, 64
// CHECK:         %tail.t0.x1.0 = load <16 x float>, ptr %tail.t0.p1.0, align 4
// CHECK:         %tail.a1.0.t0 = call <16 x float> @llvm.fma.v16f32(<16 x float> %tail.t0.wv1, <16 x float> %tail.t0.x1.0, <16 x float> %tail.a1.0)
// CHECK:         %tail.ci.more = icmp ult i64 %tail.ci.next, 2
func.func @grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = df.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// -----

// A blocked convolution (NCHW16c, backend/llvm/nchwc.py) of 2 blocks of output
// channels. The kernel takes the input's channel blocks as an argument (%s0, which
// the segment passes: 2), so that layers differing only in them print one kernel;
// its driver derives the passes and the filter's stride from them. It calls the tile
// of its kernel size and stride (2 blocks by 6 pixels here), a unit of its own that
// kernels share, then the rest (the ReLU) on each block's output row of 6 x 16 floats
// once its last pass wrote it. The rest is called, not inlined (`noinline`): inlined,
// LLVM copied and vectorized it at every block's call, and took three times as long
// over the kernel.
// CHECK-LABEL: ; ----- cpu:0 -----
// CHECK:       define void @"[[K:dflow.k.[0-9a-f]+]]"(ptr %a0, ptr %a1, ptr %a2, i64 %s0) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    call void @"[[K]].[[CONV:conv_nchwc.1xcx6x6x16.2x3x3.p1.1.1.1.s1.1]]"(ptr %a0, ptr %a1, ptr %a2, ptr %a2, i64 %s0)
// CHECK:       define internal void @"[[K]].elementwise"(ptr %e0, i64 %f0, i64 %f1) noinline {
// CHECK:         fcmp ogt float
// CHECK:       define internal void @"[[K]].[[CONV]]"(ptr %x, ptr %w, ptr %y, ptr %e0, i64 %cb) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %d.cbg = udiv i64 %cb, 1
// CHECK-NEXT:    %d.few = icmp ult i64 %d.cbg, 7
// CHECK-NEXT:    %d.chunk = select i1 %d.few, i64 %d.cbg, i64 7
// CHECK:         %d.passes = udiv i64 %d.up, %d.chunk
// CHECK:         %d.fb = mul i64 %d.cbg, 2304
// CHECK:         call void @"[[TILE:dflow.nchwc_tile.2x6.k3x3.s1.i16]]"(ptr %u.q.x, ptr %u.wp, ptr %u.bias, ptr %u.q.y, i64 %u.cbs, i1 %u.first, i64 128, i64 1024, i64 %d.fb, i64 576, i64 0)
// CHECK:       u.rest:
// CHECK-NEXT:    %u.f0 = add i64 %u.yat, %u.oyat
// CHECK-NEXT:    %u.f0.first = add i64 %u.f0, 0
// CHECK-NEXT:    %u.f0.end = add i64 %u.f0.first, 96
// CHECK-NEXT:    call void @"[[K]].elementwise"(ptr %e0, i64 %u.f0.first, i64 %u.f0.end)
// CHECK-NEXT:    %u.f1.first = add i64 %u.f0, 576
// CHECK-NEXT:    %u.f1.end = add i64 %u.f1.first, 96
// CHECK-NEXT:    call void @"[[K]].elementwise"(ptr %e0, i64 %u.f1.first, i64 %u.f1.end)
// CHECK:       declare void @"[[TILE]]"(ptr, ptr, ptr, ptr, i64, i1, i64, i64, i64, i64, i64)
// CHECK:       ; ===== unit [[TILE]]: shared
// CHECK-NEXT:  define void @"[[TILE]]"(ptr %x, ptr %w, ptr %bias, ptr %y, i64 %cbs, i1 %first, i64 %x_row, i64 %x_block, i64 %w_block, i64 %y_block, i64 %x_group) {
// CHECK:       ; ===== unit host
// CHECK:         call void @"[[K]]"(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, i64 2)
// CHECK:       declare void @"[[K]]"(ptr, ptr, ptr, i64)
func.func @blocked_relu(%x: tensor<1x2x6x6x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x6x6x16xf32> {
  %y = df.conv2d_nchwc %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x6x6x16xf32>
  %r = df.relu %y : (tensor<1x2x6x6x16xf32>) -> tensor<1x2x6x6x16xf32>
  func.return %r : tensor<1x2x6x6x16xf32>
}
