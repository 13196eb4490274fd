"""xDSL interpreter functions for dflow's dialects: `df` (the reference semantics of
every graph-level program, the oracle of the tests)."""
