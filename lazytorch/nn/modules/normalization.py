"""LayerNorm."""

from __future__ import annotations

import numbers
from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims, then (with
    `elementwise_affine`) scale by ``weight`` (init 1) and shift by ``bias`` (init 0).

    >>> import lazytorch
    >>> ln = lazytorch.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(lazytorch.tensor([[1.0, 2.0, 3.0, 4.0]])).mean().abs().item() < 1e-6
    True
    """

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(C.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(C.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )
