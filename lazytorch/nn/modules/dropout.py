"""Dropout."""

from __future__ import annotations

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["Dropout"]


class Dropout(Module):
    """In training mode, zero each element with probability `p` and scale the rest by
    1/(1-p); in eval mode (or with p=0) return the input unchanged.

    >>> import lazytorch
    >>> drop = lazytorch.nn.Dropout(0.5).eval()
    >>> drop(lazytorch.ones(3))
    tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
