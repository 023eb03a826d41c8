"""Distance modules: the settings as state, the math in `nn.functional`."""

from __future__ import annotations

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dimension.

    >>> import lazytorch
    >>> lazytorch.nn.PairwiseDistance(eps=0)(lazytorch.tensor([[3.0, 0.0]]), lazytorch.tensor([[0.0, 4.0]]))
    tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """cos(x1, x2) along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.CosineSimilarity(dim=0)(lazytorch.tensor([1.0, 0.0]), lazytorch.tensor([2.0, 0.0]))
    tensor(1.)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
