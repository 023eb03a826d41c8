"""Rprop (Riedmiller & Braun, 1993): per-element step sizes driven by gradient signs."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import full_like, zeros_like
from lazytorch.ops.elementwise import where
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number, refuse_differentiable

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation, torch's update exactly:

    per element, the sign of ``g * prev`` picks a factor — ``etaplus`` where it is
    positive, ``etaminus`` where negative, 1 where zero — that scales ``step_size``
    (clamped to ``step_sizes``); where the sign flipped the gradient is taken as 0 (no move
    this step, and no flip next step); then ``p -= sign(g) * step_size`` and ``prev = g``.

    State per parameter: ``step`` (a Python number), ``prev`` and ``step_size`` (which
    starts at ``lr``). ``foreach`` and ``capturable`` change nothing.

    >>> import lazytorch
    >>> from lazytorch.optim import Rprop
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> for g in ([1.0, 1.0], [1.0, -1.0]):
    ...     w.grad = lazytorch.tensor(g)
    ...     opt.step()
    >>> w.detach(), opt.state[w]["step_size"]
    (tensor([ 0.7800, -1.1000]), tensor([0.1200, 0.0500]))
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    # Advanced by a compiled step's replay (Optimizer._host_numbers); lr only seeds the
    # step sizes (guarded by value, with the other hyperparameters).
    _host_state = ("step",)

    def _step_group(self, group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["prev"] = zeros_like(p)
                state["step_size"] = full_like(p.grad, group["lr"])
            params.append(p)
        self._host_numbers(group, params, _no_numbers)
        for p in params:
            grad = p.grad
            state = self.state[p]
            if group["maximize"]:
                grad = -grad

            prev, step_size = state["prev"], state["step_size"]
            # torch's three masked writes, in its order (NaN signs stay NaN).
            sign = grad.mul(prev).sign()
            sign = where(sign.gt(0), etaplus, sign)
            sign = where(sign.lt(0), etaminus, sign)
            sign = where(sign.eq(0), 1.0, sign)
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)

            grad = where(sign.eq(etaminus), 0.0, grad)  # a flip: no move, and no flip next
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)


def _no_numbers(state: dict[str, Any], group: dict[str, Any]) -> tuple[()]:
    return ()
