"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against torch."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.autograd.functional as TAF

import lazytorch as lt
import lazytorch.autograd.functional as AF


def _lt(t):
    return lt.tensor(t.detach().numpy())


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", AF.__all__)
def test_signature_is_torchs(name):
    assert (
        inspect.signature(getattr(AF, name)).parameters.keys()
        == inspect.signature(getattr(TAF, name)).parameters.keys()
    )
    assert [p.default for p in inspect.signature(getattr(AF, name)).parameters.values()] == [
        p.default for p in inspect.signature(getattr(TAF, name)).parameters.values()
    ]


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


def cubic(x):
    return (x**3).sum() * x[0]


def test_jacobian():
    torch.manual_seed(0)
    xs = (torch.rand(3), torch.rand(3))
    ls = tuple(_lt(x) for x in xs)
    _same(AF.jacobian(exp_adder, ls), TAF.jacobian(exp_adder, xs))
    _same(
        AF.jacobian(exp_adder, (ls[0][:1], ls[1][:1])),
        TAF.jacobian(exp_adder, (xs[0][:1], xs[1][:1])),
    )

    def f(x):
        return x.sin() * x.sum()

    _same(AF.jacobian(f, ls[0]), TAF.jacobian(f, xs[0]))

    def two(x, y):
        return x * y, x.exp()

    _same(AF.jacobian(two, ls), TAF.jacobian(two, xs))
    m = torch.rand(2, 3)
    _same(AF.jacobian(lambda a: a @ _lt(m).T, _lt(m)), TAF.jacobian(lambda a: a @ m.T, m))


def test_jacobian_of_unused_input_is_zero_and_strict_refuses():
    xs = (torch.rand(2), torch.rand(2))
    ls = tuple(_lt(x) for x in xs)
    _same(AF.jacobian(lambda x, y: x * 2, ls), TAF.jacobian(lambda x, y: x * 2, xs))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda x, y: x * 2, ls, strict=True)


def test_vjp_jvp_hessian_vhp_hvp():
    torch.manual_seed(1)
    x = torch.randn(3)
    v = torch.tensor([0.1, 1.0, 0.0001])
    lx, lv = _lt(x), _lt(v)

    def g(t):
        return t * 2 + t.sin() * t

    _same(AF.vjp(g, lx, lv), TAF.vjp(g, x, v))
    _same(AF.jvp(g, lx, lv), TAF.jvp(g, x, v))
    _same(AF.hessian(cubic, lx), TAF.hessian(cubic, x))
    _same(AF.vhp(cubic, lx, lv), TAF.vhp(cubic, x, v))
    _same(AF.hvp(cubic, lx, lv), TAF.hvp(cubic, x, v))
    _same(AF.vjp(lambda t: (t * t).sum(), lx), TAF.vjp(lambda t: (t * t).sum(), x))


def test_create_graph_keeps_the_graph():
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    lx = lt.tensor([0.5, 2.0], requires_grad=True)
    _, (gt,) = TAF.vjp(lambda t: t**3, (x,), (torch.ones(2),), create_graph=True)
    _, (gl,) = AF.vjp(lambda t: t**3, (lx,), (lt.ones(2),), create_graph=True)
    gt.sum().backward()
    gl.sum().backward()
    _same(lx.grad, x.grad)
    _, (g2,) = AF.vjp(lambda t: t**3, (lx,), (lt.ones(2),))
    assert not g2.requires_grad
