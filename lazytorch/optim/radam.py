"""RAdam (Liu et al., 2019): Adam with a rectified adaptive learning rate."""

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, torch's update exactly:

    the moments as in Adam; ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t
    beta2**t / (1 - beta2**t)``. While ``rho_t <= 5`` the step is SGD with momentum on the
    bias-corrected ``exp_avg``; after it, that step is scaled by the adaptive lr
    ``sqrt(1 - beta2**t) / (sqrt(exp_avg_sq) + eps)`` and the rectification ``r_t``. Both
    ``rho_t`` and ``r_t`` are host numbers (program inputs); the branch is taken on the host,
    so the first few steps use one program and the rest another. ``weight_decay`` is L2, or
    decoupled (RAdamW) with ``decoupled_weight_decay``.

    State per parameter: ``step`` (a Python number), ``exp_avg``, ``exp_avg_sq``.

    >>> import lazytorch
    >>> from lazytorch.optim import RAdam
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> w.grad = lazytorch.tensor([2.0, -0.5])
    >>> opt.step()                 # rho_1 <= 5: p -= lr * exp_avg / (1 - beta1)
    >>> w.detach()
    tensor([ 0.8000, -0.9500])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_number("lr", lr)
        check_adam_family(lr, betas, eps, weight_decay)
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        check_number("lr", lr)
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
            if group["maximize"]:
                grad = -grad
            state["step"] += 1
            step = state["step"]

            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)

            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            bias_corrected_exp_avg = exp_avg / bias_correction1

            # The length of the approximated simple moving average (host numbers).
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
                adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
