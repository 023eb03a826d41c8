"""torch.utils.checkpoint: the same values, gradients, warnings and errors as torch."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tc

import lazytorch as lt
import lazytorch.utils.checkpoint as lc


def _lt(t, requires_grad=False):
    return lt.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _nets():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(
        torch.nn.Linear(4, 8),
        torch.nn.Tanh(),
        torch.nn.Linear(8, 8),
        torch.nn.ReLU(),
        torch.nn.Linear(8, 3),
    )
    lnet = lt.nn.Sequential(
        lt.nn.Linear(4, 8), lt.nn.Tanh(), lt.nn.Linear(8, 8), lt.nn.ReLU(), lt.nn.Linear(8, 3)
    )
    lnet.load_state_dict({k: _lt(v) for k, v in tnet.state_dict().items()})
    return tnet, lnet


@pytest.mark.parametrize("name", ["checkpoint", "checkpoint_sequential"])
def test_signature_is_torchs(name):
    ours = inspect.signature(getattr(lc, name)).parameters
    theirs = inspect.signature(getattr(tc, name)).parameters
    assert list(ours) == list(theirs)
    for k in ours:
        assert ours[k].kind == theirs[k].kind, k
        if ours[k].default is not inspect.Parameter.empty and k != "context_fn":
            assert ours[k].default == theirs[k].default, k


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_values_and_gradients_are_torchs(use_reentrant):
    tnet, lnet = _nets()
    x = torch.randn(5, 4, requires_grad=True)
    lx = _lt(x, requires_grad=True)

    def block(m, t, scale):
        return m[2](m[1](m[0](t))) * scale

    ty = tc.checkpoint(block, tnet, x, 2.0, use_reentrant=use_reentrant)
    ly = lc.checkpoint(block, lnet, lx, 2.0, use_reentrant=use_reentrant)
    _close(ly, ty)
    (ty**2).sum().backward()
    (ly**2).sum().backward()
    _close(lx.grad, x.grad)
    for (n, p), (_, q) in zip(tnet.named_parameters(), lnet.named_parameters()):
        if p.grad is None:
            assert q.grad is None, n
        else:
            _close(q.grad, p.grad)


def test_warns_without_use_reentrant_as_torch():
    x = torch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning) as theirs:
        tc.checkpoint(lambda t: t * 2, x)
    with pytest.warns(UserWarning) as ours:
        lc.checkpoint(lambda t: t * 2, _lt(x, True))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lc.checkpoint(lambda t: t * 2, _lt(x, True), use_reentrant=False)


def test_reentrant_without_grad_inputs_gives_no_parameter_grads_as_torch():
    tnet, lnet = _nets()
    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        ty = tc.checkpoint(tnet, x, use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        ly = lc.checkpoint(lnet, _lt(x), use_reentrant=True)
    assert ty.requires_grad is ly.requires_grad is False
    _close(ly, ty)
    # the non-reentrant variant keeps the parameters' graph, as torch's does
    ty = tc.checkpoint(tnet, x, use_reentrant=False)
    ly = lc.checkpoint(lnet, _lt(x), use_reentrant=False)
    assert ty.requires_grad and ly.requires_grad
    ty.sum().backward()
    ly.sum().backward()
    _close(lnet[0].weight.grad, tnet[0].weight.grad)


def test_errors_are_torchs():
    x = torch.ones(2, requires_grad=True)
    for mod, t in ((tc, x), (lc, _lt(x, True))):
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            mod.checkpoint(lambda a, foo=1: a, t, use_reentrant=True, foo=2)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            mod.checkpoint(lambda a: a, t, use_reentrant=True, debug=True)
    # kwargs reach the function in the non-reentrant variant
    assert lc.checkpoint(lambda a, k=1: a * k, _lt(x), use_reentrant=False, k=3).tolist() == [
        3.0,
        3.0,
    ]


def test_context_fn_wraps_the_forward():
    entered = []

    class Ctx:
        def __enter__(self):
            entered.append("fwd")

        def __exit__(self, *a):
            pass

    def ctx_fn():
        return Ctx(), Ctx()

    lc.checkpoint(
        lambda a: a * 2, lt.ones(2, requires_grad=True), use_reentrant=False, context_fn=ctx_fn
    )
    assert entered == ["fwd"]


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_is_torchs(segments):
    tnet, lnet = _nets()
    x = torch.randn(6, 4, requires_grad=True)
    lx = _lt(x, requires_grad=True)
    ty = tc.checkpoint_sequential(tnet, segments, x, use_reentrant=False)
    ly = lc.checkpoint_sequential(lnet, segments, lx, use_reentrant=False)
    _close(ly, ty)
    ty.sum().backward()
    ly.sum().backward()
    _close(lx.grad, x.grad)
    _close(lnet[4].weight.grad, tnet[4].weight.grad)
    with pytest.raises(ValueError, match="Unexpected keyword"):
        lc.checkpoint_sequential(lnet, 2, lx, use_reentrant=False, bad=1)


def test_reachable_as_torch_names():
    assert lt.utils.checkpoint.checkpoint is lc.checkpoint
