"""torch.utils.benchmark.Timer's Python subset: timeit, blocked_autorange, Measurement."""

from __future__ import annotations

import inspect

import pytest
import torch.utils.benchmark as TB

import lazytorch as lt
from lazytorch.utils import benchmark as B


@pytest.mark.parametrize("name", ["__init__", "timeit", "blocked_autorange"])
def test_signature_is_torchs(name):
    ours = inspect.signature(getattr(B.Timer, name)).parameters
    theirs = inspect.signature(getattr(TB.Timer, name)).parameters
    assert list(ours) == list(theirs)
    for k in theirs:
        if k not in ("timer", "language"):  # torch's own objects as defaults
            assert ours[k].default == theirs[k].default, k


def test_timeit_computes_expression_results():
    calls = []

    def work():
        calls.append(1)
        return (lt.ones(3) * 2, [lt.zeros(2) + 1])

    m = B.Timer("work()", globals={"work": work}, label="L", sub_label="s").timeit(3)
    assert len(calls) == 2 + 3  # warm-up as torch: max(number // 100, 2)
    assert m.number_per_run == 3 and len(m.times) == 1 and m.times[0] >= 0
    assert m.mean == m.median == m.times[0] and m.iqr == 0.0
    assert m.title == "L: s" and "3 runs" in repr(m)


def test_statements_and_setup():
    g = {"out": []}
    m = B.Timer("y = x + 1\nout.append(y)", setup="x = 41", globals=g).blocked_autorange(
        min_run_time=0.001
    )
    assert g["out"][0] == 42 and m.number_per_run >= 1 and len(m.times) >= 1
    with pytest.raises(NotImplementedError, match="Python"):
        B.Timer("x", language="cpp")
