"""Generated programs against the interpreter, as many as asked.

    python bench/stress.py --count 10000 --seed 0 [--modes interpret,optimize,compiled,devices]

Runs the programs of seeds `seed .. seed+count-1` from `tests/support/programgen.py` through
the interpreter (the oracle) and each mode, and prints one line per failure (seed,
mode, the program in brief, what differed), the failures and programs per mode, and
last `N passed, M failed` (a program passes when every mode agrees). Each failing
program is written to `--out` (default `stress-failures/`) as `seed-N.mlir`, with its
inputs as `seed-N.npz`, for `dflow run seed-N.mlir --inputs seed-N.npz`.

Every program's kernels are new, so numba compiles into a private cache that is
removed at the end (a long run would otherwise fill the shared one).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

SCRATCH = Path(tempfile.mkdtemp(prefix="dflow-stress-"))
os.environ["NUMBA_CACHE_DIR"] = str(SCRATCH / "numba")  # before numba is imported
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import numpy as np  # noqa: E402
from programgen import MODES, Outcome, Program, check, generate  # noqa: E402


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="programs to run")
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}"
    )
    parser.add_argument("--out", type=Path, default=Path("stress-failures"))
    arguments = parser.parse_args()
    unknown = set(arguments.modes.split(",")) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}; choose among {', '.join(MODES)}")
    return arguments


def _save(program: Program, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"seed-{program.seed}.mlir"
    path.write_text(f"// {program.describe()}\n{program.module}\n")
    names = {f"a{i}": array for i, array in enumerate(program.inputs)}
    np.savez(out / f"seed-{program.seed}.npz", **names)  # type: ignore[arg-type]
    return path


def _report(outcome: Outcome, out: Path) -> None:
    path = _save(outcome.program, out)
    for failure in outcome.failures:
        print(f"FAIL {outcome.program.describe()} [{failure.mode}] {failure.message} ({path})")


def main() -> int:
    arguments = _arguments()
    warnings.filterwarnings("ignore", "Mean of empty slice")  # NumPy's, in the interpreter
    modes = arguments.modes.split(",")
    failed_modes: Counter[str] = Counter()
    passed = failed = 0
    start = time.monotonic()
    try:
        for seed in range(arguments.seed, arguments.seed + arguments.count):
            outcome = check(generate(seed), modes, SCRATCH / "programs")
            if outcome.failures:
                failed += 1
                failed_modes.update({f.mode for f in outcome.failures})
                _report(outcome, arguments.out)
            else:
                passed += 1
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    total = passed + failed
    for mode in modes:
        print(f"{mode}: {total - failed_modes[mode]} of {total} programs agree")
    print(f"{time.monotonic() - start:.0f} s, seeds {arguments.seed}..{arguments.seed + total - 1}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
