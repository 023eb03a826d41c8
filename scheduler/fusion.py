"""Fusion decisions: which program values share a kernel.

*Anchors* are the values that must be computed by some kernel rather than recomputed
wherever they are read: reductions, scans, extern results (matmul, conv, argsort), scatters, and
*realized* values (program outputs, and inputs an extern needs in memory). Everything else
(elementwise math, movement, gathers, random numbers) is inlined into the kernels that
read it.

Anchors are visited in program order; each joins an existing kernel when

* `can_share_space`: the kernel iterates the same space — a reduction over the same shape
  and axes (sibling reductions: mean and variance, softmax's max and sum), or a value of
  the reduction's full shape (an epilogue stored in a later pass) or of its kept shape,
  or a pointwise value of the same shape (horizontal fusion);
* the trial build succeeds (a value read from this kernel's own reduction must be read at
  the current row, see `lower.FusionRefused`);
* it creates no cycle between kernels.

Otherwise it starts a new kernel. ``LAZYTORCH_LOG=fusion`` (the ``lazytorch.fusion`` logger
at DEBUG) says why each refusal happened.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from lazytorch.ir.program import Program

__all__ = ["Group", "can_share_space", "log"]

log = logging.getLogger("lazytorch.fusion")


@dataclass
class Group:
    """A kernel (or extern call) under construction."""

    id: int
    kind: str  # pointwise | reduction | scan | matmul | conv | argsort | scatter | concat
    shape: tuple[int, ...]
    axes: tuple[int, ...] = ()
    anchors: list[int] = field(default_factory=list)  # program value ids, in order
    deps: set[int] = field(default_factory=set)  # ids of groups this one reads from
    # anchor -> values a kernel of this group emits to compute it inline (Scheduler.size_in)
    inlined: dict[int, int] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.kind} group {self.id} {list(self.shape)}{' axes ' + str(self.axes) if self.axes else ''}"


def kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def can_share_space(
    g: Group, kind: str, shape: tuple[int, ...], axes: tuple[int, ...]
) -> tuple[bool, str]:
    """Whether an anchor of `kind` over (shape, axes) can iterate with group `g`."""
    alone = ("matmul", "conv", "argsort", "scatter", "scan", "concat")
    if g.kind in alone or kind in alone:
        return False, f"{kind if kind in alone else g.kind} runs alone"
    if kind == "reduction":
        if g.kind == "reduction" and g.shape == shape and g.axes == axes:
            return True, ""
        return False, "different reduction space"
    # a realized elementwise value of `shape`
    if g.kind == "reduction":
        if squeezed(shape) in (squeezed(g.shape), squeezed(kept_shape(g.shape, g.axes))):
            return True, ""
        return False, f"shape {list(shape)} is neither the reduction's input nor its result"
    if squeezed(g.shape) == squeezed(shape):
        return True, ""
    return False, f"shape {list(shape)} differs from {list(g.shape)}"


def reaches(groups: dict[int, Group], start: int | Iterable[int], target: int) -> bool:
    """Whether group `start` (or any of the groups `start`) depends, directly or not, on
    group `target` (one walk for several starts: their shared ancestors are seen once)."""
    seen: set[int] = set()
    stack = [start] if isinstance(start, int) else list(start)
    while stack:
        g = stack.pop()
        if g == target:
            return True
        if g in seen:
            continue
        seen.add(g)
        stack.extend(groups[g].deps)
    return False


def topo_order(groups: dict[int, Group]) -> list[Group]:
    """Groups ordered so every group runs after the groups it reads from."""
    order: list[Group] = []
    state: dict[int, int] = {}

    def visit(gid: int) -> None:
        st = state.get(gid, 0)
        if st == 2:
            return
        if st == 1:
            raise AssertionError("fusion produced a cycle between kernels")
        state[gid] = 1
        for d in sorted(groups[gid].deps):
            visit(d)
        state[gid] = 2
        order.append(groups[gid])

    for gid in sorted(groups):
        visit(gid)
    return order


def describe_anchor(prog: Program, vid: int) -> str:
    ins = prog.value(vid)
    name = getattr(getattr(ins, "op", None), "name", "input")
    return f"%{vid} ({name})"
