"""dflow: an MLIR-style multi-level compiler for tensor dataflow graphs, on xDSL.

Everything dflow installs lives in this one package, in layers that import
downward only (see `docs/architecture.md`): `dialects` (the `df` and `dfrt`
dialects), `analysis` and `interpreters`, `transforms` and `lowering` (the
passes), `backend` (the numba target), `driver` (command line, pipelines, the
xdsl-opt plugin); `runtime` runs emitted modules and imports no compiler code.
"""
