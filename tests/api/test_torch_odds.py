"""Small torch names real scripts reach for, against torch: conjugate transposes, complex
conversions, the deprecated norms, linalg.cond, flags that change nothing here, and folding
a batch norm into the layer before it (nn.utils.fusion)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises, randn

INF = math.inf


# -- conjugate transposes and complex conversions -------------------------------------------
def test_H_and_mH_of_real_tensors():
    check(lambda t, x: (x.H, x.mH, x.mH.sum(0)), randn(3, 4), modes=("lazy",))
    check(lambda t, x: x.mH, randn(2, 3, 4), modes=("lazy",))
    check_raises(lambda t, x: x.H, randn(3), match="only supported on matrices")
    check_raises(lambda t, x: x.mH, randn(3), match="matrices or batches")


def test_H_of_a_0d_tensor_warns_and_is_the_tensor():
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        y = lt.tensor(2.5).H
    assert y.item() == 2.5


def test_H_and_mH_of_complex_tensors():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    z, w = lt.tensor(a), torch.tensor(a)
    for name in ("T", "mT", "H", "mH"):
        np.testing.assert_array_equal(
            getattr(z, name).numpy(), getattr(w, name).resolve_conj().numpy()
        )
    np.testing.assert_array_equal(z.adjoint().numpy(), w.adjoint().resolve_conj().numpy())
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        _ = lt.tensor(a[0]).H


def test_cfloat_and_cdouble():
    x = randn(2, 3)
    for name, dtype in (("cfloat", lt.complex64), ("cdouble", lt.complex128)):
        z = getattr(lt.tensor(x), name)()
        assert z.dtype is dtype
        np.testing.assert_array_equal(z.numpy(), getattr(torch.tensor(x), name)().numpy())


def test_is_tensor_of_a_complex_tensor():
    assert lt.is_tensor(lt.ones(2, dtype=lt.complex64)) and not lt.is_tensor(np.ones(2))


# -- activations as methods -----------------------------------------------------------------------
def test_hardshrink_and_prelu_methods():
    check(lambda t, x: x.hardshrink(0.3), randn(3, 4))
    check(lambda t, x, w: x.prelu(w), randn(2, 3, 4), randn(3))
    check_grad(lambda t, x, w: x.prelu(w), randn(2, 3, 4), randn(3))
    check_raises(lambda t, x: x.hardshrink(), np.arange(3))


# -- norms -----------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", INF, -INF, 1, -1])
def test_linalg_cond(p):
    check(lambda t, a: t.linalg.cond(a, p), randn(2, 3, 3, dtype="float64"), modes=("lazy",))


def test_linalg_cond_of_singular_and_rectangular_matrices():
    check(lambda t, a: t.linalg.cond(a, "fro"), np.zeros((2, 2)), modes=("lazy",))  # inf
    check(lambda t, a: t.linalg.cond(a), randn(2, 3), modes=("lazy",))  # any shape for 2-norms
    check_raises(lambda t, a: t.linalg.cond(a, "fro"), randn(2, 3), match="square")


@pytest.mark.parametrize("p", [None, -2, "nuc"])  # torch's own backward fails for fro and 1
def test_linalg_cond_gradient(p):
    check_grad(lambda t, a: t.linalg.cond(a, p), randn(3, 3, dtype="float64"))


def test_deprecated_nuclear_and_frobenius_norms():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both libraries warn: these names are deprecated
        check(lambda t, a: t.nuclear_norm(a), randn(3, 4), modes=("lazy",))
        check(lambda t, a: t.nuclear_norm(a, True), randn(3, 4), modes=("lazy",))
        check(lambda t, a: t.nuclear_norm(a, (0, 2)), randn(3, 2, 4), modes=("lazy",))
        check(lambda t, a: t.frobenius_norm(a, 1), randn(3, 4), modes=("lazy",))
        check(lambda t, a: t.frobenius_norm(a, (0, 1), True), randn(3, 4), modes=("lazy",))
    with pytest.warns(UserWarning, match="deprecated"):
        lt.nuclear_norm(lt.ones(2, 2))


# -- small functions and flags ----------------------------------------------------------------
def test_get_device_and_detach_():
    x = lt.ones(2, requires_grad=True) * 2
    assert lt.get_device(x) == torch.get_device(torch.ones(2)) == -1
    assert lt.detach_(x) is x and not x.requires_grad


def test_flags_that_change_nothing_here():
    assert lt.set_flush_denormal(True) is False  # not supported: subnormals stay IEEE
    assert lt.newaxis is None and lt.ones(3)[lt.newaxis].shape == (1, 3)
    before = lt.is_warn_always_enabled()
    try:
        lt.set_warn_always(True)
        assert lt.is_warn_always_enabled()
    finally:
        lt.set_warn_always(before)


def test_anomaly_switches():
    assert not lt.is_anomaly_enabled()
    try:
        lt.set_anomaly_enabled(True, check_nan=False)
        assert lt.is_anomaly_enabled() and not lt.is_anomaly_check_nan_enabled()
        assert lt.autograd.is_anomaly_enabled()
    finally:
        lt.set_anomaly_enabled(False)
    assert not lt.is_anomaly_enabled() and lt.is_anomaly_check_nan_enabled()


def test_grad_scaler_at_the_top_level():
    assert lt.GradScaler is lt.amp.GradScaler


@pytest.mark.parametrize("name", ["dirac", "eye"])
def test_deprecated_init_names(name):
    shape = (4, 2, 3) if name == "dirac" else (3, 5)
    w, ref = lt.empty(*shape), torch.empty(*shape)
    with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
        getattr(lt.nn.init, name)(w)
    getattr(torch.nn.init, f"{name}_")(ref)
    np.testing.assert_array_equal(w.numpy(), ref.numpy())


# -- nn.utils.fusion ---------------------------------------------------------------------------
def _pair(make, *args):
    """The same layer in both libraries, with torch's random values copied over."""
    theirs = make(torch, *args)
    ours = make(lt, *args)
    ours.load_state_dict({k: lt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _bn(lib, n, cls="BatchNorm2d"):
    bn = getattr(lib.nn, cls)(n)
    if lib is torch:  # running statistics and an affine map that are not the identity
        with torch.no_grad():
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-1, 1)
    return bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval(transpose, bias):
    layer = "ConvTranspose2d" if transpose else "Conv2d"
    conv, tconv = _pair(lambda lib: getattr(lib.nn, layer)(3, 4, 3, bias=bias).eval())
    bn, tbn = _pair(lambda lib: _bn(lib, 4))
    x = randn(2, 3, 6, 6)
    fused = lt.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    tfused = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    assert isinstance(fused.weight, lt.nn.Parameter) and fused.weight.requires_grad
    assert fused.bias.requires_grad == bias  # a bias made of zeros needs no gradient, as torch
    np.testing.assert_allclose(
        fused.weight.detach().numpy(), tfused.weight.detach().numpy(), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(
        fused.bias.detach().numpy(), tfused.bias.detach().numpy(), rtol=1e-6, atol=1e-7
    )
    want = tbn(tconv(torch.tensor(x))).detach().numpy()
    np.testing.assert_allclose(fused(lt.tensor(x)).detach().numpy(), want, rtol=1e-5, atol=1e-5)
    assert conv.weight is not fused.weight  # a copy: the original layer is unchanged
    np.testing.assert_array_equal(conv.weight.detach().numpy(), tconv.weight.detach().numpy())


def test_fuse_linear_bn_eval():
    lin, tlin = _pair(lambda lib: lib.nn.Linear(5, 4).eval())
    bn, tbn = _pair(lambda lib: _bn(lib, 4, "BatchNorm1d"))
    x = randn(3, 5)
    fused = lt.nn.utils.fuse_linear_bn_eval(lin, bn)
    want = tbn(tlin(torch.tensor(x))).detach().numpy()
    np.testing.assert_allclose(fused(lt.tensor(x)).detach().numpy(), want, rtol=1e-5, atol=1e-5)
    w, b = lt.nn.utils.fuse_linear_bn_weights(
        lin.weight, None, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    tw, tb = torch.nn.utils.fuse_linear_bn_weights(
        tlin.weight, None, tbn.running_mean, tbn.running_var, tbn.eps, tbn.weight, tbn.bias
    )
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.detach().numpy(), tb.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fusion_refuses_training_mode_and_mismatched_features():
    conv, bn = lt.nn.Conv2d(3, 4, 3), lt.nn.BatchNorm2d(4)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        lt.nn.utils.fuse_conv_bn_eval(conv, bn.eval())
    with pytest.raises(AssertionError, match="out_features"):
        lt.nn.utils.fuse_linear_bn_eval(lt.nn.Linear(3, 4).eval(), lt.nn.BatchNorm1d(3).eval())


# -- a 0-d integer tensor where torch takes an int (its __index__) -----------------------------
N5 = np.array(5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, n: t.linspace(-0.5, 0.5, n),
        lambda t, n: t.logspace(0, 1, n),
        lambda t, n: t.arange(10).split(n),
        lambda t, n: t.arange(10).roll(n),
        lambda t, n: t.arange(10).reshape(2, 5).roll(n, n - 4),
        lambda t, n: t.arange(10).chunk(n - 3),
        lambda t, n: t.ones(2, 3).movedim(n - 5, 1),
        lambda t, n: t.arange(10).unflatten(0, (n, -1)),
        lambda t, n: t.eye(n, n - 2),
    ],
    ids=[
        "linspace",
        "logspace",
        "split",
        "roll",
        "roll_dims",
        "chunk",
        "movedim",
        "unflatten",
        "eye",
    ],
)
def test_a_0d_integer_tensor_as_an_int(fn):
    out = check(fn, N5, modes=("lazy",))
    for o in out if isinstance(out, tuple) else (out,):
        assert all(type(d) is int for d in o.shape)  # sizes, never tensors


def test_multinomial_with_a_0d_tensor_count():
    assert lt.multinomial(lt.ones(4), lt.tensor(2)).shape == (2,)
