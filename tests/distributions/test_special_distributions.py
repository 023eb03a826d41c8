"""Gamma, Chi2, Beta, Poisson, Cauchy, Gumbel, HalfNormal and LogNormal against
torch.distributions: log_prob (values and gradients in the parameters), mean, variance,
entropy, cdf where defined, shapes, validation, and sample statistics where lazytorch samples.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

P1 = np.array([0.5, 1.3, 4.0])
P2 = np.array([[0.7], [2.5]])

CASES = {
    "Gamma": ((P1, P2), np.array([0.1, 1.0, 3.5])),
    "Beta": ((P1, P2), np.array([0.05, 0.5, 0.93])),
    "Cauchy": ((P1, P2), np.array([-3.0, 0.2, 8.0])),
    "Gumbel": ((P1, P2), np.array([-1.0, 0.4, 5.0])),
    "LogNormal": ((P1 - 1, P2), np.array([0.1, 1.0, 7.0])),
    "HalfNormal": ((P2,), np.array([0.0, 0.4, 3.0])),
    "Chi2": ((P2,), np.array([0.1, 1.0, 3.5])),
    "Poisson": ((P2,), np.array([0.0, 1.0, 4.0])),
}


def _build(lib, name, params, grad):
    ts = [lib.tensor(p, requires_grad=grad) for p in params]
    return getattr(lib.distributions, name)(*ts), ts


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_and_moments(name: str) -> None:
    params, value = CASES[name]
    dt, tt = _build(torch, name, params, True)
    dl, tl = _build(lt, name, params, True)
    assert tuple(dl.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dl.event_shape) == tuple(dt.event_shape)
    lp_t = dt.log_prob(torch.tensor(value))
    lp_l = dl.log_prob(lt.tensor(value))
    np.testing.assert_allclose(lp_l.detach().numpy(), lp_t.detach().numpy(), rtol=1e-12)
    gt = torch.autograd.grad(lp_t.sum(), tt)
    gl = lt.autograd.grad(lp_l.sum(), tl)
    for a, b in zip(gl, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11, atol=1e-14)
    for prop in ("mean", "variance", "mode"):
        np.testing.assert_allclose(
            getattr(dl, prop).detach().numpy(), getattr(dt, prop).detach().numpy(), rtol=1e-12
        )
    if name != "Poisson":  # torch's Poisson has no entropy
        np.testing.assert_allclose(
            dl.entropy().detach().numpy(), dt.entropy().detach().numpy(), rtol=1e-12
        )
    if name in ("Cauchy", "Gumbel", "HalfNormal"):
        np.testing.assert_allclose(
            dl.cdf(lt.tensor(value)).detach().numpy(),
            dt.cdf(torch.tensor(value)).detach().numpy(),
            rtol=1e-12,
        )
    ex = dl.expand((4, 2, 3))
    assert tuple(ex.batch_shape) == (4, 2, 3)


@pytest.mark.parametrize("name", ["Cauchy", "Gumbel", "HalfNormal", "LogNormal"])
def test_samples(name: str) -> None:
    params, _ = CASES[name]
    params = tuple(np.full((), float(np.ravel(p)[0])) for p in params)
    dl, _ = _build(lt, name, params, False)
    dt, _ = _build(torch, name, params, False)
    lt.manual_seed(0)
    s = dl.sample((20000,))
    assert tuple(s.shape) == (20000,)
    x = np.sort(s.numpy())
    # Kolmogorov-Smirnov against torch's cdf (or the log-normal through the normal's)
    if name == "LogNormal":
        cdf = torch.distributions.Normal(*map(torch.tensor, params)).cdf(torch.tensor(np.log(x)))
    else:
        cdf = dt.cdf(torch.tensor(x))
    ks = np.abs(cdf.numpy() - (np.arange(1, x.size + 1) / x.size)).max()
    assert ks < 0.015, ks
    r = dl.rsample((3,))
    assert tuple(r.shape) == (3,)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Chi2", "Poisson"])
def test_no_sampler_says_so(name: str) -> None:
    params, _ = CASES[name]
    dl, _ = _build(lt, name, params, False)
    with pytest.raises(NotImplementedError, match="not implemented in lazytorch yet"):
        dl.sample()


def test_validation() -> None:
    with pytest.raises(ValueError):
        lt.distributions.Gamma(lt.tensor([-1.0]), lt.tensor([1.0]))
    with pytest.raises(ValueError):
        lt.distributions.Beta(lt.tensor([0.5]), lt.tensor([1.0])).log_prob(lt.tensor([1.5]))
