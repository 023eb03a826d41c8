"""Counter-based random numbers: Philox4x32-10, the reference for every backend.

Element ``i`` of a random tensor drawn at generator offset ``offset`` uses the 64-bit
counter ``offset + i`` (low word, high word, 0, 0) under the key ``seed`` (low, high). The
result depends only on (seed, counter), so values are reproducible from ``manual_seed``,
independent of how a program is fused or which backend runs it, and a draw can be
recomputed by a later graph with identical results. The rounds are the standard
Philox4x32-10 of Salmon et al. (SC'11), the same function Triton's ``tl.randint`` uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazytorch.ir._lazynp import np

M0, M1 = 0xD2511F53, 0xCD9E8D57  # round multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # key schedule (Weyl sequence) increments
_MASK = 0xFFFFFFFF


def rounds(
    c: tuple[Any, Any, Any, Any], k: tuple[Any, Any], n: int = 10
) -> tuple[Any, Any, Any, Any]:
    """`n` Philox4x32 rounds on uint64 arrays holding 32-bit words (counter c, key k)."""
    u64 = np.uint64
    mask = u64(_MASK)
    c0, c1, c2, c3 = c
    k0, k1 = k
    m0, m1 = u64(M0), u64(M1)
    for _ in range(n):
        p0 = m0 * c0  # < 2**64: both factors are 32-bit
        p1 = m1 * c2
        c0, c1, c2, c3 = (
            (p1 >> u64(32)) ^ c1 ^ k0,
            p1 & mask,
            (p0 >> u64(32)) ^ c3 ^ k1,
            p0 & mask,
        )
        k0 = (k0 + u64(W0)) & mask
        k1 = (k1 + u64(W1)) & mask
    return c0, c1, c2, c3


def philox4x32(counter: Any, seed: int) -> tuple[Any, Any, Any, Any]:
    """Four uint32 words (as uint64 arrays) per 64-bit counter, keyed by a 64-bit seed."""
    u64 = np.uint64
    zero = np.zeros_like(counter)
    c = (counter & u64(_MASK), counter >> u64(32), zero, zero)
    k = (u64(seed & _MASK), u64((seed >> 32) & _MASK))
    return rounds(c, k)


def _counters(numel: int, offset: int) -> Any:
    return np.arange(numel, dtype=np.uint64) + np.uint64(offset)


# The native loop, looked up at the first draw through `native_loader`, which the runtime
# sets (the IR does not import the layers that load the extension; importing it at
# `import lazytorch` would cost its load): it returns the function or None.
native_loader: Callable[[], Any] | None = None
_NATIVE: Any = ...


def _native_words() -> Any:
    global _NATIVE
    if _NATIVE is ...:
        _NATIVE = native_loader() if native_loader is not None else None
    return _NATIVE


def words(numel: int, seed: int, offset: int) -> tuple[Any, Any]:
    """Words r0, r1 (uint64 arrays) of the counters ``offset + i``: the native module's loop
    (``native/philox.cpp``, the same arithmetic in one pass) where it is built, else
    `philox4x32` here, which is the reference the tests hold it to.

    >>> r0, r1 = words(3, seed=7, offset=2**64 - 1)  # the counter wraps to 0, 1
    >>> [int(v) for v in r0] == [int(v) for v in philox4x32(_counters(3, 2**64 - 1), 7)[0]]
    True
    """
    native = _native_words()
    if native is not None:
        r = native(numel, seed, offset).astype(np.uint64)
        return r[0], r[1]
    r0, r1, _, _ = philox4x32(_counters(numel, offset), seed)
    return r0, r1


def uniform(numel: int, seed: int, offset: int, dtype: Any) -> Any:
    """Uniform floats in [0, 1) with as many random mantissa bits as `dtype` holds."""
    r0, r1 = words(numel, seed, offset)
    if dtype == np.float64:
        bits = (r0 << np.uint64(21)) ^ (r1 >> np.uint64(11))  # 53 random bits
        return bits.astype(np.float64) * 2.0**-53
    if dtype == np.float16:
        return ((r0 >> np.uint64(21)).astype(np.float32) * np.float32(2.0**-11)).astype(np.float16)
    if dtype.itemsize == 2:  # bfloat16: the top 8 bits, exact in its 8-bit significand
        return ((r0 >> np.uint64(24)).astype(np.float32) * np.float32(2.0**-8)).astype(dtype)
    return (r0 >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)


def normal(numel: int, seed: int, offset: int, dtype: Any) -> Any:
    """Standard normal samples by Box-Muller over two 24-bit uniforms, computed in float64."""
    r0, r1 = words(numel, seed, offset)
    u1 = ((r0 >> np.uint64(8)).astype(np.float64) + 1.0) * 2.0**-24  # (0, 1]: log is finite
    u2 = (r1 >> np.uint64(8)).astype(np.float64) * 2.0**-24
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return z.astype(dtype)
