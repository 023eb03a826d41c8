"""lazytorch.fft against torch.fft: values, dtypes, shapes and gradients.

Each case runs the same call on torch and on lazytorch (lazy and sync mode) on random
inputs, float32 and float64, and compares the results; gradients flow through a real loss
(``abs().sum()`` of a complex result, a weighted sum of a real one) back to real or complex
leaves. The last test trains a tiny FNO-style spectral convolution for 3 SGD steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(11)


def _lib_tensor(lib, a, requires_grad=False):
    if np.iscomplexobj(a):
        pair = np.stack([a.real, a.imag], -1)
        t = lib.tensor(pair, requires_grad=requires_grad)
        return t, lib.view_as_complex(t)
    t = lib.tensor(a, requires_grad=requires_grad)
    return t, t


def _values(x):
    return x.detach().resolve_conj().numpy()


def _loss(lib, y, w):
    """A real loss of y whose gradient reaches every input value: the weights make it
    sensitive to each output element (abs alone would hide the sign of a real result)."""
    if lib.is_complex(y):
        return (lib.view_as_real(y.resolve_conj()) * w).sum() + y.abs().sum()
    return (y * w[..., 0]).sum()


def check(fn, a, *, grad=True, rtol=None, atol=None):
    """fn(lib, x) on torch and on lazytorch in lazy and sync mode: same dtype, shape,
    values and input gradient."""
    f64 = a.dtype in (np.float64, np.complex128)
    rtol = rtol or (1e-10 if f64 else 2e-5)
    atol = atol or (1e-10 if f64 else 2e-5)
    leaf, x = _lib_tensor(torch, a, grad)
    want = fn(torch, x)
    w = RNG.standard_normal((*want.shape, 2)).astype(np.float64 if f64 else np.float32)
    if grad:
        _loss(torch, want, torch.tensor(w)).backward()
    for sync in (False, True):
        with lt.sync_mode(sync):
            lleaf, lx = _lib_tensor(lt, a, grad)
            got = fn(lt, lx)
            assert lt.is_complex(got) == torch.is_complex(want), sync
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], got.dtype
            assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
            scale = max(1.0, float(np.abs(_values(want)).max()))
            np.testing.assert_allclose(
                _values(got), _values(want), rtol=rtol, atol=atol * scale, err_msg=f"sync={sync}"
            )
            if grad:
                _loss(lt, got, lt.tensor(w)).backward()
                g, tg = lleaf.grad.numpy(), leaf.grad.numpy()
                gscale = max(1.0, float(np.abs(tg).max()))
                np.testing.assert_allclose(
                    g, tg, rtol=rtol, atol=atol * gscale, err_msg=f"grad, sync={sync}"
                )


def data(shape, dtype, complex_=False):
    a = RNG.standard_normal(shape).astype(dtype)
    if complex_:
        a = (a + 1j * RNG.standard_normal(shape)).astype(
            np.complex64 if dtype == np.float32 else np.complex128
        )
    return a


DTYPES = [np.float32, np.float64]
NORMS = [None, "backward", "ortho", "forward"]

# name -> (call, input shape, complex input)
ONE_D = {
    "fft_real_even": (lambda t, x, nm: t.fft.fft(x, norm=nm), (3, 8), False),
    "fft_real_odd": (lambda t, x, nm: t.fft.fft(x, norm=nm), (3, 7), False),
    "fft_complex_dim0": (lambda t, x, nm: t.fft.fft(x, dim=0, norm=nm), (9, 2), True),
    "fft_pad": (lambda t, x, nm: t.fft.fft(x, n=11, norm=nm), (2, 6), True),
    "fft_trim": (lambda t, x, nm: t.fft.fft(x, n=4, dim=-2, norm=nm), (2, 7, 3), True),
    "fft_four_step": (lambda t, x, nm: t.fft.fft(x, norm=nm), (2, 96), True),
    "fft_prime_long": (lambda t, x, nm: t.fft.fft(x, norm=nm), (2, 67), False),
    "fft_size1": (lambda t, x, nm: t.fft.fft(x, norm=nm), (3, 1), True),
    "ifft_complex": (lambda t, x, nm: t.fft.ifft(x, norm=nm), (4, 10), True),
    "ifft_real_four_step": (lambda t, x, nm: t.fft.ifft(x, n=150, norm=nm), (2, 130), False),
    "rfft_even": (lambda t, x, nm: t.fft.rfft(x, norm=nm), (3, 10), False),
    "rfft_odd_dim1": (lambda t, x, nm: t.fft.rfft(x, dim=1, norm=nm), (2, 9, 3), False),
    "rfft_pad_trim": (lambda t, x, nm: t.fft.rfft(x, n=5, norm=nm), (2, 8), False),
    "rfft_long": (lambda t, x, nm: t.fft.rfft(x, norm=nm), (2, 200), False),
    "irfft_default_n": (lambda t, x, nm: t.fft.irfft(x, norm=nm), (3, 6), True),
    "irfft_odd_n": (lambda t, x, nm: t.fft.irfft(x, n=9, norm=nm), (3, 5), True),
    "irfft_pad": (lambda t, x, nm: t.fft.irfft(x, n=16, dim=0, norm=nm), (4, 2), True),
    "irfft_long": (lambda t, x, nm: t.fft.irfft(x, n=144, norm=nm), (2, 73), True),
    "irfft_long_odd": (lambda t, x, nm: t.fft.irfft(x, n=135, norm=nm), (2, 68), True),
    "irfft_real_input": (lambda t, x, nm: t.fft.irfft(x, norm=nm), (2, 5), False),
    "hfft": (lambda t, x, nm: t.fft.hfft(x, norm=nm), (3, 5), True),
    "hfft_n_odd": (lambda t, x, nm: t.fft.hfft(x, n=7, norm=nm), (3, 5), True),
    "hfft_long": (lambda t, x, nm: t.fft.hfft(x, n=130, norm=nm), (2, 66), True),
    "ihfft": (lambda t, x, nm: t.fft.ihfft(x, norm=nm), (3, 7), False),
    "ihfft_n": (lambda t, x, nm: t.fft.ihfft(x, n=10, dim=0, norm=nm), (6, 2), False),
}

N_D = {
    "fft2": (lambda t, x, nm: t.fft.fft2(x, norm=nm), (2, 5, 6), True),
    "fft2_real_s": (lambda t, x, nm: t.fft.fft2(x, s=(3, 8), norm=nm), (2, 5, 6), False),
    "ifft2_dims": (lambda t, x, nm: t.fft.ifft2(x, dim=(0, -1), norm=nm), (4, 3, 5), True),
    "fftn_all": (lambda t, x, nm: t.fft.fftn(x, norm=nm), (3, 4, 5), True),
    "fftn_s_only": (lambda t, x, nm: t.fft.fftn(x, s=(7, -1), norm=nm), (2, 4, 5), False),
    "ifftn_dim": (lambda t, x, nm: t.fft.ifftn(x, dim=[-3, 1], norm=nm), (3, 4, 2), True),
    "rfft2": (lambda t, x, nm: t.fft.rfft2(x, norm=nm), (2, 6, 8), False),
    "rfft2_s": (lambda t, x, nm: t.fft.rfft2(x, s=(4, 7), norm=nm), (2, 6, 8), False),
    "irfft2": (lambda t, x, nm: t.fft.irfft2(x, norm=nm), (2, 6, 5), True),
    "irfft2_s_odd": (lambda t, x, nm: t.fft.irfft2(x, s=(5, 9), norm=nm), (2, 6, 5), True),
    "rfftn": (lambda t, x, nm: t.fft.rfftn(x, norm=nm), (3, 4, 5), False),
    "rfftn_dims": (lambda t, x, nm: t.fft.rfftn(x, dim=(2, 0), norm=nm), (3, 4, 5), False),
    "irfftn": (lambda t, x, nm: t.fft.irfftn(x, norm=nm), (3, 4, 5), True),
    "irfftn_s": (lambda t, x, nm: t.fft.irfftn(x, s=(5, -1), norm=nm), (2, 4, 5), True),
    "hfft2": (lambda t, x, nm: t.fft.hfft2(x, norm=nm), (3, 4, 3), True),
    "hfftn_s": (lambda t, x, nm: t.fft.hfftn(x, s=(3, 7), norm=nm), (3, 4, 3), True),
    "ihfft2": (lambda t, x, nm: t.fft.ihfft2(x, norm=nm), (2, 4, 6), False),
    "ihfftn": (lambda t, x, nm: t.fft.ihfftn(x, norm=nm), (3, 4, 5), False),
    "fft2_size1_dims": (lambda t, x, nm: t.fft.fft2(x, norm=nm), (2, 1, 1), True),
    "rfftn_size1_last": (lambda t, x, nm: t.fft.rfftn(x, norm=nm), (3, 1), False),
}

CASES = {**ONE_D, **N_D}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_fft_matches_torch_values_and_gradients(name, dtype):
    fn, shape, complex_ = CASES[name]
    norm = NORMS[sorted(CASES).index(name) % len(NORMS)]  # each case one norm (all are below)
    check(lambda t, x: fn(t, x, norm), data(shape, dtype, complex_))


EVERY_NORM = ["fft_pad", "ifft_complex", "rfft_odd_dim1", "irfft_odd_n", "hfft", "ihfft_n"]
EVERY_NORM += ["fftn_s_only", "rfft2_s", "irfftn_s", "hfftn_s", "ihfftn", "fft_four_step"]


@pytest.mark.parametrize("norm", NORMS, ids=["none", "backward", "ortho", "forward"])
@pytest.mark.parametrize("name", EVERY_NORM)
def test_every_norm_matches_torch(name, norm):
    fn, shape, complex_ = CASES[name]
    check(lambda t, x: fn(t, x, norm), data(shape, np.float32, complex_))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_round_trips_and_batched_leading_dims(dtype):
    a = data((2, 3, 4, 10), dtype)
    check(lambda t, x: t.fft.irfft(t.fft.rfft(x), n=10), a)
    check(lambda t, x: t.fft.ifftn(t.fft.fftn(x, dim=(1, 3)), dim=(1, 3)).real, a)
    check(lambda t, x: t.fft.fft(x).abs(), a)
    check(lambda t, x: t.fft.fftn(x, dim=()), a)  # no dims: the input as a complex tensor
    check(lambda t, x: t.fft.rfft(x).angle(), a, grad=False)  # angle: atan2 kinks at 0


def test_integer_input_is_promoted_as_torch():
    a = np.arange(6).reshape(2, 3)
    check(lambda t, x: t.fft.fft(x), a, grad=False)
    check(lambda t, x: t.fft.rfft2(x), a, grad=False)


@pytest.mark.parametrize("n", [4096, 1021])
def test_long_transform_error_against_torch(n):
    """The accuracy the module docstring states (n=4096: four-step; 1021 is a prime: one
    matmul)."""
    a = data((2, n), np.float32)
    want = torch.fft.fft(torch.tensor(a)).numpy()
    got = lt.fft.fft(lt.tensor(a)).numpy()
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    want = torch.fft.irfft(torch.tensor(want), n=n).numpy()
    got = lt.fft.irfft(lt.fft.fft(lt.tensor(a)), n=n).numpy()
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    a64 = a.astype(np.float64)
    want = torch.fft.fft(torch.tensor(a64)).numpy()
    got = lt.fft.fft(lt.tensor(a64)).numpy()
    assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.1])
def test_frequencies_and_shifts_match_torch(n, d):
    for dtype in (None, "float64"):
        kw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        lkw = {} if dtype is None else {"dtype": getattr(lt, dtype)}
        want, got = torch.fft.fftfreq(n, d, **kw), lt.fft.fftfreq(n, d, **lkw)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(
            lt.fft.rfftfreq(n, d, **lkw).numpy(), torch.fft.rfftfreq(n, d, **kw).numpy()
        )
    a = data((3, n, 4), np.float32, complex_=True)
    for dim in (None, 1, (0, -1), [-2]):
        check(lambda t, x, dim=dim: t.fft.fftshift(x, dim=dim), a, grad=False)
        check(lambda t, x, dim=dim: t.fft.ifftshift(x, dim=dim), a, grad=False)
        check(lambda t, x, dim=dim: t.fft.ifftshift(x.real, dim=dim), a, grad=False)
    check(lambda t, x: t.fft.fftshift(t.fft.fft(x, dim=1), dim=1).abs(), a)


def test_fftfreq_requires_grad():
    assert lt.fft.fftfreq(4, requires_grad=True).requires_grad


ERRORS = [
    (lambda t: t.fft.fft(t.ones(4), norm="foo"), RuntimeError, 'Invalid normalization mode: "foo"'),
    (lambda t: t.fft.rfft2(t.ones(4, 4), norm="Ortho"), RuntimeError, "Invalid normalization"),
    (lambda t: t.fft.fft(t.ones(4), n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda t: t.fft.irfft(t.ones(1)), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda t: t.fft.fft(t.ones(4).half()), RuntimeError, "Unsupported dtype Half"),
    (lambda t: t.fft.fft(t.ones(4), dim=3), IndexError, "Dimension out of range"),
    (lambda t: t.fft.fft(t.tensor(1.0)), IndexError, "tensor has no dimensions"),
    (lambda t: t.fft.fftn(t.ones(4), s=(2, 3)), RuntimeError, "Got shape with 2 values"),
    (lambda t: t.fft.fftn(t.ones(3, 4), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda t: t.fft.fftn(t.ones(3, 4), s=(3,), dim=(0, 1)), RuntimeError, "same length"),
    (lambda t: t.fft.rfftn(t.ones(3), dim=()), RuntimeError, "must transform at least one"),
    (lambda t: t.fft.irfftn(t.ones(3), dim=()), RuntimeError, "must transform at least one"),
    (
        lambda t: t.fft.rfft(t.view_as_complex(t.ones(4, 2))),
        RuntimeError,
        "rfft expects a real input tensor, but got ComplexFloat",
    ),
    (
        lambda t: t.fft.ihfft(t.view_as_complex(t.ones(4, 2))),
        RuntimeError,
        "ihfft expects a real input tensor, but got ComplexFloat",
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_torchs(case):
    fn, exc, msg = ERRORS[case]
    with pytest.raises(exc, match=msg):
        fn(torch)
    with pytest.raises(exc, match=msg):
        fn(lt)


# -- an FNO-style spectral convolution, trained -------------------------------------------------
def _spectral_conv(lib, x, w1, w2, modes):
    """FNO's SpectralConv2d (Li et al.): keep the `modes` lowest frequencies (both signs along
    dim -2) of each channel's rfft2, mix the channels with complex weights, transform back.
    The output spectrum starts as zeros; torch's FNO makes it with ``dtype=torch.cfloat``,
    which lazytorch's factories do not take yet, so here it is ``complex(zeros, zeros)``."""
    b, _, h, w = x.shape
    xf = lib.fft.rfft2(x)
    o = w1.shape[1]
    zeros = lib.zeros(b, o, h, w // 2 + 1)
    out = lib.complex(zeros, zeros)
    mix = "bixy,ioxy->boxy"  # FNO's compl_mul2d
    out[:, :, :modes, :modes] = lib.einsum(mix, xf[:, :, :modes, :modes], w1)
    out[:, :, -modes:, :modes] = lib.einsum(mix, xf[:, :, -modes:, :modes], w2)
    return lib.fft.irfft2(out, s=(h, w))


def _fno_losses(lib, x, y, wr, wi, lin):
    wr = lib.tensor(wr, requires_grad=True)
    wi = lib.tensor(wi, requires_grad=True)
    w1, w2 = lib.view_as_complex(wr), lib.view_as_complex(wi)
    lin = lib.tensor(lin, requires_grad=True)
    x, y = lib.tensor(x), lib.tensor(y)
    opt = lib.optim.SGD([wr, wi, lin], lr=0.05)
    losses = []
    for _ in range(3):
        h = _spectral_conv(lib, x, w1, w2, 3) + lib.einsum("bihw,io->bohw", x, lin)
        loss = ((lib.nn.functional.gelu(h) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, wr.detach().numpy(), lin.detach().numpy()


def test_fno_spectral_conv_trains_like_torch():
    x, y = data((2, 3, 8, 10), np.float32), data((2, 4, 8, 10), np.float32)
    wr, wi = 0.3 * data((3, 4, 3, 3, 2), np.float32), 0.3 * data((3, 4, 3, 3, 2), np.float32)
    lin = 0.3 * data((3, 4), np.float32)
    want = _fno_losses(torch, x, y, wr, wi, lin)
    for sync in (False, True):
        with lt.sync_mode(sync):
            got = _fno_losses(lt, x, y, wr, wi, lin)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-6)
