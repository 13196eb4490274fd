"""The driver: the `dflow` command line, the compile cache, pipelines, multi-device
runs and the `xdsl-opt` plugin (`universe`), on top of every other layer."""
