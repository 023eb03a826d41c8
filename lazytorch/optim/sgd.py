"""Stochastic gradient descent, with torch's momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any

from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, same_value

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), torch's update exactly:

    ``g = grad (+ weight_decay * p)``; with momentum ``buf = momentum * buf + (1 - dampening)
    * g`` (``buf = g`` on the first step) and ``g = buf`` (or ``g + momentum * buf`` with
    Nesterov); then ``p -= lr * g``. ``maximize`` ascends instead. ``foreach`` and ``fused``
    are accepted for compatibility: every lazytorch step is one fused program anyway.

    ``step()`` records the update lazily and ends with ``lazytorch.materialize()``: the
    training step is computed there, as one program.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()      # grad = 2 * w
    ...     opt.step()
    >>> w.detach()
    tensor([0.4600, 0.9200])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        for name, value in (("lr", lr), ("weight_decay", weight_decay)):
            check_number(name, value)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("lazytorch.optim.SGD does not support differentiable=True")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    # A compiled step's replay reads lr anew (Optimizer._host_numbers): an LR schedule that
    # sets it before every step keeps replaying; the other hyperparameters are guarded.
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        momentum = group["momentum"]
        dampening = group["dampening"]
        weight_decay = group["weight_decay"]
        check_number("lr", lr)
        params = [p for p in group["params"] if p.grad is not None]
        numbers = self._host_numbers(group, params, _neg_lr, count_steps=False)
        for p, (neg_lr,) in zip(params, numbers):
            grad = p.grad
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = same_value(grad)
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(grad, alpha=neg_lr)


def _neg_lr(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    """SGD's one host-side number, which a compiled step's replay reads anew."""
    return (-group["lr"],)
