"""`LinearCrossEntropyLoss` and its `LinearCrossEntropyOptions` (torch 2.13): a linear
projection to logits and cross entropy, as one loss module.

torch's options select a chunked implementation that never holds the whole (N, C) logits.
lazytorch validates them as torch does and computes the reference formula: the projection
and the loss are recorded into one program with the logits as a temporary of it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.nn import functional as F
from lazytorch.nn.modules.linear import Linear
from lazytorch.nn.modules.loss import _WeightedLoss
from lazytorch.tensor import Tensor

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """torch's settings for the chunked `linear_cross_entropy`, checked as torch checks
    them. lazytorch does not chunk (see the module docstring), so they change no result.

    >>> import lazytorch
    >>> lazytorch.nn.LinearCrossEntropyOptions(batch_chunk_size=64).batch_chunk_size
    64
    >>> lazytorch.nn.LinearCrossEntropyOptions(acc_policy="fast")
    Traceback (most recent call last):
        ...
    ValueError: invalid acc_policy: 'fast'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        floats = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
        if self.acc_dtype is not None and self.acc_dtype not in floats:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically."
            )


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``self.linear(input)`` against `target`: `linear` is a
    `Linear(in_features, num_classes * prod(out_features))` (its weight stored flat, as
    torch stores it, and reshaped to (C, *out_features, in) in `forward`).

    >>> import lazytorch
    >>> loss = lazytorch.nn.LinearCrossEntropyLoss(3, 4)
    >>> _ = lazytorch.nn.init.zeros_(loss.linear.weight)
    >>> round(loss(lazytorch.ones(2, 3), lazytorch.tensor([0, 3])).item(), 4)
    1.3863
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(
            in_features,
            math.prod(out_features, start=num_classes),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input,
            self.linear.weight.reshape((*shape, self.linear.in_features)),
            target,
            linear_bias=bias.reshape(shape) if bias is not None else None,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features},"
            f" num_classes={self.num_classes},"
            f" out_features={self.out_features},"
            f" bias={self.linear.bias is not None},"
            f" reduction={self.reduction},"
            f" ignore_index={self.ignore_index},"
            f" label_smoothing={self.label_smoothing},"
            f" options={self.options}"
        )
