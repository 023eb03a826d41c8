"""Adadelta (Zeiler, 2012), torch's update with its ``lr`` scaling and weight decay."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, refuse_differentiable

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, torch's update exactly:

    ``square_avg = rho * square_avg + (1 - rho) * g²``; ``delta = sqrt(acc_delta + eps) /
    sqrt(square_avg + eps) * g``; ``acc_delta = rho * acc_delta + (1 - rho) * delta²``;
    ``p -= lr * delta``. ``g`` is the gradient (negated with ``maximize``) plus
    ``weight_decay * p``.

    State per parameter: ``step`` (a Python number), ``square_avg`` and ``acc_delta``.
    ``capturable`` and ``foreach`` are accepted and change nothing.

    >>> import lazytorch
    >>> from lazytorch.optim import Adadelta
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adadelta([w], lr=1.0, rho=0.0, eps=1e-6)
    >>> w.grad = lazytorch.tensor([2.0, -2.0])
    >>> opt.step()                 # rho=0: delta = sqrt(eps / (g² + eps)) * g ≈ 1e-3 * sign(g)
    >>> [round(v, 6) for v in w.tolist()]
    [0.999, -0.999]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    # Read anew by a compiled step's replay (Optimizer._host_numbers).
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, rho, eps, weight_decay = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        check_number("lr", lr)
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["square_avg"] = zeros_like(p)
                state["acc_delta"] = zeros_like(p)
            params.append(p)
        numbers = self._host_numbers(group, params, _neg_lr)
        for p, (neg_lr,) in zip(params, numbers):
            grad = p.grad
            state = self.state[p]
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)

            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=neg_lr)


def _neg_lr(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    return (-group["lr"],)
