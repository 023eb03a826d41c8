"""Adafactor (Shazeer & Stern), with torch's update formulas (its single-tensor
implementation, torch.optim.Adafactor)."""

from __future__ import annotations

from typing import Any

from lazytorch._dtype_info import finfo
from lazytorch.ops.creation import zeros_like
from lazytorch.optim.optimizer import Optimizer, ParamsT, check_number

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, torch's variant exactly: factored second moments for matrices (row and
    column means of ``g**2`` along the last two dimensions), a full one for vectors.

    Per step ``t``: ``1 - beta2_t = t ** beta2_decay``, ``rho_t = min(lr, 1 / sqrt(t))``,
    ``alpha = max(eps2, RMS(p)) * rho_t``; ``p *= 1 - lr * weight_decay``; the variance
    estimate is ``row_var @ col_var / max(mean(row_var), eps1)`` (matrices) or the running
    ``g**2`` (vectors); ``u = g / max(sqrt(v), eps1)``; ``p -= alpha / max(1, RMS(u) / d) * u``.
    `eps1` None is the parameter dtype's machine epsilon.

    State per parameter: ``step`` (a Python number), and ``row_var``/``col_var`` or
    ``variance``. torch reads ``RMS(p)`` and ``RMS(u)`` on the host (``.item()``);
    lazytorch keeps them in the program (no sync), so results agree with torch's to
    float rounding. ``foreach`` changes nothing.

    >>> import lazytorch
    >>> w = lazytorch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = Adafactor([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> opt.state[w]["row_var"].shape
    lazytorch.Size([2, 1])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        check_number("lr", lr)
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    _host_state = ("step",)
    _host_hyper = ("lr",)

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, d, weight_decay = group["lr"], group["d"], group["weight_decay"]
        eps1_group, eps2 = group["eps"]
        check_number("lr", lr)
        params = []
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = zeros_like(p.grad)
            params.append(p)
        numbers = self._host_numbers(group, params, _adafactor_numbers)
        for p, (one_minus_beta2_t, rho_t) in zip(params, numbers):
            grad = -p.grad if group["maximize"] else p.grad
            state = self.state[p]
            eps1 = finfo(p.dtype).eps if eps1_group is None else eps1_group
            numel = max(p.numel(), 1)
            alpha = (p.norm(2) / numel**0.5).clamp(min=eps2) * rho_t
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_mean = grad.norm(dim=-1, keepdim=True).square() / grad.size(-1)
                row_var.lerp_(row_mean, one_minus_beta2_t)
                col_mean = grad.norm(dim=-2, keepdim=True).square() / grad.size(-2)
                col_var.lerp_(col_mean, one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate = var_estimate / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, one_minus_beta2_t)
                var_estimate = variance
            update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
            denom = (update.norm(2) / (max(update.numel(), 1) ** 0.5 * d)).clamp(min=1.0)
            p.sub_(update * (alpha / denom))


def _adafactor_numbers(state: dict[str, Any], group: dict[str, Any]) -> tuple[float, float]:
    """``1 - beta2_t`` and ``rho_t`` of this step, host-side: program inputs."""
    step = state["step"]
    return (step ** group["beta2_decay"], min(group["lr"], 1 / step**0.5))
