"""torch.autograd.profiler and torch.profiler: torch's API, lazytorch's honest events.

The schedule, the steps at which a trace is ready and the ``ProfilerStep#N`` ranges are
compared with torch's own profiler running the same loop; the times themselves are
wall-clock and differ by nature, so they are checked for consistency (self time = total
less the nested events) rather than against torch.
"""

from __future__ import annotations

import inspect
import json
import os

import pytest
import torch
import torch.autograd.profiler as torch_ap
import torch.profiler as torch_prof

import lazytorch as lt
import lazytorch.autograd.profiler as ap
import lazytorch.profiler as prof

RUNTIME = {"lazytorch::materialize", "lazytorch::build_program", "lazytorch::run_program"}


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (ap.profile.__init__, torch_ap.profile.__init__),
        (ap.record_function.__init__, torch_ap.record_function.__init__),
        (ap.profile.key_averages, torch_ap.profile.key_averages),
        (ap.profile.table, torch_ap.profile.table),
        (ap.profile.export_chrome_trace, torch_ap.profile.export_chrome_trace),
        (prof.profile.__init__, torch_prof.profile.__init__),
        (prof.profile.key_averages, torch_prof.profile.key_averages),
        (prof.profile.export_chrome_trace, torch_prof.profile.export_chrome_trace),
        (prof.schedule, torch_prof.schedule),
        (prof.tensorboard_trace_handler, torch_prof.tensorboard_trace_handler),
    ],
    ids=lambda f: getattr(f, "__qualname__", "?"),
)
def test_signatures_are_torchs(ours, theirs):
    assert _params(ours) == _params(theirs)


def test_enums_are_torchs():
    assert list(prof.ProfilerActivity.__members__) == list(torch_prof.ProfilerActivity.__members__)
    assert list(prof.ProfilerAction.__members__) == list(torch_prof.ProfilerAction.__members__)


def test_reachable_as_torch_names():
    assert lt.autograd.profiler.profile is ap.profile
    assert lt.profiler.record_function is ap.record_function
    assert lt.profiler.profile is prof.profile


def test_record_function_ranges_nest_and_materializations_are_events():
    x = lt.randn(4, 4)
    with ap.profile(use_cuda=False, record_shapes=True) as p:
        with ap.record_function("outer"):
            for _ in range(3):
                with ap.record_function("inner"):
                    y = (x @ x).relu().sum()
            v = y.item()
    assert isinstance(v, float)
    events = p.events()
    by_key = {e.key: e for e in p.key_averages()}
    assert by_key["inner"].count == 3 and by_key["outer"].count == 1
    assert RUNTIME - {"lazytorch::build_program"} <= set(by_key)
    outer = next(e for e in events if e.name == "outer")
    # the materialization of .item() happened inside "outer", after the inner ranges
    kids = [c.name for c in outer.cpu_children]
    assert kids.count("inner") == 3 and "lazytorch::materialize" in kids
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children)
    )
    mat = next(e for e in events if e.name == "lazytorch::materialize")
    assert mat.args["cause"] == "item()" and mat.args["nodes"] > 0
    assert mat.args["loc"].endswith("test_profiler.py:69")
    run = next(e for e in events if e.name == "lazytorch::run_program")
    assert run.cpu_parent is mat
    for e in events:
        assert e.cpu_time_total >= 0 and e.self_cpu_time_total >= -1e-6
    avg = by_key["inner"]
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / 3)


def test_table_sorts_limits_and_totals():
    with ap.profile() as p:
        for name in ("a", "b", "b"):
            with ap.record_function(name):
                pass
    text = p.key_averages().table(sort_by="count", row_limit=1)
    lines = text.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert lines[3].split()[0] == "b" and lines[3].split()[-1] == "2"
    assert "a" not in [ln.split()[0] for ln in lines[3:-2]]
    assert lines[-1].startswith("Self CPU time total: ")
    full = p.key_averages().table(sort_by="self_cpu_time_total")
    assert full.count("\n") == 7  # 3 header lines, a and b, a rule, the total
    with pytest.raises(AttributeError):
        p.key_averages().table(sort_by="no_such_column")


def test_record_function_as_decorator_and_without_profiler():
    @ap.record_function("f")
    def f(t):
        return t * 2

    assert f(lt.ones(2)).tolist() == [2.0, 2.0]  # no profiler: a plain call
    with prof.profile(activities=[prof.ProfilerActivity.CPU]) as p:
        f(lt.ones(2))
        f(lt.ones(2))
    assert [e.key for e in p.key_averages() if e.key == "f"] == ["f"]
    assert next(e for e in p.key_averages() if e.key == "f").count == 2


def test_profile_not_finished_raises_as_torch():
    p = ap.profile()
    with pytest.raises(RuntimeError, match="didn't finish"):
        p.key_averages()


def test_export_chrome_trace(tmp_path):
    with ap.profile() as p:
        with ap.record_function("region"):
            lt.ones(3).sum().item()
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    names = [e["name"] for e in doc["traceEvents"]]
    assert "region" in names and "lazytorch::materialize" in names
    for e in doc["traceEvents"]:
        assert e["ph"] == "X" and e["dur"] >= 0


@pytest.mark.parametrize(
    "kw",
    [
        {"wait": 1, "warmup": 1, "active": 2},
        {"wait": 2, "warmup": 1, "active": 3, "repeat": 2},
        {"wait": 0, "warmup": 1, "active": 1, "repeat": 1, "skip_first": 3},
        {"wait": 5, "warmup": 1, "active": 2, "skip_first": 2, "skip_first_wait": 1},
    ],
)
def test_schedule_actions_are_torchs(kw):
    ours, theirs = prof.schedule(**kw), torch_prof.schedule(**kw)
    assert [ours(s).name for s in range(30)] == [theirs(s).name for s in range(30)]


def test_schedule_warns_and_refuses_as_torch():
    with pytest.warns(UserWarning, match="won't be using warmup"):
        prof.schedule(wait=1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Invalid profiler schedule"):
        prof.schedule(wait=1, warmup=1, active=0)


def _loop(lib, profiler_mod, steps, sched):
    ready = []

    def handler(p):
        keys = sorted(e.key for e in p.key_averages() if e.key.startswith(("ProfilerStep", "work")))
        ready.append((p.step_num, keys))

    kwargs = {"activities": [profiler_mod.ProfilerActivity.CPU], "on_trace_ready": handler}
    if sched is not None:
        kwargs["schedule"] = profiler_mod.schedule(**sched)
    with profiler_mod.profile(**kwargs) as p:
        for _ in range(steps):
            with profiler_mod.record_function("work"):
                lib.ones(2).sum().item()
            p.step()
    return ready


@pytest.mark.parametrize(
    "sched, steps",
    [
        ({"wait": 1, "warmup": 1, "active": 2}, 9),
        ({"wait": 1, "warmup": 1, "active": 2, "repeat": 1}, 9),
        (None, 3),
    ],
)
def test_steps_and_trace_ready_are_torchs(sched, steps):
    ours = _loop(lt, prof, steps, sched)
    theirs = _loop(torch, torch_prof, steps, sched)
    assert ours == theirs and ours


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    d = tmp_path / "tb"
    with prof.profile(
        schedule=prof.schedule(wait=0, warmup=1, active=1, repeat=1),
        on_trace_ready=prof.tensorboard_trace_handler(str(d), worker_name="w0"),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
    ) as p:
        for _ in range(3):
            lt.ones(2).sum().item()
            p.step()
    files = os.listdir(d)
    assert len(files) == 1 and files[0].startswith("w0.") and files[0].endswith(".pt.trace.json")
    doc = json.loads((d / files[0]).read_text())
    assert "ProfilerStep#1" in [e["name"] for e in doc["traceEvents"]]
    step = next(e for e in p.events() if e.name == "ProfilerStep#1")
    assert step.stack and __file__ in step.stack[0]


def test_profiler_off_leaves_no_listener():
    from lazytorch.runtime import executor

    with ap.profile():
        assert executor.listeners
    assert not executor.listeners
    with ap.profile(enabled=False) as p:
        assert not executor.listeners
    assert p.function_events is None
