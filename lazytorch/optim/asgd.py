"""Averaged SGD (Polyak & Juditsky, 1992), with torch's decay and averaging schedule."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import (
    Optimizer,
    ParamsT,
    as_scalar_dtype,
    check_number,
    refuse_differentiable,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent, torch's update exactly:

    ``p *= 1 - lambd * eta``; ``p -= eta * g``; the average ``ax += mu * (p - ax)`` (or
    ``ax = p`` while ``mu == 1``); then ``eta = lr / (1 + lambd * lr * step) ** alpha`` and
    ``mu = 1 / max(1, step - t0)``. ``g`` is the gradient (negated with ``maximize``) plus
    ``weight_decay * p``.

    State per parameter: ``step``, ``eta`` and ``mu`` (Python numbers computed on the host,
    ``eta`` and ``mu`` rounded to the default dtype as torch's 0-d tensors hold them) and
    ``ax``, the averaged parameters. ``foreach`` and ``capturable`` change nothing.

    >>> import lazytorch
    >>> from lazytorch.optim import ASGD
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = ASGD([w], lr=0.5, lambd=0.0)
    >>> w.grad = lazytorch.tensor([1.0, 1.0])
    >>> opt.step()
    >>> w.detach(), opt.state[w]["ax"]
    (tensor([ 0.5000, -1.5000]), tensor([ 0.5000, -1.5000]))
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        check_number("lr", lr)
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["eta"] = as_scalar_dtype(lr)
                state["mu"] = 1.0
                state["ax"] = zeros_like(p)
            if group["maximize"]:
                grad = -grad
            state["step"] += 1
            step = state["step"]
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)

            eta = state["eta"]
            p.mul_(1 - lambd * eta)  # decay term
            p.add_(grad, alpha=-eta)
            ax = state["ax"]
            if state["mu"] != 1:
                ax.add_(p.sub(ax).mul_(state["mu"]))
            else:
                ax.copy_(p.detach())  # (copy_ would pass on requires_grad even here)
            state["eta"] = as_scalar_dtype(lr / ((1 + lambd * lr * step) ** alpha))
            state["mu"] = as_scalar_dtype(1 / max(1, step - t0))
