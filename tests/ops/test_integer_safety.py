"""Integer safety: division at the edges of the integer types, sizes and Python ints too big
for a tensor, each compared against torch.

Division by -1 of a type's minimum traps on x86 (SIGFPE) when it reaches the hardware; torch
wraps instead (MIN // -1 == MIN, MIN % -1 == 0). These cases run on both the interpreter and
the cpp backend in every run (the op matrix samples cpp on a quarter of its cases only).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check

SIGNED = ("int8", "int16", "int32", "int64")
BOTH = ("interpreter", "cpp")


# check() runs on the interpreter and on cpp for every case, not the matrix's sample
both_backends = pytest.mark.backends(*BOTH)


def edge_operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Dividends with the type's minimum and maximum; divisors -1 and ordinary values."""
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, 7, -7, info.max, info.min, 0, info.min + 1], dtype=dtype)
    b = np.array([-1, 1, -1, 2, -1, 3, -1, -1], dtype=dtype)
    return a, b


# -- division at MIN / -1 -----------------------------------------------------------------------
TENSOR_TENSOR = {
    "floordiv": lambda t, x, y: x // y,
    "remainder": lambda t, x, y: x % y,
    "fmod": lambda t, x, y: t.fmod(x, y),
    "div_floor": lambda t, x, y: t.div(x, y, rounding_mode="floor"),
    "floor_divide": lambda t, x, y: t.floor_divide(x, y),
    "broadcast_floordiv": lambda t, x, y: x.reshape(-1, 1) // y.reshape(1, -1),
    "broadcast_remainder": lambda t, x, y: x.reshape(-1, 1) % y.reshape(1, -1),
    "fused_chain": lambda t, x, y: ((x // y) + (x % y) + t.fmod(x, y)) * 1,
}


@both_backends
@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("op", sorted(TENSOR_TENSOR))
def test_division_of_min_by_minus_one_tensor_tensor(op, dtype):
    check(TENSOR_TENSOR[op], *edge_operands(dtype))


TENSOR_SCALAR = {
    "floordiv": lambda t, x: x // -1,
    "remainder": lambda t, x: x % -1,
    "fmod": lambda t, x: t.fmod(x, -1),
    "div_floor": lambda t, x: t.div(x, -1, rounding_mode="floor"),
    "remainder_method": lambda t, x: x.remainder(-1),
}


@both_backends
@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("op", sorted(TENSOR_SCALAR))
def test_division_of_min_by_minus_one_tensor_scalar(op, dtype):
    check(TENSOR_SCALAR[op], edge_operands(dtype)[0])


@both_backends
@pytest.mark.parametrize("dtype", SIGNED)
def test_scalar_min_divided_by_tensor(dtype):
    m = int(np.iinfo(dtype).min)
    b = edge_operands(dtype)[1]
    check(lambda t, y: m // y, b)
    check(lambda t, y: t.remainder(m, y), b)


def wrapped(values: list[int], dtype: str) -> np.ndarray:
    """Python ints reduced modulo 2**bits into `dtype` (two's complement)."""
    bits = np.iinfo(dtype).bits
    return np.array(
        [(v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1) for v in values], dtype=dtype
    )


def c_division(a: int, b: int) -> int:
    """C's a / b on Python ints: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@pytest.mark.parametrize("backend", BOTH)
@pytest.mark.parametrize("dtype", SIGNED)
def test_trunc_division_of_min_by_minus_one(backend, dtype):
    # torch 2.13 itself dies of SIGFPE on int32/int64 div(MIN, -1, rounding_mode="trunc")
    # (its floor mode wraps), so the oracle here is Python's exact quotient, wrapped.
    a, b = edge_operands(dtype)
    want = wrapped([c_division(int(p), int(q)) for p, q in zip(a, b)], dtype)
    with lt.backend(backend):
        x, y = lt.tensor(a), lt.tensor(b)
        got = [
            lt.div(x, y, rounding_mode="trunc"),
            lt.div(x, -1, rounding_mode="trunc"),
            x.div(y, rounding_mode="trunc"),
        ]
        for g in got[:1] + got[2:]:
            np.testing.assert_array_equal(g.numpy(), want)
        np.testing.assert_array_equal(got[1].numpy(), wrapped([-int(p) for p in a], dtype))
    if dtype in ("int8", "int16"):  # where torch survives, it agrees
        np.testing.assert_array_equal(
            torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode="trunc").numpy(),
            want,
        )


@pytest.mark.parametrize("backend", BOTH)
@pytest.mark.parametrize("dtype", ("uint8", *SIGNED))
def test_ordinary_integer_division_is_unchanged(backend, dtype, rng):
    # The -1 path must not leak into other divisors (uint8 has no -1: 255 divides).
    info = np.iinfo(dtype)
    a = rng.integers(info.min, int(info.max) + 1, size=257).astype(dtype)
    b = rng.integers(info.min, int(info.max) + 1, size=257).astype(dtype)
    b[b == 0] = 1
    b[:4] = [1, 2, info.max, info.max - 1]
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    with lt.backend(backend):
        x, y = lt.tensor(a), lt.tensor(b)
        pairs = [
            (x // y, ta // tb),
            (x % y, ta % tb),
            (lt.fmod(x, y), torch.fmod(ta, tb)),
        ]
        for g, w in pairs:
            np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("backend", BOTH)
@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize(
    "op,name",
    [
        (lambda x, y: x // y, "floordiv"),
        (lambda x, y: x % y, "remainder"),
        (lambda x, y: lt.fmod(x, y), "fmod"),
        (lambda x, y: lt.div(x, y, rounding_mode="trunc"), "floordiv|remainder"),
    ],
)
def test_integer_division_by_zero_still_raises(backend, dtype, op, name):
    a = np.array([np.iinfo(dtype).min, 5], dtype=dtype)
    b = np.array([-1, 0], dtype=dtype)
    with lt.backend(backend), pytest.raises(RuntimeError, match=rf"({name}): ZeroDivisionError"):
        op(lt.tensor(a), lt.tensor(b)).numpy()


CRASH_PROBE = """
import numpy as np
import lazytorch as lt

for dtype in ("int8", "int16", "int32", "int64"):
    m = int(np.iinfo(dtype).min)
    x = lt.tensor([m, 7], dtype=getattr(lt, dtype))
    y = lt.tensor([-1, -1], dtype=getattr(lt, dtype))
    out = [x // y, x // -1, x % y, x % -1, lt.fmod(x, y), lt.fmod(x, -1),
           lt.div(x, y, rounding_mode="trunc"), m // y]
    print(dtype, [o.tolist() for o in out])
"""


def test_min_by_minus_one_does_not_kill_the_process(tmp_path):
    """The compiled kernels run in-process: a trap there is a SIGFPE of the whole program."""
    env = {**os.environ, "LAZYTORCH_BACKEND": "cpp", "LAZYTORCH_CACHE_DIR": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-c", CRASH_PROBE], env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 4
    for line, dtype in zip(lines, SIGNED):
        m = int(np.iinfo(dtype).min)
        assert (
            line == f"{dtype} {[[m, -7], [m, -7], [0, 0], [0, 0], [0, 0], [0, 0], [m, -7], [m, m]]}"
        )


TRITON_PROBE = """
import numpy as np
import torch
import lazytorch as lt
from lazytorch.runtime import triton_backend

class Carrier:
    def to_device(self, a):
        return torch.from_numpy(np.array(a, copy=True))
    def empty(self, shape, dtype):
        return torch.from_numpy(np.empty(shape, dtype=dtype))
    def to_host(self, b):
        return b.numpy().copy()

triton_backend.register(Carrier())
for dtype in ("uint8", "int8", "int16", "int32", "int64"):
    info = np.iinfo(dtype)
    a = np.array([info.min, 7, info.max, info.min, 200 % (int(info.max) + 1)], dtype=dtype)
    b = np.array([-1 if info.min else 255, 2, 3, -1 if info.min else 1, 255 % (int(info.max) + 1)], dtype=dtype)
    with lt.backend("triton"):
        x, y = lt.tensor(a), lt.tensor(b)
        got = [x // y, x % y, lt.fmod(x, y), x // -1 if info.min else x // 1]
        got = [g.numpy() for g in got]
    counters = lt.metrics.counters()
    assert counters.get("triton_fallbacks", 0) == 0 and counters.get("kernels_launched", 0) >= 1, counters
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    want = [ta // tb, ta % tb, torch.fmod(ta, tb), ta // -1 if info.min else ta // 1]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.numpy())
print("ok")
"""


def test_triton_integer_division_helpers_wrap(tmp_path):
    """The Triton helpers under Triton's interpreter (a subprocess: TRITON_INTERPRET must be
    set before triton is imported, and must not leak into GPU tests of this session)."""
    pytest.importorskip("triton")
    env = {
        **os.environ,
        "TRITON_INTERPRET": "1",
        "LAZYTORCH_CACHE_DIR": str(tmp_path),
        "PYTHONWARNINGS": "ignore::RuntimeWarning",
    }
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRITON_PROBE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


# -- sizes: int64 dims, storage and numel bounds ------------------------------------------------
# Each case is an expression over the library `t` (torch or lazytorch), so the test id reads as
# the call it checks. torch refuses every one of these; lazytorch used to wrap the size.
SIZE_ERRORS = [
    # a dim beyond int64: the argument parser's TypeError (ValueError for a lone int)
    "t.ones(2**64 + 3)",
    "t.ones(2**63)",
    "t.zeros(2**64)",
    "t.empty(2, 2**64)",
    "t.full((2**64,), 1.0)",
    "t.randn(2**64)",
    "t.rand(2**64)",
    "t.randint(0, 5, (2**64,))",
    "t.ones(3).new_zeros(2**64)",
    "t.ones(3).reshape(2**64 + 3)",
    "t.ones(4).reshape(2, 2**63)",
    "t.ones(3).view(2**64 + 3)",
    "t.ones(3).expand(2**64, 3)",
    "t.ones(2).repeat(2**63)",
    "t.linspace(0, 1, 2**64)",
    "t.linspace(0, 1, 2**63)",
    "t.eye(2**64)",
    "t.eye(2, 2**64)",
    "t.randperm(2**64)",
    "t.randint(0, 2**63, (2,))",
    "t.randint(0, 10**30, (2,))",
    "t.arange(2**64 + 5)",
    "t.arange(2**63)",
    # negative dims
    "t.ones(-1)",
    "t.ones(3, -2)",
    "t.empty(-5)",
    "t.full((-1,), 1.0)",
    "t.randn(-1)",
    "t.randint(0, 5, (-1,))",
    "t.linspace(0, 1, -1)",
    "t.arange(-5)",
    "t.ones(3).new_empty(-1)",
    "t.ones(2).repeat(-1)",
    "t.ones(3).reshape(-2)",
    # storage of numel * itemsize bytes beyond int64, or a contiguous stride beyond int64
    "t.ones(2**63 - 1)",
    "t.ones(2**62, 4)",
    "t.ones(3, 2**62)",
    "t.zeros(2**31, 2**31, 2)",
    "t.ones(2**32, 2**31)",
    "t.zeros(2**62, 4, 0)",
    "t.zeros(0, 2**62, 4)",
    "t.zeros(0, 2**62, 2)",
    "t.zeros(2**62, 2, dtype=t.int8)",
    "t.empty(2**60, dtype=t.int64)",
    "t.empty(2**62, dtype=t.float16)",
    "t.full((2**62, 4), 1.0)",
    "t.randn(2**62, 4)",
    "t.randint(5, (2**62, 4))",
    "t.randperm(2**63 - 1)",
    "t.linspace(0, 1, 2**62)",
    "t.linspace(0, 1, 2**61, dtype=t.float32)",
    "t.arange(2**62 + 1)",
    "t.arange(0.0, 2.0**62, 1.0, dtype=t.float64)",
    "t.arange(0, 2**62, 0.5)",
    "t.arange(0, 2**63 - 1, 2**61)",
    "t.arange(-2**62, 2**62)",
    "t.arange(0.0, 2.0**70)",
    "t.eye(2**62, 1)",
    "t.eye(2**62, 2)",
    "t.ones(2).new_ones(2**62, 4)",
    "t.ones(1, 1).repeat(2**62, 4)",
    "t.ones(2).repeat(2**62)",
    # numel beyond int64 (views need no storage, but torch still counts their elements)
    "t.ones(1).expand(2**62, 4)",
    "t.ones(3, 1).expand(3, 2**62)",
    "t.ones(3, 1).expand(-1, 2**62)",
    "t.ones(1, 1, 1).expand(2**62, 4, 0)",
    "t.ones(0).reshape(2**62, 4, 0)",
    "t.ones(0).reshape(-1, 2**62, 4)",
    "t.ones(0).view(2**62, 4, 0)",
]


@both_backends
@pytest.mark.parametrize("expr", SIZE_ERRORS)
def test_size_refused_like_torch(expr):
    assert check(lambda t: eval(expr, {"t": t})) is None  # None: torch raised, and so did we


# Sizes at the bounds that torch accepts. Shapes only: a view of 2**63 - 1 elements exists
# lazily, and materializing one is beyond NumPy (and memory) anyway.
SIZE_LIMITS = [
    "t.ones(1).expand(2**63 - 1).shape",
    "t.ones(1, 1).expand(2**61, 3).shape",
    "t.ones(1).expand(2**62, 1).shape",
    "t.ones(1, 1, 1).expand(0, 2**62, 4).shape",
    "t.zeros(0, 2**62, 1).shape",
    "t.zeros(2**62, 2, 0).shape",
    "t.zeros(2**63 - 1, 2, 0).shape",
    "t.empty(2**60, 0, dtype=t.int64).shape",
    "t.ones(0).reshape(0, 2**62, 4).shape",
    "t.ones(3).expand(2, -1).shape",
    "t.broadcast_shapes((2**62, 1), (4,))",  # no tensor: torch counts nothing here
]


@pytest.mark.parametrize("expr", SIZE_LIMITS)
def test_size_at_the_bound_accepted(expr):
    check(lambda t: eval(expr, {"t": t}), modes=("lazy",))


# A broadcast result with more elements than int64 counts, from operands that are fine.
# Lazy mode only: sync mode would materialize the 2**62-element view operand itself.
BROADCAST_ERRORS = [
    "t.ones(1).expand(2**62, 1) + t.ones(4)",
    "t.ones(1).expand(2**62, 1) < t.ones(1, 4)",
    "t.where(t.ones(4, dtype=t.bool), t.ones(1).expand(2**62, 1), 0.0)",
]


@both_backends
@pytest.mark.parametrize("expr", BROADCAST_ERRORS)
def test_broadcast_beyond_int64_refused(expr):
    assert check(lambda t: eval(expr, {"t": t}), modes=("lazy",)) is None


@pytest.mark.parametrize("backend", BOTH)
def test_huge_sizes_no_longer_wrap(backend):
    # The repros: each gave a wrapped answer (3.0, 4) instead of an error.
    with lt.backend(backend):
        with pytest.raises(TypeError, match="Overflow when unpacking long long"):
            lt.ones(2**64 + 3).sum().item()
        with pytest.raises(OverflowError):
            lt.arange(2**64 + 5)[-1].item()
        with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
            lt.ones(2**62, 4).sum().item()
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            lt.ones(1).expand(2**62, 4)
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            (lt.ones(1).expand(2**62, 1) + lt.ones(4)).sum().item()  # was a garbage sum on cpp
        # an ordinary large-but-valid size still works
        assert lt.ones(1).expand(2**20, 3).sum().item() == 3 * 2**20


# -- Python ints as scalars: torch's Scalar range, then wrap or a checked conversion -----------
SCALARS = [
    # beyond [-2**63, 2**64): OverflowError whatever the dtype
    "t.ones(3, dtype=t.int64) * 2**64",
    "t.ones(3, dtype=t.int64) * (-2**63 - 1)",
    "t.ones(3, dtype=t.int8) + 2**64",
    "t.ones(3, dtype=t.uint8) - 2**64",
    "t.ones(3, dtype=t.float32) + 2**64",
    "t.ones(3, dtype=t.float64) * 10**400",
    "t.full((3,), 1.0) + (-2**63 - 1)",
    "t.ones(3, dtype=t.bool) + 2**64",
    "2**64 * t.ones(3, dtype=t.int64)",
    "2**64 - t.ones(3, dtype=t.int64)",
    "t.ones(3, dtype=t.int64) // 2**64",
    "t.ones(3, dtype=t.int64) % 2**64",
    "t.ones(3, dtype=t.int64) ** 2**64",
    "t.ones(3) ** 2**64",
    "t.ones(3, dtype=t.int64) ** (-2**63 - 1)",
    "t.ones(3, dtype=t.int64) & 2**64",
    "t.ones(3, dtype=t.int64) < 2**64",
    "t.ones(3, dtype=t.int8) == 2**64",
    "t.ones(3, dtype=t.int8).eq(2**64)",
    "t.ones(3, dtype=t.int8).clamp(min=2**64)",
    "t.ones(3, dtype=t.int8).clamp(min=-2**63 - 1)",
    "t.ones(3).clamp(min=2**64)",
    "t.add(t.ones(3, dtype=t.int64), 1, alpha=2**64)",
    "t.ones(3).add(1, alpha=2**64)",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.int64), 2**64)",
    "t.ones(3, dtype=t.int8).masked_fill(t.ones(3, dtype=t.bool), 2**64)",
    "t.ones(3, dtype=t.int8).fill_(2**64)",
    "t.ones(3, dtype=t.int8).addcmul(t.ones(3, dtype=t.int8), t.ones(3, dtype=t.int8), value=2**64)",
    "t.ones(3).addcdiv(t.ones(3), t.ones(3), value=2**64)",
    "t.ones(3, dtype=t.bool).fill_(2**64)",
    "t.full((2,), 2**64)",
    "t.full((2,), -2**63 - 1)",
    "t.full((2,), 2**64, dtype=t.float32)",
    "t.full_like(t.ones(3, dtype=t.int8), 2**64)",
    "t.full_like(t.ones(3), 2**64)",
    "t.scalar_tensor(2**64)",
    # inside the range: converted to the dtype by wrapping, as torch's arithmetic does
    "t.ones(3, dtype=t.int64) * 2**63",
    "t.ones(3, dtype=t.int64) * (-2**63)",
    "t.full((3,), 44, dtype=t.int64) * 2**63",
    "t.full((3,), 44, dtype=t.int64) + (2**64 - 1)",
    "t.full((3,), 44, dtype=t.uint8) + (2**64 - 1)",
    "t.ones(3, dtype=t.int8) + 300",
    "t.ones(3, dtype=t.int8) + 128",
    "t.ones(3, dtype=t.int8) + 2**63",
    "t.ones(3, dtype=t.int32) + 2**40",
    "t.ones(3, dtype=t.uint8) + 300",
    "t.ones(3, dtype=t.uint8) + (-1)",
    "t.full((3,), 44, dtype=t.int8) == 300",
    "t.full((3,), 44, dtype=t.int8) < 300",
    "t.full((3,), 44, dtype=t.int8) // 300",
    "t.full((3,), 44, dtype=t.int8).remainder(300)",
    "t.full((3,), 44, dtype=t.int8) & 300",
    "t.full((3,), -2**63, dtype=t.int64) == 2**63",
    "t.full((3,), 1.0) + (2**64 - 1)",
    "t.full((3,), True) + 300",
    "300 ** t.ones(3, dtype=t.int8)",
    "t.ones(3) ** 2**63",
    "t.ones(3) ** 1e300",
    "t.ones(3, dtype=t.uint8).add(1, alpha=-1)",
    "t.ones(3, dtype=t.int8).add(1.5, alpha=300)",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.uint8), -1)",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.float16), 1e300)",
    "t.where(t.ones(3, dtype=t.bool), 300, 2)",
    "t.ones(3, dtype=t.uint8).fill_(-1)",
    "t.ones(3, dtype=t.int8).fill_(2.5)",
    "t.ones(3, dtype=t.bool).fill_(5)",
    "t.ones(3, dtype=t.uint8).masked_fill(t.ones(3, dtype=t.bool), -1)",
    "t.full((2,), 2**63 - 1)",
    "t.tensor(2**63 - 1) + 1",
    "t.tensor([1, 2**63 - 1], dtype=t.int64).sum()",
    # where torch converts with a check instead: RuntimeError
    "t.full((2,), 2**63)",
    "t.full((2,), 300, dtype=t.int8)",
    "t.full((2,), 2**63, dtype=t.int8)",
    "t.full_like(t.ones(3, dtype=t.int8), 300)",
    "t.scalar_tensor(2**63, dtype=t.int64)",
    "t.ones(3, dtype=t.int8).add(1, alpha=300)",
    "t.ones(3, dtype=t.int8).sub(1, alpha=2**63)",
    "t.ones(3, dtype=t.int8).add(t.ones(3, dtype=t.int8), alpha=300)",
    "t.ones(3, dtype=t.uint8).add(1, alpha=256)",
    "t.ones(3, dtype=t.int64).add(1, alpha=2**63)",
    "t.ones(3, dtype=t.float16).add(1, alpha=1e10)",
    "t.ones(3).add(1, alpha=1e300)",
    "t.ones(3, dtype=t.int8) ** 300",
    "t.ones(3, dtype=t.int8) ** 128",
    "t.ones(3, dtype=t.int8) ** 127",
    "t.ones(3, dtype=t.int8).pow(300)",
    "t.ones(3, dtype=t.uint8) ** 256",
    "t.ones(3, dtype=t.int64) ** 2**63",
    "t.ones(3, dtype=t.int8) ** 2**63",
    "t.ones(3, dtype=t.float16) ** 100000",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.int8), 300)",
    "t.where(t.ones(3, dtype=t.bool), 300, t.ones(3, dtype=t.int8))",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.uint8), -300)",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3, dtype=t.int64), 2**63)",
    "t.where(t.ones(3, dtype=t.bool), t.ones(3), 1e300)",
    "t.ones(3, dtype=t.int8).masked_fill(t.ones(3, dtype=t.bool), 300)",
    "t.ones(3).masked_fill(t.ones(3, dtype=t.bool), 1e300)",
    "t.ones(3, dtype=t.int8).fill_(300)",
    "t.ones(3, dtype=t.int8).fill_(2**63)",
    "t.ones(3, dtype=t.int8).fill_(1e10)",
    "t.ones(3).fill_(1e300)",
    "t.ones(3, dtype=t.int8).clamp(max=300)",
    "t.ones(3, dtype=t.int8).addcmul(t.ones(3, dtype=t.int8), t.ones(3, dtype=t.int8), value=300)",
    "t.ones(3, dtype=t.int8).add_(1, alpha=300)",
    "t.ones(3, dtype=t.int64).mul_(2**64)",
    "t.ones(3, dtype=t.int8).add_(300)",
    "t.nn.functional.pad(t.ones(3, dtype=t.int8), (1, 1), value=2**64)",
    # an int from 2**63 on is a uint64 Scalar: with only a bool tensor it cannot promote
    "t.full((3,), True) + 2**63",
    "t.tensor([True]) * 2**63",
    "t.tensor([True]) == 2**63",
    "t.tensor([True]) * (2**63 - 1)",
    "t.where(t.tensor([True]), 2**63, 2.0)",
]


TENSOR_DATA = [
    "t.tensor([2**64])",
    "t.tensor([2**63])",
    "t.tensor([-2**63 - 1])",
    "t.tensor(2**64)",
    "t.tensor([1, 2**64])",
    "t.tensor([True, 2**64])",
    "t.tensor([2**63], dtype=t.uint8)",
    "t.tensor([300], dtype=t.int8)",
    "t.tensor([2**63 - 1])",
    "t.tensor([-2**63])",
    # a float or bool tensor takes any int its dtype can hold
    "t.tensor([2**64], dtype=t.float32)",
    "t.tensor([2**63], dtype=t.float32)",
    "t.tensor(2**63, dtype=t.float64)",
    "t.tensor([1.5, 2**64])",
    "t.tensor([[1, 2**64], [1.0, 2]])",
    "t.tensor([10**400], dtype=t.float64)",
    "t.tensor([1.5, 10**400])",
    "t.tensor([0, 2**70], dtype=t.bool)",
    "t.tensor(2**70, dtype=t.bool)",
]


@both_backends
@pytest.mark.parametrize("expr", SCALARS + TENSOR_DATA)
def test_python_int_like_torch(expr):
    check(lambda t: eval(expr, {"t": t}))
