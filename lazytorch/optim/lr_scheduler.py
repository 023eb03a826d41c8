"""Learning-rate schedulers with torch's recurrences (the same lr sequence, step for step).

A scheduler writes ``group["lr"]`` of its optimizer's parameter groups (and, for the
cyclic ones, the momentum or ``betas[0]``). These enter the training step's program as
inputs, so a schedule never recompiles anything.

This module holds the schedules that scale the lr epoch by epoch; the cyclic ones
(``CyclicLR``, ``OneCycleLR``, ``CosineAnnealingWarmRestarts``), ``ReduceLROnPlateau`` and the
combinators (``SequentialLR``, ``ChainedScheduler``) live in their own modules and are
exported here, as in torch.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from lazytorch.optim.combined_lr import ChainedScheduler, SequentialLR
from lazytorch.optim.cyclic_lr import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from lazytorch.optim.optimizer import Optimizer
from lazytorch.optim.plateau_lr import ReduceLROnPlateau
from lazytorch.optim.scheduler_base import LRScheduler, group_values

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]


class _LRScheduler(LRScheduler):
    """torch's pre-2.0 name of `LRScheduler`, still the base class of many published
    schedulers (``class CosineLR(lr_scheduler._LRScheduler)``); torch keeps it as an empty
    subclass outside ``__all__``, and so does lazytorch.

    >>> import lazytorch
    >>> from lazytorch.optim.lr_scheduler import _LRScheduler
    >>> class Halve(_LRScheduler):
    ...     def get_lr(self):
    ...         return [base * 0.5**self.last_epoch for base in self.base_lrs]
    >>> opt = lazytorch.optim.SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halve(opt)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """


def _per_group(optimizer: Optimizer, lr_lambda: Any) -> list[Any]:
    """One lr function per param group: `lr_lambda` repeated, or its list checked."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
        )
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """lr = initial lr times ``lr_lambda(epoch)`` (one function, or one per group).

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import LambdaLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """Like the base, but a lambda is saved only as a callable object's ``__dict__``
        (functions and lambdas are not saved), as torch does."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)

    def get_lr(self) -> list[float]:
        return [
            base_lr * lmbda(self.last_epoch)
            for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class MultiplicativeLR(LRScheduler):
    """Multiply the lr by ``lr_lambda(epoch)`` every epoch (one function, or one per group).

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import MultiplicativeLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return group_values(self.optimizer)
        return [
            group["lr"] * lmbda(self.last_epoch)
            for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)
        ]


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` epochs.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import StepLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return group_values(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each epoch in `milestones`.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import MultiStepLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiStepLR(opt, milestones=[1, 3], gamma=0.1)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.010000000000000002]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return group_values(self.optimizer)
        return [
            group["lr"] * self.gamma ** self.milestones[self.last_epoch]
            for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Scale the lr by `factor` for the first `total_iters` epochs, then restore it.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import ConstantLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return group_values(self.optimizer)
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scale the lr by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import LinearLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer)
        delta = self.end_factor - self.start_factor
        return [
            group["lr"]
            * (1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta))
            for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every epoch.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import ExponentialLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> for _ in range(2):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return group_values(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr down to `eta_min` over `T_max` epochs (and back
    up over the next `T_max`: a period of ``2 * T_max``), with torch's recursive form, so a
    schedule combined with outside lr changes matches torch too.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import CosineAnnealingLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingLR(opt, T_max=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [1.0, 0.5, 0.0, 0.5, 1.0]
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return group_values(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:
            return [
                self.eta_min
                + (base_lr - self.eta_min)
                * (1 + math.cos(self.last_epoch * math.pi / self.T_max))
                / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups, strict=True)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (group["lr"] - self.eta_min)
            + self.eta_min
            for group in groups
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


class PolynomialLR(LRScheduler):
    """Decay the lr by a polynomial of degree `power` to 0 over `total_iters` epochs.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import PolynomialLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = PolynomialLR(opt, total_iters=4, power=1.0)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.75, 0.5, 0.25, 0.0, 0.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer)
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr
            * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]
