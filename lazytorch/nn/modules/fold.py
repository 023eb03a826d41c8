"""Fold and Unfold (col2im and im2col as modules)."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum columns (N, C * kH * kW, L) back into (N, C, H, W) images.

    >>> import lazytorch
    >>> fold = lazytorch.nn.Fold(output_size=(4, 5), kernel_size=2)
    >>> fold
    Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)
    >>> fold(lazytorch.ones(1, 12, 12)).shape
    lazytorch.Size([1, 3, 4, 5])
    """

    def __init__(
        self,
        output_size: Any,
        kernel_size: Any,
        dilation: Any = 1,
        padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Sliding blocks of (N, C, H, W) images as columns (N, C * kH * kW, L).

    >>> import lazytorch
    >>> unfold = lazytorch.nn.Unfold(kernel_size=(2, 3), padding=1)
    >>> unfold
    Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=1)
    >>> unfold(lazytorch.ones(2, 3, 4, 5)).shape
    lazytorch.Size([2, 18, 25])
    """

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
