"""``torch.profiler``: `profile` with steps and a `schedule`, `record_function`, trace export.

What is measured is what `lazytorch.autograd.profiler` says: `record_function` ranges
(and one ``ProfilerStep#N`` range per step while recording) timed with the wall clock,
and lazytorch's own events at each program run (``lazytorch::materialize``,
``lazytorch::build_program`` on a cache miss, ``lazytorch::run_program``). Python-level op
calls only record graph nodes in a lazy library, so they are not events with a time of
their own. Device activities (CUDA, XPU...) are accepted and measure nothing; memory,
shapes and FLOPs read 0 or empty.

>>> import lazytorch, tempfile
>>> from lazytorch.profiler import profile, schedule, ProfilerActivity, tensorboard_trace_handler
>>> d = tempfile.mkdtemp()
>>> with profile(activities=[ProfilerActivity.CPU],
...              schedule=schedule(wait=1, warmup=1, active=2),
...              on_trace_ready=tensorboard_trace_handler(d)) as prof:
...     for _ in range(4):
...         _ = (lazytorch.ones(3) * 2).sum().item()
...         prof.step()
>>> import os; len(os.listdir(d))
1
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from lazytorch.autograd.profiler import _Collector, _start, _stop, record_function
from lazytorch.autograd.profiler_util import EventList, write_chrome_trace

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    """torch's activity groups. Only CPU's events exist in lazytorch (wall-clock ranges and
    program runs); the device groups are accepted and add nothing."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step (a `schedule` returns one per step)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set[ProfilerActivity]:
    """The activities lazytorch measures: CPU."""
    return {ProfilerActivity.CPU}


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """torch's schedule: skip `skip_first` steps, then cycles of `wait` idle steps, `warmup`
    steps and `active` recorded steps (the last one saves), `repeat` times (0: forever)."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes each trace as
    ``dir_name/<worker>.<ns>.pt.trace.json[.gz]`` (Chrome trace JSON), as torch's does."""

    def handler_fn(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """torch.profiler.profile: records (see the module docstring) during the steps its
    `schedule` marks active, and calls `on_trace_ready` at the end of each active span.

    Without a schedule every step records, and the trace is ready when the profiler stops.
    `step()` marks the start of the next step.
    """

    def __init__(
        self,
        *,
        activities: Iterable[Any] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        # As torch: ProfilerStep#N ranges only with a schedule.
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: record_function | None = None
        self._collector: _Collector | None = None
        self._events: EventList | None = None

    # -- the trace ---------------------------------------------------------------------------
    def _prepare_trace(self) -> None:
        pass  # nothing to warm up: collecting starts at once

    def _start_trace(self) -> None:
        self._collector = _Collector(self.with_stack)
        _start(self._collector)

    def _stop_trace(self) -> None:
        if self._collector is not None:
            _stop(self._collector)
            self._events = self._collector.events()
            self._collector = None

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _recording(self, action: ProfilerAction | None = None) -> bool:
        action = self.current_action if action is None else action
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _transit(self, prev: ProfilerAction, new: ProfilerAction | None) -> None:
        rec = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.WARMUP and new == ProfilerAction.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
        if prev == ProfilerAction.RECORD and new in (ProfilerAction.NONE, ProfilerAction.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {new.name}", stacklevel=3)
        if prev in rec and (
            new is None or new not in rec or prev == ProfilerAction.RECORD_AND_SAVE
        ):
            self._stop_trace()
            if prev == ProfilerAction.RECORD_AND_SAVE or new is None:
                self._trace_ready()
        if new in rec and (prev not in rec or prev == ProfilerAction.RECORD_AND_SAVE):
            self._start_trace()

    # -- the context manager ----------------------------------------------------------------
    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _enter_step(self) -> None:
        if self.record_steps and self._recording():
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def step(self) -> None:
        """The next step starts: close this step's range and follow the schedule."""
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        action = self.schedule(self.step_num + 1)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError(
                "ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must "
                "not be returned by a user-provided schedule"
            )
        self.step_num += 1
        self.current_action = action
        self._transit(prev, action)
        self._enter_step()

    # -- results ----------------------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last trace (the one `on_trace_ready` is called with)."""
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        return self.events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        write_chrome_trace(self.events(), path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """One ``frame;frame;... value`` line per event recorded with a stack (flame graphs)."""
        with open(path, "w", encoding="utf-8") as f:
            for e in self.events():
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + f" {int(getattr(e, metric))}\n")
