"""Analyses several passes share, apart from the passes that use them (as xDSL's
`analysis/`): liveness and in-place sharing, packing, the memory plan of a schedule
and of a `df` function, the cost model, pass statistics and pass failures."""
