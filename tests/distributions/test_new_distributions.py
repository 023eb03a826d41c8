"""Binomial, Geometric, Multinomial, NegativeBinomial, StudentT, FisherSnedecor, the relaxed
distributions, MixtureSameFamily and the transformed families (HalfCauchy, Pareto, Weibull,
Kumaraswamy, InverseGamma, LogisticNormal) against torch.distributions on the same
parameters: log_prob (values and gradients), cdf/icdf, entropy, mean/variance/mode,
expand, support, validation errors and KL pairs; samples by law (shapes, support and
moments of many draws), since the random streams differ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(11)


def _u(shape, low, high):
    return RNG.uniform(low, high, size=shape)


# name -> (build(lib, *params), params (float64 arrays), value (array), extra methods)
CASES = {
    "Binomial(probs)": (
        lambda t, n, p: t.distributions.Binomial(n, probs=p),
        [np.array([[5.0], [9.0]]), np.array([0.2, 0.5, 0.9])],
        np.array([[0.0, 3.0, 5.0], [1.0, 9.0, 4.0]]),
        (),
    ),
    "Binomial(logits)": (
        lambda t, n, lg: t.distributions.Binomial(n, logits=lg),
        [np.array([7.0, 7.0, 7.0]), np.array([-1.5, 0.0, 2.0])],
        np.array([0.0, 3.0, 7.0]),
        (),
    ),
    "Geometric(probs)": (
        lambda t, p: t.distributions.Geometric(probs=p),
        [np.array([0.1, 0.5, 0.9])],
        np.array([0.0, 3.0, 11.0]),
        (),
    ),
    "Geometric(logits)": (
        lambda t, lg: t.distributions.Geometric(logits=lg),
        [np.array([[-2.0, 0.3, 1.7]])],
        np.array([[0.0, 3.0, 11.0], [2.0, 1.0, 0.0]]),
        (),
    ),
    "NegativeBinomial": (
        lambda t, n, p: t.distributions.NegativeBinomial(n, probs=p),
        [np.array([0.5, 3.0, 10.0]), np.array([0.2, 0.5, 0.8])],
        np.array([0.0, 4.0, 30.0]),
        (),
    ),
    "StudentT": (
        lambda t, df, loc, scale: t.distributions.StudentT(df, loc, scale),
        [np.array([0.7, 1.5, 2.0, 6.0]), np.array([-1.0, 0.0, 0.5, 2.0]), _u(4, 0.5, 2)],
        np.array([-2.0, 0.1, 0.4, 7.0]),
        (),
    ),
    "FisherSnedecor": (
        lambda t, a, b: t.distributions.FisherSnedecor(a, b),
        [np.array([1.5, 3.0, 5.0, 9.0]), np.array([1.0, 3.0, 4.5, 12.0])],
        np.array([0.1, 0.7, 1.5, 6.0]),
        (),
    ),
    "HalfCauchy": (
        lambda t, s: t.distributions.HalfCauchy(s),
        [np.array([0.5, 1.0, 3.0])],
        np.array([0.0, 0.4, 9.0]),
        ("cdf", "icdf"),
    ),
    "Pareto": (
        lambda t, s, a: t.distributions.Pareto(s, a),
        [np.array([0.5, 1.0, 2.0]), np.array([0.7, 2.5, 3.5])],
        np.array([0.6, 1.0, 7.0]),
        ("cdf", "icdf"),
    ),
    "Weibull": (
        lambda t, s, k: t.distributions.Weibull(s, k),
        [np.array([0.5, 1.0, 2.0]), np.array([0.7, 1.0, 3.5])],
        np.array([0.1, 1.0, 2.5]),
        ("cdf", "icdf"),
    ),
    "Kumaraswamy": (
        lambda t, a, b: t.distributions.Kumaraswamy(a, b),
        [np.array([0.5, 1.5, 3.0]), np.array([2.0, 0.8, 4.0])],
        np.array([0.1, 0.5, 0.93]),
        ("cdf", "icdf"),
    ),
    "InverseGamma": (
        lambda t, a, b: t.distributions.InverseGamma(a, b),
        [np.array([0.5, 1.5, 3.0]), np.array([2.0, 0.8, 4.0])],
        np.array([0.1, 0.5, 3.0]),
        (),
    ),
    "LogisticNormal": (
        lambda t, loc, scale: t.distributions.LogisticNormal(loc, scale),
        [np.array([[-0.5, 0.3], [1.0, 0.0]]), np.array([[0.5, 1.2], [0.8, 2.0]])],
        np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
        (),
    ),
    "RelaxedBernoulli": (
        lambda t, temp, p: t.distributions.RelaxedBernoulli(temp, probs=p),
        [np.array(0.7), np.array([0.2, 0.5, 0.9])],
        np.array([0.1, 0.5, 0.97]),
        (),
    ),
    "RelaxedOneHotCategorical": (
        lambda t, temp, lg: t.distributions.RelaxedOneHotCategorical(temp, logits=lg),
        [np.array(0.4), np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]])],
        np.array([[0.2, 0.3, 0.5], [0.05, 0.05, 0.9]]),
        (),
    ),
    "Multinomial": (
        lambda t, p: t.distributions.Multinomial(6, probs=p),
        [np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])],
        np.array([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]]),
        (),
    ),
    "ContinuousBernoulli(probs)": (
        lambda t, p: t.distributions.ContinuousBernoulli(probs=p),
        [np.array([0.1, 0.4995, 0.5, 0.7, 0.95])],
        np.array([0.0, 0.3, 0.5, 0.9, 1.0]),
        ("cdf", "icdf5"),
    ),
    "ContinuousBernoulli(logits)": (
        lambda t, lg: t.distributions.ContinuousBernoulli(logits=lg),
        [np.array([[-2.0], [0.001]])],
        np.array([0.2, 0.6]),
        ("cdf",),
    ),
    "LowRankMultivariateNormal": (
        lambda t, loc, w, d: t.distributions.LowRankMultivariateNormal(loc, w, d),
        [_u((2, 3), -1, 1), _u((3, 2), -1, 1), _u((2, 3), 0.5, 1.5)],
        _u((4, 2, 3), -2, 2),
        (),
    ),
    "VonMises": (
        lambda t, loc, k: t.distributions.VonMises(loc, k),
        [np.array([0.5, -2.0, 3.0, 0.0]), np.array([2.0, 0.3, 5.0, 1e-3])],
        np.array([0.1, -3.0, 2.5, 1.0]),
        (),
    ),
    "MixtureSameFamily": (
        lambda t, w, loc, scale: t.distributions.MixtureSameFamily(
            t.distributions.Categorical(logits=w), t.distributions.Normal(loc, scale)
        ),
        [np.array([[0.3, -0.2, 1.0], [0.0, 0.0, 0.0]]), _u((2, 3), -2, 2), _u((2, 3), 0.5, 2)],
        np.array([[-0.5, 0.7], [1.0, -3.0]]),
        ("cdf",),
    ),
    "MixtureSameFamily(mvn)": (
        lambda t, w, loc: t.distributions.MixtureSameFamily(
            t.distributions.Categorical(logits=w),
            t.distributions.Independent(t.distributions.Normal(loc, 0.5 + 0 * loc), 1),
        ),
        [np.array([0.3, -0.2, 1.0]), _u((3, 2), -2, 2)],
        np.array([[-0.5, 0.7], [1.0, -3.0]]),
        (),
    ),
}
NO_ENTROPY = {
    "VonMises",
    "NegativeBinomial",
    "FisherSnedecor",
    "LogisticNormal",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "MixtureSameFamily",
    "MixtureSameFamily(mvn)",
}
NO_MODE = {
    "Multinomial",
    "ContinuousBernoulli(probs)",
    "ContinuousBernoulli(logits)",
    "LogisticNormal",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "FisherSnedecor",
    "MixtureSameFamily",
    "MixtureSameFamily(mvn)",
}
NO_MOMENTS = {"LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical"}


def _build(lib, name, grad=False):
    make, params, _, _ = CASES[name]
    ts = [lib.tensor(p, dtype=lib.float64, requires_grad=grad) for p in params]
    return make(lib, *ts), ts


def _np(x):
    return x.detach().numpy()


def _close(a, b, rtol=None, atol=None):
    single = a.dtype == lt.float32 or b.dtype == torch.float32
    rtol = rtol if rtol is not None else (2e-6 if single else 1e-9)
    atol = atol if atol is not None else (1e-6 if single else 1e-12)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    dt, tt = _build(torch, name, grad=True)
    dl, tl = _build(lt, name, grad=True)
    assert tuple(dl.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dl.event_shape) == tuple(dt.event_shape)
    value = CASES[name][2]
    lp_t = dt.log_prob(torch.tensor(value))
    lp_l = dl.log_prob(lt.tensor(value))
    _close(lp_l, lp_t)
    gt = torch.autograd.grad(lp_t.sum(), tt, allow_unused=True)
    gl = lt.autograd.grad(lp_l.sum(), tl, allow_unused=True)
    for a, b in zip(gl, gt):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            _close(a, b, rtol=1e-8, atol=1e-10)
    props = [] if name in NO_MOMENTS else ["mean", "variance"]
    if name not in NO_MODE:
        props.append("mode")
    for prop in props:
        _close(getattr(dl, prop), getattr(dt, prop))
    if name not in NO_ENTROPY:
        try:
            want = dt.entropy()
        except NotImplementedError:  # e.g. Binomial with different total counts
            with pytest.raises(NotImplementedError):
                dl.entropy()
        else:
            _close(dl.entropy(), want)
    extra = CASES[name][3]
    if "cdf" in extra:
        _close(dl.cdf(lt.tensor(value)), dt.cdf(torch.tensor(value)))
    if "icdf" in extra or "icdf5" in extra:
        q = np.array([0.05, 0.5, 0.93] if "icdf" in extra else [0.05, 0.5, 0.93, 0.2, 0.7])
        _close(dl.icdf(lt.tensor(q)), dt.icdf(torch.tensor(q)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand_and_support_match_torch(name):
    dt, _ = _build(torch, name)
    dl, _ = _build(lt, name)
    shape = (4, *dt.batch_shape)
    et, el = dt.expand(shape), dl.expand(shape)
    assert type(el).__name__ == type(et).__name__
    assert tuple(el.batch_shape) == tuple(et.batch_shape)
    assert tuple(el.event_shape) == tuple(et.event_shape)
    value = CASES[name][2]
    try:
        want = et.log_prob(torch.tensor(value))
    except ValueError:  # not broadcastable with the new batch shape
        with pytest.raises(ValueError, match="broadcastable"):
            el.log_prob(lt.tensor(value))
    else:
        _close(el.log_prob(lt.tensor(value)), want)
    assert type(dl.support).__name__ == type(dt.support).__name__
    assert dl.support.event_dim == dt.support.event_dim
    np.testing.assert_array_equal(
        dl.support.check(lt.tensor(value)).numpy(), dt.support.check(torch.tensor(value)).numpy()
    )


# name -> (sample count, whether rsample)
SAMPLED = {
    "VonMises": False,
    "ContinuousBernoulli(probs)": True,
    "LowRankMultivariateNormal": True,
    "Binomial(probs)": False,
    "Binomial(logits)": False,
    "Geometric(probs)": False,
    "NegativeBinomial": False,
    "StudentT": True,
    "FisherSnedecor": True,
    "HalfCauchy": True,
    "Pareto": True,
    "Weibull": True,
    "Kumaraswamy": True,
    "InverseGamma": True,
    "Multinomial": False,
    "MixtureSameFamily": False,
    "MixtureSameFamily(mvn)": False,
    "RelaxedBernoulli": True,
    "RelaxedOneHotCategorical": True,
    "LogisticNormal": True,
}


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_samples_have_torchs_law(name):
    """Shape, support, and the per-entry mean of 4000 draws (a robust statistic where
    moments are infinite) against torch's 4000 draws."""
    dt, _ = _build(torch, name)
    dl, _ = _build(lt, name)
    lt.manual_seed(3)
    torch.manual_seed(3)
    n = 4000
    sl = (dl.rsample if SAMPLED[name] else dl.sample)((n,))
    st = dt.sample((n,))
    assert tuple(sl.shape) == tuple(st.shape)
    assert sl.dtype == lt.float64
    assert bool(dl.support.check(sl).all())
    a, b = _np(sl), _np(st)
    if name in ("StudentT", "HalfCauchy", "FisherSnedecor", "Pareto", "InverseGamma"):
        a, b = np.median(a, 0), np.median(b, 0)  # heavy tails: compare medians
        np.testing.assert_allclose(a, b, rtol=0.12, atol=0.05)
    else:
        sd = np.sqrt(b.var(0) / n + a.var(0) / n) + 1e-9
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 5 * sd + 1e-6), (a.mean(0), b.mean(0))
        np.testing.assert_allclose(a.std(0), b.std(0), rtol=0.1, atol=0.02)


@pytest.mark.parametrize(
    "name", ["StudentT", "Pareto", "Weibull", "Kumaraswamy", "HalfCauchy", "RelaxedBernoulli"]
)
def test_rsample_carries_gradients(name):
    dl, tl = _build(lt, name, grad=True)
    if name == "StudentT":  # df's gradient is torch's implicit reparameterization: refused
        tl[0].requires_grad_(False)
        dl = CASES[name][0](lt, *tl)
        tl = tl[1:]
    x = dl.rsample((5,))
    grads = lt.autograd.grad(x.sum(), tl)
    assert all(g is not None and np.all(np.isfinite(g.numpy())) for g in grads)


def test_relaxed_rsample_gradients_match_torch_on_the_same_noise():
    """ExpRelaxedCategorical.rsample is (logits + gumbel) / T normalized: the same noise
    gives torch's values and gradients."""
    logits = np.array([[0.5, -1.0, 2.0], [0.0, 0.1, 1.0]])
    u = RNG.uniform(0.01, 0.99, size=(7, 2, 3))

    def run(lib):
        lg = lib.tensor(logits, requires_grad=True)
        temp = lib.tensor(0.4, requires_grad=True)
        d = lib.distributions.RelaxedOneHotCategorical(temp, logits=lg)
        g = -(-lib.tensor(u).log()).log()
        scores = (d.logits + g) / d.temperature
        y = (scores - scores.logsumexp(-1, keepdim=True)).exp()
        loss = (d.log_prob(y) * y[..., 0]).sum()
        return [_np(y), *(x.numpy() for x in lib.autograd.grad(loss, [lg, temp]))]

    for a, b in zip(run(lt), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_discrete_enumerate_support_and_entropy():
    p = np.array([0.2, 0.7])
    dt = torch.distributions.Binomial(4, torch.tensor(p))
    dl = lt.distributions.Binomial(4, lt.tensor(p))
    np.testing.assert_array_equal(dl.enumerate_support().numpy(), dt.enumerate_support().numpy())
    np.testing.assert_array_equal(
        dl.enumerate_support(False).numpy(), dt.enumerate_support(False).numpy()
    )
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        lt.distributions.Binomial(lt.tensor([2.0, 3.0]), lt.tensor(p)).entropy()
    mt = torch.distributions.Multinomial(5, torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
    ml = lt.distributions.Multinomial(5, lt.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
    _close(ml.entropy(), mt.entropy())


def test_multinomial_samples_sum_to_total_count():
    lt.manual_seed(0)
    d = lt.distributions.Multinomial(10, logits=lt.tensor([[0.0, 1.0, -1.0]]))
    s = d.sample((500,))
    assert tuple(s.shape) == (500, 1, 3)
    assert bool((s.sum(-1) == 10).all())
    freq = s.mean(0).numpy() / 10
    np.testing.assert_allclose(freq[0], d.probs.numpy()[0], atol=0.03)
    with pytest.raises(NotImplementedError, match="inhomogeneous"):
        lt.distributions.Multinomial(lt.tensor(3), lt.tensor([0.5, 0.5]))


def test_binomial_extremes_and_heterogeneous_counts():
    lt.manual_seed(1)
    n = lt.tensor([0.0, 3.0, 50.0, 50.0])
    p = lt.tensor([0.5, 1.0, 0.0, 0.5])
    s = lt.distributions.Binomial(n, p).sample((2000,)).numpy()
    assert np.all(s[:, 0] == 0) and np.all(s[:, 1] == 3) and np.all(s[:, 2] == 0)
    assert np.all((s[:, 3] >= 0) & (s[:, 3] <= 50))
    assert abs(s[:, 3].mean() - 25) < 0.5 and abs(s[:, 3].var() - 12.5) < 1.5


def test_validation_errors_match_torch():
    cases = [
        lambda t: t.distributions.Binomial(3, probs=t.tensor([1.5])),
        lambda t: t.distributions.Binomial(t.tensor([2.5]), probs=t.tensor([0.5])),
        lambda t: t.distributions.Binomial(3),
        lambda t: t.distributions.Geometric(probs=t.tensor([0.0])),
        lambda t: t.distributions.StudentT(t.tensor([-1.0])),
        lambda t: t.distributions.Pareto(t.tensor([1.0]), t.tensor([-1.0])),
        lambda t: t.distributions.Multinomial(3, probs=t.tensor([-0.5, 0.7])),
        lambda t: t.distributions.MixtureSameFamily(
            t.distributions.Categorical(t.ones(2)), t.distributions.Normal(t.zeros(3), 1.0)
        ),
        lambda t: t.distributions.MixtureSameFamily(
            t.distributions.Normal(0.0, 1.0), t.distributions.Normal(t.zeros(3), 1.0)
        ),
        lambda t: t.distributions.Binomial(3, probs=t.tensor([0.5])).log_prob(t.tensor([4.0])),
        lambda t: t.distributions.Geometric(t.tensor([0.5])).log_prob(t.tensor([1.5])),
        lambda t: t.distributions.HalfCauchy(t.tensor([1.0])).log_prob(t.tensor([-1.0])),
        lambda t: t.distributions.Pareto(t.tensor([1.0]), 2.0).log_prob(t.tensor([0.5])),
    ]
    for case in cases:
        with pytest.raises(Exception) as et:
            case(torch)
        with pytest.raises(type(et.value)):
            case(lt)


_W = RNG.uniform(-1, 1, size=(2, 3, 2))
_D = RNG.uniform(0.5, 1.5, size=(2, 3))
_L = np.tril(RNG.uniform(-0.5, 0.5, size=(3, 3))) + np.eye(3)


def _lowrank(t, k):
    return t.distributions.LowRankMultivariateNormal(
        t.tensor(_D[k % 2] * (k + 1) - 1), t.tensor(_W[k % 2] * 0.7), t.tensor(_D[k % 2])
    )


KL_PAIRS = {
    "LowRank-LowRank": lambda t: (_lowrank(t, 0), _lowrank(t, 1)),
    "MVN-LowRank": lambda t: (
        t.distributions.MultivariateNormal(t.tensor(_D[0]), scale_tril=t.tensor(_L)),
        _lowrank(t, 1),
    ),
    "LowRank-MVN": lambda t: (
        _lowrank(t, 0),
        t.distributions.MultivariateNormal(t.tensor(_D[1]), scale_tril=t.tensor(_L)),
    ),
    "Binomial": lambda t: (
        t.distributions.Binomial(5, t.tensor([0.2, 0.6], dtype=t.float64)),
        t.distributions.Binomial(5, t.tensor([0.5, 0.3], dtype=t.float64)),
    ),
    "Binomial(inf)": lambda t: (
        t.distributions.Binomial(t.tensor([5.0, 6.0]), t.tensor([0.2, 0.6])),
        t.distributions.Binomial(5, t.tensor([0.5, 0.3])),
    ),
    "Geometric": lambda t: (
        t.distributions.Geometric(t.tensor([0.2, 0.6], dtype=t.float64)),
        t.distributions.Geometric(t.tensor([0.5, 0.3], dtype=t.float64)),
    ),
    "Pareto": lambda t: (
        t.distributions.Pareto(t.tensor([1.0, 2.0]), t.tensor([2.0, 3.0])),
        t.distributions.Pareto(t.tensor([1.5, 1.0]), t.tensor([1.0, 0.5])),
    ),
    "Transformed": lambda t: (
        t.distributions.TransformedDistribution(
            t.distributions.Normal(t.tensor([0.0, 1.0]), 1.0),
            [t.distributions.ExpTransform()],
        ),
        t.distributions.TransformedDistribution(
            t.distributions.Normal(t.tensor([0.5, -1.0]), 2.0),
            [t.distributions.ExpTransform()],
        ),
    ),
    "LogNormal": lambda t: (
        t.distributions.LogNormal(t.tensor([0.0, 1.0]), 1.0),
        t.distributions.LogNormal(t.tensor([0.5, -1.0]), 2.0),
    ),
    "HalfNormal": lambda t: (
        t.distributions.HalfNormal(t.tensor([1.0, 3.0])),
        t.distributions.HalfNormal(t.tensor([2.0, 0.5])),
    ),
    "HalfCauchy": lambda t: (
        t.distributions.HalfCauchy(t.tensor([1.0, 3.0])),
        t.distributions.HalfCauchy(t.tensor([2.0, 0.5])),
    ),
    "Cauchy": lambda t: (
        t.distributions.Cauchy(t.tensor([0.0, 1.0]), t.tensor([1.0, 3.0])),
        t.distributions.Cauchy(t.tensor([1.0, -2.0]), t.tensor([2.0, 0.5])),
    ),
    "Poisson-Binomial": lambda t: (
        t.distributions.Poisson(t.tensor([1.0, 3.0])),
        t.distributions.Binomial(5, t.tensor([0.5, 0.3])),
    ),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_pairs_match_torch(name):
    pt, qt = KL_PAIRS[name](torch)
    pl, ql = KL_PAIRS[name](lt)
    _close(lt.distributions.kl_divergence(pl, ql), torch.distributions.kl_divergence(pt, qt))


def test_kl_refusals_match_torch():
    def transformed(t, tr):
        return t.distributions.TransformedDistribution(t.distributions.Normal(0.0, 1.0), [tr])

    with pytest.raises(NotImplementedError):
        lt.distributions.kl_divergence(
            transformed(lt, lt.distributions.ExpTransform()),
            transformed(lt, lt.distributions.SigmoidTransform()),
        )
    with pytest.raises(NotImplementedError):
        lt.distributions.kl_divergence(
            lt.distributions.Binomial(3, lt.tensor([0.5])),
            lt.distributions.Binomial(5, lt.tensor([0.5])),
        )


def test_mixture_mean_variance_with_batched_mixture():
    w = np.array([[0.3, -0.2, 1.0], [0.0, 0.0, 0.0]])
    loc = _u((4, 2, 3), -2, 2)

    def make(t):
        return t.distributions.MixtureSameFamily(
            t.distributions.Categorical(logits=t.tensor(w)),
            t.distributions.Normal(t.tensor(loc), 1.5),
        )

    dl, dt = make(lt), make(torch)
    _close(dl.mean, dt.mean)
    _close(dl.variance, dt.variance)
    assert "MixtureSameFamily" in repr(dl)


def test_student_t_edge_moments_and_df_gradient_refusal():
    df = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    dl = lt.distributions.StudentT(lt.tensor(df), 1.0, 2.0)
    dt = torch.distributions.StudentT(torch.tensor(df), 1.0, 2.0)
    _close(dl.mean, dt.mean)
    _close(dl.variance, dt.variance)
    d = lt.distributions.StudentT(lt.tensor([3.0], requires_grad=True))
    with pytest.raises(NotImplementedError, match="concentration"):
        d.rsample()
    assert math.isfinite(float(d.sample().item()))
