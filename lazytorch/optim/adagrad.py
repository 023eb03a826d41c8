"""Adagrad (Duchi et al., 2011), with torch's lr decay and initial accumulator."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import full_like
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, refuse_differentiable

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, torch's update exactly:

    ``sum += g²``; ``p -= clr * g / (sqrt(sum) + eps)`` with ``clr = lr / (1 + (step - 1) *
    lr_decay)``. ``g`` is the gradient (negated with ``maximize``) plus ``weight_decay * p``.

    As in torch the state is created at construction for every parameter: ``step`` (a
    Python number, 0) and ``sum`` (filled with ``initial_accumulator_value``). ``foreach``
    and ``fused`` are accepted and change nothing. An embedding's ``sparse=True`` gradient
    is dense here, and this dense update equals torch's sparse one (rows without gradient
    keep their values and accumulators).

    >>> import lazytorch
    >>> from lazytorch.optim import Adagrad
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.5)
    >>> for _ in range(2):
    ...     w.grad = lazytorch.tensor([3.0, 4.0])
    ...     opt.step()             # 0.5 * (1 + 1 / sqrt(2)) per parameter
    >>> [round(v, 4) for v in w.tolist()]
    [0.1464, -1.8536]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = 0.0
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    # Read anew by a compiled step's replay (Optimizer._host_numbers).
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        check_number("lr", lr)
        params = [p for p in group["params"] if p.grad is not None]
        numbers = self._host_numbers(group, params, _neg_clr)
        for p, (neg_clr,) in zip(params, numbers):
            grad = p.grad
            state = self.state[p]
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)

            state_sum = state["sum"]
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            p.addcdiv_(grad, std, value=neg_clr)


def _neg_clr(state: dict[str, Any], group: dict[str, Any]) -> tuple[float]:
    """-(the step's learning rate), host-side: a program input."""
    return (-(group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])),)
