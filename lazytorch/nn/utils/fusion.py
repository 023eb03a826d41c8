"""torch.nn.utils.fusion: a batch norm in eval mode folded into the convolution or linear
layer before it, for inference.

In eval mode a batch norm is an affine map per channel, ``(y - mean) / sqrt(var + eps) *
gamma + beta``; applied to a layer's output it becomes that layer with each output
channel's weights scaled by ``gamma / sqrt(var + eps)`` and its bias shifted. The fused
layer computes what the pair computes, up to rounding.

>>> import lazytorch
>>> conv, bn = lazytorch.nn.Conv2d(3, 4, 3).eval(), lazytorch.nn.BatchNorm2d(4).eval()
>>> fused = lazytorch.nn.utils.fuse_conv_bn_eval(conv, bn)
>>> x = lazytorch.randn(1, 3, 5, 5)
>>> bool((fused(x) - bn(conv(x))).abs().max() < 1e-5)
True
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.ops import transcendental as T
from lazytorch.tensor import Tensor

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

ConvT = TypeVar("ConvT")
LinearT = TypeVar("LinearT")


def _fused_copy(layer: Any, bn: Any, fuse: Any, *extra: Any) -> Any:
    """A copy of `layer` whose weight and bias `fuse` folds `bn`'s statistics into."""
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fusion needs the batch norm's running statistics")
    fused = copy.deepcopy(layer)
    fused.weight, fused.bias = fuse(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        *extra,
    )
    return fused


def fuse_conv_bn_eval(conv: ConvT, bn: Any, transpose: bool = False) -> ConvT:
    """A copy of `conv` (a ConvNd, or a ConvTransposeNd with `transpose`) that computes
    ``bn(conv(x))``; both must be in eval mode."""
    if conv.training or bn.training:  # type: ignore[attr-defined]
        raise AssertionError("Fusion only for eval!")
    return _fused_copy(conv, bn, fuse_conv_bn_weights, transpose)


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The (weight, bias) of the convolution that computes the batch norm of `conv_w`'s
    output; the output channels are dim 0 of the weight (dim 1 with `transpose`)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = C.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = C.ones_like(bn_rm)
    if bn_b is None:
        bn_b = C.zeros_like(bn_rm)
    scale = bn_w * T.rsqrt(bn_rv + bn_eps)
    rest = [1] * (conv_w.ndim - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    weight = (conv_w * scale.reshape(shape)).to(dtype=w_dtype)
    bias = ((conv_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: LinearT, bn: Any) -> LinearT:
    """A copy of `linear` that computes ``bn(linear(x))``; both must be in eval mode, and
    the batch norm must have one feature or `linear`'s out_features."""
    if linear.training or bn.training:  # type: ignore[attr-defined]
        raise AssertionError("Fusion only for eval!")
    out = linear.out_features  # type: ignore[attr-defined]
    if out != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1"
        )
    return _fused_copy(linear, bn, fuse_linear_bn_weights)


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The (weight, bias) of the linear layer that computes the batch norm of `linear_w`'s
    output (one scale per output feature: a row of the weight)."""
    if linear_b is None:
        linear_b = C.zeros_like(bn_rm)
    scale = bn_w * T.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1)
    bias = (linear_b - bn_rm) * scale + bn_b
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
