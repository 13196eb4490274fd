#!/usr/bin/env bash
# Every check of the project, in the order CI runs them: lint, format, types,
# the lit/FileCheck tests, then pytest (whose closing line is the summary).
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/.numba_cache}"
# the compiled programs and kernels of the tests stay in the checkout, not ~/.cache/dflow
export DFLOW_CACHE_DIR="${DFLOW_CACHE_DIR:-$PWD/.dflow_cache}"
# the compiler checks its own output (the lowered module) in tests: dflow.driver.compilation.compiler
export DFLOW_VERIFY="${DFLOW_VERIFY:-1}"
ruff check .
ruff format --check .
# pyright checks against the interpreter that runs the tests (where xDSL and numba are
# installed), whichever environment pyright itself was installed in.
pyright --project pyproject.toml --pythonpath "$(python3 -c 'import sys; print(sys.executable)')"
lit -sv tests/filecheck
# the suites of compiled programs again on the numba target (the whole suite runs on the
# default, llvm): ops, programs, the runtime, generated programs, the zoo's models and
# the CLI fuzzer
DFLOW_TARGET=numba python3 -m pytest -rs tests/test_compiled_ops.py tests/test_compiled_programs.py \
    tests/test_compiled_runtime.py tests/test_generated.py tests/test_zoo.py tests/test_fuzz_cli.py
# -rs: every skipped test with its reason; --durations: the 20 slowest, to keep the suite's
# time in view (.ci/run's budget: 25 minutes on 2 cores, the fresh install included)
python3 -m pytest -rs --durations=20
