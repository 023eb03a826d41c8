"""Loss modules: the reduction (and weights) as state, the math in `nn.functional`."""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "SmoothL1Loss",
]


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    """torch's mapping of the deprecated size_average/reduce flags to `reduction`."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        stacklevel=3,
    )
    return ret


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum, or none) of |input - target|.

    >>> import lazytorch
    >>> lazytorch.nn.L1Loss()(lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([0.0, 0.0]))
    tensor(1.5000)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum, or none) of (input - target)**2.

    >>> import lazytorch
    >>> lazytorch.nn.MSELoss(reduction="sum")(lazytorch.tensor([1.0, 2.0]), lazytorch.zeros(2))
    tensor(5.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Huber-like loss: quadratic below `beta`, linear above.

    >>> import lazytorch
    >>> lazytorch.nn.SmoothL1Loss()(lazytorch.tensor([0.5, 3.0]), lazytorch.zeros(2))
    tensor(1.3125)
    """

    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class-index targets under log-probabilities.

    >>> import lazytorch
    >>> logp = lazytorch.log(lazytorch.tensor([[0.5, 0.5], [0.25, 0.75]]))
    >>> round(lazytorch.nn.NLLLoss()(logp, lazytorch.tensor([0, 1])).item(), 4)
    0.4904
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax over the class dim then NLL; targets are class indices or class
    probabilities; optional class `weight`, `ignore_index` and `label_smoothing`.

    >>> import lazytorch
    >>> loss = lazytorch.nn.CrossEntropyLoss(label_smoothing=0.1)
    >>> round(loss(lazytorch.zeros(2, 4), lazytorch.tensor([1, 3])).item(), 4)
    1.3863
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (each log clamped at -100, as torch).

    >>> import lazytorch
    >>> round(lazytorch.nn.BCELoss()(lazytorch.tensor([0.5]), lazytorch.tensor([1.0])).item(), 4)
    0.6931
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy in one numerically stable expression; `pos_weight`
    weighs the positive term per class.

    >>> import lazytorch
    >>> loss = lazytorch.nn.BCEWithLogitsLoss(pos_weight=lazytorch.tensor([2.0]))
    >>> round(loss(lazytorch.zeros(3, 1), lazytorch.ones(3, 1)).item(), 4)
    1.3863
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )
