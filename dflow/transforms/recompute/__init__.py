"""`df-recompute`: forward values recomputed for the backward pass instead of kept.

`groups` holds Grappler's candidate groups (hints and heuristic modes), `budget` the
search for the plan that meets a memory budget (`milp` its integer program),
`recompute` the pass and its report.
"""

from dflow.transforms.recompute.recompute import RecomputePass

__all__ = ["RecomputePass"]
