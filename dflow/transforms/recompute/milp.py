"""An integer program for budget mode, in the spirit of Checkmate (Jain et al. 2020).

Checkmate decides, for every stage of a fixed topological order, what is computed
and what is kept. Our rewrite recomputes a forward value at most once, so the
program is smaller: for each candidate op `i` a binary `x[i]` (recompute it for the
backward pass) and binaries `c[i, t]` (its clone goes just before step `t`), over a
time axis of two slots per step (`2t`: the clones inserted before step `t`;
`2t + 1`: step `t` itself). With `P[i, t]` the clones of `i` placed before steps up
to `t`, and `Q[i, s]` those placed at slot `s` or later:

- one clone per recomputed value: `P[i, last] = x[i]`; before each backward reader
  `r` (`P[i, r] >= x[i]`) and before the clone of each recomputed forward reader `u`
  (`P[i, t] >= P[u, t] + x[i] - 1` for every `t`);
- the original of `i` is live over its forward uses; after them, until its last
  backward reader when kept (`live >= 1 - x[i]`), and until the clone of a forward
  reader that reads it (`live >= Q[u, s] - x[i]`);
- the clone of `i` is live from its slot to its last reader (`live >= P[i, s/2]`
  while a backward reader remains, `live >= P[i, s/2] + Q[u, s] - 1` for the clone
  of a reader `u`);
- at every slot the bytes live, with those of every other value (whose liveness no
  plan changes), are within the budget.

The objective is the recomputed flops. In-place sharing is left out (it only lowers
the real peak), so the program is conservative; the plan it finds goes to the
planner's model like every other proposal (`budget.py`), with its clones placed
just in time, and is judged there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp  # pyright: ignore[reportUnknownVariableType]
from scipy.sparse import coo_array

from dflow.analysis.memory.liveness import Schedule, align, live_intervals

MILP_STEP_LIMIT = 80
"""The program is built only for functions of at most this many ops."""

TIME_LIMIT_SECONDS = 10.0
"""HiGHS stops there and returns the best plan it has found."""

Terms = dict[int, float]

_constraint: Any = LinearConstraint
"""(SciPy's stubs type the bounds as scalars; they take arrays.)"""


@dataclass
class SparseProgram:
    """A mixed-integer program in [0, 1] variables, built one row at a time."""

    integral: list[int] = field(default_factory=list[int])
    entries: list[tuple[int, int, float]] = field(default_factory=list[tuple[int, int, float]])
    lower: list[float] = field(default_factory=list[float])
    upper: list[float] = field(default_factory=list[float])

    def variable(self, binary: bool) -> int:
        self.integral.append(int(binary))
        return len(self.integral) - 1

    def at_least(self, terms: Terms, bound: float) -> None:
        self._row(terms, bound, np.inf)

    def at_most(self, terms: Terms, bound: float) -> None:
        self._row(terms, -np.inf, bound)

    def equal(self, terms: Terms, value: float) -> None:
        self._row(terms, value, value)

    def _row(self, terms: Terms, lower: float, upper: float) -> None:
        row = len(self.lower)
        self.entries.extend((row, column, value) for column, value in terms.items())
        self.lower.append(lower)
        self.upper.append(upper)

    def minimize(self, cost: Terms) -> np.ndarray[Any, Any] | None:
        """The best solution found within the time limit, or None."""
        objective = np.zeros(len(self.integral))
        for column, value in cost.items():
            objective[column] = value
        rows, columns, values = zip(*self.entries, strict=True) if self.entries else ((), (), ())
        matrix = coo_array((values, (rows, columns)), shape=(len(self.lower), len(self.integral)))
        result: Any = milp(
            objective,
            constraints=_constraint(matrix, np.array(self.lower), np.array(self.upper)),
            integrality=np.array(self.integral),
            bounds=Bounds(0, 1),
            options={"time_limit": TIME_LIMIT_SECONDS},
        )
        return None if result.x is None else np.asarray(result.x)


def combine(*parts: Terms, scale: Sequence[float] = ()) -> Terms:
    """The sum of `parts`, each multiplied by its `scale` (1 by default)."""
    total: Terms = {}
    for index, part in enumerate(parts):
        factor = scale[index] if index < len(scale) else 1.0
        for column, value in part.items():
            total[column] = total.get(column, 0.0) + factor * value
    return total


@dataclass(frozen=True)
class ProgramInput:
    """What the program needs to know of a function (from `budget.RecomputeModel`)."""

    schedule: Schedule
    """The function as it is, one step per op."""
    candidates: Sequence[int]
    readers: Sequence[Sequence[int]]
    targets: frozenset[int]
    """Steps of backward ops."""
    writes: Sequence[Sequence[int]]
    """Values each step writes."""
    flops: Sequence[int]


class BudgetProgram:
    """The integer program of one function under `budget` (see the module docstring)."""

    def __init__(self, given: ProgramInput, budget: int):
        self.given = given
        self.steps = len(given.schedule.steps)
        self.slots = 2 * self.steps
        self.program = SparseProgram()
        self.x = {i: self.program.variable(True) for i in given.candidates}
        self.clones = {
            i: {t: self.program.variable(True) for t in range(i + 1, self.steps)}
            for i in given.candidates
        }
        self.size = {
            i: sum(align(given.schedule.values[v].size) for v in given.writes[i])
            for i in given.candidates
        }
        self.memory: list[Terms] = [{} for _ in range(self.slots)]
        self.room = [float(budget) - b for b in self._fixed_bytes()]

    def _fixed_bytes(self) -> list[int]:
        """Bytes at each slot of the values no plan changes."""
        planned = {v for i in self.given.candidates for v in self.given.writes[i]}
        fixed = [0] * self.slots
        values = self.given.schedule.values
        for value, (start, end) in live_intervals(self.given.schedule).items():
            if value in planned:
                continue
            for slot in range(2 * start + 1, 2 * end + 2):
                fixed[slot] += align(values[value].size)
        return fixed

    def placed_by(self, i: int, step: int) -> Terms:
        return {v: 1.0 for t, v in self.clones[i].items() if t <= step}

    def placed_from(self, i: int, slot: int) -> Terms:
        return {v: 1.0 for t, v in self.clones[i].items() if 2 * t >= slot}

    def forward_readers(self, i: int) -> list[int]:
        return [r for r in self.given.readers[i] if r not in self.given.targets]

    def build(self) -> None:
        for i in self.given.candidates:
            self.program.equal(combine(self.placed_by(i, self.steps), {self.x[i]: -1.0}), 0.0)
            self.order_clones(i)
            self.original_liveness(i)
            self.clone_liveness(i)
        for slot, terms in enumerate(self.memory):
            self.program.at_most(terms, self.room[slot])

    def order_clones(self, i: int) -> None:
        for reader in self.given.readers[i]:
            if reader in self.given.targets:
                self.program.at_least(combine(self.placed_by(i, reader), {self.x[i]: -1.0}), 0.0)
            elif reader in self.x:
                for step in range(reader + 1, self.steps):
                    terms = combine(
                        self.placed_by(i, step),
                        self.placed_by(reader, step),
                        {self.x[i]: -1.0},
                        scale=(1, -1),
                    )
                    self.program.at_least(terms, -1.0)

    def indicator(self, i: int, slot: int) -> int:
        """A continuous variable for `i`'s bytes live at `slot`, counted in memory."""
        column = self.program.variable(False)
        self.memory[slot][column] = float(self.size[i])
        return column

    def original_liveness(self, i: int) -> None:
        forward_end = max((2 * r + 1 for r in self.forward_readers(i)), default=2 * i + 1)
        backward_end = max(
            (2 * r + 1 for r in self.given.readers[i] if r in self.given.targets), default=-1
        )
        for slot in range(2 * i + 1, forward_end + 1):
            self.room[slot] -= self.size[i]
        clone_readers = [u for u in self.forward_readers(i) if u in self.x]
        for slot in range(forward_end + 1, self.slots):
            needs = [self.placed_from(u, slot) for u in clone_readers]
            if slot > backward_end and not any(needs):
                continue
            live = self.indicator(i, slot)
            if slot <= backward_end:
                self.program.at_least({live: 1.0, self.x[i]: 1.0}, 1.0)
            for need in needs:
                self.program.at_least(
                    combine({live: 1.0, self.x[i]: 1.0}, need, scale=(1, -1)), 0.0
                )

    def clone_liveness(self, i: int) -> None:
        target_end = max(
            (2 * r + 1 for r in self.given.readers[i] if r in self.given.targets), default=-1
        )
        clone_readers = [u for u in self.forward_readers(i) if u in self.x]
        for slot in range(2 * (i + 1), self.slots):
            placed = self.placed_by(i, slot // 2)
            needs = [self.placed_from(u, slot) for u in clone_readers]
            if slot > target_end and not any(needs):
                continue
            live = self.indicator(i, slot)
            if slot <= target_end:
                self.program.at_least(combine({live: 1.0}, placed, scale=(1, -1)), 0.0)
            for need in needs:
                self.program.at_least(combine({live: 1.0}, placed, need, scale=(1, -1, -1)), -1.0)

    def solve(self) -> frozenset[int] | None:
        """The candidates to recompute, or None when no plan fits the program."""
        self.build()
        cost = {self.x[i]: float(self.given.flops[i]) for i in self.given.candidates}
        solution = self.program.minimize(cost)
        if solution is None:
            return None
        return frozenset(i for i in self.given.candidates if solution[self.x[i]] > 0.5)
