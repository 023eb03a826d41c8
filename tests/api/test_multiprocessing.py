"""lazytorch.multiprocessing and shared-memory tensors (lazytorch.ops.shared_memory): writes
in one process reach the others, a child's pending update is not lost at exit, a child
trains a shared model to exactly the weights in-process training gives, and spawn children
of an ``--as-torch`` script import lazytorch as torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lazytorch as lt
import lazytorch.multiprocessing as mp
from lazytorch.ops import shared_memory

CHILDREN = """
import lazytorch as lt

def add_one(t):
    with lt.no_grad():
        t.add_(1)  # left pending: the exit flush writes it back

def train(model, x, y, steps):
    opt = lt.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        lt.nn.functional.mse_loss(model(x), y).backward()
        opt.step()

def fail(i, message):
    raise ValueError(message)

def put_square(q, t):
    q.put(t * t)
"""


@pytest.fixture
def children(tmp_path, monkeypatch):
    (tmp_path / "mp_children.py").write_text(CHILDREN)
    monkeypatch.syspath_prepend(str(tmp_path))  # spawn children get this sys.path too
    import mp_children

    yield mp_children
    sys.modules.pop("mp_children", None)


def _run_child(target, *args):
    p = mp.get_context("spawn").Process(target=target, args=args)
    p.start()
    p.join(120)
    assert p.exitcode == 0


def test_share_memory_keeps_values_and_writes_back_in_place_updates():
    t = lt.arange(4.0)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    name, array = shared_memory.segment_of(t)
    np.testing.assert_array_equal(array, [0, 1, 2, 3])
    t.mul_(2)
    t.add_(1)  # pending: the segment still holds the old value until a cut
    (t.sum() * 1).item()
    np.testing.assert_array_equal(array, [1, 3, 5, 7])  # written back by the cut
    assert t.is_shared() and t._node.buffer is array
    assert shared_memory.segment_of(t)[0] == name


def test_a_write_to_the_segment_is_read_by_the_next_program():
    t = lt.zeros(3).share_memory_()
    _, array = shared_memory.segment_of(t)
    array[:] = [1, 2, 3]  # what another process's write does
    assert (t * 10).tolist() == [10.0, 20.0, 30.0]


def test_replacing_the_storage_unshares():
    t = lt.zeros(3).share_memory_()
    t.data = lt.ones(5)
    (t * 1).sum().item()
    assert not t.is_shared()


def test_a_child_process_writes_the_parents_tensor(children):
    t = lt.zeros(3)
    _run_child(children.add_one, t)  # pickled as the segment (moved to shared memory)
    assert t.is_shared()
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_a_child_trains_a_shared_model_to_the_in_process_weights(children):
    lt.manual_seed(0)
    model = lt.nn.Linear(4, 3)
    twin = lt.nn.Linear(4, 3)
    twin.load_state_dict(model.state_dict())
    x, y = lt.randn(8, 4), lt.randn(8, 3)
    model.share_memory()
    _run_child(children.train, model, x, y, 3)
    children.train(twin, x, y, 3)  # the same steps, here
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.is_shared()
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert not np.allclose(
        model.weight.detach().numpy(), lt.nn.Linear(4, 3).weight.detach().numpy()
    )


def test_a_queue_in_one_process_gives_the_same_tensor():
    q = mp.get_context("spawn").SimpleQueue()
    t = lt.arange(3.0)
    q.put(t)
    assert q.get() is t


def test_a_queue_from_a_child_carries_its_result(children):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=children.put_square, args=(q, lt.arange(4.0)))
    p.start()
    out = q.get(timeout=120)
    p.join(120)
    assert out.tolist() == [0.0, 1.0, 4.0, 9.0]


def test_a_view_is_sent_as_its_values():
    q = mp.get_context("spawn").SimpleQueue()
    t = lt.arange(6.0).reshape(2, 3)
    q.put(t[1])
    assert q.get().tolist() == [3.0, 4.0, 5.0]


def test_a_non_leaf_that_requires_grad_is_refused():
    x = lt.ones(2, requires_grad=True) * 2
    q = mp.get_context("spawn").SimpleQueue()
    with pytest.raises(RuntimeError, match="requires grad and is not a leaf"):
        q.put(x)


def test_spawn_raises_the_childs_error(children):
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: bad batch"):
        mp.spawn(children.fail, args=("bad batch",), nprocs=2)


def test_sharing_strategies():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="unknown strategy"):
        mp.set_sharing_strategy("carrier_pigeon")


def test_spawn_children_of_an_as_torch_script_import_lazytorch(tmp_path):
    script = tmp_path / "hogwild_like.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys

            import torch
            import torch.multiprocessing as mp

            def work(rank, t):
                with torch.no_grad():
                    t[rank] = 10 + rank
                # one write per line: two children print at once, and print() writes
                # its text and its newline separately (they interleaved in CI)
                sys.stdout.write(f"child {rank} {torch.__name__}\\n")
                sys.stdout.flush()

            if __name__ == "__main__":
                t = torch.zeros(2)
                mp.spawn(work, args=(t,), nprocs=2)
                print("parent", t.tolist())
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "lazytorch", "run", "--as-torch", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "child 0 lazytorch" in out.stdout and "child 1 lazytorch" in out.stdout
    assert "parent [10.0, 11.0]" in out.stdout


def test_a_clone_and_a_pending_reader_of_a_shared_tensor_keep_their_values() -> None:
    # The segment is written by other processes and by write-backs: a clone must not alias
    # it, and a computation recorded before an update reads the value before it (as torch).
    t = lt.arange(3.0).share_memory_()
    segment = shared_memory._shared[id(t)][1]
    y, z = t.clone(), t * 2
    t.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0]
    assert z.tolist() == [0.0, 2.0, 4.0]
    segment[0] = 50  # another process writes
    assert y.tolist() == [0.0, 1.0, 2.0]
    assert t.tolist() == [50.0, 2.0, 3.0]
