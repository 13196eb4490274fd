"""`df-autodiff`: the gradient of a scalar loss as a new function (reverse mode).

`pass_` holds the pass and the sweep; `rules` one gradient rule per op family.
"""

from dflow.transforms.autodiff.pass_ import AutodiffPass, differentiate

__all__ = ["AutodiffPass", "differentiate"]
