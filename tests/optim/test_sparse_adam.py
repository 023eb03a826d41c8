"""SparseAdam and embeddings' sparse=True gradients against torch: which rows an update
touches (the looked-up ones, a zero gradient included, the padding row not), the moments
and step count, accumulation over backward passes, zero_grad, and torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.autograd.engine import sparse_grad_rows

ROWS, DIM = 10, 3


def _model(lib, padding_idx=None):
    w = np.random.default_rng(0).standard_normal((ROWS, DIM)).astype(np.float32)
    emb = lib.nn.Embedding(ROWS, DIM, sparse=True, padding_idx=padding_idx)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(w))
    return emb


def _steps(lib, lookups, *, padding_idx=None, set_to_none=True, **opt_kw):
    """Train an embedding with SparseAdam: each step is a list of (indices, weight of the
    rows' sum in the loss) lookups, each its own backward; returns the weights after each
    step and the final state."""
    emb = _model(lib, padding_idx)
    opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1, **opt_kw)
    seen = []
    for step in lookups:
        opt.zero_grad(set_to_none=set_to_none)
        for idx, scale in step:
            rows = emb(lib.tensor(idx))
            (rows.sin().sum() * scale).backward()
        opt.step()
        seen.append(emb.weight.detach().numpy().copy())
    state = opt.state_dict()["state"][0]
    return seen, {k: np.asarray(v.numpy()) if hasattr(v, "numpy") else v for k, v in state.items()}


# step 2 touches row 1 with a zero gradient (its moments decay and it moves, as in torch)
# and never touches rows 2 and 3 (they stay as they are), though all three hold moments
LOOKUPS = [
    [([1, 2, 3, 3], 1.0)],
    [([4, 4], 1.0), ([1], 0.0)],
    [([5, 0, 1], -2.0)],
]


@pytest.mark.parametrize(
    "kw",
    [{}, {"maximize": True}, {"set_to_none": False}, {"padding_idx": 4}, {"padding_idx": -6}],
    ids=["default", "maximize", "zeros", "padding", "negative-padding"],
)
def test_sparse_adam_updates_the_rows_torch_updates(kw):
    want, want_state = _steps(torch, LOOKUPS, **kw)
    got, got_state = _steps(lt, LOOKUPS, **kw)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=f"step {step}")
        # a row torch leaves alone keeps its bits exactly
        still = (
            (w == want[step - 1]).all(1)
            if step
            else (w == _model(torch).weight.detach().numpy()).all(1)
        )
        assert (g[still] == w[still]).all()
    assert got_state["step"] == want_state["step"] == len(LOOKUPS)
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(got_state[k], want_state[k], rtol=1e-6, atol=1e-9)


def test_a_row_touched_with_a_zero_gradient_is_updated():
    # (what a dense gradient cannot tell: the update after a zero gradient still moves the
    # row, by its decayed first moment)
    want, _ = _steps(torch, LOOKUPS)
    got, _ = _steps(lt, LOOKUPS)
    assert (want[1][1] != want[0][1]).all() and (got[1][1] != got[0][1]).all()
    assert (got[1][2:4] == got[0][2:4]).all()


def test_gradient_rows_follow_torchs_sparse_gradient():
    emb = _model(lt, padding_idx=0)
    emb(lt.tensor([[1, 0], [7, 7]])).sum().backward()
    (rows,) = sparse_grad_rows(emb.weight)
    assert rows[0].tolist() == [1, 0, 7, 7] and rows[1] == 0
    emb(lt.tensor([2])).sum().backward()  # accumulates: the rows of both passes
    assert len(sparse_grad_rows(emb.weight)) == 2
    emb.zero_grad()
    assert sparse_grad_rows(emb.weight) is None
    emb(lt.tensor([2])).sum().backward()
    emb.weight.grad = lt.zeros(ROWS, DIM)  # an assigned gradient is dense
    assert sparse_grad_rows(emb.weight) is None


def test_a_dense_part_makes_the_gradient_dense():
    # weight tying: the same weight read by a sparse lookup and a dense product
    emb = _model(lt)
    (emb(lt.tensor([1])).sum() + (emb.weight * 2).sum()).backward()
    assert sparse_grad_rows(emb.weight) is None
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        lt.optim.SparseAdam(emb.parameters()).step()


@pytest.mark.parametrize("lib", [torch, lt], ids=["torch", "lazytorch"])
def test_sparse_adam_refuses_what_torch_refuses(lib):
    lin = lib.nn.Linear(2, 2)
    lin(lib.ones(1, 2)).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        lib.optim.SparseAdam(lin.parameters()).step()
    for bad, match in [
        ({"lr": 0.0}, "Invalid learning rate"),
        ({"eps": 0.0}, "Invalid epsilon value"),
        ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0"),
        ({"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
    ]:
        with pytest.raises(ValueError, match=match):
            lib.optim.SparseAdam(lin.parameters(), **bad)


def test_an_embedding_without_sparse_gradients_notes_nothing():
    emb = lt.nn.Embedding(ROWS, DIM)
    emb(lt.tensor([1])).sum().backward()
    assert sparse_grad_rows(emb.weight) is None


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_sparse_adam_on_an_embedding_bag(mode):
    def run(lib):
        w = np.random.default_rng(0).standard_normal((ROWS, DIM)).astype(np.float32)
        bag = lib.nn.EmbeddingBag(ROWS, DIM, mode=mode, sparse=True, padding_idx=2)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(w))
        opt = lib.optim.SparseAdam(bag.parameters(), lr=0.1)
        for idx in ([[1, 2, 5], [5, 6, 2]], [[7, 7, 1], [2, 2, 2]]):
            opt.zero_grad()
            bag(lib.tensor(idx)).sin().sum().backward()
            opt.step()
        return bag.weight.detach().numpy()

    want, got = run(torch), run(lt)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    untouched = [0, 2, 3, 4, 8, 9]
    assert (
        got[untouched]
        == np.random.default_rng(0).standard_normal((ROWS, DIM)).astype(np.float32)[untouched]
    ).all()


@pytest.mark.parametrize("lib", [torch, lt], ids=["torch", "lazytorch"])
def test_a_max_bag_refuses_sparse_gradients(lib):
    bag = lib.nn.EmbeddingBag(ROWS, DIM, mode="max", sparse=True)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        bag(lib.tensor([[1, 2]]))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, ps: lib.optim.Adagrad(ps, lr=0.3, lr_decay=0.01),
        lambda lib, ps: lib.optim.SGD(ps, lr=0.3),
        lambda lib, ps: lib.optim.SGD(ps, lr=0.3, momentum=0.9),
    ],
    ids=["adagrad", "sgd", "sgd-momentum"],
)
def test_a_sparse_gradient_takes_torchs_sparse_update_in_other_optimizers(make):
    def run(lib):
        emb = _model(lib, padding_idx=0)
        opt = make(lib, emb.parameters())
        for idx in ([1, 2, 0, 2], [4, 1], [7, 0]):
            opt.zero_grad()
            emb(lib.tensor(idx)).sin().sum().backward()
            opt.step()
        return emb.weight.detach().numpy()

    np.testing.assert_allclose(run(lt), run(torch), rtol=1e-6, atol=1e-7)
