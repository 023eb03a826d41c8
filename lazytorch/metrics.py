"""Counters and timings of what lazytorch did: ``counters()``, ``reset()``, ``report()``.

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
from typing import Any

from lazytorch.ir import node as _node

__all__ = ["counters", "increment", "report", "reset", "timed"]

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
    "kernels_launched",
    "compile_seconds",
)

_counts: collections.Counter[str] = collections.Counter()  # values are ints (seconds: float)
_causes: collections.Counter[str] = collections.Counter()
_timings: dict[str, list[float]] = collections.defaultdict(list)
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
    bucket = _timings[name]
    bucket.append(seconds)
    if len(bucket) > 10_000:  # keep a bounded recent window
        del bucket[: len(bucket) - 10_000]


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
    _reset_base()


def _percentile(xs: list[float], q: float) -> float:
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
    if _timings:
        lines.append("  timings (ms): count  p50  p90  max")
        for name, xs in sorted(_timings.items()):
            lines.append(
                f"    {name}: {len(xs)}  {_percentile(xs, 0.5) * 1e3:.3f}  "
                f"{_percentile(xs, 0.9) * 1e3:.3f}  {max(xs) * 1e3:.3f}"
            )
    return "\n".join(lines)


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
