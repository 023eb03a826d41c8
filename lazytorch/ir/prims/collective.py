"""Collectives: ``all_reduce`` and friends as IR nodes.

A collective node names its process group by a small integer (``group``), carries that
group's sequence number (``seq``: the n-th collective recorded on the group), the group's
size (``world``) and the operation's own attribute (a reduce op, or a source/root rank
numbered within the group). Its reference (``ref``) is its value on a group of one rank,
which is what the one-process engine computes; over more ranks the reference refuses. Its value is computed by a communication engine (MPI on the
CPU, NCCL on the GPU), never by a kernel, so the runtime *cuts* at it: before a program
that reads a collective's result is captured, the collective's inputs are computed, the
engine exchanges them, and the node becomes a buffer leaf (`lazytorch.runtime.collectives`).
A collective therefore never enters a compiled program, and no cache key holds a rank,
a group or a sequence number. It shows in graph dumps and ``debug.program`` of a pending
value, named with its group and sequence number.

Contracts every engine keeps (the shape rules below state them):

* ``all_reduce``, ``broadcast``: the result has the input's shape and dtype.
* ``all_gather``, ``gather_to_rank``: the result stacks every rank's input on a new leading axis
  of size ``world`` (``gather_to_rank``'s result is meaningful on ``root`` only).
* ``reduce_scatter``: the input's leading axis is ``world`` blocks; rank r receives the
  reduction of block r, shape ``(shape[0] // world, *shape[1:])``.
* ``scatter_from_rank``: the input has a leading axis of size ``world`` (meaningful on ``src``);
  rank r receives slice r.

>>> from lazytorch.ir.primitives import get
>>> get("all_reduce").category, get("all_reduce").attr_names
('collective', ('group', 'seq', 'world', 'op'))
"""

from __future__ import annotations

from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.primitives import Primitive, define

REDUCE_OPS = ("sum", "avg", "max", "min", "product")


def _check(name: str, world: int, op: str | None = None) -> None:
    if type(world) is not int or world < 1:
        raise ValueError(f"{name}: the group size must be a positive int, got {world!r}")
    if op is not None and op not in REDUCE_OPS:
        raise ValueError(f"{name}: unknown reduce op {op!r}; expected one of {REDUCE_OPS}")


def _one_rank(name: str, world: int) -> None:
    if world != 1:
        raise NotImplementedError(
            f"{name} over {world} ranks is computed by a communication engine; the reference "
            "is the value on a group of one rank"
        )


def _dtype(inputs: tuple[Any, ...], *attrs: Any) -> Any:
    return inputs[0].dtype


def _collective(name: str, attr: str, shape_rule: Any, ref: Any, doc: str) -> Primitive:
    return define(
        Primitive(
            name,
            "collective",
            nin=1,
            attr_names=("group", "seq", "world", attr) if attr else ("group", "seq", "world"),
            shape_rule=shape_rule,
            dtype_rule=_dtype,
            ref=ref,
            cost=1 << 20,  # never recomputed: its value comes from the engine, once
            doc=doc + " (reference: a group of one rank)",
        )
    )


def _reduce_shape(name: str) -> Any:
    def rule(inputs: tuple[Any, ...], group: int, seq: int, world: int, op: str) -> Any:
        _check(name, world, op)
        return tuple(inputs[0].shape)

    return rule


def _rooted_shape(name: str) -> Any:
    def rule(inputs: tuple[Any, ...], group: int, seq: int, world: int, root: int) -> Any:
        _check(name, world)
        if type(root) is not int or not 0 <= root < world:
            raise ValueError(f"{name}: rank {root!r} is not in a group of {world}")
        return tuple(inputs[0].shape)

    return rule


def _all_gather_shape(inputs: tuple[Any, ...], group: int, seq: int, world: int) -> Any:
    _check("all_gather", world)
    return (world, *inputs[0].shape)


def _gather_shape(inputs: tuple[Any, ...], group: int, seq: int, world: int, root: int) -> Any:
    return (world, *_rooted_shape("gather_to_rank")(inputs, group, seq, world, root))


def _reduce_scatter_shape(
    inputs: tuple[Any, ...], group: int, seq: int, world: int, op: str
) -> Any:
    _check("reduce_scatter", world, op)
    shape = tuple(inputs[0].shape)
    if not shape or shape[0] % world:
        raise ValueError(
            f"reduce_scatter: the input's first dimension ({shape[0] if shape else 'none'}) "
            f"must be a multiple of the group size {world}"
        )
    return (shape[0] // world, *shape[1:])


def _scatter_shape(inputs: tuple[Any, ...], group: int, seq: int, world: int, src: int) -> Any:
    shape = _rooted_shape("scatter_from_rank")(inputs, group, seq, world, src)
    if not shape or shape[0] != world:
        raise ValueError(
            f"scatter_from_rank: the input must stack {world} tensors, got shape {list(shape)}"
        )
    return shape[1:]


def _all_reduce_ref(x: Any, group: int, seq: int, world: int, op: str) -> Any:
    _one_rank("all_reduce", world)
    return np.array(x, copy=True)


def _broadcast_ref(x: Any, group: int, seq: int, world: int, src: int) -> Any:
    _one_rank("broadcast", world)
    return np.array(x, copy=True)


def _all_gather_ref(x: Any, group: int, seq: int, world: int) -> Any:
    _one_rank("all_gather", world)
    return np.array(x, copy=True)[None]


def _gather_ref(x: Any, group: int, seq: int, world: int, root: int) -> Any:
    _one_rank("gather_to_rank", world)
    return np.array(x, copy=True)[None]


def _reduce_scatter_ref(x: Any, group: int, seq: int, world: int, op: str) -> Any:
    _one_rank("reduce_scatter", world)
    return np.array(x, copy=True)


def _scatter_ref(x: Any, group: int, seq: int, world: int, src: int) -> Any:
    _one_rank("scatter_from_rank", world)
    return np.array(x[0], copy=True)


ALL_REDUCE = _collective(
    "all_reduce",
    "op",
    _reduce_shape("all_reduce"),
    _all_reduce_ref,
    "every rank's input reduced elementwise with `op`, on every rank",
)
BROADCAST = _collective(
    "broadcast",
    "src",
    _rooted_shape("broadcast"),
    _broadcast_ref,
    "rank `src`'s input, on every rank",
)
ALL_GATHER = _collective(
    "all_gather",
    "",
    _all_gather_shape,
    _all_gather_ref,
    "every rank's input stacked on a new leading axis, on every rank",
)
GATHER = _collective(
    "gather_to_rank",
    "root",
    _gather_shape,
    _gather_ref,
    "every rank's input stacked on a new leading axis, on rank `root`",
)
REDUCE_SCATTER = _collective(
    "reduce_scatter",
    "op",
    _reduce_scatter_shape,
    _reduce_scatter_ref,
    "block r of the reduction of every rank's input, on rank r",
)
SCATTER = _collective(
    "scatter_from_rank",
    "src",
    _scatter_shape,
    _scatter_ref,
    "slice r of rank `src`'s input, on rank r",
)
