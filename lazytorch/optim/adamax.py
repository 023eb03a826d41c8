"""Adamax (Kingma & Ba, section 7.1): Adam with an infinity-norm second moment."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_adam_family,
    check_number,
    refuse_differentiable,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, torch's update exactly:

    ``exp_avg = lerp(exp_avg, g, 1 - beta1)``; ``exp_inf = max(beta2 * exp_inf, |g| +
    eps)``; ``p -= lr / (1 - beta1**step) * exp_avg / exp_inf``. ``g`` is the gradient
    (negated with ``maximize``) plus ``weight_decay * p``.

    State per parameter: ``step`` (a Python number: the bias correction is computed on the
    host), ``exp_avg`` and ``exp_inf``. ``foreach`` and ``capturable`` change nothing.

    >>> import lazytorch
    >>> from lazytorch.optim import Adamax
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> w.grad = lazytorch.tensor([2.0, -0.5])
    >>> opt.step()                 # the first step moves each weight by about lr
    >>> w.detach()
    tensor([ 0.9000, -0.9000])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_number("lr", lr)
        check_adam_family(lr, betas, eps, weight_decay)
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    # Read anew by a compiled step's replay (Optimizer._host_numbers).
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        check_number("lr", lr)
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["exp_avg"] = zeros_like(p)
                state["exp_inf"] = zeros_like(p)
            params.append(p)
        numbers = self._host_numbers(group, params, _neg_clr)
        for p, (neg_clr,) in zip(params, numbers):
            grad = p.grad
            state = self.state[p]
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)

            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_inf.copy_(exp_inf.mul(beta2).maximum(grad.abs().add_(eps)))
            p.addcdiv_(exp_avg, exp_inf, value=neg_clr)


def _neg_clr(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    """-(lr / (1 - beta1**step)), host-side: a program input."""
    return (-(group["lr"] / (1 - group["betas"][0] ** state["step"])),)
