"""The lowering: from a graph of `df` ops to kernels and host functions, each step a
pass whose output can be printed, checked and stopped at:

    df-inline        calls inlined (one arena per function)          inline.py
    df-partition     one nested module per device, df.send/df.recv   partition.py
    df-fuse          fusion groups as df.fused                       fuse.py
    df-bufferize     each group or op outlined into a kernel         bufferize.py, kernels/
    df-plan-buffers  arena offsets from the memory plan              plan_buffers.py
    df-collapse-loops  CPU loops in the shape LLVM vectorizes        collapse_loops.py
    df-lower-host    each graph function a dfrt host function        lower_host.py

The driver runs them as `lowering_pipeline()` (with `df-prune` from `transforms`
before fusing, and `df-schedule`, which orders the kernels for the least memory,
before planning), after placement; `backend` prints the result.
"""
