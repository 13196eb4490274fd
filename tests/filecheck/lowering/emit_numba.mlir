// RUN: xdsl-opt %s --split-input-file -p df-bufferize,df-plan-buffers,df-lower-host -t numba | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p df-bufferize,df-plan-buffers,df-lower-host -t numba | %python -c "import ast, sys; [ast.parse(part) for part in sys.stdin.read().split('// -' '----')]"

// The numba target prints one Python module per device: constants as NumPy
// arrays, kernels as @numba.njit functions (CPU) or @cuda.jit grid kernels
// with a launcher (GPU), each host function as runtime calls on `rt`, and
// ENTRIES. The second RUN line checks that every module parses as Python.

// A CPU module: a matmul+bias+relu group (a Python function that calls the
// library routine, then the epilogue loops, a numba kernel of their own: numba
// would link and optimize the routine again in every kernel that calls it), a max
// reduction group reading the dense constant.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK-NEXT:  """dflow: the program for device cpu:0 (emitted by the numba target)."""
// CHECK:       import numba
// CHECK-NEXT:  import numpy as np
// CHECK:       from dflow.runtime.kernel_cache import kernel as _kernel
// CHECK-NEXT:  from dflow.runtime.library import cpu as lib
// CHECK:       DEVICE = "cpu:0"
// CHECK:       def _maximum(a, b):
// CHECK:       main_cst0 = np.frombuffer(bytes.fromhex('0000803f0000004000004040000080400000a0400000c0400000e04000000041'), np.float32.__name__).astype(np.float32).reshape((8,))

// CHECK:       @_kernel("[[D0:[0-9a-f]+]]")
// CHECK-NEXT:  def [[EPILOGUE:fused_matmul_0_epilogue]]([[X:[A-Za-z0-9_]+]], [[W:[A-Za-z0-9_]+]], [[B:[A-Za-z0-9_]+]], [[H:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 4, 1):
// CHECK-NEXT:          for [[J:[A-Za-z0-9_]+]] in range(0, 8, 1):
// CHECK-NEXT:              {{^ *}}[[M:[A-Za-z0-9_]+]] = [[H]]{{\[}}[[I]], [[J]]{{\]}}
// CHECK-NEXT:              {{^ *}}[[BJ:[A-Za-z0-9_]+]] = [[B]]{{\[}}[[J]]{{\]}}
// CHECK-NEXT:              {{^ *}}[[A:[A-Za-z0-9_]+]] = [[M]] + [[BJ]]
// CHECK-NEXT:              {{^ *}}[[R:[A-Za-z0-9_]+]] = _maximum([[A]], numba.float32(0.0))
// CHECK-NEXT:              [[H]]{{\[}}[[I]], [[J]]{{\]}} = [[R]]
// CHECK-EMPTY:
// CHECK-EMPTY:
// CHECK-NEXT:  def fused_matmul_0([[X]], [[W]], [[B]], [[H]]):
// CHECK-NEXT:      lib.matmul_f32([[X]], [[W]], [[H]], numba.int64(0), numba.int64(0))
// CHECK-NEXT:      [[EPILOGUE]]([[X]], [[W]], [[B]], [[H]])

// CHECK-NOT:   @_kernel("[[D0]]")
// CHECK:       @_kernel("{{[0-9a-f]+}}")
// CHECK-NEXT:  def fused_mul_1([[P:[A-Za-z0-9_]+]], [[K:[A-Za-z0-9_]+]], [[Q:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 4, 1):
// CHECK-NEXT:          {{^ *}}[[ACC:[A-Za-z0-9_]+]] = numba.float32(-math.inf)
// CHECK-NEXT:          for [[J:[A-Za-z0-9_]+]] in range(0, 8, 1):
// CHECK-NEXT:              {{^ *}}[[V:[A-Za-z0-9_]+]] = [[P]]{{\[}}[[I]], [[J]]{{\]}}
// CHECK-NEXT:              {{^ *}}[[KJ:[A-Za-z0-9_]+]] = [[K]]{{\[}}[[J]]{{\]}}
// CHECK-NEXT:              {{^ *}}[[PROD:[A-Za-z0-9_]+]] = [[V]] * [[KJ]]
// CHECK-NEXT:              {{^ *}}[[MAX:[A-Za-z0-9_]+]] = _maximum([[ACC]], [[PROD]])
// CHECK-NEXT:              [[ACC]] = [[MAX]]
// CHECK-NEXT:          [[Q]]{{\[}}[[I]]{{\]}} = [[ACC]]

// CHECK:       def main(rt, x, w, bias):
// CHECK-NEXT:      {{^ *}}[[ARENA:[A-Za-z0-9_]+]] = rt.arena(192)
// CHECK-NEXT:      r = rt.output((4, 8), np.float32)
// CHECK-NEXT:      fused_matmul_0(x, w, bias, r)
// CHECK-NEXT:      s = rt.output((4,), np.float32)
// CHECK-NEXT:      fused_mul_1(r, main_cst0, s)
// CHECK-NEXT:      return (r, s)
// CHECK:       ENTRIES = {'main': {'arguments': [0, 1, 2], 'results': [0, 1], 'entry_arguments': [((4, 16), 'float32'), ((16, 8), 'float32'), ((8,), 'float32')], 'entry_results': [((4, 8), 'float32'), ((4,), 'float32')], 'arena_bytes': 192, 'function': 'main'}}
// CHECK-NEXT:  CHANNELS = []
// CHECK-NEXT:  KERNELS = {'fused_matmul_0': {'ops': ['df.matmul', 'df.add', 'df.relu'], 'flops': 1088, 'bytes': 928}, 'fused_mul_1': {'ops': ['df.mul', 'df.reduce_max'], 'flops': 64, 'bytes': 176}}
// CHECK-NEXT:  KERNEL_ARGUMENTS = {'fused_matmul_0_epilogue': [('float32', 2), ('float32', 2), ('float32', 1), ('float32', 2)], 'fused_mul_1': [('float32', 2), ('float32', 1), ('float32', 1)]}
func.func @main(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %k = df.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %r = df.fused(%0 = %x, %1 = %w, %2 = %bias) {kind = "contraction", name = "fused_matmul_0"} : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    %m = df.matmul %0, %1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %a = df.add %m, %2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %h = df.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %h : tensor<4x8xf32>
  }
  %s = df.fused(%0 = %r, %1 = %k) {kind = "reduction", name = "fused_mul_1"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32> {
    %p = df.mul %0, %1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %q = df.reduce_max %p {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
    df.yield %q : tensor<4xf32>
  }
  func.return %r, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A conv2d is a library call with its parameters, from Python: nothing is left
// for a numba kernel. An i1 constant is bytes != 0.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       main_cst0 = (np.frombuffer(bytes.fromhex('ff00ff00'), np.int8) != 0).reshape((4,))
// CHECK-NOT:   @_kernel
// CHECK:       def conv2d_0([[X:[A-Za-z0-9_]+]], [[W:[A-Za-z0-9_]+]], [[C:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      lib.conv2d_f32([[X]], [[W]], [[C]], numba.int64(2), numba.int64(2), numba.int64(1), numba.int64(1), numba.int64(1), numba.int64(1), numba.int64(1), numba.int64(1), numba.int64(1))
// CHECK-EMPTY:
// CHECK:       def main(rt, x, w, x4, y4):
// CHECK:           conv2d_0(x, w, c)
// CHECK:           select_1(main_cst0, x4, y4, m)
// CHECK:       KERNEL_ARGUMENTS = {'select_1': [('bool_', 1), ('float32', 1), ('float32', 1), ('float32', 1)]}
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %x4: tensor<4xf32>, %y4: tensor<4xf32>) -> (tensor<1x4x4x4xf32>, tensor<4xf32>) {
  %c = df.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %b = df.constant dense<[true, false, true, false]> : tensor<4xi1>
  %m = df.select %b, %x4, %y4 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c, %m : tensor<1x4x4x4xf32>, tensor<4xf32>
}

// -----

// A kernel's digest is its content, not its name: two groups with the same
// body share one (numba compiles that kernel once), another constant in the
// body gives another digest.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       @_kernel("[[SAME:[0-9a-f]+]]")
// CHECK-NEXT:  def fused_mul_0(
// CHECK:       @_kernel("[[SAME]]")
// CHECK-NEXT:  def fused_mul_1(
// CHECK-NOT:   @_kernel("[[SAME]]")
// CHECK:       @_kernel("{{[0-9a-f]+}}")
// CHECK-NEXT:  def fused_mul_2(
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = df.fused(%0 = %x) {kind = "elementwise", name = "fused_mul_0"} : (tensor<4xf32>) -> tensor<4xf32> {
    %m = df.mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n = df.neg %m : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %n : tensor<4xf32>
  }
  %b = df.fused(%0 = %y) {kind = "elementwise", name = "fused_mul_1"} : (tensor<4xf32>) -> tensor<4xf32> {
    %m = df.mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n = df.neg %m : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %n : tensor<4xf32>
  }
  %c = df.fused(%0 = %y) {kind = "elementwise", name = "fused_mul_2"} : (tensor<4xf32>) -> tensor<4xf32> {
    %two = df.constant dense<2.0> : tensor<4xf32>
    %m = df.mul %0, %two : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n = df.neg %m : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %n : tensor<4xf32>
  }
  func.return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A value named like a Python builtin that kernels call (`abs`, `range`) gets
// another name, so the call still reaches the builtin.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def abs_0(x, [[ABS:abs_[0-9]+]]):
// CHECK-NEXT:      for [[I:[a-z0-9_]+]] in range(0, 2, 1):
// CHECK-NEXT:          {{^ *}}[[V:[a-z0-9_]+]] = x{{\[}}[[I]]{{\]}}
// CHECK-NEXT:          {{^ *}}[[R:[a-z0-9_]+]] = abs([[V]])
// CHECK:       def neg_1([[ABS]], {{range_[0-9]+}}):
// CHECK-NEXT:      for {{[a-z0-9_]+}} in range(0, 2, 1):
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %abs = df.abs %x : (tensor<2xi32>) -> tensor<2xi32>
  %range = df.neg %abs : (tensor<2xi32>) -> tensor<2xi32>
  func.return %range : tensor<2xi32>
}

// -----

// A function named like a name the module uses (NumPy's `np`, the builtin `abs`,
// the `ENTRIES` table) is printed as `f_...`, and ENTRIES maps the symbol to it.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def abs_0(
// CHECK:           {{^ *}}{{[a-z0-9_]+}} = abs(
// CHECK:       def [[NP:f_np(_[0-9]+)?]](rt, x):
// CHECK:       def [[ABS:f_abs(_[0-9]+)?]](rt, x):
// CHECK:       def [[TABLE:f_ENTRIES(_[0-9]+)?]](rt, x):
// CHECK:       ENTRIES = {'np': {{.*}}'function': '[[NP]]'}, 'abs': {{.*}}'function': '[[ABS]]'}, 'ENTRIES': {{.*}}'function': '[[TABLE]]'}}
func.func @np(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = df.abs %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @abs(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = df.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @ENTRIES(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = df.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

// So is a kernel: a group named `abs` prints as `k_abs`, and its body still
// calls the builtin.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def [[K:k_abs(_[0-9]+)?]](
// CHECK-NEXT:      for
// CHECK-NEXT:          {{^ *}}[[V:[a-z0-9_]+]] = {{[a-z0-9_]+}}[
// CHECK-NEXT:          {{^ *}}{{[a-z0-9_]+}} = abs([[V]])
// CHECK:       def main(rt, x):
// CHECK:           [[K]](x, {{[a-z0-9_]+}})
// CHECK:       KERNEL_ARGUMENTS = {'[[K]]': [('float32', 1), ('float32', 1)]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%0 = %x) {kind = "elementwise", name = "abs"} : (tensor<4xf32>) -> tensor<4xf32> {
    %a = df.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
    %n = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Python names never shadow a name of the module: a value named like the
// constant's global gets another name, so the global stays what the kernel reads.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       main_cst0 = np.frombuffer(
// CHECK:       def main(rt, x):
// CHECK-NEXT:      {{^ *}}[[ARENA:[A-Za-z0-9_]+]] = rt.arena(64)
// CHECK-NEXT:      {{^ *}}[[V:main_cst0_[0-9]+]] = rt.output((4,), np.float32)
// CHECK-NEXT:      add_0(x, main_cst0, [[V]])
// CHECK-NEXT:      return ([[V]],)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = df.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %main_cst0 = df.add %x, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %main_cst0 : tensor<4xf32>
}

// -----

// A partitioned module: one Python module per device. On cpu:0, sends and
// receives are runtime calls with their keys; on gpu:0, the argument and the
// constant are copied to the device, and each kernel is a launcher running
// @cuda.jit grid kernels.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       DEVICE = "cpu:0"
// CHECK:       def main(rt, x):
// CHECK-NEXT:      {{^ *}}[[ARENA:[A-Za-z0-9_]+]] = rt.arena(64)
// CHECK-NEXT:      a = rt.view([[ARENA]], 0, (4,), np.float32)
// CHECK-NEXT:      exp_0(x, a)
// CHECK-NEXT:      rt.send('main.k0', 'gpu:0', a)
// CHECK-NEXT:      c = rt.view([[ARENA]], 0, (4,), np.float32)
// CHECK-NEXT:      rt.recv('main.k1', 'gpu:0', c)
// CHECK-NEXT:      d = rt.output((4,), np.float32)
// CHECK-NEXT:      neg_1(c, d)
// CHECK-NEXT:      return (d,)
// CHECK:       ENTRIES = {'main': {'arguments': [0], 'results': [0], 'entry_arguments': [((4,), 'float32'), ((4,), 'float32')], 'entry_results': [((4,), 'float32'), ((4,), 'float32')], 'arena_bytes': 64, 'function': 'main'}}
// CHECK-NEXT:  CHANNELS = [('main.k0', 'cpu:0', 'gpu:0'), ('main.k1', 'gpu:0', 'cpu:0')]
// CHECK-NEXT:  KERNELS = {'exp_0': {'ops': ['df.exp'], 'flops': 32, 'bytes': 32}, 'neg_1': {'ops': ['df.neg'], 'flops': 4, 'bytes': 32}}
// CHECK-NEXT:  KERNEL_ARGUMENTS = {'exp_0': [('float32', 1), ('float32', 1)], 'neg_1': [('float32', 1), ('float32', 1)]}

// CHECK-LABEL: # ----- gpu_0.py -----
// CHECK:       from numba import cuda
// CHECK:       from dflow.runtime.library import gpu as lib
// CHECK:       DEVICE = "gpu:0"
// CHECK:       main_cst0 = np.frombuffer(
// CHECK:       @cuda.jit
// CHECK-NEXT:  def add_0_grid0(a, y, b):
// CHECK-NEXT:      {{.*}}cuda.grid(1)
// CHECK:           b[{{.*}}] =
// CHECK:       def add_0(a, y, b):
// CHECK-NEXT:      add_0_grid0[{{.*}}](a, y, b)
// CHECK:       @cuda.jit
// CHECK-NEXT:  def mul_1_grid0(b, k, c):
// CHECK:       def mul_1(b, k, c):
// CHECK-NEXT:      mul_1_grid0[{{.*}}](b, k, c)
// CHECK:       def main(rt, y):
// CHECK-NEXT:      {{^ *}}[[ARENA:[A-Za-z0-9_]+]] = rt.arena(128)
// CHECK-NEXT:      {{^ *}}[[YD:[A-Za-z0-9_]+]] = rt.to_device(y)
// CHECK-NEXT:      {{^ *}}[[KD:[A-Za-z0-9_]+]] = rt.to_device(main_cst0)
// CHECK-NEXT:      a = rt.view([[ARENA]], 0, (4,), np.float32)
// CHECK-NEXT:      rt.recv('main.k0', 'cpu:0', a)
// CHECK-NEXT:      b = rt.view([[ARENA]], 0, (4,), np.float32)
// CHECK-NEXT:      add_0(a, [[YD]], b)
// CHECK-NEXT:      c = rt.view([[ARENA]], 64, (4,), np.float32)
// CHECK-NEXT:      mul_1(b, [[KD]], c)
// CHECK-NEXT:      rt.send('main.k1', 'cpu:0', c)
// CHECK-NEXT:      {{^ *}}[[R:[A-Za-z0-9_]+]] = rt.fetch(b)
// CHECK-NEXT:      return ([[R]],)
// CHECK:       ENTRIES = {'main': {'arguments': [1], 'results': [1], 'entry_arguments': [((4,), 'float32'), ((4,), 'float32')], 'entry_results': [((4,), 'float32'), ((4,), 'float32')], 'arena_bytes': 128, 'function': 'main'}}
// CHECK-NEXT:  CHANNELS = [('main.k0', 'cpu:0', 'gpu:0'), ('main.k1', 'gpu:0', 'cpu:0')]
// CHECK-NEXT:  KERNELS = {'add_0': {'ops': ['df.add'], 'flops': 4, 'bytes': 48}, 'mul_1': {'ops': ['df.mul'], 'flops': 4, 'bytes': 48}}
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 0>, df.results = array<i64: 0>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      df.send %a {df.device = "cpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()
      %c = df.recv {df.device = "cpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : () -> tensor<4xf32>
      %d = df.neg %c {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %d : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main(%y: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: 1>, df.results = array<i64: 1>, df.function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)} {
      %k = df.constant {df.device = "gpu:0"} dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %a = df.recv {df.device = "gpu:0", key = "main.k0", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>
      %b = df.add %a, %y {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %c = df.mul %b, %k {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      df.send %c {df.device = "gpu:0", key = "main.k1", from = "gpu:0", to = "cpu:0"} : (tensor<4xf32>) -> ()
      func.return %b : tensor<4xf32>
    }
  }
}

// -----

// A host function whose symbol is no Python name (a keyword, a dot) gets a
// unique `f_` name; ENTRIES maps the symbol to it for the runtime.
// CHECK-LABEL: def f_pass(rt, x):
// CHECK-LABEL: def f_a_b(rt, x):
// CHECK:       ENTRIES = {'pass': {{{.*}}'function': 'f_pass'}, 'a.b': {{{.*}}'function': 'f_a_b'}}
func.func @pass(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @"a.b"(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// On CPUs exp, log and tanh call dflow's vectorizable functions (vm, by element
// type); the others are libm's through Python's `math` (df.erf is math.erf).
// CHECK-LABEL: def fused_erf_0(
// CHECK:           {{^ *}}[[E:[A-Za-z0-9_]+]] = math.erf({{.*}})
// CHECK-NEXT:      {{^ *}}[[T:[A-Za-z0-9_]+]] = vm.tanh_f32([[E]])
// CHECK-NEXT:      {{^ *}}[[X:[A-Za-z0-9_]+]] = vm.exp_f32([[T]])
// CHECK-NEXT:      {{^ *}}[[L:[A-Za-z0-9_]+]] = vm.log_f32([[X]])
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.fused(%0 = %x) {kind = "elementwise", name = "fused_erf_0"} : (tensor<4xf32>) -> tensor<4xf32> {
    %e = df.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
    %t = df.tanh %e : (tensor<4xf32>) -> tensor<4xf32>
    %p = df.exp %t : (tensor<4xf32>) -> tensor<4xf32>
    %l = df.log %p : (tensor<4xf32>) -> tensor<4xf32>
    df.yield %l : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// In place: %b is written over %a (same offset), so the kernel of `df.neg` reads
// %a through %b's argument, one array for LLVM instead of two that overlap; %c
// is returned, so it is an output array of its own, and its kernel reads %b
// through %b's own argument.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def neg_1([[A:[A-Za-z0-9_]+]], [[B:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 16, 1):
// CHECK-NEXT:          {{^ *}}[[V:[A-Za-z0-9_]+]] = [[B]]{{\[}}[[I]]{{\]}}
// CHECK-NEXT:          {{^ *}}[[N:[A-Za-z0-9_]+]] = -[[V]]
// CHECK-NEXT:          [[B]]{{\[}}[[I]]{{\]}} = [[N]]
// CHECK:       def mul_2([[B2:[A-Za-z0-9_]+]], [[X:[A-Za-z0-9_]+]], [[C:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 16, 1):
// CHECK-NEXT:          {{^ *}}[[V:[A-Za-z0-9_]+]] = [[B2]]{{\[}}[[I]]{{\]}}
// CHECK:       def in_place(rt, x):
// CHECK-NEXT:      {{^ *}}[[ARENA:[A-Za-z0-9_]+]] = rt.arena(64)
// CHECK-NEXT:      a = rt.view([[ARENA]], 0, (16,), np.float32)
// CHECK-NEXT:      exp_0(x, a)
// CHECK-NEXT:      b = rt.view([[ARENA]], 0, (16,), np.float32)
// CHECK-NEXT:      neg_1(a, b)
// CHECK-NEXT:      c = rt.output((16,), np.float32)
func.func @in_place(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = df.mul %b, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// f16 (and bf16) values are held as their 16 bits: the host sees the argument as
// uint16 and the result as float16 again (`rt.given`), a CPU kernel converts with
// `vm`'s conversions (F16C's instructions) around the f32 arithmetic df-widen
// made, and ENTRIES keep the user's dtype. The scalar helpers convert in GPU
// kernels and from f64. An unsigned constant is a signless one, converted.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def _bits_to_float(h, exponent, mantissa, bias, kind):
// CHECK:       def _float_to_bits(x, exponent, mantissa, bias, kind):
// CHECK:       def [[UP:cast_0]]([[X:[A-Za-z0-9_]+]], [[W:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 4, 1):
// CHECK-NEXT:          {{^ *}}[[H:[A-Za-z0-9_]+]] = [[X]]{{\[}}[[I]]{{\]}}
// CHECK-NEXT:          {{^ *}}[[F:[A-Za-z0-9_]+]] = vm.f16_to_f32([[H]])
// CHECK-NEXT:          [[W]]{{\[}}[[I]]{{\]}} = [[F]]
// CHECK:       def [[DOWN:cast_2]]([[E:[A-Za-z0-9_]+]], [[Y:[A-Za-z0-9_]+]]):
// CHECK-NEXT:      for [[I:[A-Za-z0-9_]+]] in range(0, 4, 1):
// CHECK-NEXT:          {{^ *}}[[V:[A-Za-z0-9_]+]] = [[E]]{{\[}}[[I]]{{\]}}
// CHECK-NEXT:          {{^ *}}[[B:[A-Za-z0-9_]+]] = vm.f32_to_f16([[V]])
// CHECK-NEXT:          [[Y]]{{\[}}[[I]]{{\]}} = [[B]]
// CHECK:       def [[NONZERO:cast_3]]([[U:[A-Za-z0-9_]+]], [[N:[A-Za-z0-9_]+]]):
// CHECK:               {{^ *}}[[ZERO:[A-Za-z0-9_]+]] = numba.uint8(numba.int8(0))
// CHECK:               {{^ *}}[[T:[A-Za-z0-9_]+]] = {{.*}} != [[ZERO]]
// CHECK:       def half(rt, x, u):
// CHECK-NEXT:      x = x.view(np.uint16)
// CHECK:           [[UP]](x, w)
// CHECK:           y = rt.output((4,), np.uint16)
// CHECK-NEXT:      [[DOWN]](e, y)
// CHECK:           return (rt.given(y, 'float16'), n)
// CHECK:       ENTRIES = {'half': {{.*}}'entry_arguments': [((4,), 'float16'), ((4,), 'uint8')], 'entry_results': [((4,), 'float16'), ((4,), 'bool_')]
func.func @half(%x: tensor<4xf16>, %u: tensor<4xui8>) -> (tensor<4xf16>, tensor<4xi1>) {
  %w = df.cast %x : (tensor<4xf16>) -> tensor<4xf32>
  %e = df.exp %w : (tensor<4xf32>) -> tensor<4xf32>
  %y = df.cast %e : (tensor<4xf32>) -> tensor<4xf16>
  %n = df.cast %u : (tensor<4xui8>) -> tensor<4xi1>
  func.return %y, %n : tensor<4xf16>, tensor<4xi1>
}

// -----

// The 8- and 4-bit floats are held as their bits too (uint8): the host views the
// argument, the helpers convert with the format's (exponent bits, mantissa bits,
// bias, kind: 1 is FN, no infinities) on CPUs as on GPUs, and `rt.given` hands the
// user's dtype back. A 4-bit integer is a byte, sign-extended: the argument is
// converted (ml_dtypes keeps the low bits only), a float truncates to i32 and wraps
// to 4 bits, and the result goes back through `rt.given` too.

// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def [[UP:cast_0]]([[X:[A-Za-z0-9_]+]], [[W:[A-Za-z0-9_]+]]):
// CHECK:           {{^ *}}[[F:[A-Za-z0-9_]+]] = _bits_to_float({{.*}}, 4, 3, 7, 1)
// CHECK:       def [[DOWN:cast_2]]([[E:[A-Za-z0-9_]+]], [[Y:[A-Za-z0-9_]+]]):
// CHECK:           {{^ *}}[[B:[A-Za-z0-9_]+]] = numba.uint8(_float_to_bits({{.*}}, 4, 3, 7, 1))
// CHECK:       def [[WRAP:cast_3]]({{.*}}):
// CHECK:           {{^ *}}[[T:[A-Za-z0-9_]+]] = numba.int32({{.*}})
// CHECK-NEXT:      {{^ *}}[[Q:[A-Za-z0-9_]+]] = numba.int8(((numba.int64([[T]]) + 8) & 15) - 8)
// CHECK:       def mini(rt, x, q):
// CHECK-NEXT:      x = x.view(np.uint8)
// CHECK-NEXT:      q = q.astype(np.int8)
// CHECK:           return (rt.given(y, 'float8_e4m3fn'), rt.given(t, 'int4'))
// CHECK:       ENTRIES = {'mini': {{.*}}'entry_arguments': [((4,), 'float8_e4m3fn'), ((4,), 'int4')]
func.func @mini(%x: tensor<4xf8E4M3FN>, %q: tensor<4xi4>) -> (tensor<4xf8E4M3FN>, tensor<4xi4>) {
  %w = df.cast %x : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  %e = df.exp %w : (tensor<4xf32>) -> tensor<4xf32>
  %y = df.cast %e : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %t = df.cast %e : (tensor<4xf32>) -> tensor<4xi4>
  func.return %y, %t : tensor<4xf8E4M3FN>, tensor<4xi4>
}

// -----

// arith.remf prints as NumPy's fmod on CPUs (numba has no math.fmod there).
// CHECK-LABEL: # ----- cpu_0.py -----
// CHECK:       def rem_0([[A:[A-Za-z0-9_]+]], [[B:[A-Za-z0-9_]+]], [[R:[A-Za-z0-9_]+]]):
// CHECK:           {{^ *}}[[X:[A-Za-z0-9_]+]] = [[A]]{{\[}}
// CHECK-NEXT:      {{^ *}}[[Y:[A-Za-z0-9_]+]] = [[B]]{{\[}}
// CHECK-NEXT:      {{^ *}}[[M:[A-Za-z0-9_]+]] = np.fmod([[X]], [[Y]])
func.func @rem(%a: tensor<5xf64>, %b: tensor<5xf64>) -> tensor<5xf64> {
  %r = df.rem %a, %b : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %r : tensor<5xf64>
}
