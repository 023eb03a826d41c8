"""Materialization: explicit and implicit cuts, strict mode, auto-cut, sync mode, the
program cache's keys, and what a materialized node becomes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazytorch as lt
from lazytorch import runtime


def counters() -> dict[str, int]:
    return lt.metrics.counters()


def this_line() -> int:
    return sys._getframe(1).f_lineno


# -- explicit cuts ------------------------------------------------------------------------------
def test_materialize_computes_only_what_is_asked():
    x = lt.arange(4.0)
    y = x * 2
    z = x + 100
    lt.materialize(y)
    assert y.is_materialized and not z.is_materialized
    assert counters()["materializations"] == 1
    assert counters()["implicit_materializations"] == 0
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


def test_materialize_without_arguments_takes_every_live_pending_tensor():
    a = lt.ones(3) + 1
    b = a * 3
    lt.materialize()
    assert a.is_materialized and b.is_materialized
    assert counters()["materializations"] == 1  # one cut for both


def test_materialize_already_computed_is_a_no_op():
    y = lt.ones(2) * 5
    lt.materialize(y)
    lt.materialize(y)
    assert counters()["materializations"] == 1


def test_materialize_rejects_a_list():
    with pytest.raises(TypeError, match=r"materialize\(\*ts\)"):
        lt.materialize([lt.ones(2)])


def test_a_shared_intermediate_is_not_recomputed_by_a_later_cut():
    x = lt.arange(6.0)
    a = lt.exp(x) + 1
    lt.materialize(a)
    b = a * 2
    prog = lt.debug.program(b)
    assert "exp" not in prog.ops()  # a is an input now, not recomputed
    assert [p.kind for p in prog.params] == ["buffer", "scalar"]


def test_a_materialized_node_becomes_a_leaf_and_releases_its_graph():
    x = lt.ones(3)
    y = (x + 1) * 2
    lt.materialize(y)
    assert y._node.inputs == () and y._node.op.name == "buffer"


# -- implicit cuts and strict mode -----------------------------------------------------------
IMPLICIT = [
    ("item()", lambda t: t.sum().item()),
    ("tolist()", lambda t: t.tolist()),
    ("numpy()", lambda t: t.numpy()),
    ("repr()", lambda t: repr(t)),
    ("bool()", lambda t: bool(t.sum() > 0)),
    ("int()", lambda t: int(t.sum())),
    ("float()", lambda t: float(t.sum())),
    ("__index__", lambda t: [0, 1, 2][t.long().sum() - 5]),
    ("__array__ (NumPy conversion)", lambda t: np.asarray(t)),
    ("nonzero()", lambda t: lt.nonzero(t > 1)),
    ("boolean mask index", lambda t: t[t > 1]),
]


@pytest.mark.parametrize("cause, read", IMPLICIT, ids=[c for c, _ in IMPLICIT])
def test_implicit_materializations_are_counted_by_cause(cause, read):
    t = lt.arange(3.0) + 1
    read(t)
    assert counters()["implicit_materializations"] >= 1
    assert lt.metrics.causes().get(cause, 0) >= 1


def test_reading_a_materialized_tensor_is_not_another_cut():
    t = lt.ones(3) + 1
    lt.materialize(t)
    t.tolist()
    repr(t)
    assert counters()["implicit_materializations"] == 0
    assert counters()["materializations"] == 1


@pytest.mark.parametrize("cause, read", IMPLICIT, ids=[c for c, _ in IMPLICIT])
def test_strict_mode_refuses_implicit_cuts_naming_cause_and_line(cause, read):
    t = lt.arange(3.0) + 1
    with lt.strict_mode(), pytest.raises(lt.ImplicitMaterializationError) as err:
        line = this_line() + 1
        read(t)
    msg = str(err.value)
    assert cause in msg
    # The user frame is the lambda in IMPLICIT (it makes the call), in this file.
    assert "test_materialize.py:" in msg
    assert isinstance(err.value, RuntimeError)
    del line


def test_strict_mode_error_points_at_the_users_line():
    t = lt.ones(2) + 1
    with lt.strict_mode(), pytest.raises(lt.ImplicitMaterializationError) as err:
        line = this_line() + 1
        t.tolist()
    assert f"test_materialize.py:{line}" in str(err.value)


def test_strict_mode_allows_explicit_materialize():
    t = lt.ones(2) + 1
    with lt.strict_mode():
        lt.materialize(t)
        assert t.tolist() == [2.0, 2.0]  # already computed: no implicit cut


def test_set_strict_mode_is_process_wide_and_scopes_override_it():
    t = lt.ones(2) + 1
    lt.set_strict_mode(True)
    try:
        with pytest.raises(lt.ImplicitMaterializationError):
            t.tolist()
        with lt.strict_mode(False):
            assert t.tolist() == [2.0, 2.0]
    finally:
        lt.set_strict_mode(False)


def test_implicit_cuts_are_logged_with_cause_and_line(caplog):
    t = lt.ones(2) * 3
    with caplog.at_level("INFO", logger="lazytorch.syncs"):
        t.tolist()
    (rec,) = [r for r in caplog.records if r.name == "lazytorch.syncs"]
    assert "tolist()" in rec.getMessage() and "test_materialize.py:" in rec.getMessage()


# -- auto cut ---------------------------------------------------------------------------------------
def test_graph_is_cut_automatically_past_the_threshold():
    old = lt.get_max_pending_nodes()
    lt.set_max_pending_nodes(50)
    try:
        x = lt.zeros(3)
        for _ in range(200):
            x = x + 1
        assert counters()["auto_cuts"] >= 3
        assert x.tolist() == [200.0] * 3
    finally:
        lt.set_max_pending_nodes(old)


def test_max_pending_nodes_validates():
    with pytest.raises(ValueError):
        lt.set_max_pending_nodes(0)


def test_env_threshold_is_read_at_import():
    code = "import lazytorch as lt; print(lt.get_max_pending_nodes())"
    env = {**os.environ, "LAZYTORCH_MAX_PENDING_NODES": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "123"


# -- sync mode -------------------------------------------------------------------------------------
def test_sync_mode_runs_each_op_immediately():
    with lt.sync_mode():
        y = lt.ones(3) * 2
        assert y.is_materialized
        z = y + 1
        assert z.is_materialized
    w = z * 2
    assert not w.is_materialized


def test_sync_mode_gives_the_same_numbers_as_lazy_mode_bitwise():
    def program():
        lt.manual_seed(7)
        x = lt.randn(4, 5)
        y = lt.nn.functional.softmax(x @ x.T, -1)
        z = (y * lt.rand(4, 4) + lt.arange(4.0)).cumsum(0)
        return lt.nn.functional.gelu(z).sum(1)

    lazy = program().numpy().copy()
    with lt.sync_mode():
        eager = program().numpy().copy()
    np.testing.assert_array_equal(lazy, eager)


def test_sync_mode_surfaces_runtime_errors_at_the_op_line():
    x = lt.arange(3.0)
    idx = lt.tensor([5])
    with lt.sync_mode(), pytest.raises(IndexError) as err:
        line = this_line() + 1
        x.gather(0, idx)
    assert f"test_materialize.py:{line}" in str(err.value)


def test_lazy_mode_errors_name_the_recording_line():
    x = lt.arange(3.0)
    line = this_line() + 1
    y = x.gather(0, lt.tensor([5]))  # recorded fine; fails only when computed
    with pytest.raises(IndexError) as err:
        y.tolist()
    assert f"test_materialize.py:{line}" in str(err.value)
    assert "gather" in str(err.value)


def test_sync_mode_is_thread_local():
    seen = {}

    def worker():
        seen["thread"] = lt.is_sync_mode()

    with lt.sync_mode():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert lt.is_sync_mode()
    assert seen["thread"] is False


def test_set_sync_mode_and_env_variable():
    lt.set_sync_mode(True)
    try:
        assert (lt.ones(2) + 1).is_materialized
    finally:
        lt.set_sync_mode(False)
    code = "import lazytorch as lt; print((lt.ones(2) + 1).is_materialized)"
    env = {**os.environ, "LAZYTORCH_SYNC": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


# -- program cache keys ------------------------------------------------------------------------------
def test_same_structure_on_new_data_reuses_the_program():
    for k in range(5):
        x = lt.tensor(np.full(4, float(k), dtype=np.float32))
        (lt.exp(x) * 2).tolist()
    assert counters()["programs_built"] == 1


def test_python_scalars_are_inputs_not_part_of_the_key():
    x = lt.ones(3)
    lt.materialize(x)  # else the first .tolist() computes x too (it is live and in its graph)
    lt.metrics.reset()
    results = [(x * s + s).tolist() for s in (0.5, 2.0, -3.0)]
    assert results == [[1.0] * 3, [4.0] * 3, [-6.0] * 3]
    assert counters()["programs_built"] == 1


def test_a_training_style_loop_hits_one_program_every_step():
    w = lt.tensor(np.ones(4, dtype=np.float32))
    for step in range(6):
        g = w * 0.5 + step  # a "gradient"
        w = w - g * 0.1
        lt.materialize(w)
    # Step 0 builds the program; later steps start from materialized leaves that hash
    # by metadata only, so the key does not grow with the history.
    assert counters()["programs_built"] == 1
    assert np.allclose(w.numpy(), np.full(4, w.numpy()[0]))


def test_the_key_tells_apart_which_input_each_use_reads():
    x = lt.tensor([1.0, 2.0])
    y = lt.tensor([10.0, 20.0])
    a = ((x + y) * x).tolist()
    b = ((x + y) * y).tolist()
    assert a == [11.0, 44.0] and b == [110.0, 440.0]
    assert counters()["programs_built"] == 2


def test_new_shapes_build_new_programs(monkeypatch):
    monkeypatch.setenv("LAZYTORCH_DYNAMIC", "0")
    for n in (2, 3, 4):
        (lt.ones(n) + 1).tolist()
    assert counters()["programs_built"] == 3


def test_a_second_shape_builds_a_program_for_every_shape():
    for n in (2, 3, 4, 9):
        assert (lt.ones(n) + 1).tolist() == [2.0] * n
    c = counters()
    assert c["programs_built"] == 2 and c["dynamic_hits"] == 2


def test_live_tensor_registry_stays_bounded():
    x = lt.ones(2)
    for _ in range(5000):
        x = (x + 1) * 1
        lt.materialize(x)
    assert len(runtime._live) < 4096


def test_implicit_cuts_keep_the_live_registry_short():
    """An implicit cut walks the registry back from its newest entry, past dead and
    computed tensors; one that walked past more than `_SPENT_PRUNE` of them prunes, so a
    small loop's cuts do not each walk the hundreds left between the doubling prunes."""
    x = lt.ones(4)
    sizes = []
    for _ in range(300):
        y = (x * 2 + 1).sum()
        y.item()
        sizes.append(len(runtime._live))
    assert max(sizes[100:]) <= 2 * runtime._SPENT_PRUNE


# -- debug helpers ------------------------------------------------------------------------------------
def test_debug_program_prints_readable_ir_with_source_lines():
    x = lt.tensor(np.ones((2, 3), dtype=np.float32))
    line = this_line() + 1
    y = (x * 2).sum(1)
    lines = str(lt.debug.program(y)).splitlines()
    assert lines[0] == "program (2 inputs, 3 nodes, 1 outputs)"
    assert lines[1].split() == "%0 : f32[2, 3] = input 0 (buffer)".split()
    assert lines[2].split() == "%1 : f32[] = input 1 (scalar)".split()
    assert lines[3].split()[:6] == "%2 : f32[2, 3] = mul %0, %1".split()[:6]
    assert "reduce_sum[axes=(1,)] %2" in lines[4]
    assert "reshape[shape=(2,)] %3" in lines[5]
    for row in lines[3:6]:
        assert row.rstrip().endswith(
            f"# tests/runtime/test_materialize.py:{line}"
        ) or row.rstrip().endswith(f"test_materialize.py:{line}")
    assert lines[6].strip() == "return %4"


def test_a_loop_that_cuts_every_few_steps_reuses_its_program():
    # The custom-Function tutorial's loop: nothing is cut but a loss printed every few
    # steps. A value recorded before a cut and read after it (the Function's output, made
    # in the forward, read by the backward after the printed loss) must hash like the same
    # value recorded after it: the key is the graph's structure, not the history behind
    # its inputs (which made every printed loss compile a new program).
    class P3(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x**3 - 3 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 1.5 * (5 * x**2 - 1)

    x = lt.linspace(-1.0, 1.0, 16)
    y = lt.sin(x)
    a, b, c, d = (lt.full((), v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
    built = []
    for t in range(20):
        loss = (a + b * P3.apply(c + d * x) - y).pow(2).sum()
        if t % 4 == 3:
            loss.item()
            built.append(counters()["programs_built"])
        loss.backward()
        with lt.no_grad():
            for p in (a, b, c, d):
                p -= 0.01 * p.grad
                p.grad = None
    assert built[-1] == built[2], built  # no new program after the third cut


# -- NumPy's error state ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_interpreter_gives_inf_and_nan_silently_as_torch_does(dtype):
    # The references leave NumPy's error state to their caller: the interpreter sets it once
    # per program, and constant folding around its own call. A reference that warned would
    # raise here; one that computed in another error mode would differ from torch.
    import warnings

    import torch

    vals = [0.0, -1.0, 1e4, -3e38 if dtype != "float16" else -6e4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with lt.backend("interpreter"):
            x = lt.tensor(vals, dtype=getattr(lt, dtype))
            got = [
                (1 / x).numpy(),
                x.exp().numpy(),
                (x * x * x).numpy(),
                x.log().numpy(),
                (x.to(lt.float32) * 1e30).to(getattr(lt, dtype)).numpy(),
                (lt.tensor(1.0, dtype=getattr(lt, dtype)) / 0.0).numpy(),  # a folded constant
            ]
    t = torch.tensor(vals, dtype=getattr(torch, dtype))
    want = [
        1 / t,
        t.exp(),
        t * t * t,
        t.log(),
        (t.float() * 1e30).to(getattr(torch, dtype)),
        torch.tensor(1.0, dtype=getattr(torch, dtype)) / 0.0,
    ]
    rtol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-15}[dtype]  # exp, log: an ulp
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_allclose(g, w.numpy(), rtol=rtol)  # inf and NaN where torch has them


def test_constant_folding_folds_a_division_by_zero_to_inf_without_a_warning():
    import warnings

    from lazytorch.runtime.executor import build_program

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning in the fold would leave it unfolded
        y = lt.ones(()) / lt.zeros(())
        program = build_program([y._node])
        assert [ins.op.name for ins in program.instrs] == ["const"]
        assert y.item() == float("inf")
