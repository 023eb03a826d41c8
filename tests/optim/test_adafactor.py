"""Adafactor against torch.optim.Adafactor: several steps on matrices, vectors, a 3-d and a
0-d parameter, each option, and a state_dict round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(0)
WS = [
    RNG.normal(size=(3, 4)).astype(np.float32),
    RNG.normal(size=(5,)).astype(np.float32),
    RNG.normal(size=(2, 3, 2)).astype(np.float32),
    np.asarray(RNG.normal(), dtype=np.float32),
]


def _run(lib, steps=5, opt_state=None, **kw):
    ps = [lib.tensor(w, requires_grad=True) for w in WS]
    opt = lib.optim.Adafactor(ps, **kw)
    if opt_state is not None:
        opt.load_state_dict(opt_state)
    for i in range(steps):
        opt.zero_grad()
        loss = sum((p * p * p).sum() + (p * (i + 1)).sum() for p in ps)
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in ps], opt


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"lr": 0.1, "weight_decay": 0.1},
        {"eps": (1e-3, 1e-2), "d": 1.5, "maximize": True, "beta2_decay": -0.5},
        {"lr": 0.5},  # rho_t = 1/sqrt(t) takes over
    ],
)
def test_steps_match_torch(kw):
    want, ot = _run(torch, **kw)
    got, ol = _run(lt, **kw)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    for pt, pl in zip(ot.param_groups[0]["params"], ol.param_groups[0]["params"]):
        st, sl = ot.state[pt], ol.state[pl]
        assert sorted(st) == sorted(sl)
        assert float(sl["step"]) == float(st["step"])
        for k in st:
            if k != "step":
                np.testing.assert_allclose(sl[k].numpy(), st[k].numpy(), rtol=2e-5, atol=1e-8)


def test_state_dict_round_trip_continues_as_torch():
    _, ot = _run(torch, steps=3)
    _, ol = _run(lt, steps=3)
    sd = ol.state_dict()
    assert sd["param_groups"][0]["beta2_decay"] == -0.8
    assert sd["param_groups"][0]["eps"] == (None, 1e-3)
    want, _ = _run(torch, steps=2, opt_state=ot.state_dict())
    got, _ = _run(lt, steps=2, opt_state=sd)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": -1.0},
        {"beta2_decay": 0.5},
        {"eps": (-1.0, 1e-3)},
        {"eps": (None, -1.0)},
        {"d": 0.5},
        {"weight_decay": -0.1},
    ],
)
def test_invalid_hyperparameters_raise_as_torch(kw):
    with pytest.raises(ValueError) as et:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as el:
        lt.optim.Adafactor([lt.zeros(2, requires_grad=True)], **kw)
    assert str(el.value) == str(et.value)
