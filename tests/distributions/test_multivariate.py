"""MultivariateNormal and Dirichlet against torch.distributions: log_prob (values and
gradients), entropy, moments, the three covariance parameterizations, batch broadcasting,
kl_divergence, and sample statistics (lazytorch's own draws)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]], dtype=np.float32)
LOC = np.array([[0.5, -1.0, 0.0], [1.0, 2.0, -0.5]], dtype=np.float32)  # a batch of 2
VALUE = np.array([[0.1, 0.2, 0.3], [-1.0, 0.5, 2.0]], dtype=np.float32)


def _mvn(lib, how: str, grad: bool = False):
    loc = lib.tensor(LOC, requires_grad=grad)
    cov = lib.tensor(COV, requires_grad=grad)
    if how == "covariance_matrix":
        return lib.distributions.MultivariateNormal(loc, covariance_matrix=cov), (loc, cov)
    if how == "precision_matrix":
        return lib.distributions.MultivariateNormal(loc, precision_matrix=cov), (loc, cov)
    tril = lib.tensor(np.linalg.cholesky(COV), requires_grad=grad)
    return lib.distributions.MultivariateNormal(loc, scale_tril=tril), (loc, tril)


@pytest.mark.parametrize("how", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_mvn_matches_torch(how: str) -> None:
    dt, pt = _mvn(torch, how, grad=True)
    dl, pl = _mvn(lt, how, grad=True)
    assert tuple(dl.batch_shape) == (2,) and tuple(dl.event_shape) == (3,)
    for attr in ("mean", "variance", "covariance_matrix", "scale_tril", "precision_matrix"):
        np.testing.assert_allclose(
            getattr(dl, attr).detach().numpy(),
            getattr(dt, attr).detach().numpy(),
            rtol=1e-4,
            atol=1e-5,
        )
    np.testing.assert_allclose(
        dl.entropy().detach().numpy(), dt.entropy().detach().numpy(), rtol=1e-5
    )
    want = dt.log_prob(torch.tensor(VALUE))
    got = dl.log_prob(lt.tensor(VALUE))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    want.sum().backward()
    got.sum().backward()
    for a, b in zip(pl, pt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_mvn_sampling_and_broadcasting() -> None:
    lt.manual_seed(0)
    d = lt.distributions.MultivariateNormal(lt.tensor(LOC[0]), lt.tensor(COV))
    x = d.sample((40000,)).numpy()
    assert x.shape == (40000, 3)
    np.testing.assert_allclose(x.mean(0), LOC[0], atol=0.03)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.05)
    loc = lt.tensor([1.0, 2.0], requires_grad=True)
    r = lt.distributions.MultivariateNormal(loc, lt.eye(2)).rsample((3,))
    r.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    batch_cov = np.stack([COV, 2 * COV])  # batch from the covariance, one loc
    dl = lt.distributions.MultivariateNormal(lt.tensor(LOC[0]), lt.tensor(batch_cov))
    dt = torch.distributions.MultivariateNormal(torch.tensor(LOC[0]), torch.tensor(batch_cov))
    assert tuple(dl.batch_shape) == (2,) and tuple(dl.sample((5,)).shape) == (5, 2, 3)
    np.testing.assert_allclose(
        dl.log_prob(lt.tensor(VALUE[0])).numpy(),
        dt.log_prob(torch.tensor(VALUE[0])).numpy(),
        rtol=1e-5,
    )
    e = dl.expand((4, 2))
    assert tuple(e.batch_shape) == (4, 2) and tuple(e.sample().shape) == (4, 2, 3)


def test_mvn_errors() -> None:
    with pytest.raises(ValueError):
        lt.distributions.MultivariateNormal(lt.zeros(2))
    with pytest.raises(ValueError):
        lt.distributions.MultivariateNormal(lt.zeros(2), lt.eye(2), scale_tril=lt.eye(2))
    with pytest.raises(ValueError):
        lt.distributions.MultivariateNormal(lt.zeros(2), lt.tensor([[1.0, 2.0], [2.0, 1.0]]))


CONC = np.array([[0.5, 2.0, 3.0], [1.0, 1.0, 7.0]], dtype=np.float32)
SIMPLEX = np.array([0.2, 0.3, 0.5], dtype=np.float32)


def test_dirichlet_matches_torch() -> None:
    ct, cl = torch.tensor(CONC, requires_grad=True), lt.tensor(CONC, requires_grad=True)
    dt, dl = torch.distributions.Dirichlet(ct), lt.distributions.Dirichlet(cl)
    assert tuple(dl.batch_shape) == (2,) and tuple(dl.event_shape) == (3,)
    for attr in ("mean", "variance", "mode"):
        np.testing.assert_allclose(
            getattr(dl, attr).detach().numpy(), getattr(dt, attr).detach().numpy(), rtol=1e-5
        )
    np.testing.assert_allclose(
        dl.entropy().detach().numpy(), dt.entropy().detach().numpy(), rtol=1e-5
    )
    want, got = dt.log_prob(torch.tensor(SIMPLEX)), dl.log_prob(lt.tensor(SIMPLEX))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(cl.grad.numpy(), ct.grad.numpy(), rtol=1e-4)


def test_dirichlet_sampling() -> None:
    lt.manual_seed(2)
    d = lt.distributions.Dirichlet(lt.tensor(CONC))
    x = d.sample((20000,)).numpy()
    assert x.shape == (20000, 2, 3)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(0), d.mean.numpy(), atol=0.01)
    np.testing.assert_allclose(x.var(0), d.variance.numpy(), rtol=0.08)
    with pytest.raises(NotImplementedError, match="concentration"):
        lt.distributions.Dirichlet(lt.tensor(CONC, requires_grad=True)).rsample()


def test_kl_divergences_match_torch() -> None:
    def pairs(lib):
        D, t = lib.distributions, lib.tensor
        return [
            (
                D.MultivariateNormal(t(LOC), t(COV)),
                D.MultivariateNormal(
                    t(LOC[::-1].copy()), scale_tril=t(np.linalg.cholesky(2 * COV))
                ),
            ),
            (D.Dirichlet(t(CONC)), D.Dirichlet(t(CONC[::-1].copy()))),
            (D.Gamma(t([2.0, 0.5]), t([3.0, 1.0])), D.Gamma(t([1.0, 1.5]), t([1.0, 2.0]))),
            (D.Beta(t([2.0, 0.5]), t([3.0, 1.0])), D.Beta(t([1.0, 1.5]), t([1.0, 2.0]))),
            (D.Poisson(t([2.0, 0.0])), D.Poisson(t([3.0, 1.0]))),
        ]

    for (pl, ql), (pt, qt) in zip(pairs(lt), pairs(torch)):
        got = lt.distributions.kl_divergence(pl, ql).numpy()
        want = torch.distributions.kl_divergence(pt, qt).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
