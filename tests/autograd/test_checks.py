"""torch.autograd's gradcheck / gradgradcheck and the anomaly-mode switches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt


def _inputs(lib):
    rng = np.random.default_rng(0)
    return [
        lib.tensor(rng.uniform(0.5, 1.5, size=s), dtype=lib.float64, requires_grad=True)
        for s in ((3,), (3,))
    ]


FUNCTIONS = {
    "product": lambda t, a, b: a * b.exp(),
    "two_outputs": lambda t, a, b: (a.sin() * b, (a * a).sum()),
    "matmul": lambda t, a, b: t.outer(a, b).tanh(),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradcheck_and_gradgradcheck_pass_where_torchs_do(name):
    fn = FUNCTIONS[name]
    for lib in (torch, lt):
        xs = _inputs(lib)
        assert lib.autograd.gradcheck(lambda a, b, lib=lib: fn(lib, a, b), xs)
        assert lib.autograd.gradgradcheck(lambda a, b, lib=lib: fn(lib, a, b), xs)


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3  # should be 2

    x = _inputs(lt)[0]
    with pytest.raises(lt.autograd.GradcheckError, match="Jacobian mismatch for output 0"):
        lt.autograd.gradcheck(Wrong.apply, (x,))
    assert lt.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    assert issubclass(lt.autograd.GradcheckError, RuntimeError)
    with pytest.raises(ValueError, match="requires_grad"):
        lt.autograd.gradcheck(lambda v: v * 2, (x.detach(),))


def test_anomaly_switches_nest_like_torchs():
    assert not lt.autograd.is_anomaly_enabled()
    with lt.autograd.detect_anomaly():
        assert lt.autograd.is_anomaly_enabled()
        with lt.autograd.set_detect_anomaly(False):
            assert not lt.autograd.is_anomaly_enabled()
        assert lt.autograd.is_anomaly_enabled()
    assert not lt.autograd.is_anomaly_enabled()

    @lt.autograd.detect_anomaly(check_nan=False)
    def inside():
        return lt.autograd.is_anomaly_enabled(), lt.autograd.is_anomaly_check_nan_enabled()

    assert inside() == (True, False)
    lt.autograd.set_detect_anomaly(True)  # as a call: on from now
    try:
        assert lt.autograd.is_anomaly_enabled()
        x = lt.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()  # a clean backward runs as without it
        assert x.grad.tolist() == [2.0, 4.0]
    finally:
        lt.autograd.set_detect_anomaly(False)


def test_deprecated_init_and_clip_names_warn_and_work():
    w = lt.empty(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.xavier_uniform_"):
        lt.nn.init.xavier_uniform(w)
    bound = (6 / 7) ** 0.5
    assert float(w.abs().max()) <= bound
    with pytest.warns(FutureWarning, match="nn.init.constant_"):
        lt.nn.init.constant(w, 0.5)
    assert w.tolist() == [[0.5] * 4] * 3
    p = lt.nn.Parameter(lt.zeros(2))
    p.grad = lt.tensor([3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = lt.nn.utils.get_total_norm([p.grad])
    assert float(total) == 5.0
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        norm = lt.nn.utils.clip_grad_norm(p, 1.0)
    assert float(norm) == 5.0
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
