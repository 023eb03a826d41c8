"""Schedulers made of schedulers: one after another (SequentialLR) or all at once
(ChainedScheduler), with torch's semantics."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from lazytorch.optim.optimizer import Optimizer
from lazytorch.optim.plateau_lr import ReduceLROnPlateau
from lazytorch.optim.scheduler_base import LRScheduler, group_values

__all__ = ["ChainedScheduler", "SequentialLR"]


def _check_schedulers(owner: str, schedulers: Sequence[Any], optimizer: Optimizer) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from {optimizer.__class__.__name__}."
            )


def _state_dict(scheduler: Any) -> dict[str, Any]:
    """Every attribute but the optimizer, the inner schedulers as their own state dicts."""
    state = {k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _load_state_dict(scheduler: Any, state_dict: dict[str, Any]) -> None:
    state_dict = dict(state_dict)
    schedulers = state_dict.pop("_schedulers")
    scheduler.__dict__.update(state_dict)
    for inner, state in zip(scheduler._schedulers, schedulers, strict=True):
        inner.load_state_dict(state)


class SequentialLR(LRScheduler):
    """Run `schedulers` one after another, switching at the epochs in `milestones`.

    At a milestone the next scheduler starts from its epoch 0 (its ``step(0)``); in between
    the active one steps as usual. Construction rewinds the schedulers' first steps, as
    torch does, so the lr starts at the first scheduler's epoch-0 value.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import ConstantLR, ExponentialLR, SequentialLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler."
            )
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer

        # Reset the lrs to the initial ones and undo the schedulers' construction steps.
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        # Only the first active scheduler takes its initial step.
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Undo the initial step of every scheduler (inside nested ones too)."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler active at the new epoch (at a milestone: start it at 0)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Like the base, with each inner scheduler as its own state dict (torch's layout)."""
        return _state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _load_state_dict(self, state_dict)


class ChainedScheduler(LRScheduler):
    """Step every scheduler in `schedulers` at each ``step()``: their changes compose.

    >>> import lazytorch
    >>> from lazytorch.optim import SGD
    >>> from lazytorch.optim.lr_scheduler import ChainedScheduler, ConstantLR, ExponentialLR
    >>> opt = SGD([lazytorch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ChainedScheduler(
    ...     [ConstantLR(opt, factor=0.1, total_iters=2), ExponentialLR(opt, gamma=0.5)]
    ... )
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{self.__class__.__name__} expects at least one scheduler to be chained, but "
                "got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(self._schedulers[-1].optimizer)

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer)

    def state_dict(self) -> dict[str, Any]:
        """Like the base, with each inner scheduler as its own state dict (torch's layout)."""
        return _state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _load_state_dict(self, state_dict)
