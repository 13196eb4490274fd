"""Recurrent ONNX ops: `RNN`, `GRU` and `LSTM`, unrolled over their static sequence.

Each direction of a layer becomes, in df ops:
- the input projection of every time step at once, one product
  `X[seq·batch, input] @ Wᵀ` plus both biases (`Wb + Rb`, folded into one constant
  when they are constants): the bulk of the flops, done at matrix-product speed;
- per step, `H @ Rᵀ` added to that step's rows, sliced into the gates, and the
  gates' elementwise update, which `df-fuse` makes one kernel after the product.
  Steps of the same shapes print the same kernel text, so numba compiles each once.

The reverse direction runs the steps last to first; a bidirectional layer stacks
the two directions' outputs as ONNX lays them out (`Y`: seq, directions, batch,
hidden; `layout=1` puts the batch first). The activations are ONNX's defaults or
those named (`activations`, with `activation_alpha`/`activation_beta` taken in
order by the ones that have parameters), `clip` bounds the gates' inputs, and
`sequence_lens` must be absent or a constant equal to the sequence length for every
batch entry: shapes are static, so shorter sequences are refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dflow.dialects import df
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter

RECURRENT_ATTRIBUTES = {
    "activation_alpha",
    "activation_beta",
    "activations",
    "clip",
    "direction",
    "hidden_size",
    "layout",
}

Activation = Callable[[Tensor], Tensor]

_PARAMETERS: dict[str, tuple[float, ...]] = {
    "Affine": (1.0, 0.0),
    "LeakyRelu": (0.01,),
    "ThresholdedRelu": (1.0,),
    "ScaledTanh": (1.0, 1.0),
    "HardSigmoid": (0.2, 0.5),
    "Elu": (1.0,),
}
"""The activations that take parameters, with ONNX's defaults (alpha, beta)."""


_ACTIVATIONS: dict[str, Callable[[float, float], Activation]] = {
    "Sigmoid": lambda a, b: lambda x: x.sigmoid(),
    "Tanh": lambda a, b: lambda x: x.tanh(),
    "Relu": lambda a, b: lambda x: x.relu(),
    "Affine": lambda a, b: lambda x: x * a + b,
    "LeakyRelu": lambda a, b: lambda x: _where(x < 0.0, x * a, x),
    "ThresholdedRelu": lambda a, b: lambda x: _where(x > a, x, x * 0.0),
    "ScaledTanh": lambda a, b: lambda x: (x * b).tanh() * a,
    "HardSigmoid": lambda a, b: lambda x: (x * a + b).maximum(0.0).minimum(1.0),
    "Elu": lambda a, b: lambda x: _where(x < 0.0, (x.exp() - 1.0) * a, x),
    "Softsign": lambda a, b: lambda x: x / (abs(x) + 1.0),
    "Softplus": lambda a, b: lambda x: (x.exp() + 1.0).log(),
}
"""ONNX's activation functions for the recurrent ops, from their (alpha, beta)."""


def _where(condition: Tensor, on_true: Tensor, on_false: Tensor) -> Tensor:
    return condition.graph.emit(df.SelectOp(condition.value, on_true.value, on_false.value))


@dataclass(frozen=True)
class Layer:
    """What the three ops share: the input as (seq, batch, input), the directions,
    the hidden size, the activations per direction, the clip."""

    node: Node
    x: Tensor
    directions: tuple[bool, ...]
    """One entry per direction: whether it runs the steps in reverse."""
    hidden: int
    activations: tuple[tuple[Activation, ...], ...]
    clip: float | None
    per_direction: list[list[Tensor]] = field(default_factory=list[list[Tensor]])
    """Each direction's `H` at every step, in time order, as `_unroll` makes them."""

    @property
    def steps(self) -> int:
        return self.x.shape[0]

    @property
    def batch(self) -> int:
        return self.x.shape[1]

    def gate_input(self, value: Tensor) -> Tensor:
        """`value` clipped to [-clip, clip] when `clip` is given."""
        if self.clip is None:
            return value
        return value.maximum(-self.clip).minimum(self.clip)

    def weights(self, index: int, gates: int, width: int, what: str) -> Tensor:
        """Input `index` (W or R): (directions, gates·hidden, width), checked."""
        weights = self.node.input(index)
        expected = (len(self.directions), gates * self.hidden, width)
        if weights.shape != expected:
            raise self.node.error(
                f"{what} has shape {list(weights.shape)}, expected {list(expected)}"
            )
        return weights

    def biases(self, gates: int) -> Tensor | None:
        """`B` (directions, 2·gates·hidden), or None when absent."""
        bias = self.node.optional(3)
        expected = (len(self.directions), 2 * gates * self.hidden)
        if bias is not None and bias.shape != expected:
            raise self.node.error(f"B has shape {list(bias.shape)}, expected {list(expected)}")
        return bias

    @property
    def batch_first(self) -> bool:
        """`layout=1`: X, Y and the states have the batch axis first."""
        return bool(self.node.int("layout", 0))

    def initial(self, index: int, what: str) -> list[Tensor]:
        """Initial state `index` per direction, (batch, hidden); zeros when absent."""
        state = self.node.optional(index)
        directions = len(self.directions)
        if state is None:
            zeros = np.zeros((self.batch, self.hidden), dtype=_dtype(self.x))
            return [self.x.graph.constant(zeros) for _ in self.directions]
        expected = (directions, self.batch, self.hidden)
        if self.batch_first:
            expected = (self.batch, directions, self.hidden)
        if state.shape != expected:
            raise self.node.error(
                f"{what} has shape {list(state.shape)}, expected {list(expected)}"
            )
        if self.batch_first:
            state = state.transpose((1, 0, 2))
        return [state[d] for d in range(directions)]

    def projected(self, w: Tensor, bias: Tensor | None, direction: int, gates: int) -> Tensor:
        """`X @ Wᵀ + Wb + Rb` for every step at once: (seq, batch, gates·hidden)."""
        width = gates * self.hidden
        rows = self.x.reshape((self.steps * self.batch, self.x.shape[2]))
        product = rows.matmul(w[direction], transpose_b=True)
        if bias is not None:
            both = bias[direction]
            product = product + (both[:width] + both[width:])
        return product.reshape((self.steps, self.batch, width))

    def order(self, direction: int) -> range:
        reverse = self.directions[direction]
        return range(self.steps - 1, -1, -1) if reverse else range(self.steps)

    def outputs(self, per_direction: Sequence[list[Tensor]]) -> Tensor:
        """`Y` from each direction's per-step states (in time order), laid out as the
        node's `layout` says."""
        steps = [
            _stack([states[t] for states in per_direction], 0) for t in range(self.steps)
        ]  # each (directions, batch, hidden)
        y = _stack(steps, 0)  # (seq, directions, batch, hidden)
        return y.transpose((2, 0, 1, 3)) if self.batch_first else y


def _stack(tensors: Sequence[Tensor], axis: int) -> Tensor:
    """The tensors, each given a new axis of size 1 at `axis`, concatenated along it."""
    expanded = [t.reshape((*t.shape[:axis], 1, *t.shape[axis:])) for t in tensors]
    if len(expanded) == 1:
        return expanded[0]
    return expanded[0].graph.emit(df.ConcatOp([t.value for t in expanded], axis))


def _dtype(x: Tensor) -> np.dtype[Any]:
    return np.dtype(np.float64 if str(x.element) == "f64" else np.float32)


def _layer(node: Node, defaults: tuple[str, ...]) -> Layer:
    """The checked common attributes and input of a recurrent node."""
    x = node.input(0)
    if len(x.shape) != 3 or str(x.element) not in ("f32", "f64"):
        raise node.error(f"X must be a float tensor of rank 3, got {x.type}")
    if node.int("layout", 0):
        x = x.transpose((1, 0, 2))
    direction = node.string("direction", "forward")
    directions = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}
    if direction not in directions:
        raise node.error(f"direction {direction!r} is not forward, reverse or bidirectional")
    hidden = node.int("hidden_size", 0)
    if hidden <= 0:
        raise node.error("hidden_size must be given, and positive")
    _check_lengths(node, x.shape[0], x.shape[1])
    clip = node.attribute("clip")
    count = len(directions[direction])
    activations = _activations(node, defaults, count)
    return Layer(node, x, directions[direction], hidden, activations, clip)


def _check_lengths(node: Node, steps: int, batch: int) -> None:
    lengths = node.constant(4, "sequence_lens")
    if lengths is not None and (lengths.shape != (batch,) or bool(np.any(lengths != steps))):
        raise node.error(
            f"sequence_lens {lengths.tolist()} differ from the sequence length {steps}: "
            "dflow's shapes are static, so every sequence must have the full length"
        )


def _activations(
    node: Node, defaults: tuple[str, ...], directions: int
) -> tuple[tuple[Activation, ...], ...]:
    """Per direction, the node's activation functions (`activations`, one list per
    direction, else ONNX's defaults), each with its parameters."""
    names = node.attribute("activations") or list(defaults) * directions
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in names]
    if len(names) != len(defaults) * directions:
        raise node.error(
            f"activations lists {len(names)} functions; {len(defaults)} per direction expected"
        )
    alphas = list(node.attribute("activation_alpha") or [])
    betas = list(node.attribute("activation_beta") or [])
    functions: list[Activation] = []
    for name in names:
        defaults_of = _PARAMETERS.get(name, ())
        parameters = [
            (alphas.pop(0) if alphas else default)
            if k == 0
            else (betas.pop(0) if betas else default)
            for k, default in enumerate(defaults_of)
        ]
        if name not in _ACTIVATIONS:
            raise node.error(f"activation {name!r} is not one ONNX defines")
        functions.append(_ACTIVATIONS[name](*(*parameters, 0.0, 0.0)[:2]))
    per = len(defaults)
    return tuple(tuple(functions[d * per : (d + 1) * per]) for d in range(directions))


def _gate(gates: Tensor, index: int, hidden: int) -> Tensor:
    """Gate `index` of a (batch, gates·hidden) tensor."""
    return gates[:, index * hidden : (index + 1) * hidden]


State = tuple[Tensor, ...]
"""What a step carries to the next: `(H,)`, or `(H, C)` for LSTM."""
Step = Callable[[Tensor, State], State]
"""One time step: this step's projected input (batch, gates·hidden) and the state."""


def _unroll(layer: Layer, projected: Tensor, start: State, step: Step, d: int) -> State:
    """Direction `d`'s steps in its order from `start`: its `H` at every step (in time
    order) into `layer`'s outputs, and the last state."""
    hidden: dict[int, Tensor] = {}
    state = start
    for t in layer.order(d):
        state = step(projected[t], state)
        hidden[t] = state[0]
    layer.per_direction.append([hidden[t] for t in range(layer.steps)])
    return state


def _results(layer: Layer, finals: Sequence[State]) -> list[Tensor | None]:
    """`Y`, `Y_h` and, for LSTM, `Y_c`: the last states stacked over the directions
    (after the batch with `layout=1`)."""
    axis = 1 if layer.batch_first else 0
    results: list[Tensor | None] = [layer.outputs(layer.per_direction)]
    results += [_stack([state[k] for state in finals], axis) for k in range(len(finals[0]))]
    return results


@converter("RNN", attributes=RECURRENT_ATTRIBUTES)
def rnn(node: Node) -> list[Tensor | None]:
    """`H = f(X Wᵀ + H Rᵀ + Wb + Rb)` per step."""
    layer = _layer(node, ("Tanh",))
    w = layer.weights(1, 1, layer.x.shape[2], "W")
    r = layer.weights(2, 1, layer.hidden, "R")
    bias = layer.biases(1)
    finals: list[State] = []
    for d, h in enumerate(layer.initial(5, "initial_h")):
        (f,) = layer.activations[d]

        def step(xt: Tensor, state: State, f: Activation = f, rd: Tensor = r[d]) -> State:
            return (f(layer.gate_input(xt + state[0].matmul(rd, transpose_b=True))),)

        finals.append(_unroll(layer, layer.projected(w, bias, d, 1), (h,), step, d))
    return _results(layer, finals)


@converter("GRU", attributes=RECURRENT_ATTRIBUTES | {"linear_before_reset"})
def gru(node: Node) -> list[Tensor | None]:
    """Gates z, r, h: `z = f(..)`, `r = f(..)`, the candidate `g(X Whᵀ + (r·H) Rhᵀ + ..)`
    (or `r·(H Rhᵀ + Rbh)` with `linear_before_reset`), `H = (1 - z)·h + z·H`."""
    layer = _layer(node, ("Sigmoid", "Tanh"))
    w = layer.weights(1, 3, layer.x.shape[2], "W")
    r = layer.weights(2, 3, layer.hidden, "R")
    bias = layer.biases(3)
    finals: list[State] = []
    for d, h in enumerate(layer.initial(5, "initial_h")):
        n = layer.hidden
        r_bias = None if bias is None else bias[d][5 * n : 6 * n]
        step = _gru_step(layer, r[d], r_bias, layer.activations[d])
        finals.append(_unroll(layer, _gru_input(layer, w, bias, d), (h,), step, d))
    return _results(layer, finals)


def _gru_step(
    layer: Layer, rd: Tensor, r_bias: Tensor | None, activations: tuple[Activation, ...]
) -> Step:
    f, g = activations
    n, linear = layer.hidden, bool(layer.node.int("linear_before_reset", 0))

    def step(xt: Tensor, state: State) -> State:
        (h,) = state
        recurrent = h.matmul(rd[: 2 * n], transpose_b=True)
        z = f(layer.gate_input(_gate(xt, 0, n) + _gate(recurrent, 0, n)))
        reset = f(layer.gate_input(_gate(xt, 1, n) + _gate(recurrent, 1, n)))
        if linear:
            hidden = h.matmul(rd[2 * n :], transpose_b=True)
            hidden = reset * (hidden if r_bias is None else hidden + r_bias)
        else:
            hidden = (reset * h).matmul(rd[2 * n :], transpose_b=True)
            hidden = hidden if r_bias is None else hidden + r_bias
        candidate = g(layer.gate_input(_gate(xt, 2, n) + hidden))
        return (candidate + z * (h - candidate),)  # (1 - z)·h̃ + z·H

    return step


def _gru_input(layer: Layer, w: Tensor, bias: Tensor | None, d: int) -> Tensor:
    """`X Wᵀ + Wb` plus `Rbz`, `Rbr` (the candidate's `Rbh` is added inside it)."""
    n = layer.hidden
    rows = layer.x.reshape((layer.steps * layer.batch, layer.x.shape[2]))
    product = rows.matmul(w[d], transpose_b=True)
    if bias is not None:
        both = bias[d]
        zeros = layer.x.graph.constant(np.zeros(n, dtype=_dtype(layer.x)))
        product = product + (both[: 3 * n] + _concat([both[3 * n : 5 * n], zeros]))
    return product.reshape((layer.steps, layer.batch, 3 * n))


def _concat(parts: Sequence[Tensor]) -> Tensor:
    return parts[0].graph.emit(df.ConcatOp([p.value for p in parts], 0))


@converter("LSTM", attributes=RECURRENT_ATTRIBUTES | {"input_forget"})
def lstm(node: Node) -> list[Tensor | None]:
    """Gates i, o, f, c (ONNX's order): `C = f·C + i·g(c)`, `H = o·h(C)`, with the
    peepholes `P` (i, o, f) when given."""
    layer = _layer(node, ("Sigmoid", "Tanh", "Tanh"))
    if node.int("input_forget", 0):
        raise node.error("input_forget=1 (coupled input and forget gates) is not supported")
    w = layer.weights(1, 4, layer.x.shape[2], "W")
    r = layer.weights(2, 4, layer.hidden, "R")
    bias, peepholes = layer.biases(4), node.optional(7)
    expected = (len(layer.directions), 3 * layer.hidden)
    if peepholes is not None and peepholes.shape != expected:
        raise node.error(f"P has shape {list(peepholes.shape)}, expected {list(expected)}")
    finals: list[State] = []
    starts = zip(layer.initial(5, "initial_h"), layer.initial(6, "initial_c"), strict=True)
    for d, (h, c) in enumerate(starts):
        peep = None if peepholes is None else peepholes[d]
        step = _lstm_step(layer, r[d], peep, layer.activations[d])
        finals.append(_unroll(layer, layer.projected(w, bias, d, 4), (h, c), step, d))
    return _results(layer, finals)


def _lstm_step(
    layer: Layer, rd: Tensor, peep: Tensor | None, activations: tuple[Activation, ...]
) -> Step:
    f, g, act = activations
    n = layer.hidden

    def step(xt: Tensor, state: State) -> State:
        h, c = state
        gates = xt + h.matmul(rd, transpose_b=True)
        i_in, o_in, f_in = (_gate(gates, k, n) for k in range(3))
        if peep is not None:
            i_in, f_in = i_in + peep[:n] * c, f_in + peep[2 * n :] * c
        i, forget = f(layer.gate_input(i_in)), f(layer.gate_input(f_in))
        c = forget * c + i * g(layer.gate_input(_gate(gates, 3, n)))
        if peep is not None:
            o_in = o_in + peep[n : 2 * n] * c
        return (f(layer.gate_input(o_in)) * act(c), c)

    return step
