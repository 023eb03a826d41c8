"""torch.distributions.transforms, TransformedDistribution and biject_to/transform_to
against torch: forward, inverse, log_abs_det_jacobian (values and gradients), shapes,
domains/codomains, caching, equality, and distributions built from them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(5)


def _np(x):
    return x.detach().numpy()


def _close(a, b, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


X = RNG.uniform(-1.5, 1.5, size=(3, 4))
POS = RNG.uniform(0.2, 3.0, size=(3, 4))
SQ = RNG.uniform(-1, 1, size=(2, 3, 3))

# name -> (make(lib), x in the domain, whether bijective with a log det Jacobian)
TRANSFORMS = {
    "Exp": (lambda t: t.distributions.ExpTransform(), X, True),
    "Affine(number)": (lambda t: t.distributions.AffineTransform(1.0, -2.5), X, True),
    "Affine(tensor)": (
        lambda t: t.distributions.AffineTransform(
            t.tensor([0.5, 1.0, -1.0, 2.0], dtype=t.float64),
            t.tensor([2.0, -0.5, 1.5, 3.0], dtype=t.float64),
        ),
        X,
        True,
    ),
    "Affine(event_dim=1)": (
        lambda t: t.distributions.AffineTransform(
            0.5, t.tensor([2.0, -0.5, 1.5, 3.0], dtype=t.float64), event_dim=1
        ),
        X,
        True,
    ),
    "Sigmoid": (lambda t: t.distributions.SigmoidTransform(), X, True),
    "Tanh": (lambda t: t.distributions.TanhTransform(), X, True),
    "Softplus": (lambda t: t.distributions.SoftplusTransform(), X, True),
    "Power": (lambda t: t.distributions.PowerTransform(t.tensor(2.5, dtype=t.float64)), POS, True),
    "Power(-1)": (
        lambda t: t.distributions.PowerTransform(-t.ones((), dtype=t.float64)),
        POS,
        True,
    ),
    "Abs": (lambda t: t.distributions.AbsTransform(), X, False),
    "Softmax": (lambda t: t.distributions.SoftmaxTransform(), X, False),
    "StickBreaking": (lambda t: t.distributions.StickBreakingTransform(), X, True),
    "LowerCholesky": (lambda t: t.distributions.LowerCholeskyTransform(), SQ, False),
    "PositiveDefinite": (lambda t: t.distributions.PositiveDefiniteTransform(), SQ, False),
    "Compose": (
        lambda t: t.distributions.ComposeTransform(
            [t.distributions.AffineTransform(0.5, 2.0), t.distributions.SigmoidTransform()]
        ),
        X,
        True,
    ),
    "Compose(event)": (
        lambda t: t.distributions.ComposeTransform(
            [t.distributions.ExpTransform(), t.distributions.StickBreakingTransform()]
        ),
        X,
        True,
    ),
    "Independent": (
        lambda t: t.distributions.IndependentTransform(t.distributions.ExpTransform(), 1),
        X,
        True,
    ),
    "Reshape": (lambda t: t.distributions.ReshapeTransform((4,), (2, 2)), X, True),
    "Cat": (
        lambda t: t.distributions.CatTransform(
            [t.distributions.ExpTransform(), t.distributions.AffineTransform(1.0, 3.0)],
            dim=1,
            lengths=[1, 3],
        ),
        X,
        True,
    ),
    "Stack": (
        lambda t: t.distributions.StackTransform(
            [
                t.distributions.ExpTransform(),
                t.distributions.TanhTransform(),
                t.distributions.SigmoidTransform(),
            ],
            dim=0,
        ),
        X,
        True,
    ),
    "CorrCholesky": (
        lambda t: t.distributions.CorrCholeskyTransform(),
        RNG.uniform(-1.5, 1.5, size=(2, 6)),
        True,
    ),
    "CDF": (
        lambda t: t.distributions.CumulativeDistributionTransform(t.distributions.Normal(0.5, 2.0)),
        X,
        True,
    ),
    "Inverse(Sigmoid)": (
        lambda t: t.distributions.SigmoidTransform().inv,
        1 / (1 + np.exp(-X)),
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_torch(name):
    make, x, bij = TRANSFORMS[name]
    tt, tl = make(torch), make(lt)
    xt = torch.tensor(x, requires_grad=True)
    xl = lt.tensor(x, requires_grad=True)
    yt, yl = tt(xt), tl(xl)
    _close(yl, yt)
    _close(tl.inv(yl), tt.inv(yt), rtol=1e-7, atol=1e-9)
    assert tl.bijective == tt.bijective
    assert type(tl.domain).__name__ == type(tt.domain).__name__
    assert type(tl.codomain).__name__ == type(tt.codomain).__name__
    assert tl.domain.event_dim == tt.domain.event_dim
    assert tl.codomain.event_dim == tt.codomain.event_dim
    assert tuple(tl.forward_shape(x.shape)) == tuple(tt.forward_shape(x.shape))
    assert tuple(tl.inverse_shape(tuple(yt.shape))) == tuple(tt.inverse_shape(tuple(yt.shape)))
    if bij:
        jt = tt.log_abs_det_jacobian(xt, yt)
        jl = tl.log_abs_det_jacobian(xl, yl)
        _close(jl, jt)
        (gt,) = torch.autograd.grad((jt * 1.3).sum() + (yt * yt).sum(), [xt])
        (gl,) = lt.autograd.grad((jl * 1.3).sum() + (yl * yl).sum(), [xl])
        _close(gl, gt, rtol=1e-8, atol=1e-10)
        _close(tl.inv.log_abs_det_jacobian(yl, xl), tt.inv.log_abs_det_jacobian(yt, xt))
    else:
        (gt,) = torch.autograd.grad((yt * yt).sum(), [xt])
        (gl,) = lt.autograd.grad((yl * yl).sum(), [xl])
        _close(gl, gt, rtol=1e-8, atol=1e-10)


def test_signs_equality_repr_and_cache():
    d = lt.distributions
    assert d.ExpTransform().sign == 1
    assert d.AffineTransform(0.0, -2.0).sign == -1
    assert d.ComposeTransform([d.AffineTransform(0.0, -2.0), d.ExpTransform()]).sign == -1
    np.testing.assert_array_equal(
        d.AffineTransform(0.0, lt.tensor([-2.0, 3.0])).sign.numpy(), [-1.0, 1.0]
    )
    assert d.ExpTransform() == d.ExpTransform()
    assert d.ExpTransform() != d.SigmoidTransform()
    assert d.AffineTransform(1.0, 2.0) == d.AffineTransform(1.0, 2.0)
    assert d.AffineTransform(1.0, 2.0) != d.AffineTransform(1.0, 3.0)
    assert d.ExpTransform().inv == d.ExpTransform().inv
    t = d.ExpTransform()
    assert t.inv.inv is t
    assert repr(t.inv) == repr(torch.distributions.ExpTransform().inv)
    assert repr(d.ComposeTransform([t])) == repr(
        torch.distributions.ComposeTransform([torch.distributions.ExpTransform()])
    )
    cached = d.ExpTransform(cache_size=1)
    x = lt.tensor([0.5])
    y = cached(x)
    assert cached(x) is y and cached.inv(y) is x
    assert t.with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        d.ExpTransform(cache_size=2)
    with pytest.raises(ValueError):
        d.ReshapeTransform((4,), (3,))
    with pytest.raises(ValueError, match="event_dim"):
        _ = d.ReshapeTransform((4,), (2, 2)).event_dim
    assert d.identity_transform(x) is x


def test_tril_vec_helpers_match_torch():
    from torch.distributions import utils as tu

    from lazytorch.distributions import utils as lu

    m = RNG.normal(size=(2, 4, 4))
    for diag in (-2, -1, 0, 1):
        v_t = tu.tril_matrix_to_vec(torch.tensor(m), diag)
        v_l = lu.tril_matrix_to_vec(lt.tensor(m), diag)
        np.testing.assert_array_equal(v_l.numpy(), v_t.numpy())
        np.testing.assert_array_equal(
            lu.vec_to_tril_matrix(v_l, diag).numpy(), tu.vec_to_tril_matrix(v_t, diag).numpy()
        )
    with pytest.raises(ValueError, match="cannot be expressed"):
        lu.vec_to_tril_matrix(lt.zeros(5))
    for lib, mod in ((torch, tu), (lt, lu)):  # torch's check is one-sided: 4 fails later
        with pytest.raises(RuntimeError):
            mod.vec_to_tril_matrix(lib.zeros(4))
    with pytest.raises(ValueError, match="outside"):
        lu.tril_matrix_to_vec(lt.zeros(3, 3), 3)


def test_constraint_registries_match_torch():
    c_l, c_t = lt.distributions.constraints, torch.distributions.constraints
    names = [
        ("real", ()),
        ("positive", ()),
        ("nonnegative", ()),
        ("unit_interval", ()),
        ("simplex", ()),
        ("real_vector", ()),
        ("greater_than", (1.5,)),
        ("greater_than_eq", (-1.0,)),
        ("less_than", (2.0,)),
        ("interval", (-1.0, 3.0)),
        ("half_open_interval", (0.0, 2.0)),
    ]
    x = RNG.uniform(-2, 2, size=(2, 4))
    for name, args in names:
        cl = getattr(c_l, name)(*args) if args else getattr(c_l, name)
        ct = getattr(c_t, name)(*args) if args else getattr(c_t, name)
        for reg in ("biject_to", "transform_to"):
            tl = getattr(lt.distributions, reg)(cl)
            tt = getattr(torch.distributions, reg)(ct)
            assert repr(tl) == repr(tt), (name, reg)
            yl, yt = tl(lt.tensor(x)), tt(torch.tensor(x))
            _close(yl, yt)
            assert bool(cl.check(yl).all())
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        lt.distributions.biject_to(c_l.lower_cholesky)
    tl = lt.distributions.transform_to(c_l.lower_cholesky)
    assert isinstance(tl, lt.distributions.LowerCholeskyTransform)
    cat = c_l.cat([c_l.positive, c_l.real], 0, [1, 2])
    _close(
        lt.distributions.biject_to(cat)(lt.tensor([0.0, -1.0, 2.0])),
        torch.distributions.biject_to(c_t.cat([c_t.positive, c_t.real], 0, [1, 2]))(
            torch.tensor([0.0, -1.0, 2.0])
        ),
    )
    with pytest.raises(TypeError):
        lt.distributions.biject_to.register(int, lambda c: c)


def test_transform_to_optimizes_a_constrained_parameter():
    """The common pattern: an unconstrained parameter mapped through transform_to."""
    outs = []
    for t in (torch, lt):
        c = t.distributions.constraints.positive
        u = t.zeros(3, dtype=t.float64, requires_grad=True)
        opt = t.optim.SGD([u], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            scale = t.distributions.transform_to(c)(u)
            loss = (
                -t.distributions.Normal(0.0, scale)
                .log_prob(t.tensor([0.5, 1.0, 2.0], dtype=t.float64))
                .sum()
            )
            loss.backward()
            opt.step()
        outs.append(u.detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10)


TD = {
    "logistic": lambda t, a, b: t.distributions.TransformedDistribution(
        t.distributions.Uniform(t.zeros_like(a), t.ones_like(a)),
        [t.distributions.SigmoidTransform().inv, t.distributions.AffineTransform(a, b)],
    ),
    "lognormal": lambda t, a, b: t.distributions.TransformedDistribution(
        t.distributions.Normal(a, b), t.distributions.ExpTransform()
    ),
    "tanh-normal": lambda t, a, b: t.distributions.TransformedDistribution(
        t.distributions.Normal(a, b), [t.distributions.TanhTransform()]
    ),
    "decreasing": lambda t, a, b: t.distributions.TransformedDistribution(
        t.distributions.Normal(a, b), [t.distributions.AffineTransform(1.0, -2.0)]
    ),
    "stick": lambda t, a, b: t.distributions.TransformedDistribution(
        t.distributions.Normal(a, b), [t.distributions.StickBreakingTransform()]
    ),
}
TD_VALUES = {
    "logistic": np.array([-1.0, 0.3, 2.0]),
    "lognormal": np.array([0.2, 1.0, 4.0]),
    "tanh-normal": np.array([-0.9, 0.1, 0.6]),
    "decreasing": np.array([-1.0, 0.3, 2.0]),
    "stick": np.array([0.2, 0.1, 0.3, 0.4]),
}


@pytest.mark.parametrize("name", sorted(TD))
def test_transformed_distribution_matches_torch(name):
    a = np.array([0.2, -0.5, 1.0])
    b = np.array([0.5, 1.0, 2.0])
    pt = [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)]
    pl = [lt.tensor(a, requires_grad=True), lt.tensor(b, requires_grad=True)]
    dt, dl = TD[name](torch, *pt), TD[name](lt, *pl)
    assert tuple(dl.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dl.event_shape) == tuple(dt.event_shape)
    assert dl.has_rsample == dt.has_rsample
    assert repr(dl.support) == repr(dt.support)
    v = TD_VALUES[name]
    lpt, lpl = dt.log_prob(torch.tensor(v)), dl.log_prob(lt.tensor(v))
    _close(lpl, lpt)
    for gl, gt in zip(lt.autograd.grad(lpl.sum(), pl), torch.autograd.grad(lpt.sum(), pt)):
        _close(gl, gt, rtol=1e-8, atol=1e-10)
    if name != "stick":
        _close(dl.cdf(lt.tensor(v)), dt.cdf(torch.tensor(v)))
        q = np.array([0.1, 0.5, 0.8])
        _close(dl.icdf(lt.tensor(q)), dt.icdf(torch.tensor(q)), rtol=1e-8)
    e = dl.expand((2, *dl.batch_shape))
    assert tuple(e.batch_shape) == tuple(dt.expand((2, *dt.batch_shape)).batch_shape)
    lt.manual_seed(0)
    s = dl.rsample((1000,))
    assert tuple(s.shape) == (1000, *dt.batch_shape, *dt.event_shape)
    assert bool(dl.support.check(s).all())
    (g,) = lt.autograd.grad(s.sum(), [pl[0]])
    assert np.all(np.isfinite(g.numpy()))
    assert not dl.sample((3,)).requires_grad


def test_transformed_distribution_errors_match_torch():
    for bad in (lambda t: 3, lambda t: [t.distributions.ExpTransform(), 3]):
        with pytest.raises(ValueError):
            torch.distributions.TransformedDistribution(
                torch.distributions.Normal(0.0, 1.0), bad(torch)
            )
        with pytest.raises(ValueError):
            lt.distributions.TransformedDistribution(lt.distributions.Normal(0.0, 1.0), bad(lt))
    with pytest.raises(ValueError, match="at least 1"):
        lt.distributions.TransformedDistribution(
            lt.distributions.Normal(0.0, 1.0), [lt.distributions.StickBreakingTransform()]
        )
    d = lt.distributions.TransformedDistribution(
        lt.distributions.Normal(0.0, 1.0), [lt.distributions.ExpTransform()]
    )
    with pytest.raises(ValueError, match="support"):
        d.log_prob(lt.tensor(-1.0))
