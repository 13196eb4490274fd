"""Names of the discardable attributes that passes attach to `df` ops."""

DEVICE = "df.device"
"""String `cpu:N` or `gpu:N`: where the op runs."""
COLOCATE = "df.colocate"
"""String: ops with the same group name run on one device."""
RECOMPUTE = "df.recompute"
"""Unit: the op may be recomputed next to its backward users."""
BACKWARD = "df.backward"
"""Unit: the op belongs to a gradient computation."""
RECOMPUTED = "df.recomputed"
"""String: set by `df-recompute` on each clone, naming its recomputation group
(`<function>.r<N>`), so that `cse` never merges a clone back into its original."""
