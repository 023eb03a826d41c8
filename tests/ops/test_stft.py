"""torch.stft / torch.istft (and Tensor.stft / Tensor.istft) against torch: values, dtypes,
shapes, gradients and refusals.

Each case runs the same call on torch and on lazytorch (lazy and sync mode) from the same
NumPy data, float32 and float64, and compares the results (complex ones as their real
pairs, as tests/ops/test_fft.py does); gradients flow from a real loss (``abs().sum()`` of
a complex result plus a weighted sum of its pairs, so every part counts) back to the
signal, and where a case says so to the window.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(5)


def _leaf(lib, a, requires_grad):
    """A leaf of lib for NumPy `a` (complex through its pairs) and the tensor to use."""
    if np.iscomplexobj(a):
        pair = lib.tensor(np.stack([a.real, a.imag], -1), requires_grad=requires_grad)
        return pair, lib.view_as_complex(pair)
    t = lib.tensor(a, requires_grad=requires_grad)
    return t, t


def _pairs(y):
    y = y.detach()
    if y.is_complex():
        y = y.resolve_conj() if hasattr(y, "resolve_conj") else y
        return np.stack([y.real.numpy(), y.imag.numpy()], -1)
    return y.numpy()


def _loss(lib, y, w):
    if lib.is_complex(y):
        return (lib.view_as_real(y) * w).sum() + y.abs().sum()
    return (y * w[..., 0]).sum()


def check(fn, a, win=None, *, grad=True, window_grad=False):
    """fn(lib, x, window) on torch and lazytorch: same complex-ness, dtype, shape, values
    and gradients (of the signal, and of the window with `window_grad`)."""
    f64 = a.dtype in (np.float64, np.complex128)
    tol = 1e-10 if f64 else 3e-5
    leaf, x = _leaf(torch, a, grad)
    wleaf, w = _leaf(torch, win, window_grad) if win is not None else (None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(torch, x, w)
    ww = RNG.standard_normal((*want.shape, 2)).astype(np.float64 if f64 else np.float32)
    if grad:
        _loss(torch, want, torch.tensor(ww)).backward()
    for sync in (False, True):
        with lt.sync_mode(sync), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lleaf, lx = _leaf(lt, a, grad)
            lwleaf, lw = _leaf(lt, win, window_grad) if win is not None else (None, None)
            got = fn(lt, lx, lw)
        assert lt.is_complex(got) == torch.is_complex(want), sync
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], got.dtype
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
        scale = max(1.0, float(np.abs(_pairs(want)).max()))
        np.testing.assert_allclose(
            _pairs(got), _pairs(want), rtol=tol, atol=tol * scale, err_msg=f"sync={sync}"
        )
        if grad:
            _loss(lt, got, lt.tensor(ww)).backward()
            pairs = [(lleaf, leaf)] + ([(lwleaf, wleaf)] if window_grad else [])
            for ours, theirs in pairs:
                tg = theirs.grad.numpy()
                gscale = max(1.0, float(np.abs(tg).max()))
                np.testing.assert_allclose(
                    ours.grad.numpy(), tg, rtol=tol, atol=tol * gscale, err_msg=f"grad {sync}"
                )


def signal(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def hann(n, dtype):
    return torch.hann_window(n, dtype=getattr(torch, np.dtype(dtype).name)).numpy()


def hamming(n, dtype):
    """A window without zeros at its ends: without centring, hann's first sample (0) would
    leave the envelope 0 there, which torch's NOLA check refuses."""
    return torch.hamming_window(n, dtype=getattr(torch, np.dtype(dtype).name)).numpy()


def window(spec, dtype):
    """None, hann of length `spec`, or (maker, length)."""
    if spec is None:
        return None
    maker, n = spec if isinstance(spec, tuple) else (hann, spec)
    return maker(n, dtype)


DTYPES = [np.float32, np.float64]

# name -> (call(lib, x, window), signal shape, window length or None, complex signal)
STFT = {
    "hann_1d": (lambda t, x, w: t.stft(x, 16, 4, window=w, return_complex=True), (64,), 16),
    "hann_batched": (lambda t, x, w: t.stft(x, 16, 5, window=w, return_complex=True), (3, 50), 16),
    "default_hop": (lambda t, x, w: t.stft(x, 12, window=w, return_complex=True), (2, 40), 12),
    "no_center": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, center=False, return_complex=True),
        (2, 61),
        16,
    ),
    "no_center_1d_odd_nfft": (
        lambda t, x, w: t.stft(x, 15, 6, window=w, center=False, return_complex=True),
        (47,),
        15,
    ),
    "pad_constant": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, pad_mode="constant", return_complex=True),
        (2, 40),
        16,
    ),
    "pad_replicate": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, pad_mode="replicate", return_complex=True),
        (40,),
        16,
    ),
    "pad_circular": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, pad_mode="circular", return_complex=True),
        (2, 40),
        16,
    ),
    "normalized": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, normalized=True, return_complex=True),
        (2, 40),
        16,
    ),
    "twosided": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, onesided=False, return_complex=True),
        (2, 40),
        16,
    ),
    "win_length_short": (
        lambda t, x, w: t.stft(x, 16, 4, win_length=10, window=w, return_complex=True),
        (2, 40),
        10,
    ),
    "win_length_short_odd_gap": (
        lambda t, x, w: t.stft(x, 16, 3, win_length=9, window=w, return_complex=True),
        (37,),
        9,
    ),
    "win_length_short_no_window": (
        lambda t, x, w: t.stft(x, 16, 4, win_length=11, return_complex=True),
        (2, 40),
        None,
    ),
    "no_window": (lambda t, x, w: t.stft(x, 8, 2, return_complex=True), (30,), None),
    "long_n_fft_four_step": (
        lambda t, x, w: t.stft(x, 128, 32, window=w, return_complex=True),
        (2, 300),
        128,
    ),
    "return_real_pairs": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, return_complex=False),
        (2, 40),
        16,
    ),
    "method": (lambda t, x, w: x.stft(16, 8, window=w, return_complex=True), (2, 40), 16),
    "then_abs_pow": (
        lambda t, x, w: t.stft(x, 16, 4, window=w, return_complex=True).abs() ** 2,
        (2, 40),
        16,
    ),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(STFT))
def test_stft_values_and_gradients(name, dtype):
    fn, shape, wlen = STFT[name]
    check(fn, signal(shape, dtype), window(wlen, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_stft_window_gradient(dtype):
    fn = lambda t, x, w: t.stft(x, 16, 4, win_length=12, window=w, return_complex=True)  # noqa: E731
    check(fn, signal((2, 40), dtype), signal(12, dtype), window_grad=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_stft_complex_signal_and_window(dtype):
    """A complex signal or window: a two-sided c2c transform, return_complex optional."""
    cd = np.complex64 if dtype == np.float32 else np.complex128
    z = (signal((2, 40), dtype) + 1j * signal((2, 40), dtype)).astype(cd)
    check(lambda t, x, w: t.stft(x, 16, 4, window=w), z, hann(16, dtype))
    check(lambda t, x, w: t.stft(x, 16, 4, window=w, center=False), z, hann(16, dtype))
    cw = (hann(16, dtype) * np.exp(0.3j * np.arange(16))).astype(cd)
    check(lambda t, x, w: t.stft(x, 16, 4, window=w), signal((2, 40), dtype), cw)


def test_stft_mixed_window_dtypes_promote_as_torch():
    x32 = signal((40,), np.float32)
    check(
        lambda t, x, w: t.stft(x, 16, 4, window=w, return_complex=True), x32, hann(16, np.float64)
    )
    check(
        lambda t, x, w: t.stft(x, 16, 4, window=t.ones(16, dtype=t.int64), return_complex=True),
        x32,
    )


# name -> (call(lib, spectrum, window), spectrum shape [B?, freq, frames], window length)
ISTFT = {
    "hann": (lambda t, z, w: t.istft(z, 16, 4, window=w), (9, 11), 16),
    "hann_batched": (lambda t, z, w: t.istft(z, 16, 5, window=w), (2, 9, 8), 16),
    "length_short": (lambda t, z, w: t.istft(z, 16, 4, window=w, length=30), (2, 9, 11), 16),
    "length_long_pads": (lambda t, z, w: t.istft(z, 16, 4, window=w, length=70), (9, 11), 16),
    "no_center": (
        lambda t, z, w: t.istft(z, 16, 4, window=w, center=False),
        (2, 9, 11),
        (hamming, 16),
    ),
    "no_center_length": (
        lambda t, z, w: t.istft(z, 16, 4, window=w, center=False, length=40),
        (9, 11),
        (hamming, 16),
    ),
    "short_window_length": (
        lambda t, z, w: t.istft(z, 16, 4, win_length=10, window=w, length=37),
        (2, 9, 11),
        (hamming, 10),
    ),
    "normalized": (lambda t, z, w: t.istft(z, 16, 4, window=w, normalized=True), (9, 11), 16),
    "twosided": (lambda t, z, w: t.istft(z, 16, 4, window=w, onesided=False), (2, 16, 7), 16),
    "return_complex": (
        lambda t, z, w: t.istft(z, 16, 4, window=w, return_complex=True),
        (2, 16, 7),
        16,
    ),
    "win_length_short": (
        lambda t, z, w: t.istft(z, 16, 4, win_length=12, window=w),
        (2, 9, 11),
        12,
    ),
    "no_window_rect": (lambda t, z, w: t.istft(z, 8, 4), (5, 10), None),
    "odd_n_fft": (lambda t, z, w: t.istft(z, 15, 5, window=w), (8, 9), 15),
    "method": (lambda t, z, w: z.istft(16, 4, window=w), (2, 9, 6), 16),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(ISTFT))
def test_istft_values_and_gradients(name, dtype):
    fn, shape, wlen = ISTFT[name]
    cd = np.complex64 if dtype == np.float32 else np.complex128
    z = (signal(shape, dtype) + 1j * signal(shape, dtype)).astype(cd)
    check(fn, z, window(wlen, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("center", [True, False])
def test_stft_istft_round_trip_with_gradient(dtype, center):
    """istft(stft(x)) is x (torch's and ours), and the gradient flows through both."""

    def fn(t, x, w):
        s = t.stft(x, 16, 4, window=w, center=center, return_complex=True)
        return t.istft(s, 16, 4, window=w, center=center, length=x.shape[-1])

    x = signal((2, 48), dtype)
    w = hann(16, dtype) if center else hamming(16, dtype)
    check(fn, x, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(lt, lt.tensor(x), lt.tensor(w)).numpy()
    np.testing.assert_allclose(y, x, atol=1e-4 if dtype == np.float32 else 1e-10)


def test_istft_of_complex128_with_float32_window_is_float64():
    z = (signal((9, 5), np.float64) + 1j * signal((9, 5), np.float64)).astype(np.complex128)
    check(lambda t, z, w: t.istft(z, 16, 4, window=w), z, hann(16, np.float32))


def test_warnings_as_torch():
    x = lt.randn(40)
    with pytest.warns(UserWarning, match="window was not provided"):
        lt.stft(x, 16, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        lt.stft(x, 16, window=lt.hann_window(16), return_complex=False)
    s = lt.stft(x, 16, 4, window=lt.hann_window(16), return_complex=True)
    with pytest.warns(UserWarning, match="padded with zeros"):
        lt.istft(s, 16, 4, window=lt.hann_window(16), length=60)


def _c(t, shape):
    return t.complex(t.ones(shape), t.zeros(shape))


ERRORS = {
    "no_return_complex": lambda t: t.stft(t.ones(32), 16, window=t.ones(16)),
    "int_signal": lambda t: t.stft(t.arange(32), 16, window=t.ones(16), return_complex=True),
    "3d_signal": lambda t: t.stft(t.ones(2, 2, 32), 16, window=t.ones(16), return_complex=True),
    "0d_signal": lambda t: t.stft(t.tensor(1.0), 16, window=t.ones(16), return_complex=True),
    "n_fft_too_big": lambda t: t.stft(
        t.ones(32), 64, window=t.ones(64), center=False, return_complex=True
    ),
    "n_fft_zero": lambda t: t.stft(
        t.ones(32), 0, window=t.ones(0), center=False, return_complex=True
    ),
    "hop_zero": lambda t: t.stft(t.ones(32), 16, 0, window=t.ones(16), return_complex=True),
    "win_length_gt_n_fft": lambda t: t.stft(
        t.ones(32), 16, win_length=20, window=t.ones(20), return_complex=True
    ),
    "window_wrong_length": lambda t: t.stft(t.ones(32), 16, window=t.ones(8), return_complex=True),
    "window_2d": lambda t: t.stft(t.ones(32), 16, window=t.ones(16, 1), return_complex=True),
    "onesided_complex_signal": lambda t: t.stft(
        _c(t, 32), 16, window=t.ones(16), onesided=True, return_complex=True
    ),
    "reflect_too_short": lambda t: t.stft(t.ones(6), 16, window=t.ones(16), return_complex=True),
    "circular_too_short": lambda t: t.stft(
        t.ones(6), 16, window=t.ones(16), pad_mode="circular", return_complex=True
    ),
    "bad_pad_mode": lambda t: t.stft(
        t.ones(32), 16, window=t.ones(16), pad_mode="foo", return_complex=True
    ),
    "align_to_window_with_center": lambda t: t.stft(
        t.ones(32), 16, window=t.ones(16), align_to_window=False, return_complex=True
    ),
    "half_signal": lambda t: t.stft(
        t.ones(32, dtype=t.float16), 16, window=t.ones(16, dtype=t.float16), return_complex=True
    ),
    "istft_real_input": lambda t: t.istft(t.ones(9, 5), 16, window=t.ones(16)),
    "istft_1d_input": lambda t: t.istft(_c(t, 9), 16, window=t.ones(16)),
    "istft_4d_input": lambda t: t.istft(_c(t, (1, 1, 9, 5)), 16, window=t.ones(16)),
    "istft_empty": lambda t: t.istft(_c(t, (9, 0)), 16, window=t.ones(16)),
    "istft_freq_onesided": lambda t: t.istft(_c(t, (8, 5)), 16, window=t.ones(16)),
    "istft_freq_twosided": lambda t: t.istft(_c(t, (9, 5)), 16, window=t.ones(16), onesided=False),
    "istft_hop_gt_win": lambda t: t.istft(_c(t, (9, 5)), 16, 20, window=t.ones(16)),
    "istft_win_gt_n_fft": lambda t: t.istft(_c(t, (9, 5)), 16, win_length=20, window=t.ones(20)),
    "istft_window_wrong_length": lambda t: t.istft(_c(t, (9, 5)), 16, window=t.ones(8)),
    "istft_nola": lambda t: t.istft(_c(t, (9, 5)), 16, 16, window=t.hann_window(16), center=False),
    "istft_nola_short_window": lambda t: t.istft(
        _c(t, (9, 5)), 16, 8, win_length=8, window=t.ones(8), center=False
    ),
    "istft_return_complex_onesided": lambda t: t.istft(
        _c(t, (9, 5)), 16, window=t.ones(16), return_complex=True
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusals_are_torchs(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            ERRORS[name](torch)
        with pytest.raises(type(theirs.value)) as ours:
            out = ERRORS[name](lt)
            lt.materialize(*[o for o in [out] if isinstance(o, lt.Tensor)])
    if type(theirs.value) is RuntimeError and "stft" in name:
        assert "stft" in str(ours.value) or "pad" in str(ours.value), ours.value


def test_istft_nola_check_is_a_counted_implicit_materialization():
    s = lt.complex(lt.ones(9, 5), lt.zeros(9, 5))
    with lt.strict_mode(), pytest.raises(lt.ImplicitMaterializationError, match="istft"):
        lt.istft(s * 2, 16, 4, window=lt.hann_window(16))
