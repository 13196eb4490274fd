// RUN: xdsl-opt %s -p 'df-place-devices{devices="cpu:0,gpu:0"}' | filecheck %s
// RUN: xdsl-opt %s -p 'df-place-devices{devices="cpu:0,gpu:0" strategy=single}' | filecheck %s --check-prefix=SINGLE
// RUN: xdsl-opt %s -p 'df-place-devices{devices="gpu:0,cpu:0" strategy=single}' | filecheck %s --check-prefix=GPUFIRST
// RUN: xdsl-opt %s -p 'df-place-devices{devices="cpu:0,gpu:0" stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: xdsl-opt %s -p 'df-place-devices{devices="cpu:0,gpu:0" report="%t.json"}' >/dev/null && filecheck %s --check-prefix=JSON < %t.json
// RUN: xdsl-opt %s -p 'df-place-devices{devices="cpu:0, gpu:0" link_latency_us=0 launch_us_gpu=0}' | filecheck %s --check-prefix=FREE

// df-place-devices sets df.device on every df op of every function; func.return
// and the arguments are left alone. Arguments live on the host (the first cpu
// listed) and results go back to it. Default cost model: cpu 50 GFLOP/s, 15 GB/s,
// 1 us per kernel; gpu 5000 GFLOP/s, 1000 GB/s, 10 us per launch; links 10 GB/s
// with 10 us latency.

// Rule 1, a pin is kept: %e stays on gpu:0 although it is tiny. Its consumer
// goes by cost: on the cpu it starts when %e arrives (20 + 10 us) and ends at
// 31 us; on the gpu it would end at 30 us and its result reach the host at 40 us.
// With strategy=single it goes to the first listed device that can run it.
// When transfers and gpu launches cost no time (FREE), the gpu wins it too.

// CHECK-LABEL: func.func @pin(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[E]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[N]] : tensor<4xf32>

// SINGLE-LABEL: func.func @pin(
// SINGLE:         df.exp %{{.*}} {df.device = "gpu:0"}
// SINGLE-NEXT:    df.neg %{{.*}} {df.device = "cpu:0"}

// GPUFIRST-LABEL: func.func @pin(
// GPUFIRST:         df.exp %{{.*}} {df.device = "gpu:0"}
// GPUFIRST-NEXT:    df.neg %{{.*}} {df.device = "gpu:0"}

// FREE-LABEL: func.func @pin(
// FREE:         df.exp %{{.*}} {df.device = "gpu:0"}
// FREE-NEXT:    df.neg %{{.*}} {df.device = "gpu:0"}
func.func @pin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = df.exp %x {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %n = df.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// Rule 2, colocation: %b shares group "g" with %a, pinned to gpu:0. %c is free:
// the cost model brings it back to the host.

// CHECK-LABEL: func.func @colocate(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[A:.*]] = df.exp %[[X]] {df.device = "gpu:0", df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.neg %[[X]] {df.colocate = "g", df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.add %[[A]], %[[B]] {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<4xf32>

// SINGLE-LABEL: func.func @colocate(
// SINGLE:         df.neg %{{.*}} {df.colocate = "g", df.device = "gpu:0"}
// SINGLE-NEXT:    df.add %{{.*}} {df.device = "cpu:0"}
func.func @colocate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.device = "gpu:0", df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %x {df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// Rule 2, the generator heuristic: %c has one consumer, pinned to gpu:0, and
// follows it. %k has two consumers and is placed on its own (by cost: a
// constant costs nothing, the first listed device wins the tie).

// CHECK-LABEL: func.func @generator(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %[[C:.*]] = df.constant {df.device = "gpu:0"} dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = df.mul %[[X]], %[[C]] {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[K:.*]] = df.constant {df.device = "cpu:0"} dense<3.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.add %[[X]], %[[K]] {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Q:.*]] = df.sub %[[P]], %[[K]] {df.device = "cpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[M]], %[[Q]] : tensor<4xf32>, tensor<4xf32>
func.func @generator(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = df.constant dense<2.0> : tensor<4xf32>
  %m = df.mul %x, %c {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %k = df.constant dense<3.0> : tensor<4xf32>
  %p = df.add %x, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %q = df.sub %p, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m, %q : tensor<4xf32>, tensor<4xf32>
}

// Rule 2, the metadata heuristic: a reshape joins the producer of its input
// (%r goes with %e to gpu:0), but not an argument (%a is placed on its own).

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "gpu:0"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.reshape %[[E]] {df.device = "gpu:0"} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[A:.*]] = df.reshape %[[X]] {df.device = "cpu:0"} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[R]], %[[A]] : tensor<8xf32>, tensor<8xf32>

// GPUFIRST-LABEL: func.func @reshape(
// GPUFIRST:         df.reshape %{{.*}} {df.device = "gpu:0"}
// GPUFIRST-NEXT:    df.reshape %{{.*}} {df.device = "gpu:0"}
func.func @reshape(%x: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = df.exp %x {df.device = "gpu:0"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = df.reshape %e : (tensor<2x4xf32>) -> tensor<8xf32>
  %a = df.reshape %x : (tensor<2x4xf32>) -> tensor<8xf32>
  func.return %r, %a : tensor<8xf32>, tensor<8xf32>
}

// Rule 3, capability: the gpu cannot run df.conv2d_grad_input yet, so it stays
// on the cpu although the gpu would be faster (38 MFLOP: 756 us on the cpu);
// the df.conv2d after it is as heavy and goes to the gpu. With the gpu listed
// first, strategy=single still keeps the gradient on the cpu.

// CHECK-LABEL: func.func @capability(
// CHECK-SAME:      %[[DY:.*]]: tensor<8x16x32x32xf32>, %[[W:.*]]: tensor<16x16x3x3xf32>) -> tensor<8x16x32x32xf32> {
// CHECK-NEXT:    %[[DX:.*]] = df.conv2d_grad_input %[[DY]], %[[W]] {df.device = "cpu:0"} : (tensor<8x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<8x16x34x34xf32>
// CHECK-NEXT:    %[[Y:.*]] = df.conv2d %[[DX]], %[[W]] {df.device = "gpu:0"} : (tensor<8x16x34x34xf32>, tensor<16x16x3x3xf32>) -> tensor<8x16x32x32xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<8x16x32x32xf32>

// GPUFIRST-LABEL: func.func @capability(
// GPUFIRST:         df.conv2d_grad_input %{{.*}} {df.device = "cpu:0"}
// GPUFIRST-NEXT:    df.conv2d %{{.*}} {df.device = "gpu:0"}
func.func @capability(%dy: tensor<8x16x32x32xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<8x16x32x32xf32> {
  %dx = df.conv2d_grad_input %dy, %w : (tensor<8x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<8x16x34x34xf32>
  %y = df.conv2d %dx, %w : (tensor<8x16x34x34xf32>, tensor<16x16x3x3xf32>) -> tensor<8x16x32x32xf32>
  func.return %y : tensor<8x16x32x32xf32>
}

// Rule 5, cost: a 1024^3 matmul (2.1 GFLOP: 43 ms on the cpu, 0.44 ms on the
// gpu plus 1.3 ms of transfers) goes to the gpu; the chain of tiny ops whose
// input lives on the cpu stays there (10 us of latency each way dominates).
// strategy=single puts everything on cpu:0.

// CHECK-LABEL: func.func @cost(
// CHECK-SAME:      %[[A:.*]]: tensor<1024x1024xf32>, %[[B:.*]]: tensor<1024x1024xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[A]], %[[B]] {df.device = "gpu:0"} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = df.tanh %[[E]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = df.sigmoid %[[T]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[M]], %[[S]] : tensor<1024x1024xf32>, tensor<4xf32>

// SINGLE-LABEL: func.func @cost(
// SINGLE-NEXT:    df.matmul %{{.*}} {df.device = "cpu:0"}
// SINGLE-NEXT:    df.exp %{{.*}} {df.device = "cpu:0"}
// SINGLE-NEXT:    df.tanh %{{.*}} {df.device = "cpu:0"}
// SINGLE-NEXT:    df.sigmoid %{{.*}} {df.device = "cpu:0"}
func.func @cost(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %x: tensor<4xf32>) -> (tensor<1024x1024xf32>, tensor<4xf32>) {
  %m = df.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %t = df.tanh %e : (tensor<4xf32>) -> tensor<4xf32>
  %s = df.sigmoid %t : (tensor<4xf32>) -> tensor<4xf32>
  func.return %m, %s : tensor<1024x1024xf32>, tensor<4xf32>
}

// Rule 4: %a and %c share a group and %b lies between them, so the groups form
// a cycle and are placed as one unit. When the cycle holds two pins, they stay,
// and %c follows its group's pin.

// CHECK-LABEL: func.func @cycle(
// CHECK-NEXT:    df.exp %{{.*}} {df.colocate = "g", df.device = "cpu:0"}
// CHECK-NEXT:    df.neg %{{.*}} {df.device = "cpu:0"}
// CHECK-NEXT:    df.add %{{.*}} {df.colocate = "g", df.device = "cpu:0"}
func.func @cycle(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.add %a, %b {df.colocate = "g"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func @pinned_cycle(
// CHECK-NEXT:    df.exp %{{.*}} {df.device = "gpu:0", df.colocate = "g"}
// CHECK-NEXT:    df.neg %{{.*}} {df.device = "cpu:0"}
// CHECK-NEXT:    df.add %{{.*}} {df.colocate = "g", df.device = "gpu:0"}
func.func @pinned_cycle(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.device = "gpu:0", df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.add %a, %b {df.colocate = "g"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// Non-df ops and declarations are left alone.

// CHECK-LABEL: func.func @calls(
// CHECK-NEXT:    %[[R:.*]] = func.call @pin(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    df.abs %[[R]] {df.device = "cpu:0"}
// CHECK:       func.func private @external(tensor<4xf32>) -> tensor<4xf32>{{$}}
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @pin(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %a = df.abs %r : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// Rule 6, stats=true prints each function's makespan, the load of each device
// and each op's device and rule. @pin: %e ends at 20.00 us on the gpu, %n
// arrives on the cpu at 30.00 us and ends at 31.01 us.

// STATS:      {{^}}df-place-devices: strategy cost on cpu:0, gpu:0 (host cpu:0); estimated makespan {{.*}} ms{{$}}
// STATS-NEXT: {{^}}  @pin: makespan 31.01 us{{$}}
// STATS-NEXT: {{^}}    device     ops         busy         sent     received{{$}}
// STATS-NEXT: {{^}}    cpu:0        1      1.00 us         16 B         16 B{{$}}
// STATS-NEXT: {{^}}    gpu:0        1     10.00 us         16 B         16 B{{$}}
// STATS-NEXT: {{^}}    df.exp %e                        gpu:0    pin{{$}}
// STATS-NEXT: {{^}}    df.neg %n                        cpu:0    cost{{$}}
// STATS-NEXT: {{^}}  @colocate: makespan 41.01 us{{$}}
// STATS:      df.neg %b {{ +}}gpu:0 {{ +}}colocation{{$}}
// STATS:      @generator:
// STATS:      df.constant %c {{ +}}gpu:0 {{ +}}heuristic{{$}}
// STATS-NEXT: df.mul %m {{ +}}gpu:0 {{ +}}pin{{$}}
// STATS-NEXT: df.constant %k {{ +}}cpu:0 {{ +}}cost{{$}}
// STATS:      @reshape:
// STATS:      df.reshape %r {{ +}}gpu:0 {{ +}}heuristic{{$}}
// STATS-NEXT: df.reshape %a {{ +}}cpu:0 {{ +}}cost{{$}}
// STATS:      @capability:
// STATS:      df.conv2d_grad_input %dx {{ +}}cpu:0 {{ +}}capability{{$}}
// STATS-NEXT: df.conv2d %y {{ +}}gpu:0 {{ +}}cost{{$}}
// STATS:      @cycle: makespan 3.01 us
// STATS:      df.exp %a {{ +}}cpu:0 {{ +}}cycle{{$}}
// STATS-NEXT: df.neg %b {{ +}}cpu:0 {{ +}}cycle{{$}}
// STATS-NEXT: df.add %c {{ +}}cpu:0 {{ +}}cycle{{$}}
// STATS:      @pinned_cycle:
// STATS:      df.neg %b {{ +}}cpu:0 {{ +}}pin{{$}}
// STATS-NEXT: df.add %c {{ +}}gpu:0 {{ +}}colocation{{$}}
// STATS:      @calls:
// STATS-NOT:  func.call
// STATS:      df.abs %a {{ +}}cpu:0 {{ +}}cost{{$}}
// STATS-NOT:  @external

// report=FILE writes the same as JSON (schema in transforms/placement/report.py).

// JSON:      "pass": "df-place-devices",
// JSON-NEXT: "strategy": "cost",
// JSON:      "host": "cpu:0",
// JSON:      "functions": [
// JSON:        "name": "pin",
// JSON-NEXT:   "makespan_s": 3.10053{{[0-9]*}}e-05,
// JSON:        "ops": [
// JSON:          "index": 0,
// JSON-NEXT:     "op": "df.exp",
// JSON-NEXT:     "name": "e",
// JSON-NEXT:     "location": null,
// JSON-NEXT:     "device": "gpu:0",
// JSON-NEXT:     "rule": "pin",
