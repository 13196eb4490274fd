"""`df-place-devices`: device placement of `df` ops.

`pass_` holds the pass and the rules; `colocation` the union-find groups and
their constraint chains; `cost_model` the time of ops and transfers;
`schedule` HEFT list scheduling; `report` the JSON report and the stats table.
"""

from dflow.transforms.placement.pass_ import PlaceDevicesPass

__all__ = ["PlaceDevicesPass"]
