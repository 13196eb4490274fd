// RUN: xdsl-opt %s --verify-diagnostics --split-input-file -p 'df-place-devices{devices="cpu:0,gpu:0"}' | filecheck %s
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices="cpu:0,gpu:1"}' | filecheck %s --check-prefix=MISSING
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices="cpu:0,gpu0"}' | filecheck %s --check-prefix=MALFORMED
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices="cpu:0,tpu:0"}' | filecheck %s --check-prefix=KIND
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices="gpu:0,cpu:0,gpu:0"}' | filecheck %s --check-prefix=REPEAT
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices=""}' | filecheck %s --check-prefix=EMPTY
// RUN: xdsl-opt %s --verify-diagnostics -p 'df-place-devices{devices="cpu:0,gpu:0" link_gbps=0}' | filecheck %s --check-prefix=PARAMETER
// RUN: xdsl-opt %s --verify-diagnostics --split-input-file -p 'df-place-devices{devices="gpu:0,gpu:1"}' | filecheck %s --check-prefix=NODEVICE

// df-place-devices fails, naming the ops and devices involved, when the
// constraints cannot all hold; under --verify-diagnostics xdsl-opt prints the
// message (and no module) and exits 0. Each check is the whole line. Ops are
// named by their result (xdsl-opt keeps no source lines; `dflow` adds them).

// A pin must name a listed device; the list must hold cpu:N or gpu:N, each once.
// MISSING:   {{^}}df-place-devices: df.mul (%m) is pinned to gpu:0, which is not in the device list cpu:0,gpu:1{{$}}
// MISSING-NOT: func.func
// The list is read as `dflow run --devices` reads it, with the same messages.
// MALFORMED: {{^}}df-place-devices: devices: bad device 'gpu0': each must be cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
// KIND:      {{^}}df-place-devices: devices: bad device 'tpu:0': each must be cpu:N or gpu:N (optionally @RANK, as in cpu:0@1){{$}}
// REPEAT:    {{^}}df-place-devices: devices: device gpu:0 is listed twice in 'gpu:0,cpu:0,gpu:0'{{$}}
// EMPTY:     {{^}}df-place-devices: devices is empty: name at least one device, e.g. devices=cpu:0{{$}}
// PARAMETER: {{^}}df-place-devices: link_gbps=0.0 must be a positive number{{$}}

// Two pins in one colocation group: the message shows the chain of constraints
// that joined them. Here %s and %t share the name "g", and %t, a constant with
// one consumer, follows %m.

// CHECK:      {{^}}df-place-devices: conflicting devices in one colocation group: df.add (%s) is pinned to cpu:0 and df.mul (%m) to gpu:0; joined by: %s -[colocate "g"]- %t -[generator of]- %m{{$}}
// CHECK-NEXT: {{^//}} {{-----$}}
func.func @colocate_chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = df.add %x, %y {df.device = "cpu:0", df.colocate = "g"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = df.constant {df.colocate = "g"} dense<2.0> : tensor<4xf32>
  %m = df.mul %s, %t {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m : tensor<4xf32>
}

// -----

// A longer chain: a reshape follows its producer, and the reshape is colocated
// with a pinned op.

// CHECK:      {{^}}df-place-devices: conflicting devices in one colocation group: df.exp (%e) is pinned to gpu:0 and df.neg (%n) to cpu:0; joined by: %e -[reshaped by]- %r -[colocate "h"]- %n{{$}}
// CHECK-NEXT: {{^//}} {{-----$}}
func.func @reshape_chain(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  %e = df.exp %x {df.device = "gpu:0"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = df.reshape %e {df.colocate = "h"} : (tensor<2x2xf32>) -> tensor<4xf32>
  %n = df.neg %r {df.device = "cpu:0", df.colocate = "h"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// A pin onto a device that cannot run the op (the gpu has no
// df.conv2d_grad_input yet), or onto a group holding such an op.

// CHECK:      {{^}}df-place-devices: df.conv2d_grad_input (%dx) is pinned to gpu:0, but gpu devices cannot run df.conv2d_grad_input{{$}}
// CHECK-NEXT: {{^//}} {{-----$}}
// NODEVICE:   {{^}}df-place-devices: df.conv2d_grad_input (%dx) is pinned to gpu:0, but gpu devices cannot run df.conv2d_grad_input{{$}}
func.func @pinned_incapable(%dy: tensor<1x1x2x2xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> {
  %dx = df.conv2d_grad_input %dy, %w {df.device = "gpu:0"} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %dx : tensor<1x1x4x4xf32>
}

// -----

// CHECK:      {{^}}df-place-devices: df.max_pool2d_grad (%g) cannot run on gpu:0, where its colocation group is pinned by df.relu (%r); joined by: %g -[colocate "bwd"]- %r{{$}}
// CHECK-NEXT: {{^//}} {{-----$}}
func.func @group_incapable(%x: tensor<1x1x4x4xf32>, %dy: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %r = df.relu %x {df.device = "gpu:0", df.colocate = "bwd"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %g = df.max_pool2d_grad %r, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, df.colocate = "bwd"} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %g : tensor<1x1x4x4xf32>
}

// -----

// No listed device can run the ops of a group: on gpus only, the two conv2d
// gradients (joined by "g") have nowhere to go. With a cpu listed they go there.

// NODEVICE:     {{^}}df-place-devices: no device of gpu:0,gpu:1 can run every op of a colocation group: df.conv2d_grad_input (%dx) runs on none of them; df.conv2d_grad_filter (%dw) runs on none of them{{$}}
// NODEVICE-NOT: func.func
// CHECK:        df.conv2d_grad_input %{{.*}} {df.colocate = "g", df.device = "cpu:0"}
// CHECK-NEXT:   df.conv2d_grad_filter %{{.*}} {df.colocate = "g", df.device = "cpu:0"}
func.func @nowhere(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>, %dy: tensor<1x1x2x2xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) {
  %dx = df.conv2d_grad_input %dy, %w {df.colocate = "g"} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %dw = df.conv2d_grad_filter %x, %dy {df.colocate = "g"} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  func.return %dx, %dw : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
}
