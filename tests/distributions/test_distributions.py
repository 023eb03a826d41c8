"""lazytorch.distributions against torch.distributions.

Values (log_prob, entropy, mean, variance, cdf, icdf, kl_divergence) and their gradients
are compared with torch on the same parameters through `helpers.check`/`check_grad`, each
case written once as ``fn(lib, ...)`` with ``lib.distributions``. Draws come from
lazytorch's own generator, so samples are compared by law, not bit for bit: shapes,
supports, and the mean and variance of 20k draws within a few standard errors; and the
gradients of rsample-based losses against torch's on the same noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises
from lazytorch.distributions import Distribution

RNG = np.random.default_rng(7)


def _u(shape, low, high):
    return np.asarray(RNG.uniform(low, high, size=shape), dtype=np.float32)


def _binary(shape):
    return np.asarray(RNG.random(shape) < 0.5, dtype=np.float32)


# -- the table: how to build each distribution and draw its parameters and values -----------
# name -> (make(lib, *params), params(shape), value(shape), methods with a value argument)
UNIVARIATE = {
    "Normal": (
        lambda t, loc, scale: t.distributions.Normal(loc, scale),
        lambda s: [_u(s, -2, 2), _u(s, 0.3, 2)],
        lambda s: _u(s, -3, 3),
        ("log_prob", "cdf"),
    ),
    "Laplace": (
        lambda t, loc, scale: t.distributions.Laplace(loc, scale),
        lambda s: [_u(s, -2, 2), _u(s, 0.3, 2)],
        lambda s: _u(s, -3, 3),
        ("log_prob", "cdf"),
    ),
    "Uniform": (
        lambda t, low, high: t.distributions.Uniform(low, high),
        lambda s: [_u(s, -2, -1), _u(s, 1, 2)],
        lambda s: _u(s, -0.9, 0.9),
        ("log_prob", "cdf"),
    ),
    "Exponential": (
        lambda t, rate: t.distributions.Exponential(rate),
        lambda s: [_u(s, 0.3, 3)],
        lambda s: _u(s, 0.01, 3),
        ("log_prob", "cdf"),
    ),
    "Bernoulli(probs)": (
        lambda t, p: t.distributions.Bernoulli(probs=p),
        lambda s: [_u(s, 0.05, 0.95)],
        _binary,
        ("log_prob",),
    ),
    "Bernoulli(logits)": (
        lambda t, logits: t.distributions.Bernoulli(logits=logits),
        lambda s: [_u(s, -3, 3)],
        _binary,
        ("log_prob",),
    ),
}
# (parameter shape, value shape): 0-d, a vector, and parameters and values broadcasting
SHAPES = {"0d": ((), ()), "vector": ((3,), (3,)), "broadcast": ((2, 1), (4, 2, 3))}
ICDF = ("Normal", "Laplace", "Uniform", "Exponential")


def _params(name, shape):
    _, params, _, _ = UNIVARIATE[name]
    if name == "Uniform" or shape == "0d":
        return params(SHAPES[shape][0])
    # the second parameter broadcasts against the first
    ps = params(SHAPES[shape][0])
    return [ps[0], *params((3,))[1:]] if len(ps) > 1 else ps


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", UNIVARIATE)
def test_univariate_values_match_torch(name, shape):
    make, _, value, methods = UNIVARIATE[name]
    ps = _params(name, shape)
    v = value(SHAPES[shape][1])
    n = len(ps)
    for m in methods:
        check(lambda t, *a, m=m: getattr(make(t, *a[:n]), m)(a[n]), *ps, v)
    for prop in ("mean", "variance", "stddev", "mode"):
        check(lambda t, *a, prop=prop: getattr(make(t, *a), prop), *ps)
    check(lambda t, *a: make(t, *a).entropy(), *ps)
    check(lambda t, *a: (make(t, *a).batch_shape, make(t, *a).event_shape), *ps)
    if name in ICDF:
        q = _u(SHAPES[shape][1], 0.05, 0.95)
        check(lambda t, *a: make(t, *a[:n]).icdf(a[n]), *ps, q)


@pytest.mark.parametrize("shape", ["0d", "broadcast"])
@pytest.mark.parametrize("name", UNIVARIATE)
def test_univariate_gradients_match_torch(name, shape):
    make, _, value, methods = UNIVARIATE[name]
    ps = _params(name, shape)
    v = value(SHAPES[shape][1])
    n = len(ps)
    diff = list(range(n))
    for m in methods:
        check_grad(lambda t, *a, m=m: getattr(make(t, *a[:n]), m)(a[n]), *ps, v, diff=diff)
    check_grad(lambda t, *a: make(t, *a).entropy(), *ps)
    if name != "Uniform":  # (torch's Uniform variance has no gradient path to compare)
        check_grad(lambda t, *a: make(t, *a).variance, *ps)


def test_python_number_parameters():
    check(lambda t: t.distributions.Normal(0.5, 2.0).log_prob(t.tensor(1.0)))
    check(lambda t: t.distributions.Normal(0.5, 2.0).batch_shape)
    check(lambda t: t.distributions.Uniform(0.0, 4.0).entropy())
    check(lambda t: t.distributions.Exponential(2.0).mean)
    check(lambda t: t.distributions.Bernoulli(0.3).entropy())
    check(lambda t: t.distributions.Laplace(0.0, 1.0).cdf(t.tensor([-1.0, 0.0, 2.0])))
    # a number broadcasts with a tensor in the tensor's dtype
    check(lambda t, x: t.distributions.Normal(x, 1.0).scale, _u((3,), 0, 1).astype(np.float64))


# -- Categorical and OneHotCategorical ----------------------------------------------------------
CATEGORICAL_SHAPES = {
    "vector": ((5,), (3,)),
    "batch": ((2, 5), (2,)),
    "broadcast": ((3, 1, 5), (2,)),
}


def _cat_values(k, shape):
    return RNG.integers(0, k, size=shape).astype(np.int64)


@pytest.mark.parametrize("shape", CATEGORICAL_SHAPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_matches_torch(param, shape):
    ps, vs = CATEGORICAL_SHAPES[shape]
    w = _u(ps, 0.05, 2) if param == "probs" else _u(ps, -3, 3)
    v = _cat_values(ps[-1], vs)

    def make(t, w):
        return t.distributions.Categorical(**{param: w})

    check(lambda t, w, v: make(t, w).log_prob(v), w, v)
    check(lambda t, w: (make(t, w).probs, make(t, w).logits), w)
    check(lambda t, w: (make(t, w).entropy(), make(t, w).mode), w)
    check(lambda t, w: (make(t, w).mean, make(t, w).variance), w)  # NaN, as torch's
    check(lambda t, w: (make(t, w).batch_shape, make(t, w).param_shape), w)
    check(lambda t, w: make(t, w).enumerate_support(), w)
    check(lambda t, w: make(t, w).expand((4, *ps[:-1])).log_prob(t.zeros((), dtype=t.long)), w)
    check_grad(lambda t, w, v: make(t, w).log_prob(v) + make(t, w).entropy(), w, v, diff=[0])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_one_hot_categorical_matches_torch(param):
    w = _u((2, 4), 0.05, 2) if param == "probs" else _u((2, 4), -3, 3)
    v = np.eye(4, dtype=np.float32)[_cat_values(4, (3, 2))]

    def make(t, w):
        return t.distributions.OneHotCategorical(**{param: w})

    check(lambda t, w, v: make(t, w).log_prob(v), w, v)
    for prop in ("mean", "variance", "mode", "probs", "logits"):
        check(lambda t, w, prop=prop: getattr(make(t, w), prop), w)
    check(lambda t, w: (make(t, w).entropy(), make(t, w).event_shape), w)
    check(lambda t, w: make(t, w).enumerate_support(), w)
    check_grad(lambda t, w, v: make(t, w).log_prob(v) + make(t, w).entropy(), w, v, diff=[0])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_straight_through_rsample_gradients_match_torch(param):
    # the gradient of samples + (probs - probs.detach()) does not depend on the sample drawn
    w = _u((2, 4), 0.05, 2) if param == "probs" else _u((2, 4), -3, 3)

    def rsample(t, w):
        d = t.distributions.OneHotCategoricalStraightThrough(**{param: w})
        return d.rsample((3,))

    check_grad(rsample, w)
    lt.manual_seed(0)
    s = rsample(lt, lt.from_numpy(w)).detach()
    assert tuple(s.shape) == (3, 2, 4) and bool(lt.distributions.constraints.one_hot.check(s).all())


def test_categorical_zero_probability_entropy():
    # log(0) = -inf is clamped to the dtype's min before multiplying by p = 0, as in torch
    check(lambda t, p: t.distributions.Categorical(probs=p).entropy(), np.float32([0.0, 0.5, 0.5]))


# -- Independent, expand -----------------------------------------------------------------------
def test_independent_matches_torch():
    loc, scale, v = _u((2, 3), -1, 1), _u((2, 3), 0.5, 2), _u((4, 2, 3), -2, 2)

    def make(t, loc, scale, n=1):
        return t.distributions.Independent(t.distributions.Normal(loc, scale), n)

    for n in (1, 2):
        check(lambda t, a, b, v, n=n: make(t, a, b, n).log_prob(v), loc, scale, v)
        check(lambda t, a, b, n=n: make(t, a, b, n).entropy(), loc, scale)
        check(
            lambda t, a, b, n=n: (make(t, a, b, n).batch_shape, make(t, a, b, n).event_shape),
            loc,
            scale,
        )
    check(lambda t, a, b: (make(t, a, b).mean, make(t, a, b).variance), loc, scale)
    check(lambda t, a, b, v: make(t, a, b).expand((5, 2)).log_prob(v[0]), loc, scale, v)
    check_grad(lambda t, a, b, v: make(t, a, b, 2).log_prob(v), loc, scale, v, diff=[0, 1])
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims <= len"):
        make(lt, lt.zeros(3), lt.ones(3), 2)


@pytest.mark.parametrize("name", UNIVARIATE)
def test_expand_matches_torch(name):
    make, _, value, _ = UNIVARIATE[name]
    ps = _params(name, "vector")
    v = value((4, 3))
    n = len(ps)
    check(lambda t, *a: make(t, *a[:n]).expand((4, 3)).log_prob(a[n]), *ps, v)
    check(lambda t, *a: make(t, *a).expand((2, 3)).batch_shape, *ps)


# -- kl_divergence -------------------------------------------------------------------------------
KL_PAIRS = {
    "Normal": "Normal",
    "Laplace": "Laplace",
    "Exponential": "Exponential",
    "Uniform": "Uniform",
    "Bernoulli(probs)": "Bernoulli(probs)",
    "Bernoulli(logits)": "Bernoulli(logits)",
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence_matches_torch(name, shape):
    make = UNIVARIATE[name][0]
    p, q = _params(name, shape), _params(name, shape)
    n = len(p)

    def kl(t, *a):
        return t.distributions.kl_divergence(make(t, *a[:n]), make(t, *a[n:]))

    check(kl, *p, *q)
    check_grad(kl, *p, *q)


def test_kl_divergence_edges_match_torch():
    def kl(d1, d2):
        return lambda t, *a: t.distributions.kl_divergence(d1(t, *a[:2]), d2(t, *a[2:]))

    uni = lambda t, lo, hi: t.distributions.Uniform(lo, hi)  # noqa: E731
    # q not covering p: inf; nested: finite
    lo = np.float32([0.0, 0.0, -1.0])
    hi = np.float32([1.0, 1.0, 2.0])
    check(kl(uni, uni), lo, hi, np.float32([-1.0, 0.5, -1.0]), np.float32([2.0, 3.0, 2.0]))
    # zeros and ones in the probabilities
    bern = lambda t, p, _: t.distributions.Bernoulli(probs=p)  # noqa: E731
    p = np.float32([0.0, 1.0, 0.5, 0.5, 0.0])
    q = np.float32([0.5, 0.5, 0.0, 1.0, 0.0])
    check(kl(bern, bern), p, p, q, q)
    cat = lambda t, p, _: t.distributions.Categorical(probs=p)  # noqa: E731
    p = np.float32([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]])
    q = np.float32([[0.5, 0.0, 0.5], [0.3, 0.3, 0.4]])
    check(kl(cat, cat), p, p, q, q)
    check_grad(kl(cat, cat), p, p, q, q, diff=[2])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_kl_categorical_and_one_hot_match_torch(param):
    lo, hi = (0.05, 2) if param == "probs" else (-3, 3)
    p, q = _u((3, 1, 4), lo, hi), _u((2, 4), lo, hi)  # batch shapes broadcast

    def kl(cls):
        return lambda t, p, q: t.distributions.kl_divergence(
            getattr(t.distributions, cls)(**{param: p}), getattr(t.distributions, cls)(**{param: q})
        )

    for cls in ("Categorical", "OneHotCategorical"):
        check(kl(cls), p, q)
        check_grad(kl(cls), p, q)


def test_kl_independent_matches_torch():
    def kl(t, a, b, c, d):
        D = t.distributions
        return D.kl_divergence(D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, d), 1))

    args = [_u((2, 3), -1, 1), _u((2, 3), 0.5, 2), _u((2, 3), -1, 1), _u((2, 3), 0.5, 2)]
    check(kl, *args)
    check_grad(kl, *args)


def test_register_kl_dispatches_to_the_most_specific_pair():
    D = lt.distributions

    class MyNormal(D.Normal):
        pass

    # a subclass falls back to its base's pair...
    kl = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))
    assert kl.item() == pytest.approx(0.5)
    # ...until a more specific one is registered
    D.register_kl(MyNormal, D.Normal)(lambda p, q: lt.tensor(42.0))
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Laplace",
    ):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))


# -- sampling: shapes, supports, statistics ---------------------------------------------------
N = 20_000


def _lt_dists():
    D = lt.distributions
    return {
        "Normal": D.Normal(lt.tensor([0.5, -1.0]), lt.tensor([1.0, 3.0])),
        "Laplace": D.Laplace(lt.tensor([0.5, -1.0]), lt.tensor([1.0, 0.5])),
        "Uniform": D.Uniform(lt.tensor([-1.0, 2.0]), lt.tensor([1.0, 5.0])),
        "Exponential": D.Exponential(lt.tensor([0.5, 4.0])),
        "Bernoulli": D.Bernoulli(lt.tensor([0.2, 0.9])),
        "Bernoulli(logits)": D.Bernoulli(logits=lt.tensor([-1.0, 2.0])),
        "OneHotCategorical": D.OneHotCategorical(lt.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])),
        "Independent": D.Independent(D.Normal(lt.zeros(2, 3), lt.ones(2, 3) * 2), 1),
    }


@pytest.mark.parametrize("name", list(_lt_dists()))
def test_sample_shapes_supports_and_moments(name):
    lt.manual_seed(0)
    d = _lt_dists()[name]
    for sample_shape in [(), (3,), (2, 5)]:
        s = d.sample(sample_shape)
        assert tuple(s.shape) == tuple(sample_shape) + tuple(d.batch_shape + d.event_shape)
    if d.has_rsample:
        assert tuple(d.rsample((4,)).shape) == (4, *d.batch_shape, *d.event_shape)
    s = d.sample((N,))
    assert bool(d.support.check(s).all())
    v = s.double().numpy()
    mean, var = d.mean.double().numpy(), d.variance.double().numpy()
    centered = v - mean
    fourth = (centered**4).mean(0)
    assert np.all(np.abs(v.mean(0) - mean) < 5 * np.sqrt(var / N)), (v.mean(0), mean)
    assert np.all(np.abs(v.var(0) - var) < 5 * np.sqrt((fourth - var**2) / N) + 1e-4), (
        v.var(0),
        var,
    )


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_sample_frequencies(param):
    lt.manual_seed(1)
    w = lt.tensor([[0.1, 0.6, 0.0, 0.3], [1.0, 1.0, 1.0, 1.0]])
    d = lt.distributions.Categorical(**{param: w if param == "probs" else w.log()})
    assert tuple(d.sample().shape) == (2,) and d.sample().dtype is lt.int64
    assert tuple(d.sample((3, 5)).shape) == (3, 5, 2)
    s = d.sample((N,)).numpy()
    assert s.min() >= 0 and s.max() <= 3
    p = d.probs.double().numpy()
    freq = np.stack([(s == k).mean(0) for k in range(4)], -1)
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / N)), (freq, p)
    assert (s[:, 0] == 2).sum() == 0  # a zero probability is never drawn


def test_manual_seed_reproduces_samples():
    D = lt.distributions
    for make in (
        lambda: D.Normal(lt.zeros(3), lt.ones(3)),
        lambda: D.Categorical(logits=lt.zeros(3, 4)),
        lambda: D.Bernoulli(lt.full((3,), 0.5)),
        lambda: D.Exponential(lt.ones(3)),
    ):
        lt.manual_seed(5)
        a = make().sample((4,)).numpy()
        lt.manual_seed(5)
        b = make().sample((4,)).numpy()
        np.testing.assert_array_equal(a, b)


# -- rsample gradients: the same noise through torch ----------------------------------------
# name -> (make(lib, *params), the standardized noise of a sample, the sample from noise)
RSAMPLE = {
    "Normal": (
        lambda t, a, b: t.distributions.Normal(a, b),
        lambda x, a, b: (x - a) / b,
        lambda z, a, b: a + z * b,
    ),
    "Laplace": (
        lambda t, a, b: t.distributions.Laplace(a, b),
        lambda x, a, b: (x - a) / b,
        lambda z, a, b: a + z * b,
    ),
    "Uniform": (
        lambda t, a, b: t.distributions.Uniform(a, a + b),
        lambda x, a, b: (x - a) / b,
        lambda z, a, b: a + z * b,
    ),
    "Exponential": (
        lambda t, r: t.distributions.Exponential(r),
        lambda x, r: x * r,
        lambda z, r: z / r,
    ),
}


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_gradients_match_torch_on_the_same_noise(name):
    make, noise, from_noise = RSAMPLE[name]
    params = [_u((3,), 0.5, 1.5)] if name == "Exponential" else [_u((3,), -1, 1), _u((3,), 0.5, 2)]
    lt.manual_seed(3)
    ours = [lt.from_numpy(p.copy()).requires_grad_() for p in params]
    x = make(lt, *ours).rsample((4,))
    loss = (x.sin() * x).sum()
    loss.backward()
    z = noise(x.detach(), *[p.detach() for p in ours]).numpy()
    theirs = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    x_t = from_noise(torch.from_numpy(z.copy()), *theirs)
    (x_t.sin() * x_t).sum().backward()
    np.testing.assert_allclose(x.detach().numpy(), x_t.detach().numpy(), rtol=1e-5, atol=1e-5)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert not make(lt, *ours).sample((2,)).requires_grad


# -- validation ----------------------------------------------------------------------------------
INVALID = {
    "Normal scale": lambda t: t.distributions.Normal(t.tensor([0.0, 1.0]), t.tensor([1.0, -1.0])),
    "Normal nan loc": lambda t: t.distributions.Normal(t.tensor(float("nan")), t.tensor(1.0)),
    "Laplace scale": lambda t: t.distributions.Laplace(t.tensor([0.0]), t.tensor([0.0])),
    "Exponential rate": lambda t: t.distributions.Exponential(t.tensor([-2.0])),
    "Uniform low > high": lambda t: t.distributions.Uniform(t.tensor([2.0]), t.tensor([1.0])),
    "Bernoulli probs": lambda t: t.distributions.Bernoulli(t.tensor([0.5, 1.5])),
    "Categorical probs": lambda t: t.distributions.Categorical(t.tensor([0.5, -0.5, 1.0])),
    "Categorical value": lambda t: t.distributions.Categorical(t.tensor([0.5, 0.5])).log_prob(
        t.tensor(2)
    ),
    "Bernoulli value": lambda t: t.distributions.Bernoulli(t.tensor([0.5])).log_prob(
        t.tensor([0.5])
    ),
    "Exponential value": lambda t: t.distributions.Exponential(t.tensor([1.0])).log_prob(
        t.tensor([-1.0])
    ),
    "value shape": lambda t: t.distributions.Normal(t.zeros(3), t.ones(3)).log_prob(t.zeros(2)),
    "OneHot value": lambda t: t.distributions.OneHotCategorical(t.ones(3)).log_prob(
        t.tensor([1.0, 1.0, 0.0])
    ),
    "both probs and logits": lambda t: t.distributions.Bernoulli(t.tensor(0.5), t.tensor(0.0)),
    "neither": lambda t: t.distributions.Categorical(),
    "0-d probs": lambda t: t.distributions.Categorical(t.tensor(1.0)),
    "not a number": lambda t: t.distributions.Normal("a", 1.0),
}


def _message(e):
    return str(e).replace("lazytorch.", "torch.")


@pytest.mark.parametrize("case", INVALID)
def test_invalid_arguments_raise_as_torch(case):
    fn = INVALID[case]
    ours = check_raises(fn)
    with pytest.raises(Exception) as theirs:
        fn(torch)
    assert _message(ours) == str(theirs.value)


def test_validation_can_be_turned_off():
    D = lt.distributions
    try:
        Distribution.set_default_validate_args(False)
        d = D.Normal(lt.tensor([0.0]), lt.tensor([-1.0]))  # no error
        assert d.log_prob(lt.tensor([0.0])).isnan().all()
    finally:
        Distribution.set_default_validate_args(True)
    D.Exponential(lt.tensor([-1.0]), validate_args=False).log_prob(lt.tensor([-3.0]))
    with pytest.raises(ValueError):
        D.Exponential(lt.tensor([-1.0]))
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args(2)


def test_validation_materializes_and_off_keeps_the_graph_lazy():
    D = lt.distributions
    with lt.strict_mode():
        loc = lt.zeros(3) + 1  # pending
        with pytest.raises(lt.ImplicitMaterializationError, match=r"Normal\(\) argument valid"):
            D.Normal(loc, lt.ones(3))
        d = D.Normal(loc, lt.ones(3) * 2, validate_args=False)
        lp = d.log_prob(lt.zeros(3)) + D.Categorical(logits=loc, validate_args=False).entropy()
        s = D.Categorical(logits=loc, validate_args=False).sample((5,))
        lt.materialize(lp, s)
    assert tuple(s.shape) == (5,)


def test_constraints_reprs_and_checks_match_torch():
    for name in ("real", "positive", "simplex", "unit_interval", "boolean", "one_hot"):
        assert repr(getattr(lt.distributions.constraints, name)) == repr(
            getattr(torch.distributions.constraints, name)
        )
    check(
        lambda t, x: [
            t.distributions.constraints.real_vector.check(x),
            t.distributions.constraints.interval(-1.0, 1.0).check(x),
            t.distributions.constraints.greater_than_eq(0.0).check(x),
        ],
        _u((2, 3), -2, 2),
    )
    for lib in (lt, torch):
        d = lib.distributions
        assert repr(d.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
        assert repr(d.Independent(d.Bernoulli(lib.ones(2) / 2), 1)) == (
            "Independent(Bernoulli(probs: torch.Size([2])), 1)".replace("torch", lib.__name__)
        )


# -- a REINFORCE loop: a tiny policy, sampled actions, the policy gradient ---------------------
def test_reinforce_gradients_match_torch():
    w, b = _u((4, 3), -1, 1), _u((3,), -0.5, 0.5)
    states, rewards = _u((6, 4), -1, 1), _u((6,), -1, 2)
    lt.manual_seed(0)
    probs = lt.softmax(lt.from_numpy(states) @ lt.from_numpy(w) + lt.from_numpy(b), -1)
    actions = lt.distributions.Categorical(probs).sample().numpy()

    def loss(t, w, b, s, r, a):
        pi = t.distributions.Categorical(t.softmax(s @ w + b, -1))
        return -(pi.log_prob(a) * r).sum() - 0.01 * pi.entropy().sum()

    check(loss, w, b, states, rewards, actions)
    check_grad(loss, w, b, states, rewards, actions, diff=[0, 1])


def test_reinforce_training_steps_match_torch():
    # a few steps of a policy-gradient loop, lazytorch choosing the actions, torch replaying them
    rng = np.random.default_rng(11)
    states = rng.uniform(-1, 1, size=(3, 8, 4)).astype(np.float32)
    rewards = rng.uniform(-1, 1, size=(3, 8)).astype(np.float32)

    def policy(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 16), lib.nn.Tanh(), lib.nn.Linear(16, 3))
        return net, lib.optim.Adam(net.parameters(), lr=0.05)

    net_t, opt_t = policy(torch)
    net_l, opt_l = policy(lt)
    net_l.load_state_dict({k: lt.from_numpy(v.numpy()) for k, v in net_t.state_dict().items()})
    for step in range(3):
        s_l = lt.from_numpy(states[step])
        pi_l = lt.distributions.Categorical(logits=net_l(s_l))
        a = pi_l.sample()
        loss_l = -(pi_l.log_prob(a) * lt.from_numpy(rewards[step])).sum()
        opt_l.zero_grad()
        loss_l.backward()
        opt_l.step()
        pi_t = torch.distributions.Categorical(logits=net_t(torch.from_numpy(states[step])))
        a_t = torch.from_numpy(a.numpy().copy())
        loss_t = -(pi_t.log_prob(a_t) * torch.from_numpy(rewards[step])).sum()
        opt_t.zero_grad()
        loss_t.backward()
        opt_t.step()
        assert math.isclose(loss_l.item(), loss_t.item(), rel_tol=1e-4, abs_tol=1e-5)
    for k, v in net_t.state_dict().items():
        np.testing.assert_allclose(net_l.state_dict()[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-5)


# -- which random call makes the noise -----------------------------------------------------


@pytest.mark.parametrize("name", ["Normal", "MultivariateNormal", "StudentT"])
def test_rsample_draws_its_noise_with_normal_as_torch(name, monkeypatch) -> None:
    # torch's _standard_normal fills an empty tensor with Tensor.normal_: a tool that
    # replays torch's draws call by call (tests/realworld's harness, minimalRL's sac.py)
    # needs lazytorch to draw through the same call, with the same shapes
    calls = {}
    for T in (torch, lt):
        seen = calls[T.__name__] = []
        original = T.Tensor.normal_

        def normal_(self, *args, _seen=seen, _original=original, **kwargs):
            _seen.append(tuple(self.shape))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(T.Tensor, "normal_", normal_)
        D = T.distributions
        if name == "Normal":
            d = D.Normal(T.zeros(2), T.ones(2))
        elif name == "MultivariateNormal":
            d = D.MultivariateNormal(T.zeros(2), T.eye(2))
        else:
            d = D.StudentT(T.tensor([3.0, 5.0]))
        d.rsample((3,))
    assert calls["lazytorch"] == calls["torch"], calls
