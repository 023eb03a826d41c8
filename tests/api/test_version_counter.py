"""Tensor._version against torch's version counter: in-place writes through a tensor, its
views and detach() share one count; .data has its own; shape changes count; optimizers'
steps count as torch's do; a compiled step's replay counts what its traced call did."""

from __future__ import annotations

import numpy as np
import torch

import lazytorch as lt


def _writes(m):
    out = []
    x = m.zeros(3)
    out.append(x._version)
    v = x[:2]
    v.add_(1)
    out.append((x._version, v._version))
    x.mul_(2)
    out.append((x._version, v._version))
    d = x.detach()
    d.add_(1)
    out.append((x._version, d._version))
    dd = x.data
    dd.add_(1)
    out.append((x._version, dd._version))
    out.append(x.clone()._version)
    m.add(x, 1, out=x)
    out.append(x._version)
    x[0] = 5
    out.append(x._version)
    x.zero_()
    out.append(x._version)
    out.append((x + 1)._version)
    w = m.ones(2, requires_grad=True)
    with m.no_grad():
        w.sub_(0.1)
    out.append(w._version)
    x.copy_(m.ones(3))
    x.fill_(2)
    out.append(x._version)
    x.unsqueeze_(0)
    out.append(x._version)
    row = x[0]
    x.squeeze_(0)
    out.append((x._version, row._version))
    row.add_(1)
    out.append((x._version, row._version))
    z = m.zeros(2, 3)
    z.t_()
    out.append(z._version)
    return out


def test_in_place_writes_count_as_in_torch():
    assert _writes(lt) == _writes(torch)


def _optimizer_versions(m, make_opt, steps=4):
    m.manual_seed(0)
    lin = m.nn.Linear(4, 3)
    opt = make_opt(m, lin.parameters())
    x = m.tensor(np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32))
    seen = [lin.weight._version]
    for _ in range(steps):
        lin(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        seen.append((lin.weight._version, lin.bias._version))
    return seen


def test_optimizer_steps_count_as_in_torch():
    for make in (
        lambda m, ps: m.optim.AdamW(ps, lr=1e-2),
        lambda m, ps: m.optim.SGD(ps, lr=1e-2, momentum=0.9),
        lambda m, ps: m.optim.SGD(ps, lr=1e-2),
    ):
        assert _optimizer_versions(lt, make) == _optimizer_versions(torch, make)


def test_a_replayed_step_counts_the_writes_of_its_traced_call():
    """Replays rebind the parameters without running the update's in-place ops: they add
    the writes the traced call made, so versions advance as in the function run eagerly."""

    def versions(compiled: bool) -> list[int]:
        lt.manual_seed(0)
        lin = lt.nn.Linear(4, 3)
        opt = lt.optim.AdamW(lin.parameters(), lr=1e-2)
        x = lt.tensor(np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32))

        def step():
            loss = lin(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        fn = lt.compile(step) if compiled else step
        seen = []
        for _ in range(6):
            fn()
            seen.append(lin.weight._version)
        if compiled:
            assert "replays" in fn.explain()
        return seen

    assert versions(False) == versions(True) == [3, 5, 7, 9, 11, 13]
