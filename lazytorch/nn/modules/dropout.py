"""Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and FeatureAlphaDropout.

The masks come from lazytorch's generator, so they differ from torch's for the same seed;
the rules (which units drop together, the scaling, eval as identity) are torch's.
"""

from __future__ import annotations

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "AlphaDropout",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training mode, zero each element with probability `p` and scale the rest by
    1/(1-p); in eval mode (or with p=0) return the input unchanged.

    >>> import lazytorch
    >>> drop = lazytorch.nn.Dropout(0.5).eval()
    >>> drop(lazytorch.ones(3))
    tensor([1., 1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """In training, zero whole channels of (N, C, L) or (C, L) input with probability `p`
    and scale the rest by 1/(1-p).

    >>> import lazytorch
    >>> lazytorch.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training, zero whole channels of (N, C, H, W) input with probability `p` and
    scale the rest by 1/(1-p).

    >>> import lazytorch
    >>> lazytorch.nn.Dropout2d(1.0)(lazytorch.ones(1, 2, 2, 2)).sum()
    tensor(0.)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """In training, zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with
    probability `p` and scale the rest by 1/(1-p).

    >>> import lazytorch
    >>> lazytorch.nn.Dropout3d().eval()(lazytorch.ones(1, 1, 1, 1, 2))
    tensor([[[[[1., 1.]]]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks, keeping zero mean and unit variance (training only).

    >>> import lazytorch
    >>> lazytorch.nn.AlphaDropout(0.5).eval()(lazytorch.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels (training only).

    >>> import lazytorch
    >>> lazytorch.nn.FeatureAlphaDropout(0.5)
    FeatureAlphaDropout(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
