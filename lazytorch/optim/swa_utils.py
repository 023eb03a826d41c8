"""Stochastic Weight Averaging and EMA of weights: torch.optim.swa_utils' `AveragedModel`,
`SWALR`, `update_bn` and the averaging functions, with torch's semantics.

The averages are lazy in-place updates under ``no_grad`` like an optimizer's; they compute
at the next materialization (the next ``optimizer.step()``, or any read).

>>> import lazytorch
>>> net = lazytorch.nn.Linear(2, 1)
>>> ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))
>>> ema.update_parameters(net)
>>> int(ema.n_averaged)
1
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from lazytorch.autograd import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.nn.modules.batchnorm import _BatchNorm
from lazytorch.nn.modules.module import Module
from lazytorch.ops.creation import tensor
from lazytorch.optim.optimizer import Optimizer
from lazytorch.optim.scheduler_base import LRScheduler, format_param
from lazytorch.tensor import Tensor

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _is_float_or_complex(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """An in-place exponential moving average over lists of tensors:
    ``ema = lerp(ema, current, 1 - decay)`` (for `AveragedModel`'s `multi_avg_fn`)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with no_grad():
            if _is_float_or_complex(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """An in-place running (equal-weight) average over lists of tensors:
    ``avg += (current - avg) / (num_averaged + 1)`` (for `multi_avg_fn`)."""

    def swa_update(
        averaged_param_list: PARAM_LIST,
        current_param_list: PARAM_LIST,
        num_averaged: Tensor | int,
    ) -> None:
        with no_grad():
            if _is_float_or_complex(averaged_param_list[0]):
                weight = 1 / (num_averaged + 1)
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    diff = p_model - p_avg
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Tensor]:
    """``decay * ema + (1 - decay) * current`` (for `AveragedModel`'s `avg_fn`)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Tensor]:
    """``avg + (current - avg) / (num_averaged + 1)`` (for `avg_fn`)."""

    def swa_update(
        averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int
    ) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with `use_buffers`, buffers) hold an
    average of the weights passed to ``update_parameters``: the equal-weight SWA average
    by default, or `avg_fn` (one tensor at a time) / `multi_avg_fn` (lists of tensors).
    The first update copies the weights. ``n_averaged`` counts the updates (a long
    buffer). Without `use_buffers`, buffers are copied from `model` on each update.

    >>> import lazytorch
    >>> net = lazytorch.nn.Linear(2, 1)
    >>> swa = AveragedModel(net)
    >>> swa.update_parameters(net)
    >>> bool((swa.module.weight == net.weight).all())
    True
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dt.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged module's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average."""
        self_param = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers
            else self.parameters()
        )
        model_param = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers
            else model.parameters()
        )
        self_param_detached: list[Tensor] = []
        model_param_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_param_detached.append(p_averaged)
                model_param_detached.append(p_model_)
                if copy_param:
                    p_averaged.copy_(p_model_)
            if bool(self.n_averaged > 0):
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    for _, pairs in _group_by_device_and_dtype(
                        self_param_detached, model_param_detached
                    ).items():
                        self_params = [a for a, _ in pairs]
                        model_params = [b for _, b in pairs]
                        n_averaged = self.n_averaged.to(self_params[0].device)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(self_params, model_params, n_averaged)
                        else:
                            avg_fn = get_swa_avg_fn()
                            for p_averaged, p_model in zip(self_params, model_params):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
                else:
                    for p_averaged, p_model in zip(self_param_detached, model_param_detached):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def _group_by_device_and_dtype(
    a: list[Tensor], b: list[Tensor]
) -> dict[tuple[Any, Any], list[tuple[Tensor, Tensor]]]:
    groups: dict[tuple[Any, Any], list[tuple[Tensor, Tensor]]] = {}
    for x, y in zip(a, b):
        groups.setdefault((str(x.device), x.dtype), []).append((x, y))
    return groups


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over `loader` (the
    cumulative average: momentum None during the pass), as after SWA. A batch that is a
    list or tuple contributes its first element."""
    with no_grad():
        momenta: dict[Module, Any] = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to `swa_lr` over `anneal_epochs` steps (``"cos"`` or
    ``"linear"``), then hold it.

    >>> import lazytorch
    >>> opt = lazytorch.optim.SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> for _ in range(2):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float,
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
