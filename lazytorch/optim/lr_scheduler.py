"""Learning-rate schedulers with torch's recurrences (the same lr sequence, step for step).

A scheduler writes ``group["lr"]`` of its optimizer's parameter groups. The lr enters the
training step's program as an input, so a schedule never recompiles anything.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any
from weakref import ref

from lazytorch.optim.optimizer import Optimizer

__all__ = [
    "CosineAnnealingLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "StepLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available. Please open an issue if you are unable to replicate "
    "your use case: https://github.com/pytorch/pytorch/issues/new/choose."
)


def _group_lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


def _track_step_called(scheduler: LRScheduler) -> None:
    """Wrap ``optimizer.step`` to note it ran, for torch's call-order warning."""
    opt = scheduler.optimizer
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(opt)
    func = opt.step.__func__  # type: ignore[attr-defined]

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        o = opt_ref()
        o._opt_called = True  # type: ignore[union-attr]
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    opt.step = wrapper  # type: ignore[method-assign]


class LRScheduler:
    """Base class of lr schedulers: ``step()`` advances ``last_epoch`` and sets each group's
    lr to ``get_lr()``; ``get_last_lr()`` reads the lrs it set last.

    Construction records ``initial_lr`` in each group (``base_lrs``) and takes the first
    step (``last_epoch`` becomes 0). A subclass implements ``get_lr()`` (and optionally
    ``_get_closed_form_lr()``, used by the deprecated ``step(epoch)``).

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import LRScheduler
    >>> class Halve(LRScheduler):
    ...     def get_lr(self):
    ...         if self._is_initial:
    ...             return [g["lr"] for g in self.optimizer.param_groups]
    ...         return [g["lr"] / 2 for g in self.optimizer.param_groups]
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halve(opt)
    >>> opt.step(); sched.step(); sched.get_last_lr(), sched.last_epoch
    ([0.5], 1)
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _track_step_called(self)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (torch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The lrs this scheduler set most recently, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        """The lrs for the current ``last_epoch`` (called by ``step``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or, deprecated, jump to `epoch`) and set the groups' lrs.
        Call it after ``optimizer.step()``."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr: list[float] = _group_lrs(self.optimizer)


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
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
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
            return _group_lrs(self.optimizer)
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
            return _group_lrs(self.optimizer)
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
            return _group_lrs(self.optimizer)
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
            return _group_lrs(self.optimizer)
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
            return _group_lrs(self.optimizer)
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
