"""`df-recompute`: forward values recomputed for the backward pass instead of kept.

`groups` holds Grappler's candidate groups (hints and heuristic modes), `budget` the
search for the plan that meets a memory budget, `pass_` the pass and its report.
"""

from dflow.transforms.recompute.pass_ import RecomputePass

__all__ = ["RecomputePass"]
