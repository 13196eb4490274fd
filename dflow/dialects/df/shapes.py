"""Shape rules of the `df` dialect, shared by verifiers, builders and passes.

Every rule works on plain tuples of ints and raises `ShapeError` with a message
that names the shapes involved; callers that know the op (verifiers) prefix the
op name. Keeping the rules free of IR objects lets passes ask "what would this
op produce?" without building it.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.utils.exceptions import VerifyException

from dflow.runtime.shapes import format_shape  # one spelling, also the CLI's

Shape = tuple[int, ...]


class ShapeError(VerifyException):
    """Operand shapes or properties that no op of the family accepts."""


def num_elements(shape: Sequence[int]) -> int:
    return prod(shape)


def broadcast(*shapes: Shape) -> Shape:
    """NumPy broadcasting: align from the right; each dim pair is equal or has a 1."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for axis in range(-rank, 0):
        dims = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(dims) > 1:
            shown = " and ".join(format_shape(s) for s in shapes)
            raise ShapeError(f"shapes {shown} do not broadcast")
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def broadcasts_to(source: Shape, target: Shape) -> bool:
    """Whether `numpy.broadcast_to(x_of_source_shape, target)` is defined."""
    if len(source) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(source), reversed(target), strict=False))


def normalize_axis(axis: int, rank: int) -> int:
    """Map a possibly negative axis into [0, rank), as NumPy does."""
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    normalized = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"axes {list(axes)} repeat an axis")
    return normalized


def reduce(shape: Shape, axes: Sequence[int] | None, keepdims: bool) -> Shape:
    """Result of reducing `axes` (all axes when None)."""
    reduced = set(range(len(shape))) if axes is None else set(normalize_axes(axes, len(shape)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in reduced)


def transpose(shape: Shape, perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(shape))):
        raise ShapeError(
            f"perm {list(perm)} is not a permutation of the {len(shape)} axes "
            f"of {format_shape(shape)}"
        )
    return tuple(shape[p] for p in perm)


def matmul(lhs: Shape, rhs: Shape, transpose_a: bool, transpose_b: bool) -> Shape:
    """`A·B` on the last two axes; any leading (batch) axes must be equal."""
    shown = f"{format_shape(lhs)} and {format_shape(rhs)}"
    if len(lhs) < 2 or len(lhs) != len(rhs):
        raise ShapeError(f"operands {shown} must both have the same rank, at least 2")
    if lhs[:-2] != rhs[:-2]:
        raise ShapeError(f"batch dimensions of {shown} differ")
    m, k = (lhs[-1], lhs[-2]) if transpose_a else (lhs[-2], lhs[-1])
    k2, n = (rhs[-1], rhs[-2]) if transpose_b else (rhs[-2], rhs[-1])
    if k != k2:
        raise ShapeError(f"contracted dimensions of {shown} differ ({k} vs {k2})")
    return (*lhs[:-2], m, n)


def window_output(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """Output length of a strided, dilated window sliding over a padded axis."""
    span = dilation * (kernel - 1) + 1
    padded = size + pad
    if padded < span:
        raise ShapeError(f"window of extent {span} is larger than the padded input {padded}")
    return (padded - span) // stride + 1


def _check_window_properties(
    strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
) -> None:
    if len(strides) != 2 or len(dilations) != 2 or len(pads) != 4:
        raise ShapeError(
            "strides and dilations need 2 values and pads 4 (top, left, bottom, right)"
        )
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0:
        raise ShapeError(
            f"strides {list(strides)} and dilations {list(dilations)} must be positive "
            f"and pads {list(pads)} non-negative"
        )


def window2d(
    input_hw: Sequence[int],
    kernel_hw: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
) -> tuple[int, int]:
    """Spatial output size of a 2-D window (convolution or pooling)."""
    _check_window_properties(strides, pads, dilations)
    return (
        window_output(input_hw[0], kernel_hw[0], strides[0], pads[0] + pads[2], dilations[0]),
        window_output(input_hw[1], kernel_hw[1], strides[1], pads[1] + pads[3], dilations[1]),
    )


def conv2d(
    input: Shape,
    filter: Shape,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = 1,
) -> Shape:
    """NCHW input, OIHW filter → NCHW output. With `groups` > 1 the input's C channels
    and the filter's O outputs split into that many groups, each filter taking the
    C / groups channels of its group (the filter is O x C/groups x KH x KW)."""
    if len(input) != 4 or len(filter) != 4:
        raise ShapeError(
            f"input {format_shape(input)} and filter {format_shape(filter)} must both be 4-D "
            "(NCHW and OIHW)"
        )
    _check_groups(input, filter, groups)
    try:
        oh, ow = window2d(input[2:], filter[2:], strides, pads, dilations)
    except ShapeError as error:
        raise ShapeError(
            f"input {format_shape(input)} and filter {format_shape(filter)}: {error}"
        ) from None
    return (input[0], filter[0], oh, ow)


def conv2d_nchwc(
    input: Shape, filter: Shape, strides: Sequence[int], pads: Sequence[int], groups: int = 1
) -> Shape:
    """NCHWc input `[N, C/bi, H, W, bi]`, blocked filter `[O/bo, C/bi/groups, KH, KW,
    bi, bo]` → NCHWc output `[N, O/bo, OH, OW, bo]` (an input block of 1: NCHW as
    5-D); in `groups`, each of whole blocks."""
    if len(input) != 5 or len(filter) != 6:
        raise ShapeError(
            f"input {format_shape(input)} and filter {format_shape(filter)} must be 5-D "
            "and 6-D (NCHWc and OIHW{bi}i{bo}o)"
        )
    if filter[4] != input[4] or min(filter[4:]) < 1:
        raise ShapeError(
            f"filter {format_shape(filter)} must take the input's block of {input[4]} "
            f"channels (input {format_shape(input)}) into a block of at least one"
        )
    _check_groups(input, filter, groups, "blocks")
    try:
        oh, ow = window2d(input[2:4], filter[2:4], strides, pads, (1, 1))
    except ShapeError as error:
        raise ShapeError(
            f"input {format_shape(input)} and filter {format_shape(filter)}: {error}"
        ) from None
    return (input[0], filter[0], oh, ow, filter[5])


def _check_groups(input: Shape, filter: Shape, groups: int, channels: str = "channels") -> None:
    """C = groups · (the filter's channels) and groups dividing O, for `conv2d` (and
    in blocks of channels, for `conv2d_nchwc`)."""
    if groups < 1:
        raise ShapeError(f"groups {groups} must be at least 1")
    if input[1] != groups * filter[1]:
        grouped = f" in {groups} groups" if groups > 1 else ""
        raise ShapeError(
            f"input {format_shape(input)} has {input[1]} {channels} but filter "
            f"{format_shape(filter)}{grouped} expects {groups * filter[1]}"
        )
    if filter[0] % groups:
        raise ShapeError(
            f"filter {format_shape(filter)} has {filter[0]} output {channels}, "
            f"not divisible by {groups} groups"
        )


def pool2d(
    input: Shape, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
) -> Shape:
    if len(input) != 4:
        raise ShapeError(f"input {format_shape(input)} must be 4-D (NCHW)")
    if len(kernel) != 2 or min(kernel) < 1:
        raise ShapeError(f"kernel {list(kernel)} must be 2 positive sizes")
    try:
        oh, ow = window2d(input[2:], kernel, strides, pads, (1, 1))
    except ShapeError as error:
        message = f"input {format_shape(input)} and kernel {list(kernel)}: {error}"
        raise ShapeError(message) from None
    top, left, bottom, right = pads
    if max(top, bottom) >= kernel[0] or max(left, right) >= kernel[1]:
        raise ShapeError(f"pads {list(pads)} must be smaller than the kernel {list(kernel)}")
    return (input[0], input[1], oh, ow)


def concat(shapes: Sequence[Shape], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("concat needs at least one operand")
    first = shapes[0]
    axis = normalize_axis(axis, len(first))
    for other in shapes[1:]:
        if len(other) != len(first) or any(
            a != b for i, (a, b) in enumerate(zip(first, other, strict=True)) if i != axis
        ):
            raise ShapeError(
                f"shapes {format_shape(first)} and {format_shape(other)} differ outside axis {axis}"
            )
    return tuple(sum(s[axis] for s in shapes) if i == axis else d for i, d in enumerate(first))


def slice_(shape: Shape, start: Sequence[int], limit: Sequence[int]) -> Shape:
    if len(start) != len(shape) or len(limit) != len(shape):
        raise ShapeError(
            f"start {list(start)} and limit {list(limit)} need one entry per axis of "
            f"{format_shape(shape)}"
        )
    for begin, end, dim in zip(start, limit, shape, strict=True):
        if not 0 <= begin <= end <= dim:
            raise ShapeError(
                f"start {list(start)} and limit {list(limit)} must satisfy "
                f"0 <= start <= limit <= dim for {format_shape(shape)}"
            )
    return tuple(end - begin for begin, end in zip(start, limit, strict=True))


def gather(data: Shape, indices: Shape, axis: int) -> Shape:
    """`numpy.take(data, indices, axis)`: the indices' shape in place of `axis`."""
    if not data:
        raise ShapeError("the indexed tensor must have rank 1 or more, got a scalar")
    axis = normalize_axis(axis, len(data))
    return (*data[:axis], *indices, *data[axis + 1 :])


def gather_elements(data: Shape, indices: Shape, axis: int) -> Shape:
    """`numpy.take_along_axis` as ONNX's `GatherElements`: the indices' shape, of the
    data's rank, no larger than the data's off the axis."""
    if not data or len(indices) != len(data):
        raise ShapeError(
            f"indices {format_shape(indices)} must have the rank of data {format_shape(data)}, "
            "at least 1"
        )
    axis = normalize_axis(axis, len(data))
    if any(i > d for k, (i, d) in enumerate(zip(indices, data, strict=True)) if k != axis):
        raise ShapeError(
            f"indices {format_shape(indices)} exceed data {format_shape(data)} off axis {axis}"
        )
    return indices
