"""``lazytorch.utils.benchmark`` against ``torch.utils.benchmark``: `Measurement`'s
statistics and repr on the same raw times, `select_unit`, `Timer`'s run counts, and the
statement running in sync mode (its ops computed, as torch computes them)."""

from __future__ import annotations

import re

import pytest
import torch.utils.benchmark as tb
from torch.utils.benchmark.utils.common import TaskSpec as TorchTaskSpec

import lazytorch as lt
from lazytorch.utils import benchmark as lb

RAW = [
    [1e-6],
    [2e-3, 2.1e-3, 1.9e-3, 2.05e-3, 2.2e-3],
    [5.0, 5.5, 9.0, 4.0, 5.2, 5.1, 5.3, 5.0],
    [3e-8, 3.1e-8, 2.9e-8, 3.3e-8],
]


@pytest.mark.parametrize("raw", RAW)
@pytest.mark.parametrize(
    "spec",
    [
        {"stmt": "x * y", "setup": "x = torch.ones(2)"},
        {"stmt": "f(x)\ng(x)", "setup": "a = 1\nb = 2", "label": "L", "sub_label": "s"},
        {"stmt": "x", "setup": "pass", "description": "d", "num_threads": 4},
    ],
)
def test_measurement_matches_torch(raw: list[float], spec: dict) -> None:
    t = tb.Measurement(10, raw, TorchTaskSpec(**spec))
    m = lb.Measurement(10, raw, lb.TaskSpec(**spec))
    assert m.times == pytest.approx(t.times)
    for name in ("median", "mean", "iqr"):
        assert getattr(m, name) == pytest.approx(getattr(t, name), rel=1e-9), name
    assert m.significant_figures == t.significant_figures
    assert m.has_warnings == t.has_warnings
    assert m.meets_confidence(0.05) == t.meets_confidence(0.05)
    assert m.title == t.title
    # the first line names the object's class and address
    assert repr(m).splitlines()[1:] == repr(t).splitlines()[1:]


@pytest.mark.parametrize("t", [3e-9, 4.5e-7, 2e-4, 0.5, 12.0])
def test_select_unit_matches_torch(t: float) -> None:
    from torch.utils.benchmark.utils.common import select_unit

    assert lb.select_unit(t) == select_unit(t)


def test_timer_runs_the_statement_in_sync_mode() -> None:
    seen: list[bool] = []
    timer = lb.Timer(
        "seen.append(torch.is_sync_mode()); (x * 2).sum()",
        "x = torch.ones(4)",
        globals={"seen": seen},
    )
    m = timer.timeit(5)
    assert m.number_per_run == 5 and len(m.raw_times) == 1 and m.mean > 0
    assert seen and all(seen) and not lt.is_sync_mode()
    m = timer.blocked_autorange(min_run_time=0.01)
    assert m.number_per_run >= 1 and sum(m.raw_times) >= 0.01
    m = timer.adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert len(m.raw_times) >= 1
    assert re.search(r"\d+ runs per measurement, 1 thread", repr(m)) or len(m.raw_times) == 1


def test_what_torch_refuses_or_lazytorch_lacks_raises() -> None:
    timer = lb.Timer("1")
    with pytest.raises(NotImplementedError):
        timer.repeat()
    with pytest.raises(NotImplementedError, match="Callgrind"):
        timer.collect_callgrind()
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        lb.Timer("x * y;", language=lb.Language.CPP)


def test_compare_prints_a_table() -> None:
    ms = [
        lb.Measurement(1, [t], lb.TaskSpec("x", "pass", label="mm", sub_label=s, description=d))
        for t, s, d in [(1e-3, "a", "p"), (2e-3, "a", "q"), (3e-3, "b", "p")]
    ]
    text = str(lb.Compare(ms))
    assert "mm" in text and "milliseconds" in text and "3.0" in text
