"""The compile path: devices chosen and placed (`devices`), the lowering and the
emitted modules (`compiler`), the private on-disk cache (`cache`), `--time`
(`timing`), each MPI rank's part (`ranks`), and the other way to run a program, the
reference interpreter, one thread per device (`interpreted`)."""
