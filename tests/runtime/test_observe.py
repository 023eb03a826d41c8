"""What the runtime reports about programs: JSON programs, dumps, recompiles, metrics, logs."""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest

import lazytorch as lt
from lazytorch import metrics
from lazytorch.debug import program as program_of
from lazytorch.ir.node import format_loc
from lazytorch.ir.serialize import ProgramFormatError, program_from_json, program_to_json
from lazytorch.runtime import observe
from lazytorch.runtime.backends import get_backend

THIS = "test_observe.py"


def _graphs():
    """Tensors whose programs cover every primitive category and attribute kind."""
    x = lt.randn(4, 6)
    i = lt.tensor([2, 0, 1])
    w = lt.randn(6, 5, requires_grad=True)
    yield (x @ w).relu().sum(1) * 2.5
    yield x.t().reshape(3, 8).flip(0)[1:, ::2].cumsum(1)
    yield lt.cat([x, x * 0.5], 0).amax(0).exp().to(lt.float64)
    yield lt.nn.functional.pad(x, (1, 2)).argmax(1)
    yield x[i].sort(1).values + lt.arange(6.0)
    j = lt.zeros(3, 6, dtype=lt.int64)
    yield x.scatter_add(0, j, lt.ones(3, 6)).where(x > 0, float("nan")) / float("inf")
    yield x.expand(2, 4, 6).softmax(-1).var(0) > 0.1
    loss = (x @ w).tanh().pow(2).mean()
    (g,) = lt.autograd.grad(loss, [w], create_graph=True)
    yield g.sum()


@pytest.mark.parametrize("k", range(8))
def test_json_round_trip_keeps_the_program_and_its_cache_key(k):
    t = list(_graphs())[k]
    p = program_of(t)
    data = json.loads(json.dumps(program_to_json(p)))
    q = program_from_json(data)
    assert q.canonical_text() == p.canonical_text()
    cpp = get_backend("cpp")
    assert cpp.key(q, {}) == cpp.key(p, {})
    # The lines ride along for readers; they are not part of the program.
    assert any(THIS in row.get("loc", "") for row in data["instrs"])


def test_json_round_trip_of_a_float_literal_keeps_every_bit():
    p = program_of(lt.ones(3) * 0.1 + float("-inf"))
    q = program_from_json(json.loads(json.dumps(program_to_json(p))))
    assert q.canonical_text() == p.canonical_text()


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(format=99), "format 1"),
        (lambda d: d["instrs"][0].update(op="no_such_op"), "unknown primitive 'no_such_op'"),
        (lambda d: d["instrs"][0].update(inputs=[10_000]), "reads a later value"),
        (lambda d: d["instrs"][0].update(dtype="complex64"), "unknown dtype 'complex64'"),
        (lambda d: d["params"][0].update(shape=[-1]), "bad shape"),
        (lambda d: d.update(outputs=[10_000]), "output names a value"),
        (lambda d: d["instrs"].append({"op": "add"}), "malformed program JSON"),
    ],
)
def test_program_from_json_names_what_is_wrong(mutate, message):
    x = lt.from_numpy(np.ones((2, 3), np.float32))
    lt.materialize(x)
    data = program_to_json(program_of((x + 1).sum()))
    mutate(data)
    with pytest.raises(ProgramFormatError, match=re.escape(message)):
        program_from_json(data)


@pytest.fixture
def dumping(tmp_path):
    observe.set_dump_dir(tmp_path)
    try:
        yield tmp_path
    finally:
        observe.set_dump_dir(None)


def test_dump_writes_one_folder_per_program_with_parseable_files(dumping):
    w = lt.randn(13, 7)
    lt.materialize(w)
    for b in (3, 5, 5):
        x = lt.ones(b, 13)
        y = (x @ w).relu().sum(1)
        lt.materialize(y)  # the cut line the index names
    observe.set_dump_dir(None)
    index = json.loads((dumping / "index.json").read_text())
    rows = index["programs"]
    # w, then b = 3, then one program over b (the second size makes it symbolic)
    assert [r["program"] for r in rows] == ["000", "001", "002"]
    assert [r["runs"] for r in rows] == [1, 1, 2]
    for r in rows[1:]:
        assert r["cause"] == "materialize()"
        assert re.search(rf"{THIS}:\d+", r["loc"]), r
        assert r["kernels"] >= 1 and r["extern_calls"] == 1
        assert r["peak_bytes"]["planned"] <= r["peak_bytes"]["naive"]
    folder = dumping / "002"
    names = {p.name for p in folder.iterdir()}
    assert {"ir.txt", "ir.json", "graph.dot", "schedule.txt", "guards.txt", "timings.json"} <= names
    ir = (folder / "ir.txt").read_text()
    assert "matmul" in ir and "reduce_sum" in ir and re.search(rf"# .*{THIS}:\d+", ir)
    q = program_from_json(json.loads((folder / "ir.json").read_text()))
    assert "matmul" in q.ops()
    dot = (folder / "graph.dot").read_text()
    assert dot.startswith("digraph program {") and "matmul" in dot and "->" in dot
    sched = (folder / "schedule.txt").read_text()
    assert "extern matmul" in sched and "fused[" in sched and "planned peak" in sched
    timings = json.loads((folder / "timings.json").read_text())
    assert timings["runs"] == 2 and timings["run_s"] > 0 and timings["capture_s"] > 0
    assert "input 0: buffer float32[13, 7] on cpu (exact)" in (folder / "guards.txt").read_text()
    if rows[2]["cache"] in ("compiled", "disk"):
        assert "lazytorch program" in (folder / "program.cpp").read_text()


def test_dump_numbering_continues_in_a_used_directory(tmp_path):
    (tmp_path / "004").mkdir()
    observe.set_dump_dir(tmp_path)
    try:
        lt.materialize(lt.arange(17.0) * 3)
    finally:
        observe.set_dump_dir(None)
    assert (tmp_path / "005" / "ir.txt").exists()


@pytest.mark.parametrize("forgotten", [False, True])
def test_a_program_built_before_the_dump_started_is_dumped_when_it_runs(tmp_path, forgotten):
    def step():
        y = lt.arange(19.0 + forgotten) * 5 - 1
        lt.materialize(y)

    step()  # built and cached in memory
    if forgotten:  # observed records are bounded; the program cache may outlive them
        observe._seen.clear()
    observe.set_dump_dir(tmp_path)
    try:
        step()
    finally:
        observe.set_dump_dir(None)
    rows = json.loads((tmp_path / "index.json").read_text())["programs"]
    assert len(rows) == 1 and rows[0]["runs"] == 1
    assert rows[0]["cause"] == ("(built earlier)" if forgotten else "materialize()")
    assert "mul" in (tmp_path / rows[0]["program"] / "ir.txt").read_text()


def test_recompile_is_counted_and_explained_with_the_input_that_changed(caplog, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "0")  # the explanation when sizes are specialized
    metrics.reset()
    caplog.set_level(logging.INFO, logger="lazytorch.recompiles")
    data = [np.ones((n, 11), np.float32) for n in (2, 3)]
    for a in data:
        x = lt.from_numpy(a)
        y = (x * 2).sum(0)
        lt.materialize(y)
        line = y._node.loc[1] + 1
    assert metrics.counters()["recompiles"] == 1
    (msg,) = [r.getMessage() for r in caplog.records if r.name == "lazytorch.recompiles"]
    where = format_loc((y._node.loc[0], line))
    assert msg == (
        f"recompiling program at {where}: input 0 f32[2, 11] -> f32[3, 11] "
        "(sizes and dtypes are specialized)"
    )
    assert "1 x input 0 f32[2, 11] -> f32[3, 11]" in metrics.report()


def test_recompile_explains_a_changed_graph():
    metrics.reset()
    x = lt.from_numpy(np.ones(7, np.float32))
    for f in (lt.exp, lt.sin):
        y = f(x)
        lt.materialize(y)
    reasons = metrics.report()
    assert metrics.counters()["recompiles"] == 1
    assert "the graph changed (1 -> 1 nodes): node 0 is sin, was exp (recorded at" in reasons


def test_same_program_at_another_line_is_not_a_recompile():
    metrics.reset()
    x = lt.from_numpy(np.ones(9, np.float32))
    lt.materialize(x + 1)
    lt.materialize(x + 1)
    assert metrics.counters()["recompiles"] == 0


def test_record_file_has_one_line_per_compiled_program(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path / "cache"))
    rec = tmp_path / "programs.jsonl"
    observe.set_record_file(rec)
    try:
        for n in (23, 29, 23):
            lt.materialize(lt.arange(float(n)).exp())
    finally:
        observe.set_record_file(None)
    lines = [json.loads(s) for s in rec.read_text().splitlines()]
    assert len(lines) == 2  # arange(23), then one program over arange's length
    static, dynamic = lines
    p = program_from_json(static["program"])
    assert get_backend("cpp").key(p, static["options"]) == static["key"]
    assert static["inputs"] == [] and static["guards"] == [] and THIS in static["loc"]
    from lazytorch.ir.generalize import Generalized, SizePattern

    gen = Generalized.from_json(
        SizePattern.of(program_from_json(dynamic["program"])), dynamic["dynamic"]
    )
    assert get_backend("cpp")._dynamic_key(gen.spec_text(), dynamic["options"]) == dynamic["key"]
    assert dynamic["guards"][0].startswith("s0 = %") and THIS in dynamic["loc"]


def test_prometheus_text_has_the_named_metrics_and_parses():
    metrics.reset()
    x = lt.from_numpy(np.ones(31, np.float32))
    lt.materialize(x * 3)
    lt.materialize(x * 3)
    text = metrics.prometheus()
    for name in (
        "lazytorch_import_time_seconds",
        "lazytorch_compile_invocations_total",
        "lazytorch_first_materialize_latency_seconds",
        'lazytorch_symbolic_guard_count_per_graph_bucket{le="+Inf"}',
        "lazytorch_recompiles_total",
        'lazytorch_cache_hits_total{level="memory"}',
        'lazytorch_cache_hits_total{level="disk"}',
        "lazytorch_deterministic_mode_flag",
        "lazytorch_device_backend_autoload_failures_total",
        'lazytorch_run_duration_seconds{quantile="0.99"}',
        "lazytorch_record_duration_seconds_count",
    ):
        assert re.search(rf"^{re.escape(name)} ", text, re.M), name
    sample = re.compile(r'^[a-z_]+(\{[a-z]+="[^"]*"\})? (NaN|[+-]Inf|-?[0-9.e+-]+)$')
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE"):
            _, _, name, kind = line.split()
            types[name] = kind
        elif not line.startswith("#"):
            assert sample.match(line), line
    assert types["lazytorch_cache_hits_total"] == "counter"
    assert types["lazytorch_symbolic_guard_count_per_graph"] == "histogram"
    assert types["lazytorch_run_duration_seconds"] == "summary"
    hits = re.search(r'cache_hits_total\{level="memory"\} (\d+)', text)
    assert hits and int(hits.group(1)) >= 1
    count = re.search(r"^lazytorch_run_duration_seconds_count (\d+)", text, re.M)
    assert count and int(count.group(1)) == 2


def test_report_lists_record_compile_and_run_percentiles():
    metrics.reset()
    lt.materialize(lt.arange(37.0).sqrt())
    report = metrics.report()
    assert "timings (ms): count  p50  p90  p99  max" in report
    for name in ("record", "run", "materialize"):
        assert re.search(rf"^    {name}: 1  ", report, re.M), name


def test_recompile_limit_warns_once_at_the_users_line(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "3")
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "0")  # every size compiles
    seen = []
    with pytest.warns(observe.RecompileWarning) as record:
        for n in range(1, 8):
            x = lt.from_numpy(np.ones((n, 5), np.float32))
            lt.materialize(x - 1)  # the line the warning names
            seen.append(n)
    assert len(record) == 1  # once per location, however many more recompiles follow
    w = record[0]
    assert w.filename == __file__
    assert "lt.materialize(x - 1)" in open(__file__).read().splitlines()[w.lineno - 1]
    msg = str(w.message)
    assert (
        "has been recompiled 3 times (limit 3); the latest because input 0 f32[3, 5] -> "
        "f32[4, 5]" in msg
    )
    assert "pad inputs to a few bucket sizes" in msg and "LAZYTORCH_RECOMPILE_LIMIT" in msg
    assert "lazytorch.mark_dynamic(x, dim)" in msg
    assert seen == list(range(1, 8))  # nothing fell back or stopped


def test_recompile_limit_names_the_guard_that_keeps_failing(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "2")
    with pytest.warns(observe.RecompileWarning) as record:
        for n in (3, 4, 9, 10, 11):
            x = lt.from_numpy(np.ones((n, 5), np.float32))
            lt.mark_dynamic(x, 0, max=8)
            lt.materialize(x - 1)
    assert len(record) == 1
    assert "the latest because guard s0 <= 8 failed (s0 = 10)" in str(record[0].message)
    c = lt.metrics.counters()
    assert c["programs_built"] == 4 and c["dynamic_hits"] == 1, c  # 3 (marked), 9, 10, 11


def test_recompile_limit_zero_never_warns(monkeypatch):
    import warnings

    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", observe.RecompileWarning)
        for n in range(1, 12):
            lt.materialize(lt.from_numpy(np.ones((n, 6), np.float32)) + 3)


def test_sync_mode_programs_of_one_line_are_not_recompiles(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_RECOMPILE_LIMIT", "2")
    import warnings

    x = lt.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", observe.RecompileWarning)
        with lt.sync_mode():
            y = lt.nn.functional.log_softmax(x * 2 - 1, 1).exp().sum()  # many ops, one line
    assert y.item() == pytest.approx(3.0, rel=1e-5)
    assert metrics.counters()["recompiles"] == 0
