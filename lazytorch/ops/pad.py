"""nn.functional.pad: constant padding (negative amounts crop), and the reflect, replicate
and circular modes built from slices, flips and cat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops._core import (
    P,
    const_node,
    expand_node,
    scalar_node,
    tensor_arg,
    wrap,
)
from lazytorch.ops.creation import checked_scalar
from lazytorch.ops.shape import slice_node
from lazytorch.tensor import Tensor


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:
    """Pad the last dims: ``pad=(left, right, top, bottom, ...)``; negative pads crop.

    Modes: 'constant' (with `value`), 'reflect', 'replicate', 'circular'.
    """
    x = tensor_arg(input, "pad")
    if len(pad) % 2:
        raise op_error(RuntimeError, "pad", "Padding length must be divisible by 2")
    if len(pad) // 2 > x.ndim:
        raise op_error(
            RuntimeError,
            "pad",
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {x.ndim}",
        )
    n = x._node
    lo = [0] * x.ndim
    hi = [0] * x.ndim
    for k in range(len(pad) // 2):
        axis = x.ndim - 1 - k
        lo[axis], hi[axis] = pad[2 * k], pad[2 * k + 1]
    if mode == "constant":
        # Crop negative amounts first, then pad the positive ones with the fill value.
        for axis in range(x.ndim):
            a, b = lo[axis], hi[axis]
            if a < 0 or b < 0:
                size = n.shape[axis]
                start, stop = -a if a < 0 else 0, size + b if b < 0 else size
                if stop < start:
                    raise op_error(RuntimeError, "pad", "narrow(): length must be non-negative.")
                n = slice_node(n, axis, start, stop)
        plo = tuple(max(a, 0) for a in lo)
        phi = tuple(max(b, 0) for b in hi)
        if not any(plo) and not any(phi):
            return wrap(n)
        if value is not None:
            # torch takes the value as a double (F.pad's ``value: float``), then converts
            # it with its overflow check, float16 and bfloat16 included (unlike its fills)
            value = checked_scalar(float(value), n.dtype, "pad")
        v = (
            scalar_node(value, n.dtype, n.device)
            if value is not None
            else const_node(0, n.dtype, n.device)
        )
        shape = tuple(d + a + b for d, a, b in zip(n.shape, plo, phi))
        return wrap(make_node(P.pad, (n, v), (plo, phi), shape, n.dtype, n.device))
    if mode not in ("reflect", "replicate", "circular"):
        raise op_error(NotImplementedError, "pad", f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise op_error(
            RuntimeError, "pad", f'Padding mode "{mode}" doesn\'t take in value argument'
        )
    # torch pads 1-3 trailing dims of an input with one or two leading (batch, channel) dims.
    k = len(pad) // 2
    if not 1 <= k <= 3 or x.ndim not in (k + 1, k + 2):
        raise op_error(
            NotImplementedError,
            "pad",
            f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.",
        )
    if mode != "circular" and any(d == 0 for d in n.shape[x.ndim - k - 1 :]):
        raise op_error(
            RuntimeError,
            "pad",
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(x.shape)}",
        )
    for axis in range(x.ndim):
        a, b = lo[axis], hi[axis]
        if a == 0 and b == 0:
            continue
        n = (
            _pad_circular(n, axis, a, b)
            if mode == "circular"
            else _pad_edge(n, axis, a, b, mode, list(x.shape))
        )
    return wrap(n)


def _pad_edge(n: Node, axis: int, a: int, b: int, mode: str, in_shape: list[Any]) -> Node:
    """reflect/replicate along one axis. Positive pads are taken from the *uncropped* input
    and negative pads crop afterwards: torch maps every output position onto the original
    input, so a reflection may reach into the part that is cropped away."""
    size = n.shape[axis]
    if mode == "reflect" and (a >= size or b >= size):
        raise op_error(
            RuntimeError,
            "pad",
            f"Argument #4: Padding size should be less than the corresponding input dimension, "
            f"but got: padding ({a}, {b}) at dimension {axis} of input {in_shape}",
        )
    if size + a + b <= 0:
        raise op_error(
            RuntimeError,
            "pad",
            f"input (size {size} at dimension {axis}) is too small. Calculated output size: "
            f"{size + a + b}",
        )
    n = _extend(n, axis, max(a, 0), max(b, 0), mode)
    if a < 0 or b < 0:
        full = n.shape[axis]
        n = slice_node(n, axis, -a if a < 0 else 0, full + b if b < 0 else full)
    return n


def _pad_circular(n: Node, axis: int, a: int, b: int) -> Node:
    """circular along one axis: torch crops the negative pads first, then wraps around what
    is left (at most once)."""
    size = n.shape[axis]
    if a < 0 or b < 0:
        start, stop = -a if a < 0 else 0, size + b if b < 0 else size
        if stop < start:
            raise op_error(RuntimeError, "pad", "narrow(): length must be non-negative.")
        n = slice_node(n, axis, start, stop)
        size = stop - start
    a, b = max(a, 0), max(b, 0)
    if a > size or b > size:
        raise op_error(RuntimeError, "pad", "Padding value causes wrapping around more than once.")
    return _extend(n, axis, a, b, "circular")


def _extend(n: Node, axis: int, a: int, b: int, mode: str) -> Node:
    """n with `a` elements before and `b` after along axis (a, b >= 0), made by `mode`."""
    if a == 0 and b == 0:
        return n
    pieces = []
    if a > 0:
        pieces.append(_pad_piece(n, axis, a, mode, left=True))
    pieces.append(n)
    if b > 0:
        pieces.append(_pad_piece(n, axis, b, mode, left=False))
    shape = list(n.shape)
    shape[axis] = n.shape[axis] + a + b
    return make_node(P.cat, tuple(pieces), (axis,), tuple(shape), n.dtype, n.device)


def _pad_piece(n: Node, axis: int, k: int, mode: str, left: bool) -> Node:
    size = n.shape[axis]
    if mode == "replicate":
        edge = slice_node(n, axis, 0, 1) if left else slice_node(n, axis, size - 1, size)
        shape = list(n.shape)
        shape[axis] = k
        return expand_node(edge, tuple(shape))
    if mode == "circular":
        return slice_node(n, axis, size - k, size) if left else slice_node(n, axis, 0, k)
    # reflect: mirror without repeating the edge element.
    piece = slice_node(n, axis, 1, k + 1) if left else slice_node(n, axis, size - 1 - k, size - 1)
    return make_node(P.flip, (piece,), ((axis,),), piece.shape, piece.dtype, piece.device)
