"""Values placed inside one another: each value's byte offset within its class.

A concatenation whose operands are written in place into its result makes each
operand a *slice* of the result: operand `m` at byte `at` of the whole `w`. Slices
chain (a concatenation of concatenations) and overlap (DenseNet's layers each read
the concatenation of all the features before them, a prefix of the block's last
one), so the places form classes, kept as a union-find whose edges carry offsets:
each value's `parent` and its offset in it, the root of each class the frame its
values are placed in.

`Slices.place` adds one concatenation's operands, or refuses without changing
anything where that contradicts the slices placed already (an operand at two
offsets of one class) or makes two *leaves* overlap: a leaf is a value some step
writes itself, so two leaves sharing a byte would clobber each other, while a
concatenation placed so is only a view of the leaves it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise


@dataclass
class Slices:
    """Classes of values placed inside one another, with each value's offset in its
    class's root."""

    sizes: Sequence[int]
    """Each value's bytes, by value index."""
    parent: dict[int, int] = field(default_factory=dict[int, int])
    offset: dict[int, int] = field(default_factory=dict[int, int])
    """Of each value with a parent: its byte offset within the parent."""
    members: dict[int, list[int]] = field(default_factory=dict[int, list[int]])
    """Each root's class (the root first), for roots of classes of two or more."""
    views: set[int] = field(default_factory=set[int])
    """The wholes placed: values that are their slices' bytes, written by no step."""

    def find(self, value: int) -> tuple[int, int]:
        """`value`'s root and its offset in the root, the path compressed."""
        if value not in self.parent:
            return value, 0
        root, above = self.find(self.parent[value])
        at = self.offset[value] + above
        self.parent[value], self.offset[value] = root, at
        return root, at

    def place(self, whole: int, parts: Sequence[tuple[int, int]]) -> bool:
        """Place each `(part, at)` at byte `at` of `whole`, and make `whole` a view;
        False, changing nothing, where that contradicts the places given already or
        makes two leaves overlap."""
        frame = self._frame(whole, parts)
        if frame is None or not self._leaves_apart(frame, whole):
            return False
        root = self.find(whole)[0]
        for other, shift in frame.items():
            if other != root:
                self.parent[other], self.offset[other] = root, shift
                self.members.setdefault(root, [root]).extend(self.members.pop(other, [other]))
        self.views.add(whole)
        return True

    def _frame(self, whole: int, parts: Sequence[tuple[int, int]]) -> dict[int, int] | None:
        """Each class root involved, with its offset in the frame of `whole`'s root;
        None where one root would need two offsets."""
        root, base = self.find(whole)
        frame = {root: 0}
        for part, at in parts:
            other, inside = self.find(part)
            shift = base + at - inside
            if frame.setdefault(other, shift) != shift:
                return None
        return frame

    def _leaves_apart(self, frame: dict[int, int], whole: int) -> bool:
        """Whether the leaves of the merged classes (`whole` a view) share no byte."""
        ranges: list[tuple[int, int]] = []
        for root, shift in frame.items():
            for value in self.members.get(root, [root]):
                if value != whole and value not in self.views:
                    start = shift + self.find(value)[1]
                    ranges.append((start, start + self.sizes[value]))
        ranges.sort()
        return all(end <= start for (_, end), (start, _) in pairwise(ranges))

    def within(self) -> dict[int, int]:
        """Each value of a class of two or more: its offset from the class's first byte."""
        placed: dict[int, int] = {}
        for values in self.members.values():
            at = {value: self.find(value)[1] for value in values}
            first = min(at.values())
            placed.update((value, offset - first) for value, offset in at.items())
        return placed
