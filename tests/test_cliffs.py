"""Cliffs real scripts fell off (issue: index reads, collate, chained roll, the live
registry, infinite samplers): each is a regression test of the behaviour, not of time."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
import lazytorch.runtime as rt


def test_live_registry_stays_flat_under_in_place_updates():
    """Each in-place update registers the tensor's new pending value again; the registry
    must keep one entry per live tensor, not one per update (it grew to 12,027 entries in
    a 2,000-step loop and made every step slower)."""
    w = [lt.zeros(3) for _ in range(4)]
    sizes = []
    for step in range(25_000):
        for a in w:
            a += 1.0
        if step % 50 == 49:
            lt.materialize(*w)
        if step % 5_000 == 4_998:  # tensors pending, each updated 49 times since the cut
            rt.prune()
            sizes.append(len(rt._live))
    assert w[0].tolist() == [25_000.0] * 3
    assert max(sizes) <= 8, sizes
    # between prunes the list may grow, but only to a bounded multiple of the survivors
    assert len(rt._live) <= 2 * 1024 + 8


# -- reading views of computed values -------------------------------------------------------------


def _computed(a):
    x = lt.from_numpy(a.copy())
    lt.materialize(x)
    return x


def test_index_reads_of_a_computed_value_never_compile():
    a = np.arange(60, dtype=np.float32).reshape(12, 5)
    x = _computed(a)
    lt.metrics.reset()
    got = [x[i, i % 5].item() for i in range(12)] + [int(x[-1][j]) for j in range(5)]
    assert got == [float(a[i, i % 5]) for i in range(12)] + [int(a[-1, j]) for j in range(5)]
    c = lt.metrics.counters()
    assert c["compiles"] == 0 and c["programs_built"] == 0
    assert c["host_view_reads"] == 17


def test_a_0d_view_read_on_the_host_stays_0d():
    x = _computed(np.array([3, 4], np.int64))
    y = x[1]
    assert y.tolist() == 4 and y.shape == () and y.numpy().shape == ()
    assert repr(y) == "tensor(4)"


@pytest.mark.parametrize(
    "view",
    [
        lambda t: t.T[2, 1:5],
        lambda t: t.flip(0)[::3, 1],
        lambda t: t.reshape(5, 12)[1:4, ::5],
        lambda t: t[3].unsqueeze(0).expand(4, 5),
        lambda t: t.permute(1, 0).reshape(-1)[7:40:6],
    ],
)
def test_view_chains_read_on_the_host_equal_torch(view):
    a = np.random.default_rng(0).standard_normal((12, 5)).astype(np.float32)
    x = _computed(a)
    lt.metrics.reset()
    got = view(x).numpy()
    assert lt.metrics.counters()["compiles"] == 0
    want = view(torch.from_numpy(a)).numpy()
    assert got.shape == want.shape and np.array_equal(got, want)
    # the value feeds later programs like any computed value
    assert np.allclose((view(x) * 2).sum().item(), (view(torch.from_numpy(a)) * 2).sum().item())


def test_a_view_read_on_the_host_still_writes_through_to_its_base():
    x = _computed(np.zeros((3, 4), np.float32))
    row = x[1]
    assert row.tolist() == [0.0] * 4  # read on the host
    row += 1
    assert x.sum().item() == 4.0 and x[1].tolist() == [1.0] * 4


def test_gradient_flows_through_a_view_read_on_the_host():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = lt.from_numpy(a.copy()).requires_grad_()
    y = x[1, 2]
    assert y.item() == 5.0
    (y * 3).backward()
    want = np.zeros_like(a)
    want[1, 2] = 3
    assert np.array_equal(x.grad.numpy(), want)


def test_computing_views_still_compile_once():
    x = _computed(np.arange(10, dtype=np.float32))
    lt.metrics.reset()
    assert (x[3] * 2).item() == 6.0  # arithmetic: a program
    pending = x * 1
    assert pending[4].item() == 4.0  # the base is not computed: a program
    assert lt.metrics.counters()["programs_built"] == 2
