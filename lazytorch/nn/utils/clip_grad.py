"""clip_grad_norm_ and clip_grad_value_, lazily: nothing here reads a value.

torch scales the gradients by ``clamp(max_norm / (total_norm + 1e-6), max=1)`` rather than
testing ``total_norm > max_norm`` in Python; that multiply is what keeps the clip inside
the lazy training step (no materialization between backward and the optimizer update).
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import linalg as L
from lazytorch.ops import shape as S
from lazytorch.tensor import Tensor

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    out = list(parameters)
    if is_generator and not out:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3
        )
    return out


def _get_total_norm(grads: list[Tensor], norm_type: float, error_if_nonfinite: bool) -> Tensor:
    if not grads:
        return C.tensor(0.0)
    norms = [L.vector_norm(g, norm_type) for g in grads]
    total = L.vector_norm(S.stack(norms), norm_type)
    if error_if_nonfinite and bool(~E.isfinite(total)):  # reads the norm: materializes
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients in place so that their joint `norm_type`-norm is at most
    `max_norm`; returns the norm before clipping (a lazy 0-d tensor).

    The joint norm is the norm of the per-gradient norms (``inf``: their max). Only
    `error_if_nonfinite=True` reads a value (to raise); `foreach` is accepted and ignored.

    >>> import lazytorch
    >>> p = lazytorch.nn.Parameter(lazytorch.zeros(2))
    >>> p.grad = lazytorch.tensor([3.0, -4.0])
    >>> lazytorch.nn.utils.clip_grad_norm_(p, 1.0, norm_type="inf")
    tensor(4.)
    >>> p.grad
    tensor([ 0.7500, -1.0000])
    """
    params = _as_list(parameters)
    norm_type = float(norm_type)
    with no_grad():
        grads = [p.grad for p in params if p.grad is not None]
        total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite)  # type: ignore[arg-type]
        clip_grads_with_norm_(params, max_norm, total_norm)
    return total_norm


def clip_grad_norm(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated in torch: `clip_grad_norm_`, with torch's warning."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The joint `norm_type`-norm of `tensors` (the norm of their norms), lazily.

    >>> import lazytorch
    >>> lazytorch.nn.utils.get_total_norm([lazytorch.tensor([3.0]), lazytorch.tensor([4.0])])
    tensor(5.)
    """
    with no_grad():
        return _get_total_norm(_as_list(tensors), float(norm_type), error_if_nonfinite)


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale the gradients in place by min(1, max_norm / (total_norm + 1e-6)).

    >>> import lazytorch
    >>> p = lazytorch.nn.Parameter(lazytorch.zeros(2))
    >>> p.grad = lazytorch.tensor([3.0, 4.0])
    >>> lazytorch.nn.utils.clip_grads_with_norm_(p, 1.0, lazytorch.tensor(5.0))
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    with no_grad():
        grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
        if not grads:
            return
        coef = E.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)  # type: ignore[operator]
        for g in grads:
            g.mul_(coef)  # type: ignore[union-attr]


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient to [-clip_value, clip_value] in place.

    >>> import lazytorch
    >>> p = lazytorch.nn.Parameter(lazytorch.zeros(3))
    >>> p.grad = lazytorch.tensor([-5.0, 0.5, 5.0])
    >>> lazytorch.nn.utils.clip_grad_value_(p, 1.0)
    >>> p.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    with no_grad():
        for p in params:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)  # type: ignore[attr-defined]
