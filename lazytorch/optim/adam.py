"""Adam and AdamW, with torch's update formulas (its single-tensor implementation)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazytorch.ir import dtypes as dt
from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_adam_family, check_number

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), torch's update exactly, with optional AMSGrad and ``maximize``.

    Per parameter the state holds ``step`` (a Python number: the bias corrections are
    computed on the host and enter the program as inputs, so the step count never changes
    the compiled program), ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``,
    ``max_exp_avg_sq``. ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2), or
    with ``decoupled_weight_decay=True`` scales ``p`` by ``1 - lr * weight_decay`` (AdamW).
    ``foreach`` and ``capturable`` are accepted for compatibility and change nothing: the
    step is one compiled program either way. ``fused=True`` changes the rounding of a
    bfloat16 or float16 parameter's update as torch's fused kernel does (computed in float32,
    rounded once); float32 and float64 parameters update as without it.

    ``step()`` records the update lazily and ends with ``lazytorch.materialize()``.

    >>> import lazytorch
    >>> from lazytorch.optim import Adam
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()                 # the first Adam step moves each weight by about lr
    >>> w.detach()
    tensor([ 0.9000, -0.9000])
    >>> opt.state[w]["step"]
    1.0
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        for name, value in (("lr", lr), ("betas[0]", betas[0]), ("betas[1]", betas[1])):
            check_number(name, value)
        check_adam_family(lr, betas, eps, weight_decay)
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        if differentiable:
            raise NotImplementedError(
                f"lazytorch.optim.{type(self).__name__} does not support differentiable=True"
            )
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    # What a compiled step's replay reads anew through `_adam_numbers` (Optimizer.
    # _host_numbers): the step count it advances and the learning rate (a schedule changing
    # lr every step keeps replaying); every other hyperparameter is guarded by value.
    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        check_number("lr", lr)
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = zeros_like(p)
            params.append(p)
        numbers = self._host_numbers(group, params, _adam_numbers)
        for p, (neg_step_size, bias_correction2_sqrt, *decay) in zip(params, numbers):
            if group["fused"] and p.dtype in _REDUCED:
                self._fused_reduced_step(group, p, -neg_step_size, bias_correction2_sqrt, decay)
                continue
            grad = p.grad
            state = self.state[p]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

            if group["maximize"]:
                grad = -grad

            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(decay[0])
                else:
                    grad = grad.add(p, alpha=weight_decay)

            # Decay the first and second moment running averages.
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

            if amsgrad:
                max_exp_avg_sq = state["max_exp_avg_sq"]
                max_exp_avg_sq.copy_(max_exp_avg_sq.maximum(exp_avg_sq))
                denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            p.addcdiv_(exp_avg, denom, value=neg_step_size)

    def _fused_reduced_step(
        self,
        group: dict[str, Any],
        p: Any,
        step_size: Any,
        bias_correction2_sqrt: Any,
        decay: list[Any],
    ) -> None:
        """torch's fused kernel (``fused=True``) for a bfloat16 or float16 parameter: every
        value is loaded as float32, the whole update is computed in float32 and the
        parameter and both moments are rounded back once, where the single-tensor update
        rounds after each op. The moments enter the parameter's update unrounded."""
        beta1, beta2 = group["betas"]
        weight_decay, state = group["weight_decay"], self.state[p]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        grad, param = p.grad.float(), p.float()
        avg, avg_sq = exp_avg.float(), exp_avg_sq.float()
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param = param * decay[0]  # 1 - lr * weight_decay, an input (_adam_numbers)
            else:
                grad = grad + param * weight_decay
        # The kernel's lerp is one fused multiply-add, base + coeff * (grad - avg), with
        # coeff and base by the size of the weight; float64 holds the product exactly and
        # rounds the sum (to float64, then float32) as the fma does but in rare ties.
        weight = float(np.float32(1 - beta1))
        small = abs(weight) < 0.5
        coeff, base = (weight, avg) if small else (float(np.float32(weight - 1)), grad)
        avg = (base.double() + (grad - avg).double() * coeff).float()
        avg_sq = avg_sq * beta2 + (1 - beta2) * grad * grad
        if group["amsgrad"]:
            max_sq = state["max_exp_avg_sq"]
            top = max_sq.float().maximum(avg_sq)
            max_sq.copy_(top)
            denom = top.sqrt() / bias_correction2_sqrt + group["eps"]
        else:
            denom = avg_sq.sqrt() / bias_correction2_sqrt + group["eps"]
        exp_avg.copy_(avg)
        exp_avg_sq.copy_(avg_sq)
        p.copy_(param - step_size * avg / denom)


# The dtypes torch's fused Adam computes in float32 (its opmath) and rounds back once.
_REDUCED = (dt.bfloat16, dt.float16)


def _adam_numbers(state: dict[str, Any], group: dict[str, Any]) -> tuple[float, ...]:
    """A parameter's host-side numbers after its step count advanced: ``-step_size``,
    ``sqrt(bias_correction2)`` and, with decoupled weight decay, ``1 - lr * weight_decay``
    (only numbers the update uses: each reaches the program as an input).

    Host-side scalars are program inputs, so a new step or lr reuses the program; a
    compiled step's replay recomputes them (Optimizer._host_numbers).
    """
    lr = group["lr"]
    beta1, beta2 = group["betas"]
    step = state["step"]
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    out: tuple[float, ...] = (-step_size, bias_correction2**0.5)
    if group["weight_decay"] != 0 and group["decoupled_weight_decay"]:
        out += (1 - lr * group["weight_decay"],)
    return out


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr *
    weight_decay`` before the Adam update, torch's AdamW exactly (default weight_decay 1e-2).

    >>> import lazytorch
    >>> from lazytorch.optim import AdamW
    >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = lazytorch.tensor([1.0, -1.0])
    >>> opt.step()                 # 1 * (1 - 0.1 * 0.5) - 0.1
    >>> w.detach()
    tensor([ 0.8500, -0.8500])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        # Loading any state into AdamW keeps it AdamW (as torch does).
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
