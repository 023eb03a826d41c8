"""torch.optim.swa_utils against torch's: AveragedModel (default SWA, avg_fn,
multi_avg_fn, use_buffers), the averaging functions, SWALR and update_bn, over a short
training run with shared weights and data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(1)
X = RNG.normal(size=(6, 8, 3)).astype(np.float32)  # 6 batches of 8
Y = RNG.normal(size=(6, 8, 1)).astype(np.float32)


def _model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 1)
    )
    return m


def _share(src, dst):
    with torch.no_grad():
        for (_, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
            b.copy_(lt.tensor(a.numpy()) if isinstance(b, lt.Tensor) else a)


AVERAGERS = {
    "swa": lambda s: {},
    "swa(multi)": lambda s: {"multi_avg_fn": s.get_swa_multi_avg_fn()},
    "ema(multi)": lambda s: {"multi_avg_fn": s.get_ema_multi_avg_fn(0.8)},
    "ema(avg_fn)": lambda s: {"avg_fn": s.get_ema_avg_fn(0.7)},
    "swa(avg_fn)": lambda s: {"avg_fn": s.get_swa_avg_fn()},
    "ema(buffers)": lambda s: {"multi_avg_fn": s.get_ema_multi_avg_fn(0.8), "use_buffers": True},
}


def _train(lib, model, averager, sched_kw):
    swa_utils = lib.optim.swa_utils
    avg = swa_utils.AveragedModel(model, **AVERAGERS[averager](swa_utils))
    opt = lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    sched = swa_utils.SWALR(opt, **sched_kw)
    lrs = []
    for xb, yb in zip(X, Y):
        opt.zero_grad()
        loss = ((model(lib.tensor(xb)) - lib.tensor(yb)) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        avg.update_parameters(model)
    loader = [(lib.tensor(xb), lib.tensor(yb)) for xb, yb in zip(X, Y)]
    swa_utils.update_bn(loader, avg)
    out = avg(lib.tensor(X[0]))
    return avg, lrs, out


@pytest.mark.parametrize("averager", sorted(AVERAGERS))
def test_training_run_matches_torch(averager):
    mt, ml = _model(torch), _model(lt)
    _share(mt, ml)
    kw = {"swa_lr": 0.05, "anneal_epochs": 3, "anneal_strategy": "cos"}
    at, lrs_t, out_t = _train(torch, mt, averager, kw)
    al, lrs_l, out_l = _train(lt, ml, averager, kw)
    np.testing.assert_allclose(lrs_l, lrs_t, rtol=1e-12)
    assert int(al.n_averaged) == int(at.n_averaged) == 6
    assert al.n_averaged.dtype == lt.int64
    sd_t, sd_l = at.state_dict(), al.state_dict()
    assert list(sd_l) == list(sd_t)
    for k in sd_t:
        np.testing.assert_allclose(sd_l[k].numpy(), sd_t[k].numpy(), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(out_l.detach().numpy(), out_t.detach().numpy(), rtol=2e-5, atol=2e-6)
    assert al.training == at.training


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_schedule_matches_torch(strategy, anneal_epochs):
    def lrs(lib):
        p = lib.zeros(1, requires_grad=True)
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.zeros(1)], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(
            opt, swa_lr=[0.1, 0.02], anneal_epochs=anneal_epochs, anneal_strategy=strategy
        )
        out = [sched.get_last_lr()]
        for _ in range(6):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return out, sched.state_dict()

    (a, sa), (b, sb) = lrs(lt), lrs(torch)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert sorted(sa) == sorted(sb)


def test_swalr_state_dict_round_trip_and_errors():
    p = lt.zeros(1, requires_grad=True)
    opt = lt.optim.SGD([p], lr=1.0)
    sched = lt.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="linear")
    sd = sched.state_dict()
    assert "anneal_func" not in sd and "optimizer" not in sd
    other = lt.optim.swa_utils.SWALR(opt, swa_lr=0.5)
    other.load_state_dict(sd)
    assert other.anneal_func(0.3) == 0.3
    for bad in ({"anneal_strategy": "exp"}, {"anneal_epochs": -1}, {"anneal_epochs": 1.5}):
        with pytest.raises(ValueError) as et:
            torch.optim.swa_utils.SWALR(
                torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), 0.1, **bad
            )
        with pytest.raises(ValueError) as el:
            lt.optim.swa_utils.SWALR(opt, 0.1, **bad)
        assert str(el.value) == str(et.value)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        lt.optim.swa_utils.SWALR(opt, [0.1, 0.2])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.get_lr()
    assert any("get_last_lr" in str(x.message) for x in w)


def test_averaging_functions_and_errors():
    for lib in (torch, lt):
        with pytest.raises(ValueError, match="Invalid decay"):
            lib.optim.swa_utils.get_ema_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay"):
            lib.optim.swa_utils.get_ema_multi_avg_fn(-0.1)
        with pytest.raises(AssertionError):
            lib.optim.swa_utils.AveragedModel(
                lib.nn.Linear(1, 1),
                avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
                multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn(),
            )
    # integer tensors: the non-float branches (torch refuses SWA's integer division)
    res = []
    for lib in (torch, lt):
        a = [lib.tensor([10, 20, 30])]
        b = [lib.tensor([40, 50, 61])]
        lib.optim.swa_utils.get_ema_multi_avg_fn(0.5)(a, b, lib.tensor(2))
        res.append(a[0].numpy())
        for n in (lib.tensor(2), 2):
            with pytest.raises(RuntimeError):
                lib.optim.swa_utils.get_swa_multi_avg_fn()(a, b, n)
                lt.materialize(*a) if lib is lt else None
    np.testing.assert_array_equal(res[1], res[0])


def test_update_bn_without_batchnorm_is_a_no_op_and_restores_mode():
    m = lt.nn.Linear(3, 1)
    lt.optim.swa_utils.update_bn([lt.zeros(2, 3)], m)
    bn = lt.nn.Sequential(lt.nn.BatchNorm1d(3))
    bn.eval()
    lt.optim.swa_utils.update_bn([lt.ones(4, 3) * 2.0, [lt.ones(4, 3) * 4.0]], bn)
    assert not bn.training
    assert bn[0].momentum == 0.1
    np.testing.assert_allclose(bn[0].running_mean.numpy(), [3.0, 3.0, 3.0], rtol=1e-6)
    assert int(bn[0].num_batches_tracked) == 2
