"""dflow's vectorized `exp`, `log`, `tanh` against NumPy, JAX and libm.

    taskset -c 0 python bench/vmath.py [--exhaustive]

Printed, all measured in this run on one core (best of seven interleaved rounds):

1. each function of `dflow/runtime/library/vmath.py` in a numba loop over 4M
   float32 and float64 values in (0.1, 20), against NumPy's own (`np.exp(x, out=)`)
   and against the same loop calling libm (`math.exp`: what kernels did before);
2. whole calls of compiled programs that real models contain: the chain
   `mul, add, tanh, mul, sub, abs, add, relu` on 4M float32 and a softmax over the
   rows of a 256x1000 float32 (alone, and after a `tanh`), against NumPy eager and
   JAX `jit` (where JAX is installed);
3. with `--exhaustive`, the largest error in ulps of each float32 function over
   all 2^32 inputs (about a minute each).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import numba
import numpy as np
from numpy.typing import NDArray

import dflow
from dflow.runtime.library import vmath

Array = NDArray[Any]
N = 1 << 22
LIBM = {"exp": math.exp, "log": math.log, "tanh": math.tanh}
NUMPY = {"exp": np.exp, "log": np.log, "tanh": np.tanh}


def loop_of(function: Callable[[Any], Any]) -> Callable[[Array, Array], None]:
    @numba.njit(error_model="numpy")
    def loop(x: Array, out: Array) -> None:
        for i in range(x.size):
            out[i] = function(x[i])

    return loop


def best_of_each(runs: dict[str, Callable[[], object]], rounds: int = 7) -> dict[str, float]:
    """Seconds of each run's fastest call, the runs taking turns every round."""
    for run in runs.values():
        run()
    fastest = dict.fromkeys(runs, math.inf)
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            fastest[name] = min(fastest[name], time.perf_counter() - start)
    return fastest


def functions() -> None:
    columns = ("vmath ms", "NumPy ms", "libm ms", "/NumPy", "/libm")
    print(f"{'function':<14}", *(f"{c:>9}" for c in columns))
    x64 = np.random.default_rng(0).uniform(0.1, 20, N)
    for name in ("exp", "log", "tanh"):
        for dtype in (np.float32, np.float64):
            x = x64.astype(dtype)
            out = np.empty_like(x)
            ours = loop_of(getattr(vmath, f"{name}_f{np.dtype(dtype).itemsize * 8}"))
            libm = loop_of(LIBM[name])
            numpy = NUMPY[name]
            t = best_of_each(
                {
                    "vmath": lambda o=ours, x=x, out=out: o(x, out),
                    "numpy": lambda f=numpy, x=x, out=out: f(x, out=out),
                    "libm": lambda f=libm, x=x, out=out: f(x, out),
                }
            )
            label = f"{name} {np.dtype(dtype).name}"
            v, n, m = t["vmath"] * 1e3, t["numpy"] * 1e3, t["libm"] * 1e3
            print(f"{label:<14}", *(f"{f:9.2f}" for f in (v, n, m, v / n, v / m)))


def tanh_chain(x: Any, tanh: Callable[[Any], Any], relu: Callable[[Any], Any]) -> Any:
    h = tanh(x * np.float32(1.5) + np.float32(0.25))
    return relu(abs(h * np.float32(0.75) - x) + np.float32(0.5))


def softmax_numpy(x: Array) -> Array:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def programs() -> None:
    rng = np.random.default_rng(1)
    chain_x = rng.standard_normal(N).astype(np.float32)
    rows = rng.standard_normal((256, 1000)).astype(np.float32)
    cases: dict[str, tuple[Callable[[Any], Any], Callable[[Array], Array], Array]] = {
        "tanh chain, 4M f32": (
            lambda x: tanh_chain(x, dflow.tanh, dflow.relu),
            lambda x: tanh_chain(x, np.tanh, lambda h: np.maximum(h, np.float32(0))),
            chain_x,
        ),
        "softmax 256x1000 f32": (lambda x: dflow.softmax(x, axis=1), softmax_numpy, rows),
        "tanh → softmax": (
            lambda x: dflow.softmax(dflow.tanh(x), axis=1),
            lambda x: softmax_numpy(np.tanh(x)),
            rows,
        ),
    }
    peers = _jax_versions()
    columns = ("dflow ms", "NumPy ms", "JAX ms", "/NumPy", "/JAX")
    print(f"\n{'whole call':<22}", *(f"{c:>9}" for c in columns))
    for label, (ours, numpy, x) in cases.items():
        program = dflow.jit(ours)
        np.testing.assert_allclose(program(x), numpy(x), rtol=2e-6, atol=2e-6)
        runs: dict[str, Callable[[], object]] = {
            "dflow": lambda p=program, x=x: p(x),
            "numpy": lambda f=numpy, x=x: f(x),
        }
        if label in peers:
            runs["jax"] = lambda f=peers[label], x=x: f(x).block_until_ready()
        t = best_of_each(runs)
        d, n = t["dflow"] * 1e3, t["numpy"] * 1e3
        j = t.get("jax", math.nan) * 1e3
        print(f"{label:<22}", *(f"{f:9.2f}" for f in (d, n, j, d / n, d / j)))


def _jax_versions() -> dict[str, Callable[[Array], Any]]:
    try:
        import jax  # noqa: PLC0415
        import jax.numpy as jnp  # noqa: PLC0415
    except ImportError:
        return {}
    return {
        "tanh chain, 4M f32": jax.jit(lambda x: tanh_chain(x, jnp.tanh, jax.nn.relu)),
        "softmax 256x1000 f32": jax.jit(lambda x: jax.nn.softmax(x, axis=1)),
        "tanh → softmax": jax.jit(lambda x: jax.nn.softmax(jnp.tanh(x), axis=1)),
    }


def exhaustive() -> None:
    """The largest error in ulps of each float32 function over every input."""
    print("\nfloat32, all 2^32 inputs: largest error in ulps (bound)")
    chunk = 1 << 26
    for name in ("exp", "log", "tanh"):
        loop = loop_of(getattr(vmath, f"{name}_f32"))
        worst = 0.0
        for start in range(0, 1 << 32, chunk):
            x = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
            out = np.empty_like(x)
            loop(x, out)
            with np.errstate(all="ignore"):
                exact = NUMPY[name](x.astype(np.float64))
            rounded = exact.astype(np.float32)
            keep = np.isfinite(rounded) & np.isfinite(out) & (rounded != 0)
            spacing = np.spacing(np.abs(rounded[keep])).astype(np.float64)
            errors = np.abs(out[keep].astype(np.float64) - exact[keep]) / spacing
            worst = max(worst, float(errors.max(initial=0.0)))
        print(f"  {name:<5} {worst:.3f} ({vmath.ERROR_BOUNDS[(name, 'float32')]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--exhaustive", action="store_true", help="every float32 input")
    args = parser.parse_args()
    print(f"one core: {sorted(os.sched_getaffinity(0))}", file=sys.stderr)
    functions()
    programs()
    if args.exhaustive:
        exhaustive()


if __name__ == "__main__":
    main()
