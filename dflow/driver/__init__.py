"""The driver, on top of every other layer, in four rooms that import downward only
(`tests/test_layers.py`): `loading` (a program in, checked), `compilation` (devices,
the lowering, the cache, ranks, the interpreter), `tools` (opt, bisect, reduce, viz,
plan, profiling) and `frontdoors` (the command line and the Python API). Beside them,
`errors` (the one-line `DflowError`) and `universe` (the `xdsl-opt` plugin)."""
