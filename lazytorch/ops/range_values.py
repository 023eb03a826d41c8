"""Host models of torch's CPU range kernels: arange, linspace and logspace, bit for bit.

Creation ops must give torch's exact values (users compare, seed-match and index with
them), and those values depend on how torch's kernels round: which type each step is
computed in, where a multiply and an add are fused into one rounding, how c10's Half and
BFloat16 convert. Each function here computes one kernel's values with vectorized NumPy
on the host, following aten/src/ATen/native/RangeFactories.cpp and
native/cpu/RangeFactoriesKernel.cpp; every claim below was checked against torch 2.13's
CPU build (the tests in tests/ops/test_creation.py keep checking it).

Conversions as c10 does them: a double or an int64 becomes a float with one rounding, and
a Half or a BFloat16 is made from a float, so a double becomes one by way of a float (two
roundings; NumPy's float64 -> float16 cast rounds once, which differs near ties). A NaN
made into a BFloat16 is 0x7FC0, whatever its sign.

NumPy is imported inside the functions: ``import lazytorch`` loads no NumPy.
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch.ir.dtypes import int_to_float32

__all__ = [
    "arange_values",
    "fma",
    "fma_ramp",
    "from_float32",
    "from_float64",
    "linspace_values",
    "logspace_exponents",
    "pow_libm",
    "to_dtype",
]

# Elements per block of the host computations below (their exact forms take a dozen
# temporaries per element).
_HOST_BLOCK = 1 << 16

# torch's parallel_for grain (at::internal::GRAIN_SIZE) and the lanes of the AVX2 vectors its
# arange kernel runs in (by element size), two vectors per loop iteration: measured, this is
# what matches torch 2.13's CPU build bit for bit, even where it reports AVX512
_GRAIN = 32768
_LANES = {2: 16, 4: 8, 8: 4}


def fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once, elementwise over float64 NumPy arrays (a fused
    multiply-add, which NumPy lacks).

    Emulated as Boldo and Melquiond prove correct ("Emulation of FMA and correctly rounded
    sums: proved algorithms using rounding to odd", 2008): Dekker's exact product, Knuth's
    exact sum, the two low parts added with rounding to odd, then one rounding to nearest.
    (Adding the low parts to nearest rounds twice where the exact value is a hair from a
    tie: linspace(1.0, -2.6e-70, 7)[3] came out 0.5 against torch's 0.49999999999999994.)
    NumPy never contracts a product and a sum, so each step is the IEEE operation the proof
    assumes.

    >>> import numpy as np
    >>> float(fma(np.float64(-1 / 3), np.float64(3.0), np.float64(1.0)))  # 1 - 3 * (1/3)
    5.551115123125783e-17
    """
    import numpy as np

    a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a, b, c)))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        fused = _fma_finite(a, b, c)
        naive = a * b + c
        p = np.abs(a * b)
    # Where the emulation's steps leave the finite range (an inf or nan operand or result,
    # a Veltkamp split past 2**995, a product too small for Dekker's error term), the
    # exact value: IEEE's for special operands, else a correctly rounded rational.
    odd = ~np.isfinite(fused) | ~np.isfinite(naive) | (p < 2.0**-960) & (p != 0)
    if not odd.any():
        return fused
    out = np.array(fused)
    for i in zip(*np.nonzero(odd)):
        out[i] = _fma_exact(float(a[i]), float(b[i]), float(c[i]), float(naive[i]))
    return out if out.ndim else out[()]


def _fma_exact(a: float, b: float, c: float, naive: float) -> float:
    """``a * b + c`` rounded once, by rational arithmetic (Fraction's float() rounds
    correctly); with an inf or nan operand, IEEE's value, which ``a * b + c`` gives too."""
    from fractions import Fraction

    if not all(map(math.isfinite, (a, b, c))):
        return naive
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return naive  # (the sign of a zero sum, as IEEE gives it)
    try:
        return float(exact)
    except OverflowError:
        return math.copysign(math.inf, exact)


def _fma_finite(a: Any, b: Any, c: Any) -> Any:
    """`fma` where every step stays finite and normal (see `fma`)."""
    import numpy as np

    p = a * b  # Dekker: p + e1 == a * b exactly (Veltkamp splits of a and b)
    t = 134217729.0 * a
    ah = t - (t - a)
    al = a - ah
    t = 134217729.0 * b
    bh = t - (t - b)
    bl = b - bh
    e1 = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    h = c + p  # Knuth: h + e2 == c + p exactly
    v = h - c
    e2 = (c - (h - v)) + (p - v)
    low = e1 + e2  # rounded to odd: where inexact and even, one ulp toward the rest
    v = low - e1
    rest = (e1 - (low - v)) + (e2 - v)
    even = (np.asarray(low).view(np.int64) & 1) == 0
    low = np.where((rest != 0) & even, np.nextafter(low, np.copysign(np.inf, rest)), low)
    return h + low


def _fma32(a: Any, b: Any, c: Any) -> Any:
    """C's ``fmaf(a, b, c)``: ``a * b + c`` rounded once to float32, elementwise, for
    float32 values held in float64 arrays. Returns a float32 array.

    The product of two float32 values is exact in float64; the sum with `c` is made exact
    as a float64 pair (Knuth), rounded to odd in float64 and then to nearest in float32,
    which is the correctly rounded result since float64 carries more than 24 + 1 bits
    (Boldo and Melquiond, as in `fma`). Rounding the float64 sum to nearest first would
    round twice: below, 1024 + 2**-14 + 2**-50 rounds to the float32 tie 1024 + 2**-14 in
    float64, then to 1024, where fmaf gives 1024 + 2**-13.

    >>> import numpy as np
    >>> a, b = 2.0**-14 * (1 + 2.0**-12), 1 - 2.0**-12 + 2.0**-24  # two float32 values
    >>> float(_fma32(a, b, 1024.0)), float(np.float32(a * b + 1024.0))
    (1024.0001220703125, 1024.0)
    """
    import numpy as np

    a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a, b, c)))
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        h = c + p
        v = h - c
        low = (c - (h - v)) + (p - v)
        even = (h.view(np.int64) & 1) == 0
        bump = (low != 0) & even & np.isfinite(h)
        odd = np.where(bump, np.nextafter(h, np.copysign(np.inf, low)), h)
        return odd.astype(np.float32)


def to_dtype(x: Any, np_dtype: Any) -> Any:
    """A number (a Python int or float) converted to a float dtype as c10 converts a Scalar:
    float64 directly, float32 with one rounding, float16 and bfloat16 by way of float32.
    Returns a NumPy scalar of `np_dtype` (no overflow check: out of range is inf).

    >>> import numpy as np
    >>> float(to_dtype(1 + 2**-11 + 2**-40, np.float16))  # NumPy's direct cast gives 1.0009765625
    1.0
    """
    import numpy as np

    dtype = np.dtype(np_dtype)
    if dtype == np.float64:
        return np.float64(float(x))
    if isinstance(x, int) and not isinstance(x, bool):
        f = np.float32(int_to_float32(x))
    else:
        with np.errstate(over="ignore"):
            f = np.float32(float(x))
    return f if dtype == np.float32 else from_float32(np.asarray(f), dtype)[()]


def from_float32(f: Any, dtype: Any) -> Any:
    """float32 values as c10 converts them to `dtype` (float16, bfloat16 or float32)."""
    import numpy as np

    f, dtype = np.asarray(f, dtype=np.float32), np.dtype(dtype)
    if dtype == np.float32:
        return f
    with np.errstate(over="ignore"):  # (past the dtype's range is inf, as in c10)
        out = f.astype(dtype)  # round to nearest even, as c10 does
    if dtype.itemsize == 2 and dtype != np.float16:  # bfloat16: c10 makes every NaN 0x7FC0
        out = np.where(np.isnan(f), np.array(0x7FC0, np.uint16).view(dtype), out)
    return out


def from_float64(x: Any, np_dtype: Any) -> Any:
    """float64 values as C converts them to a float dtype: rounded once to float32 or kept,
    and to float16 or bfloat16 by way of float32 (c10's constructors take a float)."""
    import numpy as np

    dtype = np.dtype(np_dtype)
    x = np.asarray(x, dtype=np.float64)
    if dtype == np.float64:
        return x
    with np.errstate(over="ignore"):
        return from_float32(x.astype(np.float32), dtype)


def fma_ramp(start: float, end: float, step: float, n: int) -> Any:
    """float64 linspace values as torch's kernel rounds them: ``fma(step, i, start)`` for
    the first half, ``fma(-step, n - 1 - i, end)`` for the rest, each rounded once.

    >>> float(fma_ramp(-1.0, 1.0, 1 / 3, 7)[3])  # torch's value; 1.0 - (1 / 3) * 3 gives 0.0
    5.551115123125783e-17
    """
    import numpy as np

    out = np.empty(n, dtype=np.float64)
    half = n // 2
    for lo in range(0, n, _HOST_BLOCK):
        k = np.arange(lo, min(lo + _HOST_BLOCK, n), dtype=np.float64)
        up = k < half
        b = np.where(up, k, k - (n - 1))  # (the index negated, not the step: a nan step
        c = np.where(up, start, end)  # keeps its sign in x86's negated multiply-add)
        out[lo : lo + len(k)] = fma(np.float64(step), b, c)
    return out


def linspace_values(start: Any, end: Any, n: int, np_dtype: Any) -> Any:
    """float32, float16 or bfloat16 linspace values (n >= 2) as torch's kernel rounds them.

    The kernel computes in the dtype itself: start and end are converted to it, the step is
    ``(end - start) / (n - 1)`` in the dtype, and element i is ``start + step * i`` below
    ``n // 2``, else ``end - step * (n - 1 - i)``, the index converted to the dtype first
    (``steps - 1`` too). In float32 the multiply and add are one fused rounding (C's
    contraction); c10's Half and BFloat16 operators compute each operation in float and
    round it to the dtype, so there every operation rounds twice (float, then the dtype).

    >>> import numpy as np
    >>> linspace_values(0, 1, 5, np.float16).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    import numpy as np

    dtype = np.dtype(np_dtype)
    s, e = to_dtype(start, dtype), to_dtype(end, dtype)
    f32 = np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        den = to_dtype(n - 1, dtype)
        if dtype == np.float32:
            step = (e - s) / den
        else:
            diff = from_float32(f32(e) - f32(s), dtype)
            step = from_float32(f32(diff) / f32(den), dtype)[()]
    out = np.empty(n, dtype=dtype)
    half = n // 2
    for lo in range(0, n, _HOST_BLOCK):
        i = np.arange(lo, min(lo + _HOST_BLOCK, n), dtype=np.int64)
        up = i < half
        k = np.where(up, i, (n - 1) - i)
        with np.errstate(over="ignore", invalid="ignore"):
            if dtype == np.float32:
                kf = k.astype(np.float32).astype(np.float64)
                kf = np.where(up, kf, -kf)  # (negated here: a nan step keeps its sign)
                c = np.where(up, np.float64(s), np.float64(e))
                out[lo : lo + len(i)] = _fma32(np.float64(step), kf, c)
            else:
                kd = from_float32(k.astype(np.float32), dtype).astype(np.float32)
                prod = from_float32(f32(step) * kd, dtype).astype(np.float32)
                vals = np.where(up, f32(s) + prod, f32(e) - prod)
                out[lo : lo + len(i)] = from_float32(vals, dtype)
    return out


def arange_values(start: Any, step: Any, n: int, np_dtype: Any, threads: int) -> Any:
    """Floating arange values as torch's CPU kernel rounds them.

    The kernel computes in the dtype's accumulate type (float64 for float32 and float64,
    float32 for float16 and bfloat16) and writes the dtype: element j of a full pair of
    vectors is ``fma(j % lanes, step, base)`` with ``base = fma(step, j - j % lanes, start)``
    rounded to the dtype first (in bfloat16, ``base + (j % lanes) * step`` with the product
    rounded first; the first lane is the base itself); the elements after the last full
    pair are ``fma(step, j, start)``. Each of parallel_for's chunks (``threads`` of them
    past ``_GRAIN`` elements) starts its vectors anew. A plain ``start + j * step`` is an
    ulp off torch in about one element in five (``arange(-5, 5, 0.1)``: 24 of 100).

    >>> import numpy as np
    >>> arange_values(0.0, 0.25, 4, np.float16, 1).tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    import numpy as np

    dtype = np.dtype(np_dtype)
    out = np.empty(n, dtype=dtype)
    v = _LANES[dtype.itemsize]
    if dtype.itemsize >= 4:
        acc, fused = np.float64, fma
        st, s0 = np.float64(float(step)), np.float64(float(start))
    else:  # float32 arithmetic; the index converted to float first
        acc, fused = np.float32, _fma32
        st, s0 = (np.float64(to_dtype(x, np.float32)) for x in (step, start))

    # bfloat16's vector arange adds a float ``k * step`` to the base unfused (measured:
    # fused, 17 of 700,000 elements differ from torch; float16's is fused, 16 differ split)
    split_lanes = dtype.itemsize == 2 and dtype != np.float16

    def rounded(x: Any, to: Any) -> Any:
        # the fused results, rounded to `to` (float32 values are rounded already)
        return x.astype(to) if acc is np.float64 else from_float32(x, to)

    tasks = 1 if n < _GRAIN or threads <= 1 else min(threads, -(-n // _GRAIN))
    chunk = -(-n // tasks) if n else 1
    with np.errstate(over="ignore", invalid="ignore"):
        for b in range(0, n, chunk):
            e = min(n, b + chunk)
            full = b + (e - b) // (2 * v) * (2 * v)
            for lo in range(b, e, _HOST_BLOCK):
                j = np.arange(lo, min(lo + _HOST_BLOCK, e), dtype=np.int64)
                lane = np.where(j < full, (j - b) % v, 0)
                idx = (j - lane).astype(acc).astype(np.float64)  # (float(j) may round)
                base = rounded(fused(st, idx, s0), dtype).astype(np.float64)
                if split_lanes:  # k * step rounded to float, then the sum
                    k_step = (lane * st).astype(np.float32)  # (exact in float64 first)
                    lanes = _fma32(1.0, k_step, base)
                else:
                    lanes = fused(lane.astype(np.float64), st, base)
                # (lane 0 is the base itself: -0.0 stays -0.0, which base + 0 * step is not)
                vals = np.where((j < full) & (lane > 0), rounded(lanes, dtype), base.astype(dtype))
                out[lo : lo + len(j)] = vals
    return out


def logspace_exponents(start: float, end: float, diff: float, n: int) -> Any:
    """The float64 exponents of torch's logspace (n >= 2): with ``step = diff / (n - 1)``,
    ``start + step * i`` below ``n // 2``, else ``end - step * (n - 1 - i)``, each product
    and sum rounded separately (RangeFactories.cpp is compiled without FMA contraction).
    `start` and `end` are already converted to the dtype; `diff` is their difference in the
    dtype's arithmetic.

    >>> logspace_exponents(0.0, 1.0, 1.0, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    import numpy as np

    step = diff / (n - 1)
    i = np.arange(n, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        up = start + step * i.astype(np.float64)
        down = end - step * ((n - 1) - i).astype(np.float64)
    return np.where(i < n // 2, up, down)


def _pow_or_special(base: float, x: float) -> float:
    import numpy as np

    try:
        return math.pow(base, x)
    except (OverflowError, ValueError):  # inf or nan, which every pow gives alike
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(base), np.float64(x)))


def pow_libm(base: float, x: Any) -> Any:
    """``pow(base, x)`` elementwise as the C library computes it (torch's logspace calls
    std::pow). NumPy's float64 power is a vectorized approximation that differs from it by
    an ulp in about one element in twenty, so each element goes through ``math.pow``.

    >>> import numpy as np
    >>> pow_libm(10.0, np.array([0.0, 2.0, 400.0])).tolist()
    [1.0, 100.0, inf]
    """
    import numpy as np

    xs = np.asarray(x, dtype=np.float64).ravel().tolist()
    try:
        vals = list(map(math.pow, [base] * len(xs), xs))
    except (OverflowError, ValueError):
        vals = [_pow_or_special(base, v) for v in xs]
    return np.array(vals, dtype=np.float64).reshape(np.shape(x))
