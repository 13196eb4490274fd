// RUN: xdsl-opt %s --split-input-file -p df-prune | filecheck %s
// RUN: xdsl-opt %s -p 'df-prune{fetches=2,0}' | filecheck %s --check-prefix=FETCH
// RUN: xdsl-opt %s -p 'df-prune{fetches=1 entry=partial_run}' | filecheck %s --check-prefix=ONE
// RUN: xdsl-opt %s -p 'df-prune{fetches=2,0 stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// df-prune: every df.identity becomes its input (unless it pins a copy onto
// another device), ops without effects whose results are unused go, and
// df.send / df.recv always stay. With `fetches`, the entry function returns
// only those results, in that order, and what only the others needed goes.
// (The FETCH, ONE and STATS runs take the whole file as one module.)

// Statistics of `fetches=2,0` on the whole module: one result of @main
// dropped, six identities erased; ops 7 + 8 + 7 + 6 + 7 = 35 become
// 3 + 4 + 2 + 4 + 7 = 20; the one 4-byte constant (in @dead_ops) goes.

// STATS:      df-prune: 7 rewrites; ops 35 -> 20 (-15); constant bytes 4 -> 0 (-4)
// STATS-NEXT:   DroppedResults: 1
// STATS-NEXT:   EraseIdentity: 6
// STATS-NOT:  {{.}}

// Without fetches every result stays; the identity and the dead log go.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = df.tanh %[[Y]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = df.add %[[A]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[D:.*]] = df.neg %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[C]], %[[D]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>

// fetches=2,0: results 2 and 0, in that order; the tanh and the add only
// served result 1 and go. The arguments stay.

// FETCH-LABEL: func.func @main(
// FETCH-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// FETCH-NEXT:    %[[A:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// FETCH-NEXT:    %[[D:.*]] = df.neg %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// FETCH-NEXT:    func.return %[[D]], %[[A]] : tensor<4xf32>, tensor<4xf32>
// FETCH-NEXT:  }

// Another entry keeps all its results when `fetches` chooses @main's.

// ONE-LABEL: func.func @main(
// ONE-SAME:      -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// ONE:           func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.tanh %y : (tensor<4xf32>) -> tensor<4xf32>
  %c = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %i = df.identity %a : (tensor<4xf32>) -> tensor<4xf32>
  %d = df.neg %i : (tensor<4xf32>) -> tensor<4xf32>
  %dead = df.log %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Identities: erased without a device, or on the device of their producer
// (a second identity on gpu:0 after one that copies to gpu:0); kept when they
// copy a cpu:0 value to gpu:0 or pin an argument to gpu:1.

// CHECK-LABEL: func.func @identities(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[J:.*]] = df.identity %[[E]] {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[P:.*]] = df.identity %[[X]] {df.device = "gpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[J]], %[[E]], %[[X]], %[[P]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// FETCH-LABEL: func.func @identities(
// FETCH-NEXT:    df.exp
// FETCH-NEXT:    df.identity {{.*}}gpu:0
// FETCH-NEXT:    df.identity {{.*}}gpu:1
// FETCH-NEXT:    func.return
func.func @identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %i = df.identity %e : (tensor<4xf32>) -> tensor<4xf32>
  %j = df.identity %i {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %j2 = df.identity %j {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %k = df.identity %e {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %l = df.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  %p = df.identity %x {df.device = "gpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %j2, %k, %l, %p : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Dead ops: a whole unused chain goes, with its constant.

// CHECK-LABEL: func.func @dead_ops(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4x4xf32>)
// CHECK-NEXT:    %[[T:.*]] = df.tanh %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<4xf32>
func.func @dead_ops(%x: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {
  %c = df.constant dense<2.0> : tensor<f32>
  %a = df.mul %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = df.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %m = df.matmul %w, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = df.reduce_sum %m : (tensor<4x4xf32>) -> tensor<f32>
  %t = df.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}

// -----

// Effects stay: an unused df.recv (only the neg of it goes) and a df.send,
// which keeps the exp it sends.

// CHECK-LABEL: func.func @effects(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = df.recv {key = "k0", from = "gpu:0", to = "cpu:0"} : () -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = df.exp %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    df.send %[[E]] {key = "k1", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
// CHECK-NEXT:    func.return %[[X]] : tensor<4xf32>
func.func @effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.recv {key = "k0", from = "gpu:0", to = "cpu:0"} : () -> tensor<4xf32>
  %n = df.neg %r : (tensor<4xf32>) -> tensor<4xf32>
  %e = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  df.send %e {key = "k1", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
  %i = df.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %i : tensor<4xf32>
}

// -----

// A partial run of another entry: fetches=1 entry=partial_run keeps the loss
// only; the softmax served result 0 alone and goes; the matmul is shared and
// stays; the neg of result 2 stays for the df.send that uses it.

// CHECK-LABEL: func.func @partial_run(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>)
// CHECK-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = df.softmax %[[M]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = df.relu %[[M]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[L:.*]] = df.reduce_sum %[[R]] : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[N:.*]] = df.neg %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    df.send %[[N]] {key = "k2", from = "cpu:0", to = "gpu:0"} : (tensor<2x3xf32>) -> ()
// CHECK-NEXT:    func.return %[[S]], %[[L]], %[[N]] : tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>

// ONE-LABEL: func.func @partial_run(
// ONE-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>) -> tensor<f32>
// ONE-NEXT:    %[[M:.*]] = df.matmul %[[X]], %[[W]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// ONE-NEXT:    %[[R:.*]] = df.relu %[[M]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// ONE-NEXT:    %[[L:.*]] = df.reduce_sum %[[R]] : (tensor<2x4xf32>) -> tensor<f32>
// ONE-NEXT:    %[[N:.*]] = df.neg %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// ONE-NEXT:    df.send %[[N]] {key = "k2", from = "cpu:0", to = "gpu:0"} : (tensor<2x3xf32>) -> ()
// ONE-NEXT:    func.return %[[L]] : tensor<f32>
// ONE-NEXT:  }

// FETCH-LABEL: func.func @partial_run(
// FETCH-SAME:      -> (tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>)
// FETCH:           func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>
func.func @partial_run(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>) {
  %m = df.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = df.softmax %m : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = df.relu %m : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = df.reduce_sum %r : (tensor<2x4xf32>) -> tensor<f32>
  %n = df.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  df.send %n {key = "k2", from = "cpu:0", to = "gpu:0"} : (tensor<2x3xf32>) -> ()
  func.return %s, %l, %n : tensor<2x4xf32>, tensor<f32>, tensor<2x3xf32>
}
