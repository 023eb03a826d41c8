"""nn.Buffer, UninitializedParameter and the lazy modules against torch: the same sizes
inferred, the same forward given copied weights, the same state-dict behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt


def _lt(t):
    return lt.tensor(t.detach().numpy())


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_buffer_assignment_registers_a_buffer():
    for lib in (torch, lt):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(()), persistent=False)
        m.c = lib.ones(1)  # a plain tensor stays a plain attribute
        assert [n for n, _ in m.named_buffers()] == ["a", "b"]
        assert list(m.state_dict()) == ["a"]
        assert isinstance(m.a, lib.nn.Buffer)
        m.a = lib.zeros(3)  # an existing buffer is replaced by a plain tensor
        assert list(m.state_dict()) == ["a"] and tuple(m.a.shape) == (3,)
    assert isinstance(lt.nn.Buffer(lt.ones(1)), lt.Tensor)


@pytest.mark.parametrize(
    "make, x_shape",
    [
        (lambda lib: lib.nn.LazyLinear(3), (4, 5)),
        (lambda lib: lib.nn.LazyLinear(3, bias=False), (2, 6, 7)),
        (lambda lib: lib.nn.LazyConv1d(4, 3, padding=1), (2, 3, 8)),
        (lambda lib: lib.nn.LazyConv2d(4, 3, stride=2, groups=2), (2, 6, 9, 9)),
        (lambda lib: lib.nn.LazyConv2d(4, 3), (3, 7, 7)),  # unbatched
        (lambda lib: lib.nn.LazyConv3d(2, 2, bias=False), (1, 3, 4, 4, 4)),
        (lambda lib: lib.nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5)),
        (lambda lib: lib.nn.LazyConvTranspose2d(4, 3, groups=2), (1, 6, 4, 4)),
        (lambda lib: lib.nn.LazyConvTranspose3d(2, 2), (1, 3, 3, 3, 3)),
        (lambda lib: lib.nn.LazyBatchNorm1d(), (8, 5)),
        (lambda lib: lib.nn.LazyBatchNorm1d(bias=False), (8, 5, 3)),
        (lambda lib: lib.nn.LazyBatchNorm2d(momentum=0.3), (4, 3, 5, 5)),
        (lambda lib: lib.nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2)),
    ],
)
def test_lazy_module_infers_and_matches_torch(make, x_shape):
    tm, lm = make(torch), make(lt)
    assert lm.has_uninitialized_params() and tm.has_uninitialized_params()
    assert list(lm.state_dict()) == list(tm.state_dict())
    for k, v in lm.state_dict().items():
        assert type(v).__name__ == type(tm.state_dict()[k]).__name__, k
    x = torch.randn(*x_shape)
    ty = tm(x)
    ly = lm(_lt(x))  # infers; the values are random: copy torch's and run again
    assert type(lm).__name__ == type(tm).__name__
    assert not hasattr(tm, "has_uninitialized_params")  # an ordinary module now
    assert not hasattr(lm, "has_uninitialized_params")
    assert not any(lt.nn.parameter.is_lazy(t) for t in [*lm.parameters(), *lm.buffers()])
    for attr in ("in_features", "in_channels", "num_features"):
        if hasattr(tm, attr):
            assert getattr(lm, attr) == getattr(tm, attr)
    assert tuple(ly.shape) == tuple(ty.shape)
    lm2 = make(lt)
    # a state dict of an initialized module gives an uninitialized one its shapes
    tm2 = make(torch)
    tm2(x)
    tm2.train()
    lm2.load_state_dict({k: _lt(v) for k, v in tm2.state_dict().items()})
    assert not lm2.has_uninitialized_params()  # the class changes at the first forward
    assert list(lm2.state_dict()) == list(tm2.state_dict())
    _close(lm2(_lt(x)), tm2(x))
    assert type(lm2).__name__ == type(tm2).__name__
    for k, v in tm2.state_dict().items():
        _close(lm2.state_dict()[k], v)


def test_lazy_training_step_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.LazyLinear(6), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    lm = lt.nn.Sequential(lt.nn.LazyLinear(6), lt.nn.ReLU(), lt.nn.LazyLinear(2))
    x = torch.randn(5, 4)
    tm(x)
    lm(_lt(x))
    lm.load_state_dict({k: _lt(v) for k, v in tm.state_dict().items()})
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    lopt = lt.optim.SGD(lm.parameters(), lr=0.1)
    for _ in range(3):
        topt.zero_grad()
        lopt.zero_grad()
        tm(x).pow(2).mean().backward()
        lm(_lt(x)).pow(2).mean().backward()
        topt.step()
        lopt.step()
    for a, b in zip(tm.parameters(), lm.parameters()):
        _close(b, a)


def test_uninitialized_parameter():
    p = lt.nn.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad
    p.materialize((2, 3))
    assert type(p) is lt.nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad
    b = lt.nn.UninitializedBuffer()
    b.materialize(4)
    assert type(b) is lt.Tensor and tuple(b.shape) == (4,) and not b.requires_grad


def test_lazy_conv_refuses_bad_groups_as_torch():
    for lib in (torch, lt):
        m = lib.nn.LazyConv2d(4, 3, groups=2)
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m(lib.ones(1, 3, 5, 5))
