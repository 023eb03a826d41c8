"""Movement primitives: reshape, permute, expand, slice, pad, flip, cat.

None of these computes anything: each maps output positions to input positions, so the
scheduler folds them into the index arithmetic of the kernel that reads them. Attrs are
already normalized by the public op (non-negative axes, in-range slice bounds).
"""

from __future__ import annotations

from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.primitives import Primitive, define


def _same(inputs: tuple[Any, ...], *attrs: Any) -> Any:
    return inputs[0].dtype


def numel(shape: tuple[Any, ...]) -> Any:
    n: Any = 1
    for d in shape:
        n = n * d
    return n


def _reshape_shape(inputs: tuple[Any, ...], shape: tuple[Any, ...]) -> tuple[Any, ...]:
    if numel(shape) != numel(inputs[0].shape):
        raise RuntimeError(f"reshape: cannot view {list(inputs[0].shape)} as {list(shape)}")
    return tuple(shape)


def _permute_shape(inputs: tuple[Any, ...], perm: tuple[int, ...]) -> tuple[Any, ...]:
    x = inputs[0]
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError(f"permute: {perm} is not a permutation of {len(x.shape)} axes")
    return tuple(x.shape[p] for p in perm)


def _expand_shape(inputs: tuple[Any, ...], shape: tuple[Any, ...]) -> tuple[Any, ...]:
    src = inputs[0].shape
    if len(src) > len(shape):
        raise RuntimeError(f"expand: cannot expand {list(src)} to fewer dims {list(shape)}")
    for s, d in zip(src, shape[len(shape) - len(src) :]):
        if s != d and s != 1:
            raise RuntimeError(f"expand: cannot expand {list(src)} to {list(shape)}")
    return tuple(shape)


def _slice_shape(
    inputs: tuple[Any, ...], starts: tuple[Any, ...], stops: tuple[Any, ...], steps: tuple[int, ...]
) -> tuple[Any, ...]:
    x = inputs[0]
    if not len(starts) == len(stops) == len(steps) == len(x.shape):
        raise ValueError("slice: starts, stops and steps need one entry per axis")
    out = []
    for d, lo, hi, st in zip(x.shape, starts, stops, steps):
        if st < 1 or lo < 0 or hi > d or lo > hi:
            raise ValueError(f"slice: bounds {lo}:{hi}:{st} are not normalized for a dim of {d}")
        out.append((hi - lo + st - 1) // st)
    return tuple(out)


def _slice_ref(x: Any, starts: Any, stops: Any, steps: Any) -> Any:
    return x[tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))]


def _pad_shape(
    inputs: tuple[Any, ...], lo: tuple[Any, ...], hi: tuple[Any, ...]
) -> tuple[Any, ...]:
    x, value = inputs
    if value.shape != () or value.dtype is not x.dtype:
        raise TypeError("pad: the fill value must be a 0-d input of the same dtype")
    if not len(lo) == len(hi) == len(x.shape) or any(p < 0 for p in (*lo, *hi)):
        raise ValueError(f"pad: expected non-negative amounts per axis, got {lo}, {hi}")
    return tuple(d + a + b for d, a, b in zip(x.shape, lo, hi))


def _pad_ref(x: Any, value: Any, lo: Any, hi: Any) -> Any:
    # (np.pad gives the same array through much more Python: ~30 us against ~3 us here)
    out = np.full(tuple(d + a + b for d, a, b in zip(x.shape, lo, hi)), value, dtype=x.dtype)
    out[tuple(slice(a, a + d) for d, a in zip(x.shape, lo))] = x
    return out


def _flip_shape(inputs: tuple[Any, ...], axes: tuple[int, ...]) -> tuple[Any, ...]:
    if any(not 0 <= a < len(inputs[0].shape) for a in axes):
        raise ValueError(f"flip: axes {axes} out of range")
    return inputs[0].shape


def _cat_shape(inputs: tuple[Any, ...], axis: int) -> tuple[Any, ...]:
    first = inputs[0]
    if not 0 <= axis < len(first.shape):
        raise ValueError(f"cat: axis {axis} out of range")
    total: Any = 0
    for x in inputs:
        if len(x.shape) != len(first.shape) or x.dtype is not first.dtype:
            raise TypeError("cat: inputs must share rank and dtype")
        for i, (a, b) in enumerate(zip(x.shape, first.shape)):
            if i != axis and a != b:
                raise RuntimeError(f"cat: sizes differ outside axis {axis}")
        total = total + x.shape[axis]
    return (*first.shape[:axis], total, *first.shape[axis + 1 :])


def _cat_dtype(inputs: tuple[Any, ...], axis: int) -> Any:
    return inputs[0].dtype


for prim in [
    Primitive(
        "reshape",
        "movement",
        nin=1,
        cost=0,  # index arithmetic only: inlining it computes nothing
        attr_names=("shape",),
        shape_rule=_reshape_shape,
        dtype_rule=_same,
        ref=lambda x, shape: np.reshape(x, shape),
        doc="same elements in row-major order, new shape",
    ),
    Primitive(
        "permute",
        "movement",
        nin=1,
        cost=0,  # index arithmetic only: inlining it computes nothing
        attr_names=("perm",),
        shape_rule=_permute_shape,
        dtype_rule=_same,
        ref=lambda x, perm: np.transpose(x, perm),
        doc="reorder axes: out.shape[i] = x.shape[perm[i]]",
    ),
    Primitive(
        "expand",
        "movement",
        nin=1,
        cost=0,  # index arithmetic only: inlining it computes nothing
        attr_names=("shape",),
        shape_rule=_expand_shape,
        dtype_rule=_same,
        ref=lambda x, shape: np.broadcast_to(x, shape),
        doc="broadcast size-1 and new leading axes to shape",
    ),
    Primitive(
        "slice",
        "movement",
        nin=1,
        cost=0,  # index arithmetic only: inlining it computes nothing
        attr_names=("starts", "stops", "steps"),
        shape_rule=_slice_shape,
        dtype_rule=_same,
        ref=_slice_ref,
        doc="x[start:stop:step] on every axis (normalized, step >= 1)",
    ),
    Primitive(
        "pad",
        "movement",
        nin=2,
        attr_names=("lo", "hi"),
        shape_rule=_pad_shape,
        dtype_rule=_same,
        ref=_pad_ref,
        doc="constant padding; input 1 is the 0-d fill value",
    ),
    Primitive(
        "flip",
        "movement",
        nin=1,
        cost=0,  # index arithmetic only: inlining it computes nothing
        attr_names=("axes",),
        shape_rule=_flip_shape,
        dtype_rule=_same,
        ref=lambda x, axes: np.flip(x, axes),
        doc="reverse the order along axes",
    ),
    Primitive(
        "cat",
        "movement",
        nin=None,
        attr_names=("axis",),
        shape_rule=_cat_shape,
        dtype_rule=_cat_dtype,
        ref=lambda *xs, axis: np.concatenate(xs, axis=axis),
        doc="concatenate inputs along axis",
    ),
]:
    define(prim)
