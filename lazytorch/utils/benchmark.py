"""``torch.utils.benchmark``'s `Timer` for Python statements, and its `Measurement`.

lazytorch is lazy: a statement that only builds a graph would time nothing. When `stmt` is
an expression, each run evaluates it and computes the tensors of its result (tuples, lists
and dicts of them too), so the time includes the work; a statement that is not an expression
(an assignment, several lines) is timed as executed, and computes only what it reads.

>>> from lazytorch.utils.benchmark import Timer
>>> m = Timer("x * 2", globals={"x": 3}).timeit(10)
>>> m.number_per_run, len(m.times)
(10, 1)
"""

from __future__ import annotations

import statistics
import timeit as _timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lazytorch.runtime import materialize
from lazytorch.tensor import Tensor

__all__ = ["Measurement", "Timer"]


@dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup and the labels."""

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
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + "\n".join(
            "  " + line for line in self.stmt.splitlines()
        )


class Measurement:
    """The times of a `Timer` run: ``raw_times`` per block of ``number_per_run`` runs."""

    def __init__(
        self,
        number_per_run: int,
        raw_times: list[float],
        task_spec: TaskSpec,
        metadata: dict[Any, Any] | None = None,
    ) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name: str) -> Any:
        if name in TaskSpec.__dataclass_fields__ or name == "title":
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list[float]:
        """Seconds per run, one per block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.mean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        if len(self.times) < 2:
            return 0.0
        q = statistics.quantiles(self.times, n=4, method="inclusive")
        return q[2] - q[0]

    def __repr__(self) -> str:
        unit, scale = _unit(self.median)
        n = len(self.times)
        lines = [
            f"<lazytorch.utils.benchmark.Measurement object at {hex(id(self))}>",
            self.task_spec.title,
        ]
        if self.task_spec.description:
            lines.append(self.task_spec.description)
        lines.append(f"  {self.median / scale:.2f} {unit}")
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f", {self.task_spec.num_threads} thread{'s' if self.task_spec.num_threads > 1 else ''}"
        )
        return "\n".join(lines)


def _unit(t: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return unit, scale
    return "ns", 1e-9


def _compute(result: Any) -> None:
    """Compute the tensors of an evaluated statement's result."""
    if isinstance(result, Tensor):
        materialize(result)
    elif isinstance(result, (tuple, list)):
        for r in result:
            _compute(r)
    elif isinstance(result, dict):
        for r in result.values():
            _compute(r)


class Timer:
    """Time a Python statement (``torch.utils.benchmark.Timer``): `timeit` and
    `blocked_autorange`. `num_threads` is recorded; C++ statements are not supported."""

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
        language: Any = "python",
    ) -> None:
        if str(getattr(language, "name", language)).lower() not in ("python", "py"):
            raise NotImplementedError(
                "Timer: lazytorch times Python statements only (language='python')"
            )
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._timer = timer
        self._globals = dict(globals or {})
        self._task_spec = TaskSpec(
            stmt, setup, global_setup, label, sub_label, description, env, num_threads
        )
        exec(compile(setup, "<setup>", "exec"), self._globals)
        try:
            self._code = compile(stmt, "<stmt>", "eval")
            self._is_expr = True
        except SyntaxError:
            self._code = compile(stmt, "<stmt>", "exec")
            self._is_expr = False

    def _run(self, number: int) -> float:
        code, g = self._code, self._globals
        start = self._timer()
        if self._is_expr:
            for _ in range(number):
                _compute(eval(code, g))
        else:
            for _ in range(number):
                exec(code, g)
        return self._timer() - start

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after ``max(number // 100, 2)`` warm-up runs,
        as torch): one measurement."""
        self._run(max(number // 100, 2))
        return Measurement(number, [self._run(number)], self._task_spec)

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of runs (each long enough to time, about 10 ms) until `min_run_time`
        seconds have passed."""
        number = 1
        while True:  # the block size: at least 10 ms, or 10**6 runs
            t = self._run(number)
            if t >= 0.01 or number >= 1_000_000:
                break
            number *= 10
        times: list[float] = []
        total = 0.0
        while total < min_run_time or not times:
            t = self._run(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return Measurement(number, times, self._task_spec)
