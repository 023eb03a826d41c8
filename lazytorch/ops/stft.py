"""``torch.stft`` and ``torch.istft``: short-time Fourier transforms on `lazytorch.ops.fft`.

Both follow torch 2.13 step by step (torch/functional.py and ATen's SpectralOps.cpp), so
their values, dtypes, defaults and refusals are torch's:

* ``stft``: with ``center``, the signal is padded by ``n_fft // 2`` on both sides
  (`pad_mode`, as ``F.pad`` of the signal viewed as 3-D); frames of ``n_fft`` samples
  ``hop_length`` apart (``unfold``, a view) are multiplied by the window (a window shorter
  than ``n_fft`` is centred in zeros) and transformed along the frame (``rfft`` when
  one-sided, else ``fft``; ``normalized`` is the "ortho" norm); the result is
  ``[batch?, freq, frames]``.
* ``istft``: the inverse transform of each frame (``irfft`` or ``ifft``, "backward" norm,
  or "ortho" when ``normalized``), times the window, overlap-added, divided by the
  overlap-added squared window (the envelope); torch's NOLA check refuses an envelope
  below 1e-11 inside the kept range, which reads one value on the host (an implicit
  materialization, counted as such).

Everything is recorded as ordinary ops (pads, views, matmuls, sums), so gradients flow to
the signal and the window as in torch.

>>> import lazytorch as torch
>>> x = torch.arange(8.0)
>>> s = torch.stft(x, 4, 2, window=torch.hann_window(4), return_complex=True)
>>> s.shape
lazytorch.Size([3, 5])
>>> torch.istft(s, 4, 2, window=torch.hann_window(4), length=8)
tensor([0., 1., 2., 3., 4., 5., 6., 7.])
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import fft as F
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.complex import ComplexTensor, view_as_real
from lazytorch.ops.pad import pad as _pad
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Tensor

__all__ = ["istft", "stft"]

_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
)


def _is_complex(x: Any) -> bool:
    return type(x) is ComplexTensor


def _centre_pad(x: Any, n_fft: int, pad_mode: str) -> Any:
    """torch.stft's ``center``: the signal viewed as 3-D, padded by n_fft // 2 on each side
    of its last dim with `pad_mode` (a complex signal part by part), viewed back."""
    ndim = x.dim()
    extended = [1] * (3 - ndim) + list(x.shape)
    p = n_fft // 2

    def padded(part: Tensor) -> Tensor:
        y = _pad(part.reshape(extended), [p, p], pad_mode)
        return y.reshape(tuple(y.shape)[len(y.shape) - ndim :])

    if _is_complex(x):
        return ComplexTensor(S.stack([padded(x.real), padded(x.imag)], -1))
    return padded(x)


def _window(window: Any, win_length: int, n_fft: int, like: Any, op: str, wrong_shape: str) -> Any:
    """The window as n_fft values: `window` (or ones of `like`'s real dtype) centred in zeros
    when win_length < n_fft; None when there is no window and nothing to pad."""
    if window is not None:
        if _is_complex(window):
            ok = window.dim() == 1 and window.shape[0] == win_length
        else:
            window = tensor_arg(window, op, "window")
            ok = window.ndim == 1 and window.shape[0] == win_length
        if not ok:
            raise op_error(RuntimeError, op, wrong_shape.format(list(window.shape)))
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:
        real = like.real if _is_complex(like) else like
        window = C.ones(win_length, dtype=real.dtype, device=real.device)

    def centred(w: Tensor) -> Tensor:
        return _pad(w, [left, n_fft - win_length - left])

    if _is_complex(window):
        return ComplexTensor(S.stack([centred(window.real), centred(window.imag)], -1))
    return centred(window)


def _frames(x: Any, n_fft: int, hop: int) -> Any:
    """[batch, n_frames, n_fft]: the frames of [batch, length] `x` (a view, as torch's)."""
    if _is_complex(x):
        return ComplexTensor(x._ri.unfold(1, n_fft, hop).transpose(-1, -2))
    return x.unfold(1, n_fft, hop)


def _times(a: Any, b: Any) -> Any:
    """a * b with either a complex tensor (its operator takes the real operand)."""
    return b * a if _is_complex(b) and not _is_complex(a) else a * b


@public(method=True)
def stft(
    input: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Any:
    """The short-time Fourier transform of a 1-D signal or a batch of them ([B, L]): a
    complex ``[B?, n_fft // 2 + 1 (or n_fft), n_frames]`` tensor, as torch.stft.

    >>> import lazytorch as torch
    >>> x = torch.ones(8)
    >>> torch.stft(x, 4, 4, window=torch.ones(4), center=False, return_complex=True).real[0]
    tensor([4., 4.])
    """
    op = "stft"
    if not _is_complex(input):
        tensor_arg(input, op)
    if center and align_to_window is not None:
        raise op_error(
            RuntimeError, op, "stft align_to_window should only be set when center = false"
        )
    if align_to_window:
        raise op_error(
            NotImplementedError, op, "align_to_window=True is not supported by lazytorch"
        )
    if not isinstance(n_fft, int) or isinstance(n_fft, bool):
        raise op_error(TypeError, op, f"n_fft must be an int, not {type(n_fft).__name__}")
    x = _centre_pad(input, n_fft, pad_mode) if center else input
    # -- ATen's stft from here
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_in = _is_complex(x) or _is_complex(window)
    if return_complex is None:
        if not complex_in:
            raise op_error(
                RuntimeError,
                op,
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.",
            )
        return_complex = True
    elif not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
    if not _is_complex(x) and not x.dtype.is_floating_point:
        raise op_error(RuntimeError, op, "expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        raise op_error(RuntimeError, op, "expected a 1D or 2D tensor")
    one_d = x.dim() == 1
    if one_d:
        x = x.unsqueeze(0)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise op_error(RuntimeError, op, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise op_error(RuntimeError, op, f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise op_error(
            RuntimeError, op, f"expected 0 < win_length <= n_fft, but got win_length={win}"
        )
    w = _window(
        window,
        win,
        n_fft,
        x,
        op,
        f"expected a 1D window tensor of size equal to win_length={win}, but got window "
        "with size {}",
    )
    frames = _frames(x, n_fft, hop)
    if w is not None:
        frames = _times(frames, w)
    complex_fft = _is_complex(frames)
    if onesided is None:
        onesided = not complex_fft
    if complex_fft and onesided:
        raise op_error(
            RuntimeError, op, "Cannot have onesided output if window or input is complex"
        )
    norm = "ortho" if normalized else "backward"
    if not complex_fft and onesided:
        out = F.rfft(frames, dim=-1, norm=norm)
    else:
        out = F.fft(frames, dim=-1, norm=norm)
    out = out.transpose(1, 2)
    if one_d:
        out = out.squeeze(0)
    return out if return_complex else view_as_real(out)


def _overlap_add(frames: Tensor, hop: int, length: int) -> Tensor:
    """ATen's unfold_backward: [B, n_frames, n_fft] frames summed into [B, length] at
    offsets 0, hop, 2*hop... Each frame is cut into r = ceil(n_fft / hop) blocks of hop
    samples; block k of frame f lands in output block f + k, so the sum is r shifted
    [B, n_frames, hop] slabs: O(n_frames * n_fft) work, no scatter."""
    b, n_frames, n_fft = frames.shape
    r = -(-n_fft // hop)
    blocks = _pad(frames, [0, r * hop - n_fft]).reshape(b, n_frames, r, hop)
    total: Tensor | None = None
    for k in reversed(range(r)):  # frames in ascending order, as ATen sums them
        slab = _pad(S.select(blocks, 2, k), [0, 0, k, r - 1 - k])  # [B, n_frames + r - 1, hop]
        total = slab if total is None else E.add(total, slab)
    assert total is not None
    return S.narrow(total.reshape(b, (n_frames + r - 1) * hop), 1, 0, length)


@public(method=True)
def istft(
    input: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Any:
    """The inverse of `stft` (least-squares overlap-add, as torch.istft): a complex
    ``[B?, freq, frames]`` spectrum back to a ``[B?, length]`` signal.

    >>> import lazytorch as torch
    >>> w = torch.hann_window(4)
    >>> x = torch.tensor([1.0, -2.0, 3.0, 0.5, 2.0, -1.0])
    >>> torch.istft(torch.stft(x, 4, window=w, return_complex=True), 4, window=w, length=6)
    tensor([ 1.0000, -2.0000,  3.0000,  0.5000,  2.0000, -1.0000])
    """
    op = "istft"
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not _is_complex(input):
        tensor_arg(input, op)
        raise op_error(
            RuntimeError,
            op,
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True.",
        )
    if input.dim() < 2:  # torch reads size(-3) of the real view first
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{input.dim() + 1}, "
            f"{input.dim()}], but got -3)"
        )
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop * (n_frames - 1)
    if input.numel() == 0:
        raise op_error(RuntimeError, op, "input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise op_error(
            RuntimeError,
            op,
            f"expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}",
        )
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided and n_fft // 2 + 1 != fft_size:
        raise op_error(
            RuntimeError,
            op,
            "expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft / 2 + 1 when onesided=True, but got {fft_size}",
        )
    if not onesided and n_fft != fft_size:
        raise op_error(
            RuntimeError,
            op,
            "expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft when onesided=False, but got {fft_size}",
        )
    if not 0 < hop <= win:
        raise op_error(RuntimeError, op, "istft expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise op_error(RuntimeError, op, "istft expected 0 < win_length <= n_fft")
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
        window = C.ones(win, dtype=input.dtype.real, device=input.device)
    w = _window(
        window,
        win,
        n_fft,
        input,
        op,
        "Invalid window shape. window has to be 1D and length of `win_length`",
    )
    z = input if input.dim() == 3 else input.unsqueeze(0)
    z = z.transpose(1, 2)  # [B, n_frames, freq]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise op_error(
                RuntimeError, op, "Cannot have onesided output if window or input is complex"
            )
        frames = F.ifft(z, dim=-1, norm=norm)
    else:
        if _is_complex(w):
            raise op_error(
                RuntimeError, op, "Complex windows are incompatible with return_complex=False"
            )
        if not onesided:
            z = z.narrow(-1, 0, n_fft // 2 + 1)
        frames = F.irfft(z, n=n_fft, dim=-1, norm=norm)
    frames = _times(frames, w)
    w_sq = w * w if _is_complex(w) else E.mul(w, w)  # torch: window.pow(2), w*w if complex
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected_len - n_fft // 2 if center else expected_len
    stop = min(end, expected_len)
    if _is_complex(frames):
        ri = view_as_real(frames)
        y = ComplexTensor(
            S.stack(
                [_overlap_add(ri[..., p], hop, expected_len) for p in (0, 1)],
                -1,
            )
        )
        y = ComplexTensor(S.narrow(view_as_real(y), 1, start, max(stop - start, 0)))
    else:
        y = S.narrow(_overlap_add(frames, hop, expected_len), 1, start, max(stop - start, 0))
    env = _envelope(w_sq, n_frames, hop, expected_len)
    env = S.narrow(env, 1, start, max(stop - start, 0))
    _nola_check(env, op)
    y = y / env
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being "
            "padded with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        extra = end - expected_len
        if _is_complex(y):
            y = ComplexTensor(_pad(view_as_real(y), [0, 0, 0, extra]))
        else:
            y = _pad(y, [0, extra])
    return y


def _envelope(w_sq: Any, n_frames: int, hop: int, length: int) -> Any:
    """The overlap-added squared window, [1, length] (complex if the window is)."""
    if _is_complex(w_sq):
        parts = [_envelope(p, n_frames, hop, length) for p in (w_sq.real, w_sq.imag)]
        return ComplexTensor(S.stack(parts, -1))
    n_fft = w_sq.shape[0]
    return _overlap_add(w_sq.reshape(1, 1, n_fft).expand(1, n_frames, n_fft), hop, length)


def _nola_check(env: Any, op: str) -> None:
    """torch's check that the envelope never (nearly) vanishes where the signal is kept."""
    low = E.lt(R.amin(env.abs()), 1e-11)
    implicit_point(low, f"{op}() (its window-envelope check)")
    if bool(low.item()):
        raise op_error(RuntimeError, op, "window overlap add min: 1")


# Tensor.stft/istft are declared above; a complex tensor's methods are these same functions
# (lazytorch.ops.complex sits below this module, so it cannot name them itself).
ComplexTensor.stft = stft  # type: ignore[attr-defined]
ComplexTensor.istft = istft  # type: ignore[attr-defined]
