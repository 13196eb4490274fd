"""`df-autodiff`: the gradient of a scalar loss as a new function (reverse mode).

`autodiff` holds the pass and the sweep; `rules` one gradient rule per op family.
"""

from dflow.transforms.autodiff.autodiff import AutodiffPass, differentiate

__all__ = ["AutodiffPass", "differentiate"]
