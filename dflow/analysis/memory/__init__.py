"""Memory planning, IR-free where it can be (as NNVM's PlanMemory): a function's ops
as a schedule of steps (`liveness.py`: what each step reads and writes, liveness,
in-place sharing and views, the lower bound; `slices.py`: values placed inside one
another), the concatenations made views (`concat_views.py`), the packing of buffers into one arena
(`packing.py`), the plan of a schedule (`memory_plan.py`) and of a `df` function
(`function_schedule.py`: the only module here that reads IR), and the orders of the
ops that lower the bound (`scheduling.py`'s heuristics, `exact_schedule.py`'s search,
`order_choice.py`'s choice among them). Failures are `liveness.PlanError`s, without
any pass's name: the pass that asked (`df-plan-buffers`, `df-schedule`,
`df-recompute`, `dflow plan`) names itself.
"""
