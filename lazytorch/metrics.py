"""Counters and timings of what lazytorch did: ``counters()``, ``report()``, ``prometheus()``.

`report()` is for people (counters, implicit-materialization causes, recompile reasons and
timing percentiles); `prometheus()` is the same data in the Prometheus text exposition
format for a serving process's ``/metrics`` endpoint (see docs/serving.md).

>>> import lazytorch
>>> lazytorch.metrics.reset()
>>> y = (lazytorch.ones(3) * 2).sum()
>>> _ = y.item()                                   # an implicit materialization
>>> c = lazytorch.metrics.counters()
>>> c["materializations"], c["implicit_materializations"], c["nodes_recorded"] > 0
(1, 1, True)
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterable
from typing import Any

from lazytorch import _config
from lazytorch.ir import node as _node

__all__ = ["counters", "increment", "prometheus", "report", "reset", "timed"]

KEYS = (
    "materializations",
    "implicit_materializations",
    "nodes_recorded",
    "auto_cuts",
    "programs_built",
    "compiles",
    "cache_hits_memory",
    "cache_hits_disk",
    "cache_misses",
    "cache_corrupt",
    "kernels_launched",
    "compile_seconds",
    "recompiles",
    "dynamic_programs",
    "dynamic_hits",
    "dynamic_refused",
    "triton_fallbacks",
    "triton_direct_launches",
    "interpreter_fallbacks",
    "tier0_runs",
    "background_compiles",
    "tier_switches",
    "held_materialized",
    "host_view_reads",
    "host_folds",
    "collectives",
    "collective_bytes",
)

# Histogram buckets of `observe` (upper bounds; +Inf is implicit).
_BUCKETS = {"symbolic_guards_per_graph": (0, 1, 2, 4, 8, 16, 32, 64)}

_counts: collections.Counter[str] = collections.Counter()  # values are ints (seconds: float)
_causes: collections.Counter[str] = collections.Counter()
# Bounded recent windows: a deque drops its oldest sample in O(1) (deleting the head of a
# full list moved 10,000 floats on every materialization of a long-running loop).
WINDOW = 10_000
_timings: dict[str, collections.deque[float]] = collections.defaultdict(
    lambda: collections.deque(maxlen=WINDOW)
)
_sums: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])  # name -> [sum, count]
_recompile_reasons: collections.Counter[str] = collections.Counter()
_observed: dict[str, collections.deque[float]] = collections.defaultdict(
    lambda: collections.deque(maxlen=WINDOW)
)
# Seconds the process's first materialization took (None until there was one); not reset.
first_materialize_seconds: float | None = None
# Seconds `import lazytorch` took (the facade records it when its import finishes).
import_seconds = float("nan")
_base_id = 0
_peeks_since_base = 0


def _node_id_now() -> int:
    global _peeks_since_base
    _peeks_since_base += 1
    return _node._next_id()


def _reset_base() -> None:
    global _base_id, _peeks_since_base
    _peeks_since_base = 0
    _base_id = _node_id_now()
    _peeks_since_base = 0


def increment(name: str, n: float = 1) -> None:
    _counts[name] += n


def implicit(cause: str) -> None:
    _counts["implicit_materializations"] += 1
    _causes[cause] += 1


def timed(name: str, seconds: float) -> None:
    total = _sums[name]
    total[0] += seconds
    total[1] += 1
    _timings[name].append(seconds)  # a bounded recent window


def materialized(record: float, run: float, total: float) -> None:
    """Account one materialization's timings (one call: this is on every cut's path)."""
    global first_materialize_seconds
    # (written out: a loop over (name, seconds) pairs cost a microsecond more per cut)
    s = _sums["record"]
    s[0] += record
    s[1] += 1
    _timings["record"].append(record)
    s = _sums["run"]
    s[0] += run
    s[1] += 1
    _timings["run"].append(run)
    s = _sums["materialize"]
    s[0] += total
    s[1] += 1
    _timings["materialize"].append(total)
    if first_materialize_seconds is None:
        first_materialize_seconds = total


def recompile(reason: str) -> None:
    """Count a recompile; `reason` is the explanation logged on ``lazytorch.recompiles``."""
    _counts["recompiles"] += 1
    _recompile_reasons[reason] += 1


def observe(name: str, value: float) -> None:
    """Add one observation to histogram `name` (e.g. guards per compiled graph)."""
    _observed[name].append(value)


def counters() -> dict[str, int]:
    """A snapshot of every counter (missing ones read 0)."""
    out = {k: 0 for k in KEYS}
    out.update(_counts)
    # Node ids are handed out in order, so the counter's advance is the node count, less
    # the ids our own peeks consumed.
    now = _node_id_now()
    out["nodes_recorded"] = now - _base_id - _peeks_since_base
    return out


def causes() -> dict[str, int]:
    """Implicit materializations by cause (``item``, ``repr``, ``bool``, ...)."""
    return dict(_causes)


def reset() -> None:
    """Zero every counter and timing."""
    _counts.clear()
    _causes.clear()
    _timings.clear()
    _sums.clear()
    _recompile_reasons.clear()
    _observed.clear()
    _reset_base()


def _percentile(xs: Iterable[float], q: float) -> float:
    s = sorted(xs)
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


def report() -> str:
    """A readable summary of counters, implicit-materialization causes and timings."""
    c = counters()
    lines = ["lazytorch metrics"]
    width = max(len(k) for k in c)
    for k in sorted(c, key=lambda k: (k not in KEYS, KEYS.index(k) if k in KEYS else 0, k)):
        lines.append(f"  {k.ljust(width)}  {c[k]}")
    if _causes:
        lines.append("  implicit materializations by cause:")
        for cause, n in _causes.most_common():
            lines.append(f"    {cause}: {n}")
    if _recompile_reasons:
        lines.append("  recompiles by reason:")
        for reason, n in _recompile_reasons.most_common(10):
            lines.append(f"    {n} x {reason}")
    if _timings:
        lines.append("  timings (ms): count  p50  p90  p99  max")
        for name, xs in sorted(_timings.items()):
            lines.append(
                f"    {name}: {_sums[name][1]}  {_percentile(xs, 0.5) * 1e3:.3f}  "
                f"{_percentile(xs, 0.9) * 1e3:.3f}  {_percentile(xs, 0.99) * 1e3:.3f}  "
                f"{max(xs) * 1e3:.3f}"
            )
    return "\n".join(lines)


# (metric name, counter key, help) of the counters `prometheus` exports as *_total.
_PROM_COUNTERS = (
    ("lazytorch_materializations_total", "materializations", "Graph cuts that ran a program."),
    (
        "lazytorch_implicit_materializations_total",
        "implicit_materializations",
        "Cuts caused by reading a value (.item(), print, bool, ...).",
    ),
    ("lazytorch_nodes_recorded_total", "nodes_recorded", "IR nodes recorded."),
    ("lazytorch_programs_built_total", "programs_built", "Programs compiled or loaded."),
    (
        "lazytorch_compile_invocations_total",
        "compiles",
        "Programs a backend compiled (for the cpp backend, C++ compiler runs).",
    ),
    (
        "lazytorch_recompiles_total",
        "recompiles",
        "Programs rebuilt at a cut location that had one.",
    ),
    ("lazytorch_cache_misses_total", "cache_misses", "Lookups that found no compiled program."),
    (
        "lazytorch_cache_corrupt_total",
        "cache_corrupt",
        "Disk-cache entries refused on load (damaged, edited, or not fitting their program).",
    ),
    (
        "lazytorch_dynamic_programs_total",
        "dynamic_programs",
        "Programs compiled over symbolic sizes (docs/dynamic_shapes.md).",
    ),
    (
        "lazytorch_dynamic_hits_total",
        "dynamic_hits",
        "Cuts of a new size served by a program over symbolic sizes.",
    ),
    ("lazytorch_kernels_launched_total", "kernels_launched", "Generated kernels run."),
    (
        "lazytorch_collectives_total",
        "collectives",
        "Collectives (all_reduce, broadcast, ...) a communication engine ran.",
    ),
    (
        "lazytorch_collective_bytes_total",
        "collective_bytes",
        "Bytes of the inputs of the collectives run (each rank counts its own).",
    ),
    (
        "lazytorch_device_backend_autoload_failures_total",
        "device_backend_autoload_failures",
        "Device backend plugins that failed to load.",
    ),
)
# (metric name, timing name, help) of the timings `prometheus` exports as summaries.
_PROM_SUMMARIES = (
    (
        "lazytorch_record_duration_seconds",
        "record",
        "Wall time between the end of one materialization and the start of the next.",
    ),
    ("lazytorch_compile_duration_seconds", "compile", "C++ compiler time per compiled program."),
    ("lazytorch_run_duration_seconds", "run", "Time to run a compiled program."),
    ("lazytorch_materialize_duration_seconds", "materialize", "Whole materializations."),
    (
        "lazytorch_collective_duration_seconds",
        "collective",
        "Time a communication engine spent in one collective (waiting for peers included).",
    ),
)


def prometheus() -> str:
    """Every metric in the Prometheus text exposition format (version 0.0.4).

    Counters end in ``_total``; timings are summaries with 0.5/0.9/0.99 quantiles over the
    last 10,000 observations, plus ``_sum`` and ``_count`` over all of them. The names are
    stable (dashboards depend on them); docs/serving.md lists them.

    >>> import lazytorch
    >>> text = lazytorch.metrics.prometheus()
    >>> "lazytorch_compile_invocations_total" in text
    True
    """
    c = counters()
    out: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(f"{name}{labels} {_prom_value(v)}" for labels, v in samples)

    metric(
        "lazytorch_import_time_seconds",
        "gauge",
        "How long `import lazytorch` took in this process.",
        [("", import_seconds)],
    )
    first = first_materialize_seconds
    metric(
        "lazytorch_first_materialize_latency_seconds",
        "gauge",
        "Duration of this process's first materialization (NaN before it).",
        [("", float("nan") if first is None else first)],
    )
    metric(
        "lazytorch_deterministic_mode_flag",
        "gauge",
        "1 when deterministic algorithms are enabled.",
        [("", 1.0 if _config.are_deterministic_algorithms_enabled() else 0.0)],
    )
    metric(
        "lazytorch_cache_hits_total",
        "counter",
        "Compiled-program cache hits by level (memory: this process; disk: the cache directory).",
        [('{level="memory"}', c["cache_hits_memory"]), ('{level="disk"}', c["cache_hits_disk"])],
    )
    for name, key, help_ in _PROM_COUNTERS:
        metric(name, "counter", help_, [("", c.get(key, 0))])
    for name, key, help_ in _PROM_SUMMARIES:
        xs = _timings.get(key, [])
        total, count = _sums.get(key, (0.0, 0))
        samples = [
            (f'{{quantile="{q}"}}', _percentile(xs, q) if xs else float("nan"))
            for q in (0.5, 0.9, 0.99)
        ]
        samples += [("_sum", total), ("_count", count)]
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} summary")
        for labels, v in samples:
            suffix, lab = (labels, "") if labels.startswith("_") else ("", labels)
            out.append(f"{name}{suffix}{lab} {_prom_value(v)}")
    name = "lazytorch_symbolic_guard_count_per_graph"
    xs = _observed.get("symbolic_guards_per_graph", [])
    out.append(f"# HELP {name} Symbolic-size guards of each program built.")
    out.append(f"# TYPE {name} histogram")
    for le in _BUCKETS["symbolic_guards_per_graph"]:
        out.append(f'{name}_bucket{{le="{le}"}} {sum(1 for x in xs if x <= le)}')
    out.append(f'{name}_bucket{{le="+Inf"}} {len(xs)}')
    out.append(f"{name}_sum {_prom_value(sum(xs))}")
    out.append(f"{name}_count {len(xs)}")
    return "\n".join(out) + "\n"


def _prom_value(v: float) -> str:
    if isinstance(v, int):
        return str(v)
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


class _Timer:
    __slots__ = ("name", "t0")

    def __init__(self, name: str) -> None:
        self.name = name
        self.t0 = 0.0

    def __enter__(self) -> _Timer:
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        timed(self.name, time.perf_counter() - self.t0)


def timer(name: str) -> _Timer:
    return _Timer(name)


_reset_base()
