"""Complex parameters (a Fourier layer's weights): ``nn.Parameter(complex)`` is a Parameter
that modules register; torch's optimizers update it as its real view (component-wise), and
an optimizer with a step of its own sees the complex tensor, as in torch (the Fourier
neural operator's Adam normalizes by |g|, not by each part).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import lazytorch as lt


def _model(lib, a, b, x):
    class Spectral(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.complex(lib.tensor(a), lib.tensor(b)))
            self.lin = lib.nn.Linear(4, 4)
            with lib.no_grad():
                self.lin.weight.copy_(lib.tensor(np.eye(4, dtype=np.float32) * 0.5))
                self.lin.bias.zero_()

        def forward(self, x):
            y = lib.fft.irfft(lib.fft.rfft(x, dim=-1) * self.w, n=6, dim=-1)
            return self.lin(y[:, :4]).pow(2).mean()

    return Spectral()


def _data():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    return a, b, rng.standard_normal((3, 6)).astype(np.float32)


def _train(lib, m, o, x, steps=4):
    """(loss, the parameter's pairs) after each of `steps` steps."""
    rows = []
    for _ in range(steps):
        o.zero_grad()
        loss = m(lib.tensor(x))
        loss.backward()
        o.step()
        rows.append((loss.item(), lib.view_as_real(m.w.detach()).numpy().copy()))
    return rows


def _same_steps(want, got):
    for (tl, tw), (ll, lw) in zip(want, got):
        np.testing.assert_allclose(ll, tl, rtol=2e-5)
        np.testing.assert_allclose(lw, tw, rtol=1e-4, atol=1e-6)


def test_a_complex_parameter_is_a_registered_parameter():
    a, b, x = _data()
    m = _model(lt, a, b, x)
    assert isinstance(m.w, lt.nn.Parameter) and m.w.is_leaf and m.w.requires_grad
    assert m.w.dtype is lt.complex64
    assert [n for n, _ in m.named_parameters()] == ["w", "lin.weight", "lin.bias"]
    assert sum(p.numel() for p in m.parameters()) == 12 + 16 + 4
    assert list(m.state_dict()) == ["w", "lin.weight", "lin.bias"]
    m2 = copy.deepcopy(m)
    assert isinstance(m2.w, lt.nn.Parameter) and m2.w is not m.w
    # a complex tensor that is not a parameter is not one (a view of a parameter's pairs)
    assert not isinstance(lt.view_as_complex(lt.zeros(2, 2)), lt.nn.Parameter)
    assert not isinstance(m.w * 2, lt.nn.Parameter)


@pytest.mark.parametrize("opt", ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad"])
def test_torchs_optimizers_update_a_complex_parameter_as_torch(opt):
    a, b, x = _data()
    seen = []
    for lib in (torch, lt):
        m = _model(lib, a, b, x)
        kw = {"momentum": 0.9} if opt in ("SGD", "RMSprop") else {}
        o = getattr(lib.optim, opt)(m.parameters(), lr=0.05, **kw)
        seen.append(_train(lib, m, o, x))
    _same_steps(*seen)


class _ComplexAdam:
    """The Fourier neural operator's Adam (its own step over complex tensors), for both
    libraries: ``addcmul_(g, g.conj())`` makes |g|^2, and the update divides by |g|."""

    @staticmethod
    def make(lib):
        class Adam(lib.optim.Optimizer):
            def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8):
                super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

            @lib.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    b1, b2 = group["betas"]
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        assert not p.grad.is_sparse
                        st = self.state[p]
                        if not st:
                            st["step"] = 0
                            st["m"] = lib.zeros_like(p, memory_format=lib.preserve_format)
                            st["v"] = lib.zeros_like(p, memory_format=lib.preserve_format)
                        st["step"] += 1
                        g = p.grad.add(p, alpha=1e-4)
                        st["m"].mul_(b1).add_(g, alpha=1 - b1)
                        st["v"].mul_(b2).addcmul_(g, g.conj(), value=1 - b2)
                        denom = (st["v"].sqrt() / (1 - b2 ** st["step"]) ** 0.5).add_(group["eps"])
                        p.addcdiv_(st["m"], denom, value=-group["lr"] / (1 - b1 ** st["step"]))

        return Adam


def test_an_optimizer_of_the_scripts_own_sees_the_complex_parameter():
    a, b, x = _data()
    seen = []
    for lib in (torch, lt):
        m = _model(lib, a, b, x)
        o = _ComplexAdam.make(lib)(m.parameters(), lr=0.05)
        assert lib.is_complex(o.param_groups[0]["params"][0])
        seen.append(_train(lib, m, o, x))
    _same_steps(*seen)


def test_complex_in_place_arithmetic_is_torchs():
    w0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    got = []
    for lib in (torch, lt):
        w = lib.tensor(w0)
        p, g = w + 1j * (1 - w), (0.5 - w) + 1j * w
        q = p.clone()
        q.add_(g, alpha=0.1)
        q.sub_(p, alpha=0.5)
        q.addcmul_(g, g.conj(), value=0.001)
        q.addcdiv_(g, p, value=-0.01)
        r = [q, g.add(p, alpha=1e-4), g.sub(p, alpha=2), p.sqrt(), (-p).sqrt(), p.addcmul(g, p)]
        got.append([lib.view_as_real(t).numpy() for t in r])
    for ours, want in zip(got[1], got[0]):
        np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-7)


def test_complex_sqrt_on_the_axes_and_the_cut():
    z = [
        4 + 0j,
        -4 + 0j,
        3 + 4j,
        -3 - 4j,
        0j,
        -2.5 + 0j,
        complex(-2.5, -0.0),
        1e-20 + 0j,
        -1e30 + 1j,
    ]
    want = torch.view_as_real(torch.tensor(z, dtype=torch.complex128).sqrt()).numpy()
    got = lt.view_as_real(lt.tensor(z, dtype=lt.complex128).sqrt()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert (np.signbit(got) == np.signbit(want)).all()
