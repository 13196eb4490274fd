"""`df-place-devices`: device placement of `df` ops.

`place_devices` holds the pass and the rules; `colocation` the union-find groups
and their constraint chains; `heft` the HEFT timeline of the ops on the devices
under the cost model (`analysis/cost_model.py`); `report` the JSON report and the
stats table. Which ops a device can run is its target's to say
(`backend/numba/capabilities.py`).
"""

from dflow.transforms.placement.place_devices import PlaceDevicesPass

__all__ = ["PlaceDevicesPass"]
