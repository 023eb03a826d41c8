"""``torch.fft``: discrete Fourier transforms recorded as real ops.

A complex tensor is a pair of real parts (`lazytorch.ops.complex`), so a DFT is real linear
algebra: along one dim of length ``n <= 64`` (or a prime ``n``) it is one matmul of the
interleaved (re, im) values with a ``2n x 2n`` cos/sin matrix computed in float64 on the
host and cast to the working dtype. A longer dim is split Cooley-Tukey style (``n = n1*n2``,
``n1`` the largest divisor up to ``sqrt(n)``): DFTs of size n1, a twiddle product, DFTs of
size n2 and a transpose ("four-step"), recursively, so the work is ``O(n (n1 + n2))`` per
row and the constants are small. Nothing here is a new primitive: the transforms fuse
and differentiate like any other real ops (checked against torch on the CPU; the cuda
device runs the same matmuls, so its accuracy is its float32 matmul's: TF32, when allowed,
would cost about three digits), and their gradients are torch's (the adjoint of the
real-linear map, which is what torch's formulas compute).

Accuracy, measured against torch's pocketfft on standard-normal data (4 rows): ``fft`` at
n=4096 (64 x 64 four-step) is within 4.0e-7 of the largest output magnitude in float32
(9.2e-5 absolute, outputs up to about 230) and 8.0e-16 in float64; at the prime n=4093 (one
8186 x 8186 matmul, O(n^2)) 4.6e-7 and 1.1e-15; an ``rfft``/``irfft`` round trip at 4096
5.2e-7 in float32. tests/ops/test_fft.py asserts 1e-5 (float32) and 1e-12 (float64). A
prime n costs 4 n^2 matrix values (268 MB in float32 at n=4093): no Bluestein step yet.

What torch's ``c2r`` transforms ignore, ours ignore too: the imaginary parts of the zero
frequency and (even n) of the Nyquist frequency of ``irfft``'s input.

>>> import lazytorch as torch
>>> torch.fft.rfft(torch.tensor([1.0, 2.0, 3.0, 4.0])).real
tensor([10., -2., -2.])
"""

from __future__ import annotations

import functools
import math
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import linalg as L
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.complex import ComplexTensor
from lazytorch.ops.pad import pad as _pad
from lazytorch.tensor import Tensor

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
    "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft",
    "rfft2", "rfftfreq", "rfftn",
]  # fmt: skip

_BASE = 64  # a dim up to this long is one matmul (its matrix: 2n x 2n values)


# -- host constants (float64, cast once per use to the working dtype) ---------------------------
def _cos_sin(r: Any, n: int) -> tuple[Any, Any]:
    """cos and sin of 2*pi*r/n for integer arrays r in [0, n): exact 0 and +-1 at quarters,
    so the parts torch's c2r ignores get exactly zero weight."""
    import numpy as np

    theta = 2.0 * np.pi * r / n
    c, s = np.cos(theta), np.sin(theta)
    quarter = (4 * r) % n == 0
    q = (4 * r // n) % 4
    c = np.where(quarter, np.array([1.0, 0.0, -1.0, 0.0])[q], c)
    s = np.where(quarter, np.array([0.0, 1.0, 0.0, -1.0])[q], s)
    return c, s


def _dft_matrix(n: int, sign: int, real: bool) -> Any:
    """`_matrix`, kept for the small sizes only (a prime n's matrix has 4 n^2 values)."""
    return _small_matrix(n, sign, real) if n <= _BASE else _matrix(n, sign, real)


@functools.lru_cache(maxsize=64)
def _small_matrix(n: int, sign: int, real: bool) -> Any:
    return _matrix(n, sign, real)


def _matrix(n: int, sign: int, real: bool) -> Any:
    """The matrix W with ``x @ W`` = the DFT (exp(sign 2 pi i jk/n)) of x's rows, x being
    real [..., n] (`real`) or interleaved pairs [..., 2n]; the result interleaved [..., 2n]."""
    import numpy as np

    j = np.arange(n)
    c, s = _cos_sin(np.outer(j, j) % n, n)
    s = sign * s
    if real:
        return np.stack([c, s], -1).reshape(n, 2 * n)
    w = np.empty((n, 2, n, 2))
    w[:, 0, :, 0], w[:, 0, :, 1] = c, s  # (a + ib)(c + i s): re = a c - b s, im = a s + b c
    w[:, 1, :, 0], w[:, 1, :, 1] = -s, c
    return w.reshape(2 * n, 2 * n)


@functools.lru_cache(maxsize=64)
def _twiddles(n1: int, n2: int, sign: int) -> Any:
    """exp(sign 2 pi i j2 k1 / (n1 n2)) as pairs [n2, n1, 2]."""
    import numpy as np

    n = n1 * n2
    c, s = _cos_sin(np.outer(np.arange(n2), np.arange(n1)) % n, n)
    return np.stack([c, sign * s], -1)


def _c2r_matrix(n: int) -> Any:
    """[2m, n] with ``pairs @ W`` the real inverse DFT (unscaled) of the m = n//2+1 lowest
    frequencies of a Hermitian spectrum, ignoring the imaginary parts of frequency 0 and
    (even n) n/2, as pocketfft's c2r does."""
    import numpy as np

    m = n // 2 + 1
    c, s = _cos_sin(np.outer(np.arange(m), np.arange(n)) % n, n)
    weight = np.full((m, 1), 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    w = np.stack([weight * c, -weight * s], 1)  # Re((a + ib)(c + i s)) = a c - b s
    w[0, 1] = 0.0
    if n % 2 == 0:
        w[-1, 1] = 0.0
    return w.reshape(2 * m, n)


def _const(a: Any, like: Tensor) -> Tensor:
    return C.tensor(a, dtype=like.dtype, device=like.device)


def _split(n: int) -> int:
    """The factor n1 of the four-step split of n (1: no split, one matmul)."""
    if n <= _BASE:
        return 1
    for n1 in range(math.isqrt(n), 1, -1):
        if n % n1 == 0:
            return n1
    return 1  # a prime: O(n^2) as one matmul


# -- the transforms along the last dim ------------------------------------------------------------
def _dft(x: Tensor, n: int, sign: int, real: bool) -> Tensor:
    """Unscaled DFT along the last (complex) dim: `x` real [..., n] (`real`) or pairs
    [..., n, 2]; the result pairs [..., n, 2]."""
    lead = tuple(x.shape[:-1] if real else x.shape[:-2])
    n1 = _split(n)
    if n1 == 1:
        flat = x if real else x.reshape(*lead, 2 * n)
        return L.matmul(flat, _const(_dft_matrix(n, sign, real), x)).reshape(*lead, n, 2)
    n2 = n // n1
    # input index j = j1*n2 + j2, output index k = k1 + n1*k2
    if real:
        z = x.reshape(*lead, n1, n2).transpose(-1, -2)  # [..., j2, j1]
    else:
        z = x.reshape(*lead, n1, n2, 2).transpose(-3, -2)  # [..., j2, j1, 2]
    y = _mul_pairs(_dft(z, n1, sign, real), _const(_twiddles(n1, n2, sign), x))  # [.., j2, k1]
    y = _dft(y.transpose(-3, -2), n2, sign, False)  # [..., k1, k2, 2]
    return y.transpose(-3, -2).reshape(*lead, n, 2)


def _mul_pairs(a: Tensor, b: Tensor) -> Tensor:
    ar, ai = S.select(a, -1, 0), S.select(a, -1, 1)
    br, bi = S.select(b, -1, 0), S.select(b, -1, 1)
    return S.stack([E.sub(E.mul(ar, br), E.mul(ai, bi)), E.add(E.mul(ar, bi), E.mul(ai, br))], -1)


def _c2r(x: Tensor, n: int) -> Tensor:
    """Unscaled real inverse DFT of n points from pairs [..., m, 2] (m = n//2+1)."""
    m = n // 2 + 1
    lead = tuple(x.shape[:-2])
    if _split(n) == 1:
        return L.matmul(x.reshape(*lead, 2 * m), _const(_c2r_matrix(n), x))
    # the whole Hermitian spectrum (imaginary parts of 0 and n/2 ignored), then a c2c DFT
    keep = [1.0] + [1.0] * (m - 2) + ([0.0] if n % 2 == 0 else [1.0])
    import numpy as np

    mask = np.stack([np.ones(m), np.array(keep[:m])], -1)
    mask[0, 1] = 0.0
    x = E.mul(x, _const(mask, x))
    tail = S.flip(S.narrow(x, -2, 1, n - m), [-2])
    tail = E.mul(tail, _const(np.array([1.0, -1.0]), x))  # conjugate
    full = S.cat([x, tail], -2)
    return S.select(_dft(full, n, 1, False), -1, 0)


# -- arguments -----------------------------------------------------------------------------------
def _scale(norm: str | None, n: int, inverse: bool, op: str) -> float | None:
    if norm is None or norm == "backward":
        return 1.0 / n if inverse else None
    if norm == "forward":
        return None if inverse else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    raise op_error(RuntimeError, op, f'Invalid normalization mode: "{norm}"')


def _apply_scale(x: Tensor, scale: float | None) -> Tensor:
    return x if scale is None or scale == 1.0 else E.mul(x, scale)


def _input(input: Any, op: str, real_only: bool = False) -> tuple[Tensor, bool]:
    """(the real tensor to compute on, whether the input is real): a complex input's pairs;
    an integer or bool input as the default float dtype, as torch promotes it."""
    if type(input) is ComplexTensor:
        if real_only:
            raise op_error(
                RuntimeError,
                op,
                f"{op} expects a real input tensor, but got {input.dtype.legacy_name}",
            )
        return input._ri, False
    x = tensor_arg(input, op)
    if x.dtype in (dt.float16, dt.bfloat16):
        raise op_error(RuntimeError, op, f"Unsupported dtype {x.dtype.legacy_name}")
    if not x.dtype.is_floating_point:
        x = x.to(_config.get_default_dtype())
    return x, True


def _no_out(out: Any, op: str) -> None:
    if out is not None:
        raise op_error(NotImplementedError, op, "out= is not supported by lazytorch.fft")


def _dim(d: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})"
        )
    return d % ndim


def _check_n(n: int, op: str) -> int:
    if n < 1:
        raise op_error(RuntimeError, op, f"Invalid number of data points ({n}) specified")
    return n


def _dims_and_sizes(
    shape: tuple[int, ...], s: Any, dim: Any, op: str, last_default: Any = None
) -> tuple[list[int], list[int]]:
    """torch's rules for (s, dim) of the n-dim transforms: the dims (non-negative, unique)
    and the signal size along each (-1: the input's; `last_default` for the last dim)."""
    ndim = len(shape)
    if isinstance(dim, int):
        dim = [dim]
    if s is not None and isinstance(s, int):
        s = [s]
    if dim is not None:
        dims = [_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise op_error(RuntimeError, op, "FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise op_error(
                RuntimeError, op, "When given, dim and shape arguments must have the same length"
            )
    elif s is not None:
        if len(s) > ndim:
            raise op_error(
                RuntimeError,
                op,
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.",
            )
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes = [shape[d] for d in dims] if s is None else [int(v) for v in s]
    for i, v in enumerate(sizes):
        if v == -1:
            sizes[i] = shape[dims[i]]
    if last_default is not None and dims and (s is None or int(s[-1]) == -1):
        sizes[-1] = last_default(shape[dims[-1]])
    for v in sizes:
        _check_n(v, op)
    return dims, sizes


def _at_least_one(dims: list[int], op: str) -> None:
    if not dims:  # the real-to-complex and complex-to-real transforms need their last dim
        raise op_error(RuntimeError, op, f"{op} must transform at least one axis")


def _resize(x: Tensor, axis: int, n: int) -> Tensor:
    """`x` trimmed or zero-padded at the end of `axis` to n."""
    have = x.shape[axis]
    if have == n:
        return x
    if have > n:
        return S.narrow(x, axis, 0, n)
    return _pad(x, [0, 0] * (x.ndim - 1 - axis) + [0, n - have])


# -- the transforms, any dims ----------------------------------------------------------------------
def _c2c_along(x: Tensor, real: bool, axis: int, n: int, sign: int) -> Tensor:
    """A complex DFT of n points along complex dim `axis` of `x` (real or pairs): pairs."""
    x = _resize(x, axis, n)
    if real:
        return S.movedim(_dft(S.movedim(x, axis, -1), n, sign, True), -2, axis)
    return S.movedim(_dft(S.movedim(x, axis, -2), n, sign, False), -2, axis)


def _c2c(input: Any, s: Any, dim: Any, norm: str | None, inverse: bool, op: str) -> ComplexTensor:
    x, real = _input(input, op)
    dims, sizes = _dims_and_sizes(tuple(input.shape), s, dim, op)
    _scale(norm, 1, inverse, op)  # an invalid norm fails before any work
    sign = 1 if inverse else -1
    for d, n in zip(dims, sizes, strict=True):
        x = _c2c_along(x, real, d, n, sign)
        real = False
    if real:  # no dims: the input as a complex tensor
        x = S.stack([x, E.mul(x, 0.0)], -1)
    return ComplexTensor(_apply_scale(x, _scale(norm, math.prod(sizes), inverse, op)))


def _r2c(input: Any, s: Any, dim: Any, norm: str | None, inverse: bool, op: str) -> Any:
    x, _ = _input(input, op, real_only=True)
    dims, sizes = _dims_and_sizes(tuple(x.shape), s, dim, op)
    _at_least_one(dims, op)
    _scale(norm, 1, inverse, op)
    sign = 1 if inverse else -1
    last, n = dims[-1], sizes[-1]
    x = S.narrow(_c2c_along(x, True, last, n, sign), last, 0, n // 2 + 1)
    for d, k in zip(dims[:-1], sizes[:-1], strict=True):
        x = _c2c_along(x, False, d, k, sign)
    return ComplexTensor(_apply_scale(x, _scale(norm, math.prod(sizes), inverse, op)))


def _to_r(input: Any, s: Any, dim: Any, norm: str | None, inverse: bool, op: str) -> Tensor:
    x, real = _input(input, op)
    dims, sizes = _dims_and_sizes(tuple(input.shape), s, dim, op, lambda m: 2 * (m - 1))
    _at_least_one(dims, op)
    _scale(norm, 1, inverse, op)
    sign = 1 if inverse else -1
    if real:
        x, real = S.stack([x, E.mul(x, 0.0)], -1), False
    for d, k in zip(dims[:-1], sizes[:-1], strict=True):
        x = _c2c_along(x, False, d, k, sign)
    last, n = dims[-1], sizes[-1]
    x = _resize(x, last, n // 2 + 1)
    if sign < 0:  # hfft: a forward transform of the conjugate-symmetric signal
        x = E.mul(x, _const(_conj_factor(), x))
    y = S.movedim(_c2r(S.movedim(x, last, -2), n), -1, last)
    return _apply_scale(y, _scale(norm, math.prod(sizes), inverse, op))


def _conj_factor() -> Any:
    import numpy as np

    return np.array([1.0, -1.0])


def _conj(z: ComplexTensor) -> ComplexTensor:
    return ComplexTensor(E.mul(z._ri, _const(_conj_factor(), z._ri)))


# -- the public functions ------------------------------------------------------------------------
def fft(
    input: Any, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 1-D discrete Fourier transform along `dim` (zero-padded or trimmed to `n`).

    >>> import lazytorch as torch
    >>> torch.fft.fft(torch.tensor([1.0, 0.0, 0.0, 0.0])).real
    tensor([1., 1., 1., 1.])
    """
    _no_out(out, "fft")
    return _c2c(input, None if n is None else [n], [dim], norm, False, "fft")


def ifft(
    input: Any, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 1-D inverse discrete Fourier transform along `dim`.

    >>> import lazytorch as torch
    >>> torch.fft.ifft(torch.tensor([4.0, 0.0, 0.0, 0.0])).real
    tensor([1., 1., 1., 1.])
    """
    _no_out(out, "ifft")
    return _c2c(input, None if n is None else [n], [dim], norm, True, "ifft")


def rfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The DFT of a real signal: its ``n//2 + 1`` non-negative frequencies.

    >>> import lazytorch as torch
    >>> torch.fft.rfft(torch.ones(4)).shape
    lazytorch.Size([3])
    """
    _no_out(out, "rfft")
    return _r2c(input, None if n is None else [n], [dim], norm, False, "rfft")


def irfft(
    input: Any, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The inverse of `rfft`: a real signal of `n` points (default ``2*(m-1)``) from the
    ``m`` non-negative frequencies of a Hermitian spectrum.

    >>> import lazytorch as torch
    >>> torch.fft.irfft(torch.fft.rfft(torch.tensor([1.0, 2.0, 3.0, 4.0])))
    tensor([1., 2., 3., 4.])
    """
    _no_out(out, "irfft")
    return _to_r(input, None if n is None else [n], [dim], norm, True, "irfft")


def hfft(
    input: Any, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: real, `n` points.

    >>> import lazytorch as torch
    >>> torch.fft.hfft(torch.tensor([1.0, 0.0, 0.0]))
    tensor([1., 1., 1., 1.])
    """
    _no_out(out, "hfft")
    return _to_r(input, None if n is None else [n], [dim], norm, False, "hfft")


def ihfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The inverse of `hfft`: the ``n//2 + 1`` first values of a real signal's inverse DFT.

    >>> import lazytorch as torch
    >>> torch.fft.ihfft(torch.ones(4)).real
    tensor([1., 0., 0.])
    """
    _no_out(out, "ihfft")
    return _r2c(input, None if n is None else [n], [dim], norm, True, "ihfft")


def fft2(
    input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 2-D DFT over `dim` (`s`: the signal sizes).

    >>> import lazytorch as torch
    >>> torch.fft.fft2(torch.ones(2, 2)).real
    tensor([[4., 0.],
            [0., 0.]])
    """
    _no_out(out, "fft2")
    return _c2c(input, s, dim, norm, False, "fft2")


def ifft2(
    input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 2-D inverse DFT over `dim`.

    >>> import lazytorch as torch
    >>> torch.fft.ifft2(torch.ones(2, 2)).real
    tensor([[1., 0.],
            [0., 0.]])
    """
    _no_out(out, "ifft2")
    return _c2c(input, s, dim, norm, True, "ifft2")


def fftn(
    input: Any, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The N-D DFT over `dim` (default: the last ``len(s)`` dims, or all).

    >>> import lazytorch as torch
    >>> torch.fft.fftn(torch.ones(2, 2, 2)).real.sum()
    tensor(8.)
    """
    _no_out(out, "fftn")
    return _c2c(input, s, dim, norm, False, "fftn")


def ifftn(
    input: Any, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The N-D inverse DFT over `dim`.

    >>> import lazytorch as torch
    >>> torch.fft.ifftn(torch.ones(2, 2)).real
    tensor([[1., 0.],
            [0., 0.]])
    """
    _no_out(out, "ifftn")
    return _c2c(input, s, dim, norm, True, "ifftn")


def rfft2(
    input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 2-D DFT of a real signal; the last dim keeps ``n//2 + 1`` frequencies.

    >>> import lazytorch as torch
    >>> torch.fft.rfft2(torch.ones(4, 4)).shape
    lazytorch.Size([4, 3])
    """
    _no_out(out, "rfft2")
    return _r2c(input, s, dim, norm, False, "rfft2")


def irfft2(
    input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The inverse of `rfft2`.

    >>> import lazytorch as torch
    >>> torch.fft.irfft2(torch.fft.rfft2(torch.ones(4, 4))).shape
    lazytorch.Size([4, 4])
    """
    _no_out(out, "irfft2")
    return _to_r(input, s, dim, norm, True, "irfft2")


def rfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The N-D DFT of a real signal; the last dim keeps ``n//2 + 1`` frequencies.

    >>> import lazytorch as torch
    >>> torch.fft.rfftn(torch.ones(2, 4, 4)).shape
    lazytorch.Size([2, 4, 3])
    """
    _no_out(out, "rfftn")
    return _r2c(input, s, dim, norm, False, "rfftn")


def irfftn(
    input: Any, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The inverse of `rfftn`.

    >>> import lazytorch as torch
    >>> torch.fft.irfftn(torch.fft.rfftn(torch.ones(2, 4, 4))).shape
    lazytorch.Size([2, 4, 4])
    """
    _no_out(out, "irfftn")
    return _to_r(input, s, dim, norm, True, "irfftn")


def hfft2(
    input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The 2-D `hfft`.

    >>> import lazytorch as torch
    >>> torch.fft.hfft2(torch.ones(2, 2)).shape
    lazytorch.Size([2, 2])
    """
    _no_out(out, "hfft2")
    return _to_r(input, s, dim, norm, False, "hfft2")


def hfftn(
    input: Any, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> Tensor:
    """The N-D `hfft`.

    >>> import lazytorch as torch
    >>> torch.fft.hfftn(torch.ones(2, 2)).shape
    lazytorch.Size([2, 2])
    """
    _no_out(out, "hfftn")
    return _to_r(input, s, dim, norm, False, "hfftn")


def ihfft2(
    input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The 2-D `ihfft`.

    >>> import lazytorch as torch
    >>> torch.fft.ihfft2(torch.ones(2, 4)).shape
    lazytorch.Size([2, 3])
    """
    _no_out(out, "ihfft2")
    return _r2c(input, s, dim, norm, True, "ihfft2")


def ihfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *, out: Any = None
) -> ComplexTensor:
    """The N-D `ihfft`.

    >>> import lazytorch as torch
    >>> torch.fft.ihfftn(torch.ones(2, 4)).shape
    lazytorch.Size([2, 3])
    """
    _no_out(out, "ihfftn")
    return _r2c(input, s, dim, norm, True, "ihfftn")


def _freq(op: str, k: Any, n: int, d: float, dtype: Any, device: Any, requires_grad: bool) -> Any:
    d_type = C.resolve_dtype(dtype, op) or _config.get_default_dtype()
    dev = C.resolve_device(device, op)
    a = k.astype(d_type.np) * d_type.np.type(1.0 / (n * d))  # torch: mul_(1/(n*d))
    return C.tensor(a, dtype=d_type, device=dev, requires_grad=requires_grad)


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of `fft`'s output for a signal of `n` points spaced `d` apart.

    >>> import lazytorch as torch
    >>> torch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    import numpy as np

    _no_out(out, "fftfreq")
    k = np.arange(n)
    k[(n + 1) // 2 :] -= n
    return _freq("fftfreq", k, n, d, dtype, device, requires_grad)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of `rfft`'s output for a signal of `n` points spaced `d` apart.

    >>> import lazytorch as torch
    >>> torch.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    import numpy as np

    _no_out(out, "rfftfreq")
    return _freq("rfftfreq", np.arange(n // 2 + 1), n, d, dtype, device, requires_grad)


def _shift(input: Any, dim: Any, inverse: bool) -> Any:
    complex_ = type(input) is ComplexTensor
    x = input._ri if complex_ else tensor_arg(input, "fftshift")
    ndim = len(input.shape)
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    if not dims:
        return input
    shifts = [(input.shape[d] + inverse) // 2 for d in dims]  # torch's: n//2, (n+1)//2
    y = S.roll(x, shifts, dims)
    return ComplexTensor(y) if complex_ else y


def fftshift(input: Any, dim: Any = None) -> Any:
    """`input` rolled so that the zero frequency is in the middle of each of `dim`.

    >>> import lazytorch as torch
    >>> torch.fft.fftshift(torch.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, False)


def ifftshift(input: Any, dim: Any = None) -> Any:
    """The inverse of `fftshift`.

    >>> import lazytorch as torch
    >>> torch.fft.ifftshift(torch.fft.fftshift(torch.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, True)
