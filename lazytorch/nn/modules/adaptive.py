"""`AdaptiveLogSoftmaxWithLoss` (Grave et al., efficient softmax approximation), with
torch's parameters, outputs and errors."""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.container import ModuleList, Sequential
from lazytorch.nn.modules.linear import Linear
from lazytorch.nn.modules.module import Module
from lazytorch.ops.elementwise import where
from lazytorch.ops.shape import cat
from lazytorch.tensor import Tensor

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: a head over the `cutoffs[0]` frequent classes plus one entry per
    tail cluster, and per cluster a two-layer projection (``in_features // div_value**(i +
    1)`` hidden units). ``forward(input, target)`` returns ``(output, loss)``: each row's
    target log-probability and their negated mean.

    Every cluster's projection is computed for all rows and selected per row (torch
    gathers the rows of each cluster first): the same values and gradients, with no host
    round trip but one range check of the targets.

    >>> import lazytorch
    >>> m = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
    >>> out = m(lazytorch.randn(3, 8), lazytorch.tensor([0, 5, 9]))
    >>> tuple(out.output.shape), tuple(m.log_prob(lazytorch.randn(3, 8)).shape)
    ((3,), (3, 10))
    """

    in_features: int
    n_classes: int
    cutoffs: list[int]
    div_value: float
    head_bias: bool
    head: Linear
    tail: ModuleList

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > (n_classes - 1)
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive "
                "integers sorted in an increasing order, where "
                "each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **factory_kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            projection = Sequential(
                Linear(self.in_features, hsz, bias=False, **factory_kwargs),
                Linear(hsz, osz, bias=False, **factory_kwargs),
            )
            self.tail.append(projection)

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:  # type: ignore[misc]
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, "
                    f"but found inputs with size {input_.size()}"
                )
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, "
                    f"but found inputs with size {input_.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        if target.numel() and bool(((target < 0) | (target >= self.n_classes)).any()):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], "
                f"but values in range [{target.min().item()}, {target.max().item()}] "
                "were found. "
            )
        output = input.new_zeros(target.size(0))
        gather_inds = target
        for i in range(1, self.n_clusters + 1):
            low_idx, high_idx = self.cutoffs[i - 1], self.cutoffs[i]
            target_mask = (target >= low_idx) & (target < high_idx)
            relative_target = (target - low_idx).clamp(0, high_idx - low_idx - 1)
            cluster_output = self.tail[i - 1](input)
            cluster_logprob = F.log_softmax(cluster_output, dim=1)
            local_logprob = cluster_logprob.gather(1, relative_target.unsqueeze(1)).squeeze(1)
            output = where(target_mask, local_logprob, output)
            gather_inds = where(target_mask, self.shortlist_size + i - 1, gather_inds)
        head_output = self.head(input)
        head_logprob = F.log_softmax(head_output, dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i, _ in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of every class, ``(N, n_classes)``."""
        head_output = self.head(input)
        return self._get_full_log_prob(input, head_output)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (computing the tail only where the head's
        best entry is a cluster, as torch, but for every row here)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        full = self._get_full_log_prob(input, head_output).argmax(dim=1)
        return where(not_in_shortlist, full, output)
