"""NAdam (Dozat, 2016): Adam with Nesterov momentum and torch's momentum-decay schedule."""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import (
    Optimizer,
    ParamsT,
    as_scalar_dtype,
    check_adam_family,
    check_number,
    refuse_differentiable,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, torch's update exactly:

    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``; ``mu_product *= mu_t``;
    the moments as in Adam; ``denom = sqrt(exp_avg_sq / (1 - beta2**t)) + eps``; then
    ``p -= lr * (1 - mu_t) / (1 - mu_product) * g / denom`` and ``p -= lr * mu_{t+1} / (1 -
    mu_product * mu_{t+1}) * exp_avg / denom``. ``weight_decay`` is L2, or with
    ``decoupled_weight_decay`` scales ``p`` by ``1 - lr * weight_decay`` (NAdamW).

    State per parameter: ``step`` and ``mu_product`` (Python numbers computed on the host;
    ``mu_product`` is rounded as torch's 0-d tensor holds it: to the default dtype, and to
    the parameter's after ``load_state_dict``),
    ``exp_avg`` and ``exp_avg_sq``. ``foreach`` and ``capturable`` change nothing.

    >>> import lazytorch
    >>> from lazytorch.optim import NAdam
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = NAdam([w], lr=0.1)
    >>> w.grad = lazytorch.tensor([2.0, -2.0])
    >>> opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.8944, -0.8944]
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_number("lr", lr)
        check_adam_family(lr, betas, eps, weight_decay)
        if not momentum_decay >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        refuse_differentiable(self, differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    # torch's mu_product is a 0-d tensor of the default dtype, and of the parameter's dtype
    # once loaded from a state dict (its load casts every state tensor but ``step``).
    _mu_product_in_param_dtype = False

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._mu_product_in_param_dtype = True

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        check_number("lr", lr)
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["mu_product"] = 1.0
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

            # The momentum schedule is host arithmetic: its values are program inputs.
            bias_correction2 = 1 - beta2**step
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            # torch multiplies its 0-d mu_product tensor by mu in that tensor's dtype.
            dtype = p.dtype if self._mu_product_in_param_dtype else None
            mu_product = as_scalar_dtype(state["mu_product"] * as_scalar_dtype(mu, dtype), dtype)
            state["mu_product"] = mu_product
            mu_product_next = mu_product * mu_next

            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
            p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
            p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
