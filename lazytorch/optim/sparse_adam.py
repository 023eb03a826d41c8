"""SparseAdam: Adam for the sparse gradients of embeddings looked up with ``sparse=True``."""

from __future__ import annotations

import math
from typing import Any

from lazytorch.autograd.engine import sparse_grad_rows
from lazytorch.ir import dtypes as dt
from lazytorch.ops import elementwise as E
from lazytorch.ops import shape as S
from lazytorch.ops.creation import zeros, zeros_like
from lazytorch.ops.shape import cat
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number
from lazytorch.tensor import Tensor

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, torch's update exactly: Adam's moments and step on the rows the sparse
    gradient holds, every other row of the parameter and of its moments left as it is.

    On a held row, with ``g`` the row's gradient (summed over repeated indices, negated
    with ``maximize``): ``m += (g - m) * (1 - beta1)``; ``v += (g² - v) * (1 - beta2)``;
    ``p += -lr * sqrt(1 - beta2**step) / (1 - beta1**step) * m / (sqrt(v) + eps)``. ``step``
    counts every step with a gradient, held rows or not (as torch's).

    Which rows: torch's ``Embedding(sparse=True)`` gradient is a sparse tensor of the rows
    the lookups touched (not the padding row). lazytorch's gradient is dense, with the same
    values, and the parameter keeps the looked-up indices beside it, so a row touched with an
    exactly zero gradient still takes its update, as in torch. A parameter whose gradient is
    dense (not from a sparse lookup) is refused, as torch refuses it.

    >>> import lazytorch
    >>> emb = lazytorch.nn.Embedding(4, 2, sparse=True)
    >>> opt = lazytorch.optim.SparseAdam(emb.parameters(), lr=0.5)
    >>> before = emb.weight.detach().clone()
    >>> emb(lazytorch.tensor([1, 1, 3])).sum().backward()
    >>> opt.step()
    >>> moved = (emb.weight.detach() != before).any(1)
    >>> moved.tolist()                  # rows 1 and 3 only
    [False, True, False, True]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        check_number("lr", lr)
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr > 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    # Read anew by a compiled step's replay (Optimizer._host_numbers).
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        check_number("lr", lr)
        params, held = [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            rows = sparse_grad_rows(p)
            if rows is None:
                raise RuntimeError(
                    "SparseAdam does not support dense gradients, please consider Adam instead"
                )
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
            params.append(p)
            held.append(rows)
        numbers = self._host_numbers(group, params, _neg_step_size)
        for p, rows, (neg_step_size,) in zip(params, held, numbers):
            if not rows:
                continue  # an empty sparse gradient: torch skips the update
            grad = -p.grad if group["maximize"] else p.grad
            state = self.state[p]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            hit = _held_rows(p, rows)
            # torch's arithmetic on the held values, in its order
            m_update = (grad - exp_avg) * (1 - beta1)
            v_update = (grad * grad - exp_avg_sq) * (1 - beta2)
            numer = m_update + exp_avg
            denom = (v_update + exp_avg_sq).sqrt() + eps
            step = (numer / denom) * neg_step_size
            p.copy_(E.where(hit, p + step, p))
            exp_avg.copy_(E.where(hit, numer, exp_avg))
            exp_avg_sq.copy_(E.where(hit, exp_avg_sq + v_update, exp_avg_sq))


def _held_rows(p: Tensor, rows: list[Any]) -> Tensor:
    """A bool mask, broadcasting against `p`, of the rows a sparse gradient holds: every
    looked-up index, but the lookups' padding rows."""
    idx = cat([S.reshape(flat, (-1,)).to(dt.int64) for flat, _ in rows])
    hit = zeros(p.shape[0], dtype=dt.float32, device=p.device).index_fill_(0, idx, 1.0)
    for pad in {pad for _, pad in rows if pad is not None}:
        hit[pad] = 0.0
    return S.reshape(hit > 0, (p.shape[0],) + (1,) * (p.ndim - 1))


def _neg_step_size(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    """-(lr * sqrt(1 - beta2**step) / (1 - beta1**step)), host-side: a program input."""
    beta1, beta2 = group["betas"]
    bias_correction1 = 1 - beta1 ** state["step"]
    bias_correction2 = 1 - beta2 ** state["step"]
    return (-(group["lr"] * math.sqrt(bias_correction2) / bias_correction1),)
