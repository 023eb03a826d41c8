"""conv1d/2d/3d.

A 1-d or 2-d convolution of one group over floats records the ``conv2d`` primitive (a 1-d
one as a 2-d one of height 1), which the C++ backend runs as a direct convolution
(codegen/include/lazytorch_conv.h) and autograd differentiates into another ``conv2d``
(the input's gradient) and ``conv2d_wgrad`` (the weight's). Everything else (groups, 3-d,
integer or complex operands) is im2col: the kernel-offset windows, stacked, and one
batched matmul.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir.primitives import PRIMITIVES, make_node
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg, wrap
from lazytorch.ops.linalg import matmul
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor


# -- convolution and pooling ----------------------------------------------------------------------
def _ntuple(v: Any, n: int, name: str, what: str = "an int") -> tuple[int, ...]:
    """`v` as an n-tuple of ints: an int repeats, a 1-sequence repeats, else length n."""
    if isinstance(v, int):
        return (v,) * n
    t = tuple(v)
    if len(t) == 1:
        return (int(t[0]),) * n
    if len(t) != n:
        raise op_error(RuntimeError, name, f"expected {what} or {n} values, got {v!r}")
    return tuple(int(e) for e in t)


def _windows(
    x: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    out: tuple[int, ...],
) -> Tensor:
    """(N, C, K, *out) for K = prod(kernel): for each kernel offset, the strided slice of the
    spatial dims (the last len(kernel)) it reads."""
    pieces = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        # One slice view per spatial axis, built directly: the bounds are in range by
        # construction (`out` came from them), so getitem's parsing and clamping would
        # only cost recording time (540 pieces per ResNet-8 step). (One multi-axis view
        # instead made the step's program 4x slower: its strided write-backs scatter.)
        piece = x
        for axis, (i, d, s, o) in enumerate(zip(offset, dilation, stride, out), start=2):
            piece = S.slice_view(piece, axis, i * d, i * d + s * (o - 1) + 1, s)
        pieces.append(piece)
    return S.stack(pieces, 2)


def _batched(x: Tensor, w: Tensor, n: int, groups: int, op: str) -> tuple[Tensor, bool]:
    """`x` with a batch dim (and whether it had none), after torch's rank and groups checks
    for an n-d (transposed) convolution."""
    unbatched = x.ndim == n + 1
    if unbatched:
        x = S.unsqueeze(x, 0)
    if x.ndim != n + 2 or w.ndim != n + 2:
        shape = list(x.shape[1:] if unbatched else x.shape)
        raise op_error(
            RuntimeError,
            op,
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got input of size: {shape}",
        )
    if groups <= 0:
        raise op_error(RuntimeError, op, "non-positive groups is not supported")
    return x, unbatched


def _conv_out(size: int, k: int, s: int, p_lo: int, p_hi: int, d: int) -> int:
    return (size + p_lo + p_hi - d * (k - 1) - 1) // s + 1


def _conv_padding(
    padding: Any,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    op: str,
) -> tuple[int, ...]:
    """(lo, hi) per spatial dim, flattened: ints, 'valid', or 'same' (the odd unit of an
    even total goes to the high side, as torch pads)."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * (2 * n)
        if padding == "same":
            if any(s != 1 for s in stride):
                raise op_error(
                    RuntimeError, op, "padding='same' is not supported for strided convolutions"
                )
            pads: list[int] = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        raise op_error(RuntimeError, op, f"Invalid padding string: {padding!r}")
    p = _ntuple(padding, n, op)
    if min(p) < 0:
        raise op_error(RuntimeError, op, "negative padding is not supported")
    return tuple(v for e in p for v in (e, e))


def _conv(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    n: int,
    op: str,
) -> Tensor:
    """n-d convolution (cross-correlation) by im2col + one matmul per image and group."""
    x = tensor_arg(input, op)
    w = tensor_arg(weight, op, "weight")
    x, unbatched = _batched(x, w, n, groups, op)
    b, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    o, cg = w.shape[:2]
    kernel = tuple(w.shape[2:])
    if c != cg * groups:
        raise op_error(
            RuntimeError,
            op,
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead",
        )
    if o % groups:
        raise op_error(RuntimeError, op, "out_channels must be divisible by groups")
    stride = _ntuple(stride, n, op)
    dilation = _ntuple(dilation, n, op)
    if min(stride) <= 0:
        raise op_error(RuntimeError, op, "non-positive stride is not supported")
    if min(dilation) <= 0:
        raise op_error(RuntimeError, op, "non-positive dilation is not supported")
    pads = _conv_padding(padding, kernel, stride, dilation, op)
    out = tuple(
        _conv_out(size, k, s, pads[2 * i], pads[2 * i + 1], d)
        for i, (size, k, s, d) in enumerate(zip(spatial, kernel, stride, dilation))
    )
    if min(out) <= 0:
        padded = " x ".join(
            str(size + pads[2 * i] + pads[2 * i + 1]) for i, size in enumerate(spatial)
        )
        window = " x ".join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))
        raise op_error(
            RuntimeError,
            op,
            f"Calculated padded input size per channel: ({padded}). Kernel size: ({window}). Kernel size can't be greater than actual input size",
        )
    if n <= 2 and groups == 1 and x.dtype is w.dtype and x.dtype.is_floating_point:
        y = _direct(x, w, bias, stride, pads, dilation, n)
        if unbatched:
            return S.squeeze(y, 0)
        return name_grad_fn(y, "ConvolutionBackward0", x if x.requires_grad else weight)
    # F.pad lists the last dim first.
    flat_pads = [v for i in reversed(range(n)) for v in (pads[2 * i], pads[2 * i + 1])]
    xp = pad(x, flat_pads) if any(pads) else x
    cols = _windows(xp, kernel, stride, dilation, out)  # (N, C, K, *out)
    # One GEMM per image and group: (O/g, C/g*K) @ (C/g*K, L), the weights broadcast over the
    # batch (a zero batch stride, no copy). The im2col buffer is then read in the layout the
    # window kernels write, and the product lands in NC* order, so neither side needs a
    # transposing copy; the batch's products run one per thread.
    k = cg * math.prod(kernel)
    cols = S.reshape(cols, (b, groups, k, math.prod(out)))
    wm = S.reshape(w, (1, groups, o // groups, k))
    low = x.dtype.compute if x.dtype.is_low_float else None
    if low is not None:  # float16/bfloat16: products, sums and bias in float32, one rounding
        cols, wm = cols.to(low), wm.to(low)
    y = matmul(wm, cols)  # (N, g, O/g, L)
    y = S.reshape(y, (b, o, *out))
    if bias is not None:
        bias = bias.to(low) if low is not None else bias
        y = y + S.reshape(bias, (1, o) + (1,) * n)  # type: ignore[operator]
    if low is not None:
        y = y.to(x.dtype)
    if unbatched:
        return S.squeeze(y, 0)  # (torch's node there too: SqueezeBackward1)
    return name_grad_fn(y, "ConvolutionBackward0", x if x.requires_grad else weight)


_CONV2D = PRIMITIVES["conv2d"]


def _direct(
    x: Tensor,
    w: Tensor,
    bias: Tensor | None,
    stride: tuple[int, ...],
    pads: tuple[int, ...],
    dilation: tuple[int, ...],
    n: int,
) -> Tensor:
    """The conv2d primitive on (N, C, *spatial) `x` (1-d as height 1), plus the bias; 16-bit
    floats are computed in float32, bias included, and rounded once, as torch's CPU kernels
    do (rounding before the bias is added was off in 26% of elements)."""
    if n == 1:
        x, w = S.unsqueeze(x, 2), S.unsqueeze(w, 2)
        stride, pads, dilation = (1, *stride), (0, 0, *pads), (1, *dilation)
    low = x.dtype.compute if x.dtype.is_low_float else None
    xn, wn = x._node, w._node
    if low is not None:
        xn, wn = x.to(low)._node, w.to(low)._node
    attrs = (tuple(stride), tuple(pads), tuple(dilation))
    shape = _CONV2D.shape_rule((xn, wn), *attrs)
    y = wrap(make_node(_CONV2D, (xn, wn), attrs, shape, xn.dtype, xn.device))
    if bias is not None:
        b = bias.to(low) if low is not None else bias
        y = y + S.reshape(b, (1, shape[1], 1, 1))  # type: ignore[operator]
    if low is not None:
        y = y.to(x.dtype)
    return S.squeeze(y, 2) if n == 1 else y


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-d convolution (cross-correlation) of (N, C, L) or (C, L) input with an
    (O, C // groups, k) weight; `padding` is an int, ``'valid'`` or ``'same'``.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> lazytorch.nn.functional.conv1d(x, lazytorch.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution (cross-correlation): the ``conv2d`` primitive for one group of
    floats, else im2col + one matmul per image and group.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 1, 3, 3)
    >>> lazytorch.nn.functional.conv2d(x, lazytorch.ones(2, 1, 2, 2), padding=(0, 1)).shape
    lazytorch.Size([1, 2, 2, 4])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-d convolution (cross-correlation) of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 2, 3, 3, 3)
    >>> lazytorch.nn.functional.conv3d(x, lazytorch.ones(4, 2, 2, 2, 2)).shape
    lazytorch.Size([1, 4, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")
