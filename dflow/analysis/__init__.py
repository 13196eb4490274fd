"""Analyses several passes share, apart from the passes that use them (as xDSL's
`analysis/`): memory planning (`memory/`: liveness and in-place sharing, packing,
the memory plan of a schedule and of a `df` function, the orders of least memory)
and the cost model. Analyses raise their own errors (`memory.liveness.PlanError`),
never a pass's failure: each pass names itself around them (`dflow/passes/`)."""
