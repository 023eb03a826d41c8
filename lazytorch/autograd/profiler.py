"""``torch.autograd.profiler``: `profile` and `record_function`, honest about a lazy library.

In lazytorch a Python-level op call (``x * y``) does not compute: it records a node, and the
work happens when a materialization point (``.item()``, ``print``, ``opt.step()``'s cut,
``lazytorch.materialize``) compiles and runs the recorded graph as one program. So there is
no per-op time to measure, and the profiler does not invent one. What it reports:

* **`record_function` ranges** (and ``ProfilerStep#N`` of `lazytorch.profiler.profile`),
  timed with the wall clock (``time.perf_counter_ns``) on entry and exit. The range holds
  the *recording* of its ops plus any materialization that happens inside it.
* **lazytorch's runtime events**, one set per program run while the profiler records:
  ``lazytorch::materialize`` (the whole cut: capture, cache lookup, build, run),
  inside it ``lazytorch::build_program`` (only on a cache miss: compile, or load from the
  disk cache, or the interpreter's preparation when a compile is tiered) and
  ``lazytorch::run_program`` (the program's run). Their ``args`` (in `FunctionEvent.args`
  and the Chrome trace) hold the cause of the cut, the user's line, the program's node
  count and backend.

Times are wall-clock microseconds; an event's self time is its time less that of the
events nested in it (on the same thread). Device time, memory (``profile_memory``) and
FLOPs (``with_flops``) are not measured and read 0; ``record_shapes`` records no shapes
(lazytorch's events have no input tensors); ``with_stack`` records the Python stack at
each `record_function` entry. ``use_cuda`` / ``use_device`` are accepted and add nothing.

>>> import lazytorch
>>> from lazytorch.autograd import profiler
>>> with profiler.profile() as prof:
...     with profiler.record_function("forward"):
...         y = (lazytorch.ones(3) * 2).sum().item()
>>> sorted({e.key for e in prof.key_averages()} & {"forward", "lazytorch::materialize"})
['forward', 'lazytorch::materialize']
"""

from __future__ import annotations

import functools
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from lazytorch.autograd.profiler_util import EventList, FunctionEvent, write_chrome_trace
from lazytorch.ir.node import _is_internal, format_loc, user_loc
from lazytorch.runtime import executor

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]


class _Collector:
    """Raw events ``(name, thread, start_ns, end_ns, stack, args)`` while it records."""

    def __init__(self, with_stack: bool = False) -> None:
        self.with_stack = with_stack
        self.raw: list[tuple[str, int, int, int, list[str] | None, dict[str, Any] | None]] = []
        self.t0 = time.perf_counter_ns()

    def add(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        stack: list[str] | None = None,
        args: dict[str, Any] | None = None,
    ) -> None:
        self.raw.append((name, threading.get_ident(), start_ns, end_ns, stack, args))

    def ran(
        self,
        cause: str,
        loc: Any,
        nodes: int,
        backend: str,
        t_start: float,
        t_built: tuple[float, float] | None,
        t_run: float,
        t_end: float,
    ) -> None:
        """An executor listener: one program run (see `lazytorch.runtime.executor`)."""

        loc = loc if loc is not None else user_loc()
        args = {
            "cause": cause,
            "loc": format_loc(loc) if loc is not None else None,
            "nodes": nodes,
            "backend": backend,
            "cache": "hit" if t_built is None else "miss",
        }

        def ns(t: float) -> int:
            return int(t * 1e9)

        self.add("lazytorch::materialize", ns(t_start), ns(t_end), None, args)
        if t_built is not None:
            self.add("lazytorch::build_program", ns(t_built[0]), ns(t_built[1]), None, args)
        self.add("lazytorch::run_program", ns(t_run), ns(t_end), None, args)

    def events(self) -> EventList:
        """The raw events as `FunctionEvent`\\ s, nested by time per thread, by start time."""
        order = sorted(range(len(self.raw)), key=lambda i: (self.raw[i][2], -self.raw[i][3], i))
        out = EventList()
        stacks: dict[int, list[FunctionEvent]] = {}
        for n, i in enumerate(order):
            name, thread, start, end, stack, args = self.raw[i]
            e = FunctionEvent(
                n,
                name,
                thread,
                (start - self.t0) / 1e3,
                (end - self.t0) / 1e3,
                stack=stack,
                args=args,
            )
            open_ = stacks.setdefault(thread, [])
            while open_ and open_[-1].time_range.end <= e.time_range.start:
                open_.pop()
            if open_ and e.time_range.end <= open_[-1].time_range.end:
                e.cpu_parent = open_[-1]
                open_[-1].cpu_children.append(e)
            open_.append(e)
            out.append(e)
        return out


# The collectors recording now (profilers can nest, as torch's cannot: each gets every event).
_active: list[_Collector] = []


def _start(collector: _Collector) -> None:

    _active.append(collector)
    executor.listeners.append(collector.ran)


def _stop(collector: _Collector) -> None:

    if collector in _active:
        _active.remove(collector)
    if collector.ran in executor.listeners:
        executor.listeners.remove(collector.ran)


class record_function:
    """A named range in the profile: a context manager, or a decorator of a function.

    Timed with the wall clock while a profiler records (see the module docstring for what
    the time holds in a lazy library); free when none does.

    >>> import lazytorch
    >>> with lazytorch.autograd.profiler.profile() as prof:
    ...     with lazytorch.autograd.profiler.record_function("step"):
    ...         pass
    >>> [e.name for e in prof.function_events]
    ['step']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._start: int | None = None
        self._stack: list[str] | None = None

    def __enter__(self) -> record_function:
        if _active:
            if any(c.with_stack for c in _active):
                self._stack = _python_stack()
            self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._start is None:
            return
        end = time.perf_counter_ns()
        args = {"args": self.args} if self.args is not None else None
        for c in _active:
            c.add(self.name, max(self._start, c.t0), end, self._stack, args)
        self._start = None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        name, args = self.name, self.args

        @functools.wraps(fn)
        def wrapped(*a: Any, **k: Any) -> Any:
            with record_function(name, args):
                return fn(*a, **k)

        return wrapped


def _python_stack() -> list[str]:
    """The user's frames, innermost first, as torch writes them: ``file(line): function``."""

    frames = [f for f in traceback.extract_stack() if not _is_internal(f.filename)]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


class profile:
    """The autograd profiler: a context manager that records what the module docstring says.

    Parameters are torch's; the ones that name what lazytorch does not measure (device
    time, memory, FLOPs, modules, Kineto's options) are accepted and change nothing.

    >>> import lazytorch
    >>> with lazytorch.autograd.profiler.profile(use_cuda=False) as prof:
    ...     lazytorch.ones(2).sum().item()
    2.0
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total"))  # doctest: +SKIP
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
        activity_filters: dict[Any, set[str]] | None = None,
    ) -> None:
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.entered = False
        self.function_events: EventList | None = None
        self._collector: _Collector | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._collector = _Collector(self.with_stack)
        _start(self._collector)
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.enabled or self._collector is None:
            return
        _stop(self._collector)
        self.function_events = self._collector.events()
        self.entered = False

    def _check_finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        return self._check_finished()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        return self._check_finished().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self) -> Any:
        return self._check_finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finished().self_cpu_time_total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        return self._check_finished().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    def export_chrome_trace(
        self, path: str | os.PathLike[str], metadata: Any = None, use_python_export: bool = False
    ) -> None:
        write_chrome_trace(self._check_finished(), path, metadata)

    def __str__(self) -> str:
        return str(self._check_finished())
