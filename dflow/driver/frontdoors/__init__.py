"""The ways in: the `dflow` command line (`cli`, whose parser imports no compiler;
`commands`, what each command does; `cached_run`, the `dflow run` handler), and the
Python API (`api`: `dflow.compile` and `Program`; `jit`: `dflow.jit`, `grad`). Each
checks what the user gave and hands it to the loading, the compile path or a tool."""
