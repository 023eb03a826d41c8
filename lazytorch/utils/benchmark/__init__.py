"""``torch.utils.benchmark`` for Python statements: `Timer`, `Measurement`, `Compare`.

`Timer` runs a statement in a loop with `timeit`, as torch's does (``blocked_autorange``,
``adaptive_autorange``, ``timeit``; ``torch`` is in the statement's globals). A lazy
statement such as ``x * y`` would only be recorded, never computed, so the timed loop runs
in sync mode (`lazytorch.sync_mode`): each op is computed when it is called, as torch runs
it on the CPU, and the time measured is the time of that work. C++ statements
(``Language.CPP``) and Callgrind instruction counts (``collect_callgrind``) are not
available and raise NotImplementedError.

>>> from lazytorch.utils.benchmark import Timer
>>> m = Timer("x * 2", setup="x = torch.ones(8)").timeit(10)
>>> m.number_per_run, len(m.times), m.mean > 0
(10, 1, True)
"""

from __future__ import annotations

import dataclasses
import enum
import math
import statistics
import sys
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any

from lazytorch import _config, _threads

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a `Timer` measures: its statement, setup and labels."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) with the sub-label, as torch titles a measurement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + textwrap.indent(
            self.stmt, "  "
        )

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """Title, description and setup, as the head of a measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms, s) torch prints a time of `t` seconds in, and its scale."""
    exponent = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _quantile(sorted_values: list[float], q: float) -> float:
    """torch.quantile's linear interpolation on sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of `number_per_run` runs of a statement, one per entry of `raw_times`."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name in {f.name for f in dataclasses.fields(TaskSpec)}:  # the task's fields
            return getattr(self.task_spec, name)
        if name == "title":
            return self.task_spec.title
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per run, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    def _sorted(self) -> list[float]:
        return sorted(self.times)

    @property
    def median(self) -> float:
        return _quantile(self._sorted(), 0.5)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def iqr(self) -> float:
        s = self._sorted()
        return _quantile(s, 0.75) - _quantile(s, 0.25)

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the measurements supports."""
        s = self._sorted()
        n = len(s)
        inner = s[n // 4 : math.ceil(3 * n / 4)]
        std = statistics.pstdev(inner) if len(inner) > 1 else 0.0
        ci = max(1.645 * std / math.sqrt(len(inner)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self.median / ci))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def _warnings(self) -> tuple[str, ...]:
        if not self.raw_times:
            return ()
        for threshold, why in (
            (_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
            (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation."),
        ):
            if not self.meets_confidence(threshold):
                rel = self.iqr / self.median * 100
                return (
                    f"  WARNING: Interquartile range is {rel:.1f}% of the median "
                    f"measurement.\n           {why}",
                )
        return ()

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    def __repr__(self) -> str:
        n = len(self.raw_times)
        s = self._sorted()
        unit, scale = select_unit(self.median)
        p25, p75 = _quantile(s, 0.25), _quantile(s, 0.75)
        threads = self.task_spec.num_threads
        lines = [
            f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>",
            self.task_spec.summarize(),
            f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}",
        ]
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25 / scale:.2f} to {p75 / scale:.2f})"
            )
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()


def _dedent(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """torch's ``Timer`` for Python statements (see the module docstring)."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = _timeit.default_timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "Timer(language=Language.CPP): lazytorch has no C++ frontend to time; time "
                "the Python statement instead"
            )
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        self._globals = dict(globals or {})
        if "torch" not in self._globals:  # torch's Timer makes `torch` available
            self._globals["torch"] = _torch_module()
        stmt, setup = _dedent(stmt), _dedent(setup)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)

    def _timeit(self, number: int) -> float:
        with _config.sync_mode():  # each op computed as it runs: the work is timed
            return max(self._timer.timeit(number), 1e-9)

    def _threads(self) -> Any:
        return _ThreadScope(self._task_spec.num_threads)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One measurement of `number` runs, after a warmup of ``number // 100``."""
        with self._threads():
            self._timeit(number=max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        with self._threads():
            overhead = statistics.median(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _loop(
        self,
        number: int,
        stop: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], None] | None = None,
    ) -> list[float]:
        total, times, can_stop = 0.0, [], False
        with self._threads():
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], None] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of runs sized so that the timer's overhead is negligible, repeated for at
        least `min_run_time` seconds."""
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda t: True, min_run_time, callback=callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], None] | None = None,
    ) -> Measurement:
        """Blocks of runs until their interquartile range is under `threshold` of the
        median (or `max_run_time` passes)."""
        number = self._block_size(min_run_time=0.05)

        def stop(times: list[float]) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(
                threshold
            )

        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "Timer.collect_callgrind: lazytorch has no Callgrind instruction counts; use "
            "blocked_autorange for wall times"
        )


class _ThreadScope:
    """torch's ``set_torch_threads``: `n` threads inside, the previous count after."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __enter__(self) -> None:
        self.before = _threads.get_num_threads()
        _threads.set_num_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        _threads.set_num_threads(self.before)


def _torch_module() -> Any:
    """lazytorch, the ``torch`` of a statement that does not import its own."""
    return sys.modules["lazytorch"]


class Compare:
    """A table of measurements: one row per (label, sub_label), one column per
    description, each cell the median in one unit per label (torch's layout, simplified:
    no colouring, no trimming of significant figures)."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)

    def extend_results(self, results: list[Measurement]) -> None:
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        pass

    def colorize(self, rowwise: bool = False) -> None:
        pass

    def highlight_warnings(self) -> None:
        pass

    def __str__(self) -> str:
        out: list[str] = []
        labels: dict[Any, list[Measurement]] = {}
        for r in self._results:
            labels.setdefault(r.task_spec.label, []).append(r)
        for label, group in labels.items():
            columns = list(dict.fromkeys(r.task_spec.description for r in group))
            rows = list(
                dict.fromkeys((r.task_spec.sub_label, r.task_spec.num_threads) for r in group)
            )
            unit, scale = select_unit(min(r.median for r in group))
            cells = {
                (r.task_spec.sub_label, r.task_spec.num_threads, r.task_spec.description): r
                for r in group
            }
            head = [""] + [c or "" for c in columns]
            table = [head]
            threads = None
            for sub, nt in rows:
                if nt != threads and len({t for _, t in rows}) > 1:
                    table.append([f"{nt} threads:"] + [""] * len(columns))
                    threads = nt
                row = [f"  {sub or ''}"]
                for c in columns:
                    r = cells.get((sub, nt, c))
                    row.append(f"{r.median / scale:.1f}" if r is not None else "")
                table.append(row)
            widths = [max(len(row[i]) for row in table) for i in range(len(head))]
            out.append(f"[{'-' * 10} {label or ''} {'-' * 10}]")
            for row in table:
                out.append(" | ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
            out.append(f"\nTimes are in {_UNIT_NAMES[unit]} ({unit}).\n")
        return "\n".join(out)

    def print(self) -> None:
        print(str(self))


_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
