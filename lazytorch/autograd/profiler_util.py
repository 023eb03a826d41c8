"""The profiler's results with torch's layout: `FunctionEvent`, `FunctionEventAvg`, `EventList`.

What the events are in lazytorch (and what they are not) is said in
`lazytorch.autograd.profiler`. Times are microseconds of wall-clock time, as torch's are.
Device times, memory and FLOPs are not measured: they read 0.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


class Interval:
    """A start and an end, in microseconds since the profiler started."""

    __slots__ = ("end", "start")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


class _Times:
    """The derived times torch's events and averages share."""

    count: int
    cpu_time_total: float
    self_cpu_time_total: float

    @property
    def cpu_time(self) -> float:
        """The mean wall-clock time of one call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def self_cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.self_cpu_time_total / self.count

    # Nothing runs on a device clock that the profiler reads, and memory is not tracked.
    device_time_total = 0.0
    self_device_time_total = 0.0
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0
    device_time = 0.0
    cuda_time = 0.0
    cpu_memory_usage = 0
    self_cpu_memory_usage = 0
    device_memory_usage = 0
    self_device_memory_usage = 0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0
    flops = 0


class FunctionEvent(_Times):
    """One range: a `record_function` block or one of lazytorch's runtime events.

    ``args`` holds what lazytorch knows of a runtime event (the cause of the
    materialization, the user's line, the program's node count, whether it was built).
    """

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        input_shapes: list[Any] | None = None,
        stack: list[str] | None = None,
        args: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.args = args or {}
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.is_async = False
        self.is_remote = False
        self.node_id = -1
        self.device_type = "CPU"
        self.trace_name = name

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time_total={self.cpu_time_total:.3f}us "
            f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>"
        )


class FunctionEventAvg(_Times):
    """The events of one key (and input shapes, when grouped by them), summed."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes: list[Any] | None = None
        self.stack: list[str] | None = None
        self.node_id = 0
        self.is_async = False
        self.is_remote = False

    def add(self, other: Any) -> FunctionEventAvg:
        if self.key is None:
            step = other.key.startswith("ProfilerStep#")
            self.key = "ProfilerStep*" if step else other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other: Any) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time)} "
            f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>"
        )


def _format_time(time_us: float) -> str:
    """torch's format: seconds, milliseconds or microseconds with three decimals."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _percent(part: float, total: float) -> str:
    return f"{100.0 * part / total:.2f}%" if total > 0 else "0.00%"


class EventList(list):  # type: ignore[type-arg]
    """A list of events (`FunctionEvent` or `FunctionEventAvg`) with torch's reports."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """One `FunctionEventAvg` per key (and input shapes / top of stack when asked),
        in order of first appearance. The ``ProfilerStep#N`` ranges are one key,
        ``ProfilerStep*``, as in torch."""
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self:
            k: tuple[Any, ...] = (e.key,)
            if e.key.startswith("ProfilerStep#"):
                k = ("ProfilerStep*",)
            if group_by_input_shapes:
                k += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                k += tuple(e.stack[:group_by_stack_n])
            groups.setdefault(k, FunctionEventAvg()).add(e)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """torch's table: name, self and total CPU time (and their shares), mean time and
        number of calls, sorted by the attribute `sort_by` (descending)."""
        events = list(self)
        if top_level_events_only:
            events = [e for e in events if getattr(e, "cpu_parent", None) is None]
        # The share of each row is of the self time of all events (torch's denominator).
        total = sum(e.self_cpu_time_total for e in self)
        if sort_by is not None:
            attr = sort_by.replace("cuda", "device") if "cuda" in sort_by else sort_by
            events.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit >= 0:
            events = events[:row_limit]
        shapes = any(e.input_shapes for e in events)
        names = [str(e.key) for e in events]
        width = min(max([len(n) for n in names] + [4]) + 4, max_name_column_width)

        def fmt(t: float) -> str:
            if time_unit == "s":
                return f"{t / 1e6:.3f}s"
            if time_unit == "ms":
                return f"{t / 1e3:.3f}ms"
            if time_unit == "us":
                return f"{t:.3f}us"
            return _format_time(t)

        heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        widths = [width] + [12] * 5
        heads.append("# of Calls")
        widths.append(12)
        if shapes:
            heads.append("Input Shapes")
            widths.append(max_shapes_column_width)
        sep = "".join("-" * w + "  " for w in widths)
        out = []
        if header is not None:
            out += ["=" * len(sep), header]
        out += [sep, "".join(f"{h:>{w}}  " for h, w in zip(heads, widths)), sep]
        for e, name in zip(events, names):
            if len(name) >= width - 3:
                name = name[: width - 6] + "..."
            cells = [
                name,
                _percent(e.self_cpu_time_total, total),
                fmt(e.self_cpu_time_total),
                _percent(e.cpu_time_total, total),
                fmt(e.cpu_time_total),
                fmt(e.cpu_time),
                str(e.count),
            ]
            if shapes:
                cells.append(str(e.input_shapes)[:max_shapes_column_width])
            out.append("".join(f"{c:>{w}}  " for c, w in zip(cells, widths)))
        out.append(sep)
        out.append(f"Self CPU time total: {fmt(total)}")
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto, TensorBoard)."""
        write_chrome_trace(self, path)


def write_chrome_trace(
    events: Iterable[FunctionEvent], path: str | os.PathLike[str], metadata: Any = None
) -> None:
    """`events` as Chrome trace JSON ("X" complete events, microseconds) at `path`."""
    pid = os.getpid()
    trace = []
    for e in events:
        trace.append(
            {
                "ph": "X",
                "cat": "lazytorch" if e.name.startswith("lazytorch::") else "user_annotation",
                "name": e.name,
                "pid": pid,
                "tid": e.thread,
                "ts": e.time_range.start,
                "dur": e.time_range.elapsed_us(),
                "args": {k: v for k, v in e.args.items()},
            }
        )
    doc: dict[str, Any] = {"traceEvents": trace, "displayTimeUnit": "ms"}
    if metadata:
        doc.update(metadata)
    path = os.fspath(path)
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
