"""`CrossMapLRN2d`: torch's legacy cross-channel local response normalization, with its
forward window and its hand-written backward reproduced exactly.

torch's forward sums squares over the channel window ``[c - pre_pad + 1, c + pre_pad - 1]``
(``pre_pad = (size - 1) // 2 + 1``) but never drops channel 0 from its running sum, so
channel 0's square is in every window; its backward is the classic symmetric-window formula
(not the exact derivative of that forward). Both are kept here, so values and gradients are
torch's.
"""

from __future__ import annotations

from typing import Any

from lazytorch.autograd.function import Function
from lazytorch.nn.modules.module import Module
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor

__all__ = ["CrossMapLRN2d"]


def _shifted_sum(x: Tensor, before: int, after: int, width: int) -> Tensor:
    """Along dim 1: pad `before`/`after` zeros, then the sum of `width` consecutive
    entries starting at each original position."""
    c = x.shape[1]
    padded = pad(x, (0, 0, 0, 0, before, after))
    total = padded.narrow(1, 0, c)
    for t in range(1, width):
        total = total + padded.narrow(1, t, c)
    return total


class _CrossMapLRN2dFunction(Function):
    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float, beta: float, k: float) -> Any:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        sq = input * input
        pre_pad = int((size - 1) / 2 + 1)
        rest = sq.narrow(1, 1, sq.shape[1] - 1)
        tail = pad(rest, (0, 0, 0, 0, 1, 0))  # channel 0 zeroed: counted once below
        window = _shifted_sum(tail, pre_pad - 1, pre_pad - 1, 2 * pre_pad - 1)
        scale = (window + sq.narrow(1, 0, 1)) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Any:
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        inverse_pre_pad = int(size - (size - 1) / 2)
        after = size - 1 - inverse_pre_pad
        if after < 0:  # torch's backward narrows past its buffer here
            raise RuntimeError(
                f"CrossMapLRN2d backward: start ({inverse_pre_pad}) + length "
                f"({input.shape[1]}) exceeds dimension size ({input.shape[1] + size - 1})."
            )
        ratio = grad_output * output / scale
        accum = _shifted_sum(ratio, inverse_pre_pad, after, size)
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / size
        grad_input = scale.pow(-ctx.beta) * grad_output - cache_ratio_value * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """Cross-channel local response normalization of (N, C, H, W) input (torch's legacy
    module; `LocalResponseNorm` is the modern one).

    >>> import lazytorch
    >>> CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
