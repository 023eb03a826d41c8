"""RMSprop (Hinton's lecture 6e), with torch's centered variant, momentum and weight decay."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, refuse_differentiable

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, torch's update exactly:

    ``square_avg = alpha * square_avg + (1 - alpha) * g²``; the denominator is
    ``sqrt(square_avg) + eps``, or with ``centered`` ``sqrt(square_avg - grad_avg²) + eps``
    where ``grad_avg`` is the running mean of ``g``; with momentum ``buf = momentum * buf +
    g / denom`` and ``p -= lr * buf``, otherwise ``p -= lr * g / denom``. ``g`` is the
    gradient (negated with ``maximize``) plus ``weight_decay * p``.

    State per parameter: ``step`` (a Python number), ``square_avg``, ``momentum_buffer``
    (with momentum) and ``grad_avg`` (centered). ``capturable`` and ``foreach`` are accepted
    and change nothing: the step is one compiled program either way.

    >>> import lazytorch
    >>> from lazytorch.optim import RMSprop
    >>> w = lazytorch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01)
    >>> w.grad = lazytorch.tensor([0.5, 0.5])
    >>> opt.step()                 # first step: g / sqrt(0.01 * g²) = 10 per unit of lr
    >>> w.detach()
    tensor([ 0.9000, -2.1000])
    >>> sorted(opt.state[w])
    ['square_avg', 'step']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    # Read anew by a compiled step's replay (Optimizer._host_numbers).
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        check_number("lr", lr)
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["square_avg"] = zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p)
            params.append(p)
        numbers = self._host_numbers(group, params, _neg_lr)
        for p, (neg_lr,) in zip(params, numbers):
            grad = p.grad
            state = self.state[p]
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)

            square_avg = state["square_avg"]
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add_(eps)

            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=neg_lr)
            else:
                p.addcdiv_(grad, avg, value=neg_lr)


def _neg_lr(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    return (-group["lr"],)
