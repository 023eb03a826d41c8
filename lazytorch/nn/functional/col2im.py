"""unfold (im2col), fold (col2im) and the transposed convolutions built on fold.

A transposed convolution is the adjoint of a convolution: each input element scatters a
weighted copy of the kernel into the output. Here that is one matmul per image and group
(``W^T @ x``: a column of kernel-sized contributions per input position) followed by
col2im, which adds each kernel offset's contributions into the output at its place. The
placement is movement only: zeros inserted between positions for the stride (a pad and a
reshape), then a pad to the offset; the sum of the K placed pieces fuses into one kernel.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from lazytorch._errors import op_error
from lazytorch.nn.functional.conv import _batched, _conv_out, _ntuple, _windows
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.linalg import matmul
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor


def _spread(x: Tensor, dim: int, stride: int) -> Tensor:
    """`x` with stride - 1 zeros between neighbours along `dim`: length (L - 1) * s + 1."""
    if stride == 1:
        return x
    size = x.shape[dim]
    x = S.unsqueeze(x, dim + 1)
    widths = [0] * (2 * (x.ndim - dim - 2)) + [0, stride - 1]
    x = pad(x, widths)
    x = S.flatten(x, dim, dim + 1)
    return S.narrow(x, dim, 0, (size - 1) * stride + 1)


def _col2im(
    cols: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    full: tuple[int, ...],
) -> Tensor:
    """(N, C, *full) from (N, C, K, *out): the sum over kernel offsets of each offset's
    slice placed where `_windows` read it (the adjoint of `_windows`)."""
    n = len(kernel)
    out = cols.shape[3:]
    for axis, s in enumerate(stride):
        cols = _spread(cols, 3 + axis, s)
    total = None
    for k, offset in enumerate(_offsets(kernel)):
        piece = S.select(cols, 2, k)
        widths: list[int] = []
        for axis in reversed(range(n)):
            lo = offset[axis] * dilation[axis]
            span = (out[axis] - 1) * stride[axis] + 1
            widths += [lo, full[axis] - lo - span]
        piece = pad(piece, widths)
        total = piece if total is None else total + piece  # type: ignore[operator]
    assert total is not None
    return total


def _offsets(kernel: tuple[int, ...]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(k) for k in kernel)))


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sliding blocks of (N, C, H, W) input as columns: (N, C * kH * kW, L).

    >>> import lazytorch
    >>> x = lazytorch.arange(9.0).reshape(1, 1, 3, 3)
    >>> lazytorch.nn.functional.unfold(x, 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    x = tensor_arg(input, "unfold")
    if x.ndim < 3:  # torch reads size(-3) first
        raise op_error(
            IndexError,
            "unfold",
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got {x.ndim})",
        )
    if x.ndim not in (3, 4):
        raise op_error(
            RuntimeError,
            "unfold",
            f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: {list(x.shape)}",
        )
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    k = _ntuple(kernel_size, 2, "unfold")
    d = _ntuple(dilation, 2, "unfold")
    p = _ntuple(padding, 2, "unfold")
    s = _ntuple(stride, 2, "unfold")
    _check_block_args(k, d, p, s, "unfold")
    b, c, h, w = x.shape
    out = tuple(
        _conv_out(size, kk, ss, pp, pp, dd) for size, kk, ss, pp, dd in zip((h, w), k, s, p, d)
    )
    if min(out) < 1:
        raise op_error(
            RuntimeError,
            "unfold",
            f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, calculated shape of the array of sliding blocks as ({out[0]}, {out[1]}), but its components must be at least one.",
        )
    xp = pad(x, (p[1], p[1], p[0], p[0])) if any(p) else x
    cols = S.reshape(_windows(xp, k, s, d, out), (b, c * k[0] * k[1], out[0] * out[1]))
    return S.squeeze(cols, 0) if unbatched else cols


def _check_block_args(
    k: tuple[int, ...], d: tuple[int, ...], p: tuple[int, ...], s: tuple[int, ...], op: str
) -> None:
    if min(k) <= 0:
        raise op_error(RuntimeError, op, f"kernel size should be greater than zero, but got {k}")
    if min(d) <= 0:
        raise op_error(RuntimeError, op, f"dilation should be greater than zero, but got {d}")
    if min(p) < 0:
        raise op_error(RuntimeError, op, f"padding should be non-negative, but got {p}")
    if min(s) <= 0:
        raise op_error(RuntimeError, op, f"stride should be greater than zero, but got {s}")


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Columns (N, C * kH * kW, L) summed back into an (N, C, H, W) image (unfold's adjoint).

    >>> import lazytorch
    >>> cols = lazytorch.ones(1, 4, 4)
    >>> lazytorch.nn.functional.fold(cols, (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    x = tensor_arg(input, "fold")
    if x.ndim not in (2, 3):
        raise op_error(
            RuntimeError,
            "fold",
            f"Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got: {list(x.shape)}",
        )
    unbatched = x.ndim == 2
    if unbatched:
        x = S.unsqueeze(x, 0)
    size = _ntuple(output_size, 2, "fold")
    k = _ntuple(kernel_size, 2, "fold")
    d = _ntuple(dilation, 2, "fold")
    p = _ntuple(padding, 2, "fold")
    s = _ntuple(stride, 2, "fold")
    _check_block_args(k, d, p, s, "fold")
    b, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk:
        raise op_error(
            RuntimeError,
            "fold",
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={ck} and kernel_size={k}",
        )
    out = tuple(_conv_out(n, kn, sn, pn, pn, dn) for n, kn, sn, pn, dn in zip(size, k, s, p, d))
    if min(out) < 1 or out[0] * out[1] != length:
        raise op_error(
            RuntimeError,
            "fold",
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, expected size of input's dimension 2 to match the calculated number of sliding blocks {out[0]} * {out[1]} = {out[0] * out[1]}, but got input.size(2)={length}.",
        )
    cols = S.reshape(x, (b, ck // kk, kk, *out))
    full = (size[0] + 2 * p[0], size[1] + 2 * p[1])
    img = _col2im(cols, k, s, d, full)
    if any(p):
        img = pad(img, (-p[1], -p[1], -p[0], -p[0]))
    return S.squeeze(img, 0) if unbatched else img


def _conv_transpose(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
    n: int,
    op: str,
) -> Tensor:
    """n-d transposed convolution: one matmul per image and group, then col2im."""
    x = tensor_arg(input, op)
    w = tensor_arg(weight, op, "weight")
    if isinstance(padding, str):
        raise op_error(TypeError, op, f"padding must be an int or a tuple, not {padding!r}")
    x, unbatched = _batched(x, w, n, groups, op)
    b, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    cw, og = w.shape[:2]
    kernel = tuple(w.shape[2:])
    if c != cw or c % groups:
        raise op_error(
            RuntimeError,
            op,
            f"Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} to have {cw} channels, but got {c} channels instead",
        )
    s = _ntuple(stride, n, op)
    p = _ntuple(padding, n, op)
    op_ = _ntuple(output_padding, n, op)
    d = _ntuple(dilation, n, op)
    if min(s) <= 0:
        raise op_error(RuntimeError, op, "non-positive stride is not supported")
    if min(d) <= 0:
        raise op_error(RuntimeError, op, "non-positive dilation is not supported")
    if min(p) < 0:
        raise op_error(RuntimeError, op, "negative padding is not supported")
    if min(op_) < 0 or any(o >= max(si, di) for o, si, di in zip(op_, s, d)):
        raise op_error(
            RuntimeError,
            op,
            f"output padding must be smaller than either stride or dilation, but got output_padding={op_}, stride={s}, dilation={d}",
        )
    full = tuple(
        (size - 1) * si + di * (k - 1) + 1 for size, si, di, k in zip(spatial, s, d, kernel)
    )
    out = tuple(f - 2 * pi + oi for f, pi, oi in zip(full, p, op_))
    if min(out) <= 0:
        raise op_error(
            RuntimeError,
            op,
            f"Given input size per channel: {list(spatial)}. Calculated output size per channel: {list(out)}. Output size is too small",
        )
    kk = math.prod(kernel)
    dtype = x.dtype
    if dtype.is_low_float:  # float16/bfloat16: the overlapping sums in float32, one rounding
        x, w = x.to(dtype.compute), w.to(dtype.compute)
        bias = bias.to(dtype.compute) if bias is not None else None
    # (g, C/g, O/g*K) -> (g, O/g*K, C/g): each group's kernels as rows of W^T.
    wt = S.transpose(S.reshape(w, (1, groups, c // groups, og * kk)), 2, 3)
    xs = S.reshape(x, (b, groups, c // groups, math.prod(spatial)))
    cols = matmul(wt, xs)  # (N, g, O/g*K, L)
    cols = S.reshape(cols, (b, groups * og, kk, *spatial))
    y = _col2im(cols, kernel, s, d, full)
    widths = [v for i in reversed(range(n)) for v in (-p[i], op_[i] - p[i])]
    if any(widths):
        y = pad(y, widths)
    if bias is not None:
        y = y + S.reshape(bias, (1, groups * og) + (1,) * n)  # type: ignore[operator]
    y = y.to(dtype)
    return S.squeeze(y, 0) if unbatched else y


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """1-d transposed convolution of (N, C, L) input with a (C, O // groups, k) weight.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[[1.0, 2.0]]])
    >>> lazytorch.nn.functional.conv_transpose1d(x, lazytorch.tensor([[[1.0, 10.0]]]), stride=2)
    tensor([[[ 1., 10.,  2., 20.]]])
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        1,
        "conv_transpose1d",
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """2-d transposed convolution of (N, C, H, W) input with a (C, O // groups, kH, kW)
    weight: the gradient of conv2d with respect to its input.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 2, 3, 3)
    >>> w = lazytorch.ones(2, 4, 3, 3)
    >>> lazytorch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).shape
    lazytorch.Size([1, 4, 6, 6])
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        2,
        "conv_transpose2d",
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """3-d transposed convolution of (N, C, D, H, W) input with a (C, O // groups, kD, kH,
    kW) weight.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 2, 2, 2, 2)
    >>> lazytorch.nn.functional.conv_transpose3d(x, lazytorch.ones(2, 3, 2, 2, 2)).shape
    lazytorch.Size([1, 3, 3, 3, 3])
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        3,
        "conv_transpose3d",
    )
