"""Benchmark of the compiled path on both CPU targets (numba kernels, and one LLVM
module per device: `--target llvm`) and the runtime, against peers.

    taskset -c 0 python bench/kernels.py          # one core, for stable ratios
    taskset -c 0 python bench/kernels.py mlp      # only some: chain mlp convnet overhead
                                                  # startup pipeline
    taskset -c 0 python bench/kernels.py --blas-as-is   # keep the environment's OpenBLAS kernels

Every figure is measured in this run (best of several repetitions, after a warm
up that compiles), and each ratio compares numbers taken here:

1. `chain`: a fused chain of 8 cheap elementwise ops on 4M f32 (one kernel),
   against NumPy eager (the same ops one at a time) and against the bandwidth
   bound, a `np.copyto` of the same 16 MB (a copy reads and writes what the
   fused kernel reads and writes). Reported for the kernel alone and for the
   whole program run (feed checks, the host function, and the result written
   into an output array the runtime recycles once the caller drops it).
2. `mlp`: a training step (forward and backward from `df-autodiff`) of an MLP
   784-512-512-10 at batch 256, against NumPy eager (the same computation written
   by hand), the step's matrix products alone (six `np.dot` of the same shapes),
   and JAX `jit` and PyTorch eager when they are installed.
3. `convnet`: conv-relu-pool twice and a dense layer, batch 32, forward and
   backward, against the reference interpreter (NumPy per op).
4. `overhead`: a call of a program of 20 kernels on 8 floats each (20 softmaxes),
   whose kernels take next to nothing: what a run costs besides them (feed checks,
   the host function, its launches), per target.
5. compile time apart from run time: the lowering (xDSL passes and emission),
   numba's first compile, and a cached start: a fresh process that loads a
   20-kernel program from numba's cache and runs it once, with numba's own lazy
   loading and with the runtime's warm start (`runtime/warm_start.py`), and the
   llvm target's (its object code from the kernel store).
6. the graph pipeline without numba, per op, on random graphs of growing size, in
   a fresh process that imports only the compiler.

OpenBLAS (NumPy's, and SciPy's, which numba's `np.dot` calls) picks its kernels
by `OPENBLAS_CORETYPE`; our machines set it to Haswell (AVX2), which on their
AVX-512 CPU halves SGEMM's speed against XLA's own kernels. On CPUs with AVX-512
this script asks for SKYLAKEX before NumPy loads, for every peer alike (JAX does
not use OpenBLAS); `--blas-as-is` keeps the environment's choice. The first line
printed says which was used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from blas_choice import prefer_avx512_blas

BLAS_CHOICE = prefer_avx512_blas()

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "bench"))

from placement import convnet, mlp  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402

from dflow.driver.compilation.compiler import compile_module, write_modules  # noqa: E402
from dflow.frontend import Graph  # noqa: E402
from dflow.interpreters.df import run_function  # noqa: E402
from dflow.runtime import LoadedProgram, load_program  # noqa: E402

Array = Any


def best(run: Callable[[], object], repeat: int = 7, warm: bool = True) -> float:
    """The fastest of `repeat` timed calls, in seconds, after one untimed call (none
    without `warm`)."""
    if warm:
        run()
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def best_of_each(runs: dict[str, Callable[[], object]], rounds: int = 7) -> dict[str, float]:
    """The fastest timed call of each run, in seconds. The runs take turns, three
    calls each per round, so that a noisy spell of the machine (they last seconds)
    slows every contender of a round alike and their ratios stay fair."""
    for run in runs.values():
        run()
    fastest = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            fastest[name] = min(fastest[name], best(run, repeat=3, warm=False))
    return fastest


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f} ms"


TARGETS = ("numba", "llvm")


def compiled(
    module: ModuleOp, directory: Path, target: str = "numba"
) -> tuple[LoadedProgram, float]:
    """The program of `module` for `target` and the time the lowering and emission took
    (the llvm target's includes LLVM's compile, done as the module loads)."""
    started = time.perf_counter()
    write_modules(compile_module(module, target=target), directory)
    return load_program(directory), time.perf_counter() - started


def entry_of(program: LoadedProgram) -> str:
    """The program's (first) entry function."""
    return next(iter(program.parts[0].module.ENTRIES))


def inputs_of(program: LoadedProgram, seed: int = 0) -> list[Array]:
    rng = np.random.default_rng(seed)
    signature = program.signature(entry_of(program))["entry_arguments"]
    return [(rng.standard_normal(shape) * 0.1).astype(dtype) for shape, dtype in signature]


CHAIN_N = 1 << 22


def chain_module(n: int = CHAIN_N) -> ModuleOp:
    g = Graph()
    x = g.input("x", (n,))
    h = x * np.float32(1.5) + np.float32(0.25)
    h = (h.relu() - np.float32(0.5)).square() * np.float32(0.75)
    h = h.maximum(x) - x * np.float32(0.125)
    g.output(h)
    return g.module()


def chain_numpy(x: Array) -> Array:
    h = x * np.float32(1.5) + np.float32(0.25)
    h = np.square(np.maximum(h, np.float32(0)) - np.float32(0.5)) * np.float32(0.75)
    return np.maximum(h, x) - x * np.float32(0.125)


def bench_chain(work: Path) -> None:
    program, _ = compiled(chain_module(), work / "chain")
    llvm, _ = compiled(chain_module(), work / "chain-llvm", "llvm")
    (x,) = inputs_of(program)
    out = np.empty_like(x)
    module = program.parts[0].module
    kernels = [v for k, v in vars(module).items() if k.startswith("fused_")]
    for each in (program, llvm):
        np.testing.assert_allclose(each.run("main", [x])[0], chain_numpy(x), rtol=1e-6)
    copy = best(lambda: np.copyto(out, x))
    kernel = best(lambda: kernels[0](x, out))
    times = best_of_each(
        {
            "whole run [numba]": lambda: program.run("main", [x]),
            "whole run [llvm]": lambda: llvm.run("main", [x]),
        }
    )
    eager = best(lambda: chain_numpy(x))
    gbps = 2 * x.nbytes / copy / 1e9
    print(f"chain: 8 elementwise ops on {CHAIN_N} f32 ({len(kernels)} kernel)")
    print(f"  copy (bandwidth bound) {ms(copy)}   {gbps:.1f} GB/s")
    print(f"  fused kernel (numba)   {ms(kernel)}   {copy / kernel:.2f} of copy bandwidth")
    for name, whole in times.items():
        print(f"  {name:<22} {ms(whole)}   {copy / whole:.2f} of copy bandwidth")
    print(f"  NumPy eager            {ms(eager)}   numba kernel {eager / kernel:.2f}x faster")


def relu(x: Array) -> Array:
    return np.maximum(x, np.float32(0))


def mlp_numpy(
    x: Array, labels: Array, w0: Array, b0: Array, w1: Array, b1: Array, w2: Array, b2: Array
) -> list[Array]:
    """The MLP's loss and its gradients with respect to the weights and biases."""
    h0 = relu(x @ w0 + b0)
    h1 = relu(h0 @ w1 + b1)
    logits = h1 @ w2 + b2
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = shifted / shifted.sum(axis=1, keepdims=True)
    loss = -(labels * np.log(p)).sum(axis=1).mean()
    batch = x.shape[0]
    dlogits = (p * labels.sum(axis=1, keepdims=True) - labels) / np.float32(batch)
    dw2, db2 = h1.T @ dlogits, dlogits.sum(axis=0)
    dh1 = (dlogits @ w2.T) * (h1 > 0)
    dw1, db1 = h0.T @ dh1, dh1.sum(axis=0)
    dh0 = (dh1 @ w1.T) * (h0 > 0)
    dw0, db0 = x.T @ dh0, dh0.sum(axis=0)
    return [loss, dw0, db0, dw1, db1, dw2, db2]


def matmuls_only(x: Array, w0: Array, w1: Array, w2: Array) -> Callable[[], None]:
    """The step's six products (three forward, three weight gradients, two input
    gradients less the first layer's) with the step's shapes."""
    batch = x.shape[0]
    h0 = np.empty((batch, w0.shape[1]), np.float32)
    h1 = np.empty((batch, w1.shape[1]), np.float32)
    lg = np.empty((batch, w2.shape[1]), np.float32)
    dw0, dw1, dw2 = (np.empty_like(w) for w in (w0, w1, w2))

    def run() -> None:
        np.dot(x, w0, h0)
        np.dot(h0, w1, h1)
        np.dot(h1, w2, lg)
        np.dot(h1.T, lg, dw2)
        d1 = np.dot(lg, w2.T)
        np.dot(h0.T, d1, dw1)
        d0 = np.dot(d1, w1.T)
        np.dot(x.T, d0, dw0)

    return run


def peers(
    arguments: Sequence[Array],
    jax_loss: Callable[..., Any],
    weights: tuple[int, ...],
    torch_step: Callable[[Any, Sequence[Array]], Callable[[], object]],
) -> dict[str, Callable[[], object]]:
    """A step of JAX `jit` (the loss and its gradients by `weights`) and of PyTorch
    eager, those installed; each returns the loss and the gradients as NumPy arrays
    (PyTorch's as its step returns them)."""
    found: dict[str, Callable[[], object]] = {}
    try:
        import jax  # noqa: PLC0415

        step = jax.jit(jax.value_and_grad(jax_loss, argnums=weights))
        device_arguments = [jax.numpy.asarray(a) for a in arguments]

        def run_jax() -> list[Array]:
            loss, grads = jax.block_until_ready(step(*device_arguments))
            return [np.asarray(loss), *(np.asarray(g) for g in grads)]

        found["JAX jit"] = run_jax
    except ImportError:
        print("  (JAX is not installed: no JAX figure)")
    try:
        import torch  # noqa: PLC0415

        torch.set_num_threads(1)
        found["PyTorch eager"] = torch_step(torch, arguments)
    except ImportError:
        print("  (PyTorch is not installed: no PyTorch figure)")
    return found


def _jax_loss(x: Any, labels: Any, w0: Any, b0: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    import jax  # noqa: PLC0415

    h = jax.nn.relu(x @ w0 + b0)
    h = jax.nn.relu(h @ w1 + b1)
    logp = jax.nn.log_softmax(h @ w2 + b2)
    return -(labels * logp).sum(axis=1).mean()


def _torch_step(torch: Any, arguments: Sequence[Array]) -> Callable[[], None]:
    x, labels, *weights = (torch.from_numpy(a) for a in arguments)
    for w in weights:
        w.requires_grad_(True)

    def step() -> None:
        w0, b0, w1, b1, w2, b2 = weights
        h = torch.relu(x @ w0 + b0)
        h = torch.relu(h @ w1 + b1)
        loss = -(labels * torch.log_softmax(h @ w2 + b2, dim=1)).sum(dim=1).mean()
        for w in weights:
            w.grad = None
        loss.backward()

    return step


def bench_mlp(work: Path) -> None:
    programs: dict[str, LoadedProgram] = {}
    firsts: dict[str, tuple[float, float]] = {}
    for target in TARGETS:
        program, lowering = compiled(mlp(), work / f"mlp-{target}", target)
        arguments = inputs_of(program)
        x, labels, w0, _, w1, _, w2, _ = arguments
        labels[:] = np.eye(10, dtype=np.float32)[np.arange(x.shape[0]) % 10]
        started = time.perf_counter()
        results = program.run(entry_of(program), arguments)
        firsts[target] = (lowering, time.perf_counter() - started)
        for got, want in zip(results, mlp_numpy(*arguments), strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-5)
        programs[target] = program
    arguments = inputs_of(programs["numba"])
    x, labels, w0, _, w1, _, w2, _ = arguments
    labels[:] = np.eye(10, dtype=np.float32)[np.arange(x.shape[0]) % 10]
    others = peers(arguments, _jax_loss, (2, 3, 4, 5, 6, 7), _torch_step)
    compiled_steps = {
        f"compiled [{t}]": (lambda p=p: p.run(entry_of(p), arguments)) for t, p in programs.items()
    }
    times = best_of_each(
        {
            **compiled_steps,
            "matmuls": matmuls_only(x, w0, w1, w2),
            "NumPy eager": lambda: mlp_numpy(*arguments),
            **others,
        }
    )
    products, eager = times["matmuls"], times["NumPy eager"]
    print("mlp: training step 784-512-512-10, batch 256")
    for target, (lowering, first) in firsts.items():
        print(f"  [{target}] lowering + emission {ms(lowering)}, first run {ms(first)}")
    print(f"  matmuls alone          {ms(products)}")
    print(f"  NumPy eager            {ms(eager)}")
    for name in compiled_steps:
        step = times[name]
        print(f"  {name:<22} {ms(step)}   step / matmuls {step / products:.2f}, ", end="")
        print(", ".join(f"/ {peer} {step / times[peer]:.2f}" for peer in ["NumPy eager", *others]))
    for name in others:
        print(f"  {name:<22} {ms(times[name])}")


def _jax_convnet_loss(image: Any, f1: Any, f2: Any, dense: Any) -> Any:
    import jax  # noqa: PLC0415

    def block(h: Any, f: Any) -> Any:
        h = jax.lax.conv_general_dilated(h, f, (1, 1), ((1, 1), (1, 1)))  # NCHW, OIHW
        h = jax.nn.relu(h)
        return jax.lax.reduce_window(
            h, -jax.numpy.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"
        )

    h = block(block(image, f1), f2)
    logits = h.reshape(h.shape[0], -1) @ dense
    return (logits * logits).mean() * 0.5


def _torch_convnet_step(torch: Any, arguments: Sequence[Array]) -> Callable[[], list[Array]]:
    image, *weights = (torch.from_numpy(a) for a in arguments)
    for w in weights:
        w.requires_grad_(True)
    functional = torch.nn.functional

    def step() -> list[Array]:
        f1, f2, dense = weights
        h = functional.max_pool2d(torch.relu(functional.conv2d(image, f1, padding=1)), 2)
        h = functional.max_pool2d(torch.relu(functional.conv2d(h, f2, padding=1)), 2)
        logits = h.reshape(h.shape[0], -1) @ dense
        loss = (logits * logits).mean() * 0.5
        for w in weights:
            w.grad = None
        loss.backward()
        return [loss.detach().numpy(), *(w.grad.numpy() for w in weights)]

    return step


def bench_convnet(work: Path) -> None:
    """The step against the interpreter and the peers, every result checked
    against the interpreter's first."""
    module = convnet()
    programs = {t: compiled(convnet(), work / f"convnet-{t}", t)[0] for t in TARGETS}
    program = programs["numba"]
    entry = entry_of(program)
    arguments = inputs_of(program)
    reference = run_function(module, entry, arguments)
    found = peers(arguments, _jax_convnet_loss, (1, 2, 3), _torch_convnet_step)
    steps = {f"compiled [{t}]": (lambda p=p: p.run(entry, arguments)) for t, p in programs.items()}
    for name, run in {**steps, **found}.items():
        for got, want in zip(run(), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-4, err_msg=name)
    times = best_of_each(
        {
            **steps,
            "interpreter (NumPy)": lambda: run_function(module, entry, arguments),
            **found,
        },
        rounds=5,
    )
    print("convnet: conv-relu-pool x2 + dense, batch 32, forward and backward")
    for name in steps:
        step = times.pop(name)
        ratios = ", ".join(f"/ {peer} {step / elapsed:.2f}" for peer, elapsed in times.items())
        print(f"  {name:<22} {ms(step)}   {ratios}")
    for name, elapsed in times.items():
        print(f"  {name:<22} {ms(elapsed)}")


def twenty_softmaxes() -> ModuleOp:
    """20 kernels that take next to nothing: softmaxes of 8 floats, one after another."""
    g = Graph()
    h = g.input("x", (8,))
    for _ in range(20):
        h = h.softmax(0)
    g.output(h)
    return g.module()


def bench_overhead(work: Path) -> None:
    """The time of a call of a program whose 20 kernels take next to nothing."""
    programs = {t: compiled(twenty_softmaxes(), work / f"overhead-{t}", t)[0] for t in TARGETS}
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    runs = {f"run [{t}]": (lambda p=p: p.run("main", [x])) for t, p in programs.items()}
    times = best_of_each(runs, rounds=20)
    kernels = len(programs["numba"].parts[0].module.KERNEL_ARGUMENTS)
    print(f"overhead: a call of a {kernels}-kernel program on 8 floats (issue 33: <= 10 us)")
    for name, seconds in times.items():
        print(f"  {name:<22} {seconds * 1e6:9.1f} us")


def twenty_kernels() -> ModuleOp:
    """20 kernels: a chain of alternating matmuls and reductions-free epilogues."""
    g = Graph()
    h = g.input("x", (64, 64))
    w = g.input("w", (64, 64))
    for _ in range(10):
        h = (h @ w).tanh()
        h = h.transpose([1, 0])
    g.output(h)
    return g.module()


STARTUP = """
import time, sys
started = time.perf_counter()
import numpy as np
from dflow.runtime import load_program
program = load_program(sys.argv[1], warm_start=sys.argv[2] == "warm")
x = np.ones((64, 64), np.float32)
program.run("main", [x, x])
print(time.perf_counter() - started)
"""


def bench_startup(work: Path) -> None:
    directory, llvm = work / "twenty", work / "twenty-llvm"
    write_modules(compile_module(twenty_kernels()), directory)
    write_modules(compile_module(twenty_kernels(), target="llvm"), llvm)
    kernels = (directory / "cpu_0.py").read_text().count("@_kernel(")
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}

    def start(mode: str, folder: Path = directory) -> float:
        command = [sys.executable, "-c", STARTUP, str(folder), mode]
        done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
        return float(done.stdout)

    cold, cold_llvm = start("warm"), start("warm", llvm)
    rounds = [(start("lazy"), start("warm"), start("warm", llvm)) for _ in range(7)]
    lazy, warm, cached_llvm = (min(times) for times in zip(*rounds, strict=True))
    print(f"startup: a fresh process loads and runs a {kernels}-kernel program (best of 7)")
    print(f"  first process (numba compiles)     {ms(cold)}")
    print(f"  cached, numba's lazy loading       {ms(lazy)}")
    print(f"  cached, dflow's warm start         {ms(warm)}   goal < 500 ms")
    print(f"  first process (LLVM compiles)      {ms(cold_llvm)}")
    print(f"  cached, llvm target                {ms(cached_llvm)}")


PIPELINE = """
import sys, time
from graphgen import random_graph
from dflow.driver.compilation.compiler import compile_module
sizes = [int(a) for a in sys.argv[1:]]
best, counts = {}, {}
compile_module(random_graph(3, min_ops=250, dtype="f32"))  # warm-up, not measured
for _ in range(5):  # rounds over all sizes: a noisy spell spoils one round, not a size
    for ops in sizes:
        module = random_graph(7, min_ops=ops, dtype="f32")  # lowering changes it
        counts[ops] = sum(1 for _ in module.walk()) - 2
        started = time.perf_counter()
        compile_module(module)
        best[ops] = min(best.get(ops, float("inf")), time.perf_counter() - started)
for ops in sizes:
    print(counts[ops], best[ops])
"""


def bench_pipeline() -> None:
    """In a fresh process that imports only the compiler, as `dflow compile` runs,
    so that what the other benchmarks leave (JAX's and numba's threads and heaps)
    cannot weigh on it, after one unmeasured compile of another graph. The machine
    has noisy spells of seconds (up to 1.8x slower), so each size is timed once per
    round over all sizes, five rounds, and its best kept."""
    print("pipeline: lowering + emission without numba, per op (random graphs, best of 5)")
    paths = (ROOT, ROOT / "tests", ROOT / "tests" / "support")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}
    environment.pop("DFLOW_VERIFY", None)  # as users run it: the tests' check of the output off
    command = [sys.executable, "-c", PIPELINE, "250", "500", "1000", "2000", "5000"]
    with subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            count, elapsed = int(line.split()[0]), float(line.split()[1])
            print(f"  {count:5d} ops  {ms(elapsed)}   {elapsed / count * 1e6:7.1f} us/op")
    if child.returncode:
        raise SystemExit(f"bench/kernels.py: the pipeline benchmark failed ({child.returncode})")


def main() -> None:
    benches: dict[str, Callable[[Path], None]] = {
        "chain": bench_chain,
        "mlp": bench_mlp,
        "convnet": bench_convnet,
        "overhead": bench_overhead,
        "startup": bench_startup,
        "pipeline": lambda _: bench_pipeline(),
    }
    chosen = sys.argv[1:] or list(benches)
    unknown = sorted(set(chosen) - set(benches))
    if unknown:
        sys.exit(
            f"bench/kernels.py: unknown benchmark {', '.join(unknown)}"
            f" (choose from {', '.join(benches)})"
        )
    print(BLAS_CHOICE)
    with tempfile.TemporaryDirectory() as scratch:
        for name in chosen:
            benches[name](Path(scratch))


if __name__ == "__main__":
    main()
