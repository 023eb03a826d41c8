"""nn.utils.parametrize, parametrizations.weight_norm / spectral_norm and the old
spectral_norm hook, against torch (same initial weights and power-iteration vectors)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import lazytorch as lt
from lazytorch.nn.utils import parametrizations as LP
from lazytorch.nn.utils import parametrize as LZ

TP = torch.nn.utils.parametrizations
TZ = torch.nn.utils.parametrize


def _lt(t, requires_grad=False):
    return lt.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _linear_pair(i=4, o=3):
    torch.manual_seed(0)
    tm = torch.nn.Linear(i, o)
    lm = lt.nn.Linear(i, o)
    lm.load_state_dict({k: _lt(v) for k, v in tm.state_dict().items()})
    return tm, lm


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (LZ.register_parametrization, TZ.register_parametrization),
        (LZ.remove_parametrizations, TZ.remove_parametrizations),
        (LZ.is_parametrized, TZ.is_parametrized),
        (LP.weight_norm, TP.weight_norm),
        (LP.spectral_norm, TP.spectral_norm),
        (LP.orthogonal, TP.orthogonal),
        (lt.nn.utils.spectral_norm, torch.nn.utils.spectral_norm),
        (lt.nn.utils.remove_spectral_norm, torch.nn.utils.remove_spectral_norm),
    ],
    ids=lambda f: f.__module__.rsplit(".", 1)[-1] + "." + f.__name__,
)
def test_signatures_are_torchs(ours, theirs):
    def p(f):
        return [(q.name, q.kind, q.default) for q in inspect.signature(f).parameters.values()]

    assert p(ours) == p(theirs)


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def test_register_layout_values_and_gradients():
    tm, lm = _linear_pair(3, 3)
    TZ.register_parametrization(tm, "weight", _symmetric(torch))
    LZ.register_parametrization(lm, "weight", _symmetric(lt))
    assert type(lm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(lm.state_dict()) == list(tm.state_dict())
    _close(lm.parametrizations.weight.original, tm.parametrizations.weight.original)
    _close(lm.weight, tm.weight)
    assert LZ.is_parametrized(lm) and LZ.is_parametrized(lm, "weight")
    assert not LZ.is_parametrized(lm, "bias")
    x = torch.randn(5, 3)
    tm(x).pow(2).sum().backward()
    lm(_lt(x)).pow(2).sum().backward()
    _close(lm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad)
    _close(lm.bias.grad, tm.bias.grad)


def test_assignment_runs_right_inverse_and_keeps_the_original_object():
    tm, lm = _linear_pair(3, 3)
    TZ.register_parametrization(tm, "weight", _symmetric(torch))
    LZ.register_parametrization(lm, "weight", _symmetric(lt))
    orig = lm.parametrizations.weight.original
    A = torch.randn(3, 3)
    with torch.no_grad():
        tm.weight = A
    lm.weight = _lt(A)
    assert lm.parametrizations.weight.original is orig
    _close(lm.weight, tm.weight)


def test_chained_parametrizations_and_cached():
    class Double(torch.nn.Module):
        def forward(self, X):
            return 2 * X

    class LDouble(lt.nn.Module):
        def forward(self, X):
            return 2 * X

    tm, lm = _linear_pair()
    for m, mod, d in ((tm, TZ, Double), (lm, LZ, LDouble)):
        mod.register_parametrization(m, "weight", d())
        mod.register_parametrization(m, "weight", d())
    assert len(lm.parametrizations.weight) == 2
    _close(lm.weight, tm.weight)
    with LZ.cached():
        assert lm.weight is lm.weight
    assert lm.weight is not lm.weight


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    tm, lm = _linear_pair(3, 3)
    TZ.register_parametrization(tm, "weight", _symmetric(torch))
    LZ.register_parametrization(lm, "weight", _symmetric(lt))
    orig = lm.parametrizations.weight.original
    TZ.remove_parametrizations(tm, "weight", leave_parametrized=leave)
    LZ.remove_parametrizations(lm, "weight", leave_parametrized=leave)
    assert type(lm) is lt.nn.Linear and not hasattr(lm, "parametrizations")
    assert lm.weight is orig and isinstance(lm.weight, lt.nn.Parameter)
    _close(lm.weight, tm.weight)
    assert list(lm.state_dict()) == list(tm.state_dict())


def test_errors_are_torchs():
    _, lm = _linear_pair()

    class Shrink(lt.nn.Module):
        def forward(self, X):
            return X[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        LZ.register_parametrization(lm, "weight", Shrink())
    LZ.register_parametrization(lm, "weight", Shrink(), unsafe=True)
    assert tuple(lm.weight.shape) == (1, 4)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        LZ.register_parametrization(lm, "nothing", Shrink())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    tm, lm = _linear_pair()
    TP.weight_norm(tm, dim=dim)
    LP.weight_norm(lm, dim=dim)
    assert list(lm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        _close(lm.state_dict()[k], v)
    x = torch.randn(6, 4)
    tm(x).sin().sum().backward()
    lm(_lt(x)).sin().sum().backward()
    for p, q in zip(tm.parameters(), lm.parameters()):
        _close(q.grad, p.grad)
    # the old hook's state dict (weight_g / weight_v) loads into the parametrization
    old = torch.nn.Linear(4, 3)
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(old, dim=dim)
    lm.load_state_dict({k: _lt(v) for k, v in old.state_dict().items()})
    _close(lm.weight, old.weight)


def _copy_sn_buffers(tm, lm):
    for k in ("_u", "_v"):
        setattr(lm.parametrizations.weight[0], k, _lt(getattr(tm.parametrizations.weight[0], k)))


@pytest.mark.parametrize("iters", [1, 3])
def test_spectral_norm_parametrization(iters):
    tm, lm = _linear_pair(5, 4)
    TP.spectral_norm(tm, n_power_iterations=iters)
    LP.spectral_norm(lm, n_power_iterations=iters)
    assert list(lm.state_dict()) == list(tm.state_dict())
    _copy_sn_buffers(tm, lm)
    for _ in range(3):  # training mode: each read updates u and v
        x = torch.randn(2, 5)
        tm(x).pow(2).sum().backward()
        lm(_lt(x)).pow(2).sum().backward()
        _close(lm.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u)
        _close(lm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad)
    tm.eval()
    lm.eval()
    _close(lm.weight, tm.weight)
    _close(lm.weight, lm.weight)  # no update in eval mode


def test_spectral_norm_conv_transpose_uses_dim_1():
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(3, 4, 2)
    lm = lt.nn.ConvTranspose2d(3, 4, 2)
    lm.load_state_dict({k: _lt(v) for k, v in tm.state_dict().items()})
    TP.spectral_norm(tm)
    LP.spectral_norm(lm)
    assert tuple(lm.parametrizations.weight[0]._u.shape) == (4,)
    _copy_sn_buffers(tm, lm)
    x = torch.randn(1, 3, 3, 3)
    _close(lm(_lt(x)), tm(x))


def test_old_spectral_norm_hook():
    tm, lm = _linear_pair(5, 4)
    torch.nn.utils.spectral_norm(tm, n_power_iterations=2)
    lt.nn.utils.spectral_norm(lm, n_power_iterations=2)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in lm.named_parameters()] == ["bias", "weight_orig"]
    lm.weight_u = _lt(tm.weight_u)
    lm.weight_v = _lt(tm.weight_v)
    for _ in range(3):
        x = torch.randn(3, 5)
        tm(x).pow(2).sum().backward()
        lm(_lt(x)).pow(2).sum().backward()
        _close(lm.weight_u, tm.weight_u)
        _close(lm.weight_v, tm.weight_v)
        _close(lm.weight, tm.weight)
        _close(lm.weight_orig.grad, tm.weight_orig.grad)
    tm.eval()
    lm.eval()
    x = torch.randn(3, 5)
    _close(lm(_lt(x)), tm(x))
    torch.nn.utils.remove_spectral_norm(tm)
    lt.nn.utils.remove_spectral_norm(lm)
    assert list(lm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    _close(lm.weight, tm.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        lt.nn.utils.remove_spectral_norm(lm)


def _orthogonal_pair(shape, **kw):
    w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = []
    for lib, P in ((torch, TP), (lt, LP)):
        m = lib.nn.Linear(shape[-1], shape[-2], bias=False)
        m.weight = lib.nn.Parameter(lib.tensor(w))
        out.append(P.orthogonal(m, **kw))
    return out


@pytest.mark.parametrize("triv", [True, False], ids=["trivialization", "plain"])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 4, 4)], ids=str)
def test_orthogonal_is_torchs(shape, orthogonal_map, triv):
    tm, lm = _orthogonal_pair(shape, orthogonal_map=orthogonal_map, use_trivialization=triv)
    assert type(lm.parametrizations.weight[0]).__name__ == "_Orthogonal"
    _close(lm.weight, tm.weight, tol=1e-6)
    w = lm.weight.detach().numpy().reshape(-1, *shape[-2:])
    for q in w:  # orthonormal columns (rows, if wide)
        q = q if shape[-2] >= shape[-1] else q.T
        np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-5)
    # one SGD step through the map: gradients and the updated weight as torch's (with
    # trivialization, a non-square base is completed by random columns, which torch and
    # lazytorch draw differently: the gradient depends on them, the weight does not)
    for m in (tm, lm):
        (m.weight.sum(-1) ** 2).sum().backward()
    if not triv or shape[-2] == shape[-1]:
        _close(
            lm.parametrizations.weight.original.grad,
            tm.parametrizations.weight.original.grad,
            tol=1e-5,
        )
        for lib, m in ((torch, tm), (lt, lm)):
            with lib.no_grad():
                m.parametrizations.weight.original.add_(
                    m.parametrizations.weight.original.grad, alpha=-0.1
                )
        _close(lm.weight, tm.weight, tol=1e-5)


def test_orthogonal_assignment_and_refusals():
    tm, lm = _orthogonal_pair((4, 4))
    q = np.linalg.qr(np.random.default_rng(1).standard_normal((4, 4)))[0].astype(np.float32)
    tm.weight, lm.weight = torch.tensor(q), lt.tensor(q)  # right_inverse: base = q
    _close(lm.weight, tm.weight, tol=1e-6)
    np.testing.assert_allclose(lm.weight.detach().numpy(), q, atol=1e-6)
    for lib, P in ((torch, TP), (lt, LP)):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            P.orthogonal(lib.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        m = P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
        with pytest.raises(NotImplementedError, match="not possible to assign"):
            m.weight = lib.eye(3)
