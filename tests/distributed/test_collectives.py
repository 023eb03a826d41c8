"""Collectives: every one on lazy tensors, views and each dtype against NumPy, on 1, 2 and 4
ranks; the IR node, the order the runtime runs them in, metrics, and the API's errors."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import lazytorch as lt
import lazytorch.distributed as dist
from lazytorch.ir.primitives import get
from lazytorch.runtime import pending_collectives

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "workers"))
import collectives as worker
from mpijob import run_job

CASES = sorted(worker.CASES)


@pytest.fixture
def world():
    dist.init_process_group()
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture(scope="module", params=[2, 4], ids=lambda n: f"{n}ranks")
def job(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"collectives{request.param}")
    res = run_job(request.param, "collectives.py", str(out), timeout=240)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(request.param)]


@pytest.mark.parametrize("case", [*CASES, "collectives counted"])
def test_collective_on_many_ranks(job, case):
    for rank, results in enumerate(job):
        assert results[case] is None, f"rank {rank}: {results[case]}"


@pytest.mark.parametrize("case", CASES)
def test_collective_on_one_rank(world, case):
    """A world of one process: the one-process engine (the reference), no MPI."""
    got, want = worker.CASES[case](0, 1)
    if isinstance(want, tuple):
        np.testing.assert_allclose(got, want[1], rtol=1e-6)
    else:
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_a_collective_is_a_node_with_a_sequence_number(world):
    x = lt.ones(3) * 2
    dist.all_reduce(x)
    y = lt.ones(2) + 1
    dist.broadcast(y, src=0)
    n = x._node
    assert n.op is get("all_reduce") and n.params == {"group": 0, "seq": 1, "world": 1, "op": "sum"}
    assert y._node.params["seq"] == 2
    assert pending_collectives == [n, y._node]
    text = str(lt.debug.program(x))
    assert "all_reduce" in text and "seq=1" in text
    x.numpy()  # any cut runs the pending collectives first, in order
    assert not pending_collectives and y._node.buffer is not None


def test_no_program_holds_a_collective_and_the_reader_takes_its_result_as_input(world):
    a = lt.arange(4.0) * 3
    dist.all_reduce(a)
    b = (a + 1).sum()
    lt.metrics.reset()
    assert b.item() == 22.0
    c = lt.metrics.counters()
    assert c["collectives"] == 1 and c["materializations"] == 2  # a's program, then b's


def test_independent_collectives_share_one_program(world):
    xs = [lt.ones(3) * k for k in range(4)]
    for x in xs:
        dist.all_reduce(x)
    lt.metrics.reset()
    lt.materialize(*xs)
    c = lt.metrics.counters()
    assert c["collectives"] == 4 and c["materializations"] == 1, c
    assert [x.tolist() for x in xs] == [[float(k)] * 3 for k in range(4)]


def test_a_collective_of_a_computed_value_runs_at_once(world):
    x = lt.ones(3)
    x.numpy()
    dist.all_reduce(x)
    assert x._node.buffer is not None and not pending_collectives


def test_collectives_run_in_recording_order_even_when_read_in_another(world):
    ran = []
    engine = dist.GroupMember.WORLD.cpu_engine
    real = engine.run

    def spy(node, value):
        ran.append(node.params["seq"])
        return real(node, value)

    engine.run = spy
    a, b = lt.ones(2) * 2, lt.ones(2) * 3
    dist.all_reduce(a)
    dist.all_reduce(b)
    b.numpy()  # read the second first: the first still runs first
    assert ran == [1, 2]


def test_sync_mode_runs_a_collective_as_it_is_recorded(world):
    with lt.sync_mode():
        x = lt.ones(2) * 5
        dist.all_reduce(x)
        assert x._node.buffer is not None


def test_collectives_keep_gradients_of_the_rest(world):
    w = lt.ones(3, requires_grad=True)
    dist.broadcast(w, src=0)  # torch's DDP broadcasts parameters in place like this
    assert w.is_leaf and w.requires_grad
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_metrics_and_prometheus_count_collectives(world):
    lt.metrics.reset()
    x = lt.ones(256) * 1
    dist.all_reduce(x)
    x.numpy()
    c = lt.metrics.counters()
    assert c["collectives"] == 1 and c["collective_bytes"] == 1024
    text = lt.metrics.prometheus()
    assert "lazytorch_collectives_total 1" in text
    assert "lazytorch_collective_bytes_total 1024" in text
    assert "lazytorch_collective_duration_seconds_count 1" in text
    assert "collective" in lt.metrics.report()


def test_errors_name_the_problem(world):
    with pytest.raises(TypeError, match="all_reduce: tensor must be a lazytorch Tensor"):
        dist.all_reduce(np.ones(3))
    with pytest.raises(ValueError, match="op must be a ReduceOp"):
        dist.all_reduce(lt.ones(3), op="mean")
    with pytest.raises(ValueError, match="tensor_list must be a list of 1 tensors"):
        dist.all_gather([lt.ones(3), lt.ones(3)], lt.ones(3))
    with pytest.raises(ValueError, match=r"tensor_list\[0\] is lazytorch.float64 \[3\]"):
        dist.all_gather([lt.ones(3, dtype=lt.float64)], lt.ones(3))
    with pytest.raises(ValueError, match="output_tensor must be"):
        dist.all_gather_into_tensor(lt.ones(4), lt.ones(3))
    with pytest.raises(ValueError, match="rank 3 is not part of"):
        dist.broadcast(lt.ones(3), src=3)
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group()
    with pytest.raises(ValueError, match="unknown backend 'gloo'"):
        dist.Backend("gloo")


def test_without_init_collectives_say_so():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        dist.all_reduce(lt.ones(2))
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()


def test_world_size_one_needs_no_mpi(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if not installed
    dist.init_process_group()
    try:
        x = lt.ones(2) * 3
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
        assert x.tolist() == [3.0, 3.0] and dist.get_backend() == "mpi"
    finally:
        dist.destroy_process_group()


def test_a_bigger_world_without_mpi_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match=r"pip install \"lazytorch\[distributed\]\""):
        dist.init_process_group()
    assert not dist.is_initialized()


def test_world_size_above_one_outside_a_launcher_is_a_clear_error(tmp_path):
    pytest.importorskip("mpi4py")
    import os
    import subprocess

    code = "import lazytorch.distributed as d; d.init_process_group()"
    env = {**os.environ, "WORLD_SIZE": "2", "RANK": "0"}
    for k in [k for k in env if k.startswith(("PMI_", "OMPI_", "HYDRA"))]:
        env.pop(k)
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode != 0
    assert "WORLD_SIZE=2" in res.stderr and "MPI world of 1" in res.stderr
    assert "lazytorch run --nproc-per-node 2" in res.stderr


def test_a_compiled_function_with_a_collective_runs_it_every_call(world):
    @lt.compile
    def step(x):
        y = x * 2
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        return y + 1

    lt.metrics.reset()
    for k in range(3):
        assert step(lt.ones(3) * k).tolist() == [2.0 * k + 1] * 3
    assert lt.metrics.counters()["collectives"] == 3


def test_the_collective_cut_also_computes_the_values_sharing_its_work(world, monkeypatch):
    """The loss of a training step is computed by the program before the exchange, with the
    gradients: the program after it must not compute the forward again."""
    from lazytorch.runtime import executor

    runs = []
    real = executor.run

    def spy(roots, cause="", loc=None):
        runs.append({id(n) for n in roots})
        return real(roots, cause, loc)

    x, w = lt.randn(4, 8), lt.randn(8, 3)
    lt.materialize(x, w)
    monkeypatch.setattr(executor, "run", spy)
    h = (x @ w).relu()
    loss = h.sum()
    g = h * 2
    dist.all_reduce(g)
    y = g + 1
    y.numpy()  # an implicit read: y with the live values sharing its work
    assert len(runs) == 2
    assert id(loss._node) in runs[0], "the loss waited for the program after the exchange"
    assert loss._node.buffer is not None and loss.item() == h.sum().item()


def test_a_held_values_own_error_does_not_fail_the_exchange(world):
    x = lt.arange(4.0) * 1
    bad = x[lt.tensor([7])]  # out of range: computing it raises
    g = x * 2
    dist.all_reduce(g)
    with pytest.raises(IndexError):
        lt.materialize(g, bad)  # the cut's own roots join the exchange's program
    # the exchange still ran (every rank must run it), and g has its value
    assert not pending_collectives and g._node.buffer is not None
    assert g.tolist() == [0.0, 2.0, 4.0, 6.0]
