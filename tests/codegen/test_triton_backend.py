"""The triton backend under Triton's interpreter: numerics against the reference interpreter.

Each case records the same lazytorch program twice, runs it on the ``interpreter`` backend
and on ``triton`` (``TRITON_INTERPRET=1``: kernels run on the CPU with torch tensors as
buffers, no GPU needed), and compares. It also pins down that the Triton module has one
kernel per schedule kernel or extern matmul (the same Schedule the C++ backend compiles)
and that what is not lowered yet fails in code generation with a NotImplementedError naming the
triton backend (the backend then runs that program on the cpp backend).

Shapes are small: the interpreter runs every program instance in Python.

On a machine with an NVIDIA GPU, ``LAZYTORCH_TEST_GPU=1`` runs the same file on the device:
the kernels are compiled for the GPU (no interpreter) and buffers are lazytorch's own device
buffers over the real driver (`RealCudaCarrier`), so the whole numerics suite checks the
compiled kernels against the reference interpreter.
"""

from __future__ import annotations

import os

# must be chosen before triton is imported: the interpreter, unless on a real GPU
os.environ.setdefault(
    "TRITON_INTERPRET", "0" if os.environ.get("LAZYTORCH_TEST_GPU") == "1" else "1"
)

import numpy as np
import pytest

pytest.importorskip("triton")  # only where triton is not installed (it is a test extra)
import torch

import lazytorch as lt
from helpers import TorchCPUCarrier
from lazytorch.codegen.triton import PERSISTENT_MAX, kernel_names
from lazytorch.runtime import triton_backend
from lazytorch.runtime.backends import available_backends, get_backend

F = lt.nn.functional
ON_GPU = os.environ.get("LAZYTORCH_TEST_GPU") == "1"
# every test here runs on the triton backend: its ids say [triton] (tests/backend_matrix.py)
pytestmark = [
    pytest.mark.usefixtures("quiet_interpreter", "backend"),
    pytest.mark.backends("triton"),
]


class RealCudaCarrier:
    """Buffers as lazytorch DeviceBuffers on the current GPU (LAZYTORCH_TEST_GPU=1).

    Not resident: the triton backend copies inputs up and results back per run, as for the
    interpreter carrier, so each case compares host arrays.
    """

    def __init__(self) -> None:
        from lazytorch.runtime import cuda_memory

        self._runtime = cuda_memory.runtime()

    def to_device(self, array: np.ndarray):
        return self._runtime.upload(np.ascontiguousarray(array))

    def empty(self, shape: tuple[int, ...], dtype: np.dtype):
        return self._runtime.empty(shape, dtype)

    def to_host(self, buffer) -> np.ndarray:
        return buffer.to_host()


@pytest.fixture(scope="module", autouse=True)
def triton_registered():
    if ON_GPU:
        # a GPU run must not pass by skipping: no device is a failure here
        assert lt.cuda.is_available(), lt.cuda.unavailable_reason()
        if "triton" not in available_backends():
            triton_backend.register(RealCudaCarrier())
    elif "triton" not in available_backends():
        triton_backend.register(TorchCPUCarrier())
    yield


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def ints(*shape, lo=-9, hi=10, seed=0, dtype=np.int64):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def both(fn, *arrays):
    """fn's results on the interpreter and on triton (fresh tensors for each)."""
    outs = []
    for name in ("interpreter", "triton"):
        lt.runtime.clear_cache()
        with lt.backend(name):
            res = fn(*[lt.tensor(a) for a in arrays])
            res = res if isinstance(res, tuple) else (res,)
            outs.append([r.numpy() for r in res])
    return outs


def check(fn, *arrays, rtol=1e-5, atol=1e-6):
    """Compare fn on triton against the interpreter; the kernel count against the schedule."""
    want, got = both(fn, *arrays)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            g, w = g.astype(np.float64), w.astype(np.float64)  # (bfloat16 widened exactly)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    launched = lt.metrics.counters().get("kernels_launched", 0)
    assert launched >= 1  # it ran through Triton, not a fallback
    return got


def triton_schedule(*tensors):
    """The schedule the triton backend compiles (epilogues fused into matmuls)."""
    from lazytorch.scheduler import schedule

    return schedule(lt.debug.program(*tensors), fuse_epilogues=True)


def triton_source(*tensors):
    from lazytorch.codegen.triton import generate

    return generate(triton_schedule(*tensors))


# -- elementwise --------------------------------------------------------------------------------
FLOAT_UNARY = {
    "exp": lt.exp,
    "log": lambda t: lt.log(t.abs() + 0.1),
    "sqrt": lambda t: lt.sqrt(t.abs()),
    "sin": lt.sin,
    "cos": lt.cos,
    "tanh": lt.tanh,
    "sigmoid": lt.sigmoid,
    "erf": lt.erf,
    "atan": lt.atan,
    "log1p": lambda t: lt.log1p(t.abs()),
    "expm1": lt.expm1,
    "neg": lambda t: -t,
    "abs": lt.abs,
    "floor": lt.floor,
    "ceil": lt.ceil,
    "round": lt.round,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_unary(dtype):
    x = rand(3, 43, dtype=dtype) * 3
    x[0, :8] = [0.5, -0.5, 1.5, 2.5, -2.5, 1e-7, -0.0, 0.0]  # rounding ties, tiny, zeros
    fns = list(FLOAT_UNARY.values())
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    check(
        lambda t: tuple(f(t) for f in fns),
        x,
        rtol=rtol,
        atol=1e-7 if dtype == np.float32 else 1e-15,
    )


def test_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 88.0], dtype=np.float32)
    fns = [lt.exp, lt.tanh, lt.sigmoid, lt.atan, lt.expm1, lt.round, lt.floor, lt.abs]
    check(lambda t: tuple(f(t) for f in fns), x)
    check(lambda t: lt.log1p(t), np.array([-1.0, 0.0, np.inf, 1e-10, 3.0], dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_binary(dtype):
    a = rand(4, 9, seed=1, dtype=dtype) * 4
    b = rand(4, 9, seed=2, dtype=dtype) * 4
    b[0, :3] = 0.0
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    check(
        lambda x, y: (
            x + y,
            x - y,
            x * y,
            x / y,
            lt.maximum(x, y),
            lt.minimum(x, y),
            lt.atan2(x, y),
            x // y,
            x % y,
            lt.fmod(x, y),
            x.abs() ** y,
            x**2,
        ),
        a,
        b,
        rtol=rtol,
        atol=1e-6 if dtype == np.float32 else 1e-13,
    )


def test_pow_and_atan2_special_cases():
    a = np.array([-2.0, -2.0, -0.0, 0.0, -np.inf, -1.0, 1.0, np.nan, 0.5, -8.0], np.float32)
    b = np.array([3.0, 0.5, -1.0, -2.0, 0.5, np.inf, np.nan, 0.0, -np.inf, 1 / 3], np.float32)
    check(lambda x, y: (x**y, lt.atan2(x, y), lt.atan2(y, x)), a, b)


def _t(v):
    """A Python number as a 0-d tensor (for ops that take tensors only); tensors as they are."""
    return v if isinstance(v, lt.Tensor) else lt.tensor(v)


# Every binary elementwise primitive, as fn(a, b) where either operand may be one value: a
# Python number (a scalar slot of the program) or a 0-d tensor. Both reach a kernel as one
# value beside the other operand's block, which a helper must broadcast before mixing truth
# values with & or | (`x ** 1.7` failed under Triton's interpreter that way). Entries: the
# dtypes they run on (f: float32/float64, i: int32/int64/int8, b: bool).
SCALAR_BINARY = {
    "add": ("fib", lambda a, b: a + b),
    "sub": ("fi", lambda a, b: a - b),
    "mul": ("fib", lambda a, b: a * b),
    "div": ("fi", lambda a, b: a / b),
    "pow": ("fi", lambda a, b: a**b),
    "floordiv": ("fi", lambda a, b: a // b),
    "remainder": ("fi", lambda a, b: a % b),
    "fmod": ("fi", lambda a, b: lt.fmod(_t(a), b)),
    "atan2": ("f", lambda a, b: lt.atan2(_t(a), _t(b))),
    "maximum": ("fib", lambda a, b: lt.maximum(_t(a), _t(b))),
    "minimum": ("fib", lambda a, b: lt.minimum(_t(a), _t(b))),
    "bitwise_and": ("ib", lambda a, b: a & b),
    "bitwise_or": ("ib", lambda a, b: a | b),
    "bitwise_xor": ("ib", lambda a, b: a ^ b),
    "eq": ("fib", lambda a, b: a == b),
    "ne": ("fib", lambda a, b: a != b),
    "lt": ("fib", lambda a, b: _t(a) < b),
    "le": ("fib", lambda a, b: _t(a) <= b),
    "gt": ("fib", lambda a, b: _t(a) > b),
    "ge": ("fib", lambda a, b: _t(a) >= b),
}
# The single values per kind: integral and not, negative, and a float for integer tensors
# (which promotes: an integer base to a float power).
SCALARS = {"f": (1.7, -2.0, 3), "i": (3, -2, 1.5), "b": (True, False)}


def test_scalar_binary_covers_every_binary_primitive():
    from lazytorch.ir.primitives import PRIMITIVES

    binary = {n for n, p in PRIMITIVES.items() if p.category == "elementwise" and p.nin == 2}
    assert binary == set(SCALAR_BINARY)


def _operand_arrays(kind, dtype):
    if kind == "f":
        return rand(3, 11, seed=7, dtype=dtype) * 3
    if kind == "b":
        return rand(3, 11, seed=7) > 0
    x = ints(3, 11, lo=1, hi=6, seed=7, dtype=dtype)  # never 0: an integer division by it
    return x * np.where(ints(3, 11, seed=8) < 0, -1, 1).astype(dtype)


DTYPES_OF_KIND = {
    "f": (np.float32, np.float64),
    "i": (np.int32, np.int64, np.int8),
    "b": (np.bool_,),
}


@pytest.mark.parametrize(
    "op,kind,dtype",
    [
        pytest.param(op, k, d, id=f"{op}-{np.dtype(d).name}")
        for op, (kinds, _) in SCALAR_BINARY.items()
        for k in kinds
        for d in DTYPES_OF_KIND[k]
    ],
)
def test_binary_op_with_one_value_on_either_side(op, kind, dtype):
    fn = SCALAR_BINARY[op][1]
    x = _operand_arrays(kind, dtype)
    for s in SCALARS[kind]:
        if op.startswith("bitwise") and isinstance(s, float):
            continue  # bitwise ops take integers only
        if op == "pow" and kind == "i" and isinstance(s, int) and s < 0:
            s = 2  # an integer tensor to a negative integer power is refused (as in torch)

        def f(t, s=s):
            e = abs(s) if kind == "i" else s  # s ** t: t is the (signed) exponent
            if op == "pow" and kind == "i":
                t_exp = t.abs()  # non-negative integer exponents
                return (fn(t, s), fn(e, t_exp), fn(t, lt.tensor(s)), fn(lt.tensor(e), t_exp))
            return (fn(t, s), fn(s, t), fn(t, lt.tensor(s)), fn(lt.tensor(s), t))

        check(f, x, rtol=1e-5 if dtype != np.float64 else 1e-12, atol=1e-6)


def test_one_truth_value_beside_a_block():
    """Truth values computed from 0-d operands (a comparison, a cast to bool, their &) meet
    a block's in &, |, ^ and the bool forms of add, mul, maximum and minimum."""
    x, s = rand(3, 11, seed=9), np.array(2.0, np.float32)

    def f(t, u):
        one = u > 1.0  # a 0-d comparison
        blk = t > 0
        return (
            one & blk,
            blk | one,
            one ^ blk,
            one + blk,
            blk * one,
            lt.maximum(one, blk),
            lt.minimum(blk, one),
            u.bool() & blk,
            ~one | blk,
            (one & (u < 3.0)) & blk,
            (one == lt.tensor(True)) | blk,
            lt.where(one & blk, t, -t),
        )

    check(f, x, s)
    check(f, x, s * 0.25)  # the other truth value


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_integer_ops(dtype):
    a = ints(3, 11, seed=3, dtype=dtype)
    b = ints(3, 11, lo=1, hi=7, seed=4, dtype=dtype) * np.where(
        ints(3, 11, seed=5) < 0, -1, 1
    ).astype(dtype)
    e = ints(3, 11, lo=-2, hi=6, seed=6, dtype=dtype)
    check(
        lambda x, y, z: (
            x + y,
            x - y,
            x * y * 31,  # wraps for int8
            x // y,
            x % y,
            lt.fmod(x, y),
            lt.maximum(x, y),
            lt.minimum(x, y),
            x.abs(),
            -x,
            x & y,
            x | y,
            x ^ y,
            ~x,
            x**z,
            x < y,
            x == y,
        ),
        a,
        b,
        e,
    )


def test_integer_division_by_zero_raises():
    a, b = ints(6, seed=1), np.array([1, 2, 0, 3, 1, 1])
    lt.runtime.clear_cache()
    with lt.backend("triton"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            (lt.tensor(a) // lt.tensor(b)).numpy()


def test_bool_ops_and_where():
    a = rand(5, 6, seed=1)
    b = rand(5, 6, seed=2)
    check(
        lambda x, y: (
            (x > 0) & (y > 0),
            (x > 0) | (y < 0),
            (x > 0) ^ (y > 0),
            ~(x > y),
            lt.where(x > y, x, y * 2),
            x.masked_fill(y > 0.5, -1.0),
            (x >= y).sum(1),
            (x > 0).any(1),
            (x > -2).all(0),
        ),
        a,
        b,
    )


def test_casts():
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 2.9, 100.2, -100.9], dtype=np.float32)
    check(
        lambda t: (
            t.to(lt.int32),
            t.to(lt.int64),
            t.to(lt.bool),
            t.to(lt.float64),
            t.to(lt.int32).to(lt.float32),
            (t > 0).to(lt.float32),
            (t > 0).to(lt.int64),
            t.to(lt.float16).to(lt.float32),
            t.double().float(),
        ),
        x,
    )


def test_bitcasts_read_the_same_bits():
    # x.view(dtype) inside a kernel (a flip first, so the bits are of a computed value)
    x = np.array([-2.7, -0.0, 0.0, 1e-40, np.inf, -np.inf, 3.5, 65504.0], dtype=np.float32)
    check(
        lambda t: (
            t.flip(0).view(lt.int32),
            t.flip(0).view(lt.int32).view(lt.float32) * 2,
            t.flip(0).to(lt.float16).view(lt.int16),
            t.flip(0).to(lt.bfloat16).view(lt.int16),
            t.flip(0).double().view(lt.int64),
        ),
        x,
    )
    # (128: bfloat16's smallest normal; the interpreter's bfloat16 store flushes subnormals)
    words = np.array([0, 128, -1, 15360, -16384, 32640, 16256, -32768], dtype=np.int16)
    want, got = both(lambda w: (w.flip(0).view(lt.bfloat16), w.flip(0).view(lt.float16)), words)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and (g.view(np.uint16) == w.view(np.uint16)).all()
    flags = np.array([0, 1, 1, 0], dtype=np.uint8)
    check(lambda f: (f.flip(0).view(lt.bool), (f > 0).flip(0).view(lt.int8)), flags)


def test_float16_computes_in_float32_rounding_each_step():
    x = rand(4, 8, seed=1).astype(np.float16)
    check(lambda t: (t * 3 + 1, lt.exp(t), t.sum(1), t.amax(0)), x, rtol=1e-3, atol=1e-3)


def test_bfloat16_computes_in_float32_rounding_each_step():
    x = rand(4, 8, seed=1).astype(lt.bfloat16.np)
    # elementwise: float32 math rounded once per primitive, the same bits as the reference
    want, got = both(lambda t: (t * 3 + 1, lt.exp(t) / 3, lt.tanh(t).to(lt.float32)), x)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and (g.view(np.uint16) == w.view(np.uint16)).all()
    sums = lambda t: (t.sum(1), t.amax(0), F.softmax(t, 1), t.float().bfloat16())  # noqa: E731
    check(sums, x, rtol=1e-2, atol=1e-2)


def test_bfloat16_matmul_uses_tl_dot_and_accumulates_in_float32():
    a = rand(24, 40, seed=2).astype(lt.bfloat16.np)
    b = rand(40, 20, seed=3).astype(lt.bfloat16.np)
    check(lambda x, y: (x @ y, F.relu(x @ y) * 2), a, b, rtol=1e-2, atol=1e-2)
    src = triton_source(lt.tensor(a) @ lt.tensor(b))
    assert "tl.dot(a, b, acc)" in src and "tl.bfloat16" in src


def test_a_16_bit_linear_with_bias_rounds_once_in_the_epilogue():
    # The product stays float32 into the epilogue, which adds the bias and rounds once
    # (torch's addmm); the interpreter's reference does the same sums in another order.
    x = rand(24, 40, seed=2).astype(lt.bfloat16.np)
    w = rand(20, 40, seed=3).astype(lt.bfloat16.np)
    b = rand(20, seed=4).astype(lt.bfloat16.np)
    (want,), (got,) = both(lambda x, w, b: F.relu(F.linear(x, w, b)), x, w, b)
    assert got.dtype == want.dtype == lt.bfloat16.np
    assert (got.view(np.uint16) == want.view(np.uint16)).mean() > 0.99
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2)
    src = triton_source(F.linear(lt.tensor(x), lt.tensor(w), lt.tensor(b)))
    # one kernel: the bias added to the float32 tile, rounded, stored; the product never is
    assert "tl.dot(a, b, acc)" in src and "NUM_KERNELS = 1" in src
    assert "(product not stored)" in src and "v2 = acc" in src


# -- broadcasting, 0-d, views ----------------------------------------------------------------
def test_broadcasting_scalars_and_size_one_dims():
    a, b, c = rand(3, 1, 5, seed=1), rand(1, 4, 1, seed=2), rand(5, seed=3)
    s = np.array(2.5, dtype=np.float32)
    check(lambda x, y, z, w: (x + y * z - w, (x * 2.5 + 1) / 3.0, w * w), a, b, c, s)


def test_zero_dim_results():
    check(lambda t: (t.sum(), t.amax(), (t * 2).mean()), rand(4, 5))


def test_non_contiguous_views():
    x = rand(4, 6, 5, seed=7)
    check(
        lambda t: (
            t.permute(2, 0, 1) * 2,
            t[::2, 1::2].flip(2) + 1,
            t[:, :1, :].expand(4, 3, 5) * t[:, :3, :],
            t.flip(1) - t,
            F.pad(t, (1, 2, 0, 1)) * 3,
            lt.cat([t, t * 2, t[:, :2]], 1),
            t.transpose(0, 2).reshape(5, 24) + 1,
        ),
        x,
    )


def test_long_cats_and_convolution_taps():
    # past CAT_SELECT_MAX inputs: one kernel per run of same-shape pieces, storing each
    # piece at its offset (a 3x3 unfold's nine taps), and one per odd-shaped piece
    x = rand(2, 3, 6, 6, seed=11)
    check(
        lambda t: (
            F.unfold(t, 3, padding=1) * 2,
            lt.cat([t[:, :, i : i + 4] * (i + 1) for i in range(3)] * 4 + [t[:, :, :1]], 2),
        ),
        x,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "stride, padding, dilation", [(1, 1, 1), (2, 1, 1), ((2, 1), (0, 2), (1, 2))]
)
def test_conv2d_extern_and_its_gradients(dtype, stride, padding, dilation):
    # the implicit-GEMM kernel (forward, and the input gradient, itself a conv2d), beside the
    # weight gradient's im2col product; 5 output channels and 7x5 images leave ragged tiles
    x = rand(2, 3, 7, 5, seed=13, dtype=dtype)
    w = rand(5, 3, 3, 2, seed=14, dtype=dtype)

    def fn(t, k):
        t.requires_grad_()
        k.requires_grad_()
        y = F.conv2d(t, k, stride=stride, padding=padding, dilation=dilation)
        (y * y).sum().backward()
        return y.detach(), t.grad, k.grad

    check(fn, x, w, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4)
    src = triton_source(F.conv2d(lt.tensor(x), lt.tensor(w), stride=stride, padding=padding))
    assert src.count("implicit GEMM") == 1, src


def test_gather_by_index_and_out_of_range():
    x = rand(5, 4)
    idx = np.array([0, 3, -1, 2])
    check(lambda t, i: (t[i] * 2, t[:, i]), x, idx)
    lt.runtime.clear_cache()
    with lt.backend("triton"):
        with pytest.raises(IndexError, match="out of bounds"):
            lt.tensor(x)[lt.tensor(np.array([1, 7]))].numpy()


# -- reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, None])
def test_reductions_over_each_axis(axis):
    x = rand(3, 5, 6, seed=11)
    x[1, 2, 3] = 7.0  # a unique maximum
    x[0, 0, 0] = x[0, 0, 1]  # a tie
    kw = {} if axis is None else {"dim": axis}
    check(
        lambda t: (
            t.sum(**kw),
            t.mean(**kw),
            t.amax(**kw),
            t.amin(**kw),
            (t * 0.5 + 1).prod(**kw),
        ),
        x,
    )
    if axis is not None:
        check(lambda t: (t.argmax(axis), t.argmin(axis)), x)
    else:
        check(lambda t: (t.argmax(), t.argmin()), x)


ROWS = {  # 37 rows of 100: 16 rows per program, the last program partly masked
    "float": lambda t: (
        t.sum(1),
        t.amax(1),
        t.amin(1),
        t.argmax(1),
        t.argmin(1),
        (t * 0.01 + 1).prod(1),
    ),
    "stats": lambda t: (t.mean(1), t.var(1), F.softmax(t, 1), F.log_softmax(t, 1)),
    "layer_norm": lambda t: F.layer_norm(t, (100,), lt.arange(100.0) / 50, lt.ones(100) * 0.5),
    "columns": lambda t: (t.t().contiguous().sum(0), t.reshape(37, 4, 25).amax(2)),
    "ints": lambda t: ((t * 10).long().sum(1), (t * 10).int().amax(1), (t > 0).sum(1)),
    "bools": lambda t: ((t > 0).any(1), (t > -3).all(1)),
    "float16": lambda t: (t.half().sum(1), F.softmax(t.half(), 1)),
    "gather": lambda t: (t[:, lt.arange(99, -1, -1)] * lt.arange(100.0)).sum(1),
}


@pytest.mark.parametrize("case", list(ROWS))
def test_short_rows_run_several_to_a_program(case):
    x = rand(37, 100, seed=5)
    x[3, 40] = x[3, 41] = 9.0  # a tie for the maximum: the first index wins
    x[5, 7] = np.nan
    check(
        ROWS[case],
        x,
        rtol={"float16": 2e-3, "bfloat16": 1e-2}.get(case, 1e-5),
        atol={"float16": 2e-3, "bfloat16": 1e-2}.get(case, 1e-6),
    )
    src = triton_source(*_as_tuple(ROWS[case](lt.tensor(x))))
    assert "XBLOCK rows of 100 per program" in src and "XBLOCK=16" in src


def test_long_rows_keep_one_row_per_program_and_errors_report_from_2d_blocks():
    src = triton_source(lt.tensor(rand(3, 1500)).sum(1))
    assert "one program per output row" in src and "XBLOCK" not in src
    x = rand(37, 6)
    check(lambda t, i: t[:, i].sum(1), x, np.array([5, 0, -6, 2]))
    lt.runtime.clear_cache()
    with lt.backend("triton"), pytest.raises(IndexError, match="out of bounds"):
        lt.tensor(x)[:, lt.tensor(np.array([1, 7]))].sum(1).numpy()


def test_reductions_of_integers_and_nans():
    i = ints(4, 7, seed=2)
    check(lambda t: (t.sum(1), t.amax(0), t.amin(1), t.argmax(1), t.prod(0)), i)
    x = rand(3, 6)
    x[1, 4] = np.nan
    check(lambda t: (t.amax(1), t.amin(1), t.argmax(1), t.argmin(1), t.sum(1)), x)


def test_softmax_log_softmax_layer_norm_var():
    x = rand(6, 33, seed=3) * 3
    check(
        lambda t: (
            F.softmax(t, 1),
            F.log_softmax(t, 1),
            F.softmax(t, 0),
            F.layer_norm(t, (33,)),
            t.var(1),
            t.var(0),
        ),
        x,
    )


def test_long_rows_loop():
    n = PERSISTENT_MAX + 905  # past the persistent limit: looped passes, a partial last block
    x = rand(2, n, seed=5)
    x[1, 1234] = 9.0
    got = check(
        lambda t: (t.sum(1), t.amax(1), t.argmax(1), F.softmax(t, 1), t.var(1)),
        x,
        rtol=1e-4,
    )
    assert got[2].tolist() == [int(x[0].argmax()), 1234]
    src = triton_source(F.softmax(lt.tensor(x), 1))
    assert "for roffset in range(0, rnumel, RBLOCK):" in src


def test_against_torch_softmax():
    x = rand(8, 50, seed=9)
    lt.runtime.clear_cache()
    with lt.backend("triton"):
        got = F.softmax(lt.tensor(x), -1).numpy()
    np.testing.assert_allclose(
        got, torch.softmax(torch.from_numpy(x), -1).numpy(), rtol=1e-5, atol=1e-7
    )


# -- structure --------------------------------------------------------------------------------
def test_kernel_count_matches_schedule():
    x = lt.tensor(rand(6, 10))
    for t in (
        (x * 2).exp().sum(1),
        F.softmax(x, 1),
        F.layer_norm(x, (10,)) * 2 + x.sum(0),
        lt.cat([x, x.flip(0)], 1).amax(0),
    ):
        sched = lt.debug.schedule(t)
        src = triton_source(t)
        assert len(kernel_names(src)) == len(sched.kernels) == src.count("@triton.jit\ndef k")
        assert [k.describe() for k in sched.kernels] == [
            line[2:] for line in src.splitlines() if line.startswith("# k")
        ]


def test_softmax_is_one_persistent_kernel_with_three_passes():
    src = triton_source(F.softmax(lt.tensor(rand(4, 8)), 1))
    assert kernel_names(src) == ["k0"]
    assert "# pass 1: max a0" in src and "# pass 2: sum a1" in src and "# pass 3" in src
    assert src.count("tl.exp(") == 1  # exp(x - max) is computed once, reused by pass 3


def test_what_is_not_lowered_raises_naming_the_triton_backend():
    # (the backend then runs the program on the cpp backend: see the fallback test below)
    x = lt.tensor(rand(3, 4, dtype=np.float64))
    with pytest.raises(NotImplementedError, match=r"triton backend: extern argsort of float64"):
        triton_source(x.argsort(1))


# -- random numbers: Philox, bit-identical to the interpreter -----------------------------------
def seeded(fn, *arrays, seed=1234, state=None):
    """fn's results (a list of arrays) on the interpreter and on triton, each run seeded alike
    (`state`: a generator state [seed, offset] to start from instead of `seed`)."""
    outs = []
    for name in ("interpreter", "triton"):
        lt.runtime.clear_cache()
        lt.metrics.reset()
        with lt.backend(name):
            if state is None:
                lt.manual_seed(seed)
            else:
                lt.set_rng_state(lt.tensor(np.array(state, dtype=np.int64)))
            res = fn(*[lt.tensor(a) for a in arrays])
            res = res if isinstance(res, tuple) else (res,)
            outs.append([r.numpy() for r in res])
        if name == "triton":
            assert lt.metrics.counters().get("kernels_launched", 0) >= 1
    return outs


def check_exact(fn, *arrays, **kw):
    """The draws on triton equal the interpreter's bit for bit.

    On a real GPU (LAZYTORCH_TEST_GPU=1) float64 values may differ in the last bit or two:
    float64 normals go through log and cos, and CUDA's libdevice and the C library round
    those differently (both within 1 ulp); float32 and float16 stay exact (computed in
    float64, rounded once).
    """
    want, got = seeded(fn, *arrays, **kw)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if ON_GPU and w.dtype == np.float64:
            np.testing.assert_array_max_ulp(g, w, maxulp=2)
        else:
            np.testing.assert_array_equal(g, w)
    return got


@pytest.mark.parametrize("dtype", [lt.float32, lt.float64, lt.float16, lt.bfloat16])
@pytest.mark.parametrize("shape", [(1,), (7,), (33,), (5, 7), (3, 1, 13)])
def test_rand_and_randn_are_bit_identical(dtype, shape):
    got = check_exact(lambda: (lt.rand(*shape, dtype=dtype), lt.randn(*shape, dtype=dtype)))
    u, z = got
    assert ((u >= 0) & (u < 1)).all() and np.isfinite(z).all()
    assert len(np.unique(u)) > len(u.ravel()) // 2  # not a constant


def test_draws_in_one_program_and_after_earlier_draws():
    def fn():
        a = lt.rand(6, 5)
        b = lt.randn(6, 5)  # the next offset: its own numbers
        c = lt.rand(31, dtype=lt.float64) * 2 - 1
        return a, b, c, a + b * 2

    a, b, _, _ = check_exact(fn)
    assert not np.array_equal(a, b)

    def later():
        lt.rand(17).numpy()  # drawn and run: the generator's offset moves on
        lt.randn(3, 3, dtype=lt.float64).numpy()
        return lt.rand(4, 9), lt.randn(10, dtype=lt.float64)

    check_exact(later)


def test_rand_seed_and_offset_use_all_64_bits():
    # a seed with the top bit set (negative as int64) and an offset whose draw crosses 2**32
    state = [-(2**63) + 0x1234_5678_9ABC, 2**32 - 5]
    check_exact(lambda: (lt.rand(3, 4), lt.randn(11, dtype=lt.float64)), state=state)
    check_exact(lambda: lt.rand(7, dtype=lt.float64), seed=2**64 - 1)


def test_like_randint_and_dropout_are_bit_identical():
    x = rand(5, 7, dtype=np.float64)
    check_exact(lambda t: (lt.rand_like(t), lt.randn_like(t), lt.rand_like(t.float())), x)
    check_exact(lambda: (lt.randint(-3, 10, (4, 9)), lt.randint(5, (13,), dtype=lt.int32)))
    y = rand(6, 11, seed=3)
    # dropout in training fused with the ops around it, and after a reduction
    check_exact(lambda t: F.dropout(t.relu() * 2, 0.3, training=True) + 1, y)
    # (max and subtraction round the same everywhere: the values compare exactly too)
    check_exact(lambda t: (F.dropout(t.amax(1, True) - t, 0.5, training=True), t.amin(1)), y)
    check_exact(lambda t: F.dropout(t.amax(1), 0.5, training=True) * 3, y)  # one per program


def test_rand_lowers_to_philox_helpers():
    src = triton_source(lt.rand(3, 4) + lt.randn(3, 4, dtype=lt.float64))
    assert "def _lt_philox(" in src and "tl.umulhi" in src
    assert "_lt_rand_uniform_f32(" in src and "_lt_rand_normal(" in src


def test_long_scan_rows_loop_over_blocks_with_a_carry():
    n = PERSISTENT_MAX + 905  # past one block: a loop, and a partial last block
    check(lambda t: (t * 2).cumsum(1) + 1, rand(2, n), rtol=1e-4, atol=1e-3)
    check(lambda t: t.cumsum(1), ints(2, n, lo=-100, hi=100, dtype=np.int8))
    check(lambda t: t.cumsum(1), ints(2, n, dtype=np.int32))
    check(lambda t: (t > 0.5).cumsum(1), rand(2, n))
    src = triton_source(lt.tensor(rand(2, n)).cumsum(1))
    assert "for roffset in range(0, rnumel, RBLOCK):" in src and "a0_carry" in src


# -- argsort (extern) ----------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_is_a_stable_sort_of_packed_keys(descending):
    special = np.array([3.0, np.nan, -1.0, 3.0, -np.inf, 0.0, -0.0, 2.0, np.inf, -np.nan])
    x = np.stack([special, rand(10, seed=3)]).astype(np.float32)
    check(lambda t: lt.argsort(t, dim=1, descending=descending), x)
    check(lambda t: lt.argsort(t, dim=0, descending=descending), x.astype(np.float16))
    i32 = np.array([[5, -3, 7, -3, 2**31 - 1, -(2**31), 0]], np.int32)
    check(lambda t: lt.argsort(t, dim=1, descending=descending), i32)
    check(lambda t: lt.argsort(t, dim=1, descending=descending), ints(3, 33, dtype=np.int8))
    check(lambda t: lt.argsort(t > 0, dim=2, descending=descending), rand(2, 3, 50))
    src = triton_source(lt.argsort(lt.tensor(x), dim=1))
    assert "tl.sort(word, 0)" in src and "[extern argsort]" in src


def test_argsort_of_64_bit_values_and_long_rows_is_refused():
    with pytest.raises(NotImplementedError, match="argsort of float64"):
        triton_source(lt.argsort(lt.tensor(rand(2, 5, dtype=np.float64))))
    with pytest.raises(NotImplementedError, match="argsort of rows of"):
        triton_source(lt.argsort(lt.tensor(rand(2, PERSISTENT_MAX + 1))))


# -- scatter kernels -----------------------------------------------------------------------------
IDX = np.array([[0, 1, 2], [2, 2, 0], [2, 1, 2], [4, 0, 4]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_scatter_add_adds_atomically_into_repeated_targets(dtype):
    src = (rand(4, 3) * 10).astype(dtype)
    check(lambda x, s: x.scatter_add(0, lt.tensor(IDX), s * 2), np.zeros((5, 3), dtype), src)
    src_text = triton_source(lt.zeros(5, 3).scatter_add(0, lt.tensor(IDX), lt.ones(4, 3)))
    assert "tl.atomic_add(" in src_text and "[scatter 4x3]" in src_text


def test_scatter_and_index_put_store_at_gathered_indices():
    idx = np.array([[0, 1, 2], [3, 2, 0], [1, 4, 3], [4, 0, 1]])  # distinct per column
    check(lambda x, s: x.scatter(0, lt.tensor(idx), s + 1), rand(5, 3), rand(4, 3, seed=1))

    def put(x, v):
        x = x.clone()
        x[lt.tensor([4, 0, 2])] = v
        return x

    check(put, rand(5, 3), rand(3, 3, seed=2))


def test_scatter_add_under_deterministic_algorithms_is_refused():
    x = lt.zeros(5, 3).scatter_add(0, lt.tensor(IDX), lt.ones(4, 3))
    from lazytorch.codegen.triton import generate

    with pytest.raises(NotImplementedError, match="scatter-add under deterministic"):
        generate(lt.debug.schedule(x), deterministic=True)
    half = lt.zeros(5, 3, dtype=lt.float16).scatter_add(
        0, lt.tensor(IDX), lt.ones(4, 3, dtype=lt.float16)
    )
    with pytest.raises(NotImplementedError, match="store mode 'add' into float16"):
        triton_source(half)


# -- matmul (extern) ----------------------------------------------------------------------------
def check_mm(fn, *arrays, rtol=1e-5, atol=1e-5):
    """`check`, plus: the generated module holds the matmul kernel."""
    check(fn, *arrays, rtol=rtol, atol=atol)
    src = triton_source(fn(*[lt.tensor(a) for a in arrays]))
    assert "[extern matmul]" in src and "def k" in src
    return src


MATMULS = {
    "2d": (lambda a, b: a @ b, (5, 7), (7, 3)),
    "odd_multi_tile": (lambda a, b: a @ b, (37, 45), (45, 70)),
    "batched": (lambda a, b: a @ b, (2, 5, 7), (2, 7, 3)),
    "broadcast_batch": (lambda a, b: a @ b, (3, 5, 7), (7, 4)),
    "broadcast_batch_b": (lambda a, b: a @ b, (5, 7), (2, 3, 7, 4)),
    "a_transposed": (lambda a, b: a.t() @ b, (7, 5), (7, 3)),
    "b_transposed": (lambda a, b: a @ b.t(), (5, 7), (3, 7)),
    "batch_transposed": (lambda a, b: a.transpose(1, 2) @ b, (2, 7, 5), (2, 7, 3)),
    "sliced_offset": (lambda a, b: a[1:, 2:] @ b[:, ::2], (6, 9), (7, 8)),
    "vector": (lambda a, b: a @ b, (5, 7), (7,)),
    "grouped_tiles": (lambda a, b: a @ b, (600, 40), (40, 70)),  # 8-row groups, one partial
    "grouped_batched": (lambda a, b: a @ b, (2, 300, 9), (9, 100)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(MATMULS))
def test_matmul(case, dtype):
    fn, sa, sb = MATMULS[case]
    check_mm(fn, rand(*sa, dtype=dtype), rand(*sb, seed=1, dtype=dtype))


def test_matmul_float16_and_integers():
    a, b = rand(9, 20), rand(20, 6, seed=1)
    check_mm(lambda x, y: x @ y, a.astype(np.float16), b.astype(np.float16), rtol=1e-3, atol=1e-3)
    for dtype in (np.int64, np.int32):
        check_mm(lambda x, y: x @ y, ints(9, 20, dtype=dtype), ints(20, 6, seed=1, dtype=dtype))


def test_large_tensor_core_products_take_large_tiles_and_8_warps():
    a, b, c = rand(130, 64), rand(64, 130, seed=1), rand(130, seed=2)
    h = [v.astype(np.float16) for v in (a, b, c)]
    src = check_mm(lambda x, y, z: x @ y + z, *h, rtol=2e-3, atol=2e-2)
    assert "tiles of 128x128, K blocks of 64" in src and "num_warps=8, num_stages=3" in src
    assert "group_m = tl.minimum(2 - first_m, 8)" in src  # 2 x 2 tiles, visited in a group
    src = triton_source(lt.tensor(a) @ lt.tensor(b))  # float32 without TF32: CUDA cores
    assert "tiles of 64x64" in src and "num_warps=4" in src


def test_matmul_kernel_source():
    src = check_mm(lambda a, b: a @ b.t(), rand(5, 7), rand(3, 7, seed=1))
    assert 'tl.dot(a, b, acc, input_precision="ieee")' in src
    assert "BLOCK_K: tl.constexpr" in src
    src = check_mm(lambda a, b: a @ b, rand(5, 7, dtype=np.float64), rand(7, 3, dtype=np.float64))
    assert "tl.dot" not in src and "tl.sum(a[:, :, None] * b[None, :, :], axis=1)" in src


def test_linear_with_bias_and_mlp():
    x, w1, b1 = rand(6, 10), rand(16, 10, seed=1) * 0.3, rand(16, seed=2)
    w2, b2 = rand(4, 16, seed=3) * 0.3, rand(4, seed=4)
    check(lambda x, w, b: F.linear(x, w, b), x, w1, b1)
    src = triton_source(F.linear(lt.tensor(x), lt.tensor(w1), lt.tensor(b1)))
    assert len(kernel_names(src)) == 1  # the bias is added to each tile of the GEMM

    def mlp(x, w1, b1, w2, b2):
        return F.softmax(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), 1)

    check(mlp, x, w1, b1, w2, b2)


# -- epilogues fused into the GEMM ----------------------------------------------------------------
EPILOGUES = {
    "bias_relu": (lambda x, w, b: F.relu(F.linear(x, w, b)), [(6, 10), (16, 10), (16,)]),
    "gelu_tanh": (
        lambda x, w, b: F.gelu(x @ w.t() + b, approximate="tanh"),
        [(6, 10), (16, 10), (16,)],
    ),
    "residual": (lambda x, w, r: x @ w + r, [(7, 9), (9, 5), (7, 5)]),
    "row_scale": (lambda x, w, s: (x @ w) * s[:, None], [(7, 9), (9, 5), (7,)]),
    "python_scalars": (lambda x, w: (x @ w) * 2.5 - 1, [(7, 9), (9, 5)]),
    "batched": (lambda a, b, c: (a @ b).tanh() + c, [(3, 5, 7), (3, 7, 4), (4,)]),
    "broadcast_batch": (lambda a, b: F.silu(a @ b), [(2, 3, 5, 7), (7, 6)]),
    "one_row": (lambda a, b, c: a @ b + c, [(1, 7), (7, 9), (9,)]),
    "one_column": (lambda a, b: (a @ b).sigmoid(), [(7, 5), (5, 1)]),
    "multi_tile": (lambda a, b, c: F.relu(a @ b + c), [(37, 45), (45, 70), (70,)]),
}


def matmul_steps(fn, *arrays):
    """The triton schedule of fn(*arrays) and its matmul steps."""
    sched = triton_schedule(*_as_tuple(fn(*[lt.tensor(a) for a in arrays])))
    return sched, [s for s in sched.steps if getattr(s, "kind", "") == "matmul"]


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(EPILOGUES))
def test_epilogue_is_computed_on_the_gemm_tiles(case, dtype):
    fn, shapes = EPILOGUES[case]
    arrays = [rand(*s, seed=i, dtype=dtype) for i, s in enumerate(shapes)]
    check(fn, *arrays, rtol=1e-5, atol=1e-5)
    sched, mms = matmul_steps(fn, *arrays)
    assert len(sched.steps) == 1 and mms[0].epilogue is not None, str(sched)
    assert not mms[0].store_output  # the product never goes to memory
    # the C++ backend's schedule is the same (it runs the epilogue on its GEMM's blocks)
    cpu = lt.debug.schedule(*_as_tuple(fn(*[lt.tensor(a) for a in arrays])))
    assert len(cpu.steps) == 1 and cpu.steps[0].epilogue is not None


def test_epilogue_kernel_source_reads_like_triton():
    x, w, b = rand(6, 10), rand(16, 10, seed=1), rand(16, seed=2)
    src = triton_source(F.relu(F.linear(lt.tensor(x), lt.tensor(w), lt.tensor(b))))
    assert kernel_names(src) == ["k0"]
    assert "# epilogue k1 [pointwise 6x16]: fused[add, maximum]" in src
    assert "v0 = acc  # the product, b3" in src
    assert "tl.load(b2 + col, mask=nmask, other=0)" in src  # the bias: one row of the tile
    assert "tl.store(b4 + (col + row * 16), v4, mask=xmask)" in src
    assert "tl.store(b3" not in src  # the product is not stored


def test_epilogue_float16_and_integer_products():
    a, b, c = rand(9, 20), rand(20, 6, seed=1), rand(6, seed=2)
    h = [v.astype(np.float16) for v in (a, b, c)]
    check(lambda x, y, z: (x @ y) * z + 1, *h, rtol=2e-3, atol=2e-3)
    ia, ib = ints(9, 20, dtype=np.int32), ints(20, 6, seed=1, dtype=np.int32)
    check(lambda x, y: (x @ y) // 3 + (x @ y) % 5, ia, ib)
    _, mms = matmul_steps(lambda x, y: (x @ y) // 3, ia, ib)
    assert mms[0].epilogue is not None


def test_epilogue_integer_division_by_zero_raises():
    ia, ib = ints(4, 5), ints(5, 3, seed=1)
    z = np.array([1, 0, 2], dtype=np.int64)
    for name in ("interpreter", "triton"):
        lt.runtime.clear_cache()
        with (
            lt.backend(name),
            pytest.raises(
                RuntimeError, match=r"floordiv: ZeroDivisionError \(integer division by zero\)"
            ),
        ):
            (lt.tensor(ia) @ lt.tensor(ib) // lt.tensor(z)).numpy()


def test_product_also_read_elsewhere_is_stored():
    a, b = rand(7, 9), rand(9, 5, seed=1)
    check(lambda x, y: ((x @ y).relu(), x @ y), a, b)
    _, mms = matmul_steps(lambda x, y: ((x @ y).relu(), x @ y), a, b)
    assert mms[0].epilogue is not None and mms[0].store_output  # an output: stored too
    check(lambda x, y: ((x @ y) + 1) * (x @ y).sum(0), a, b)


@pytest.mark.parametrize(
    "fn, shapes, why",
    [
        (lambda a, b: (a @ b).t() + 1, [(5, 5), (5, 5)], "reads the product at"),
        (lambda a, b: (a @ b).t() + 1, [(5, 7), (7, 4)], "reads the product at"),
        (lambda a, b: (a @ b)[:, :2] + 1, [(5, 7), (7, 4)], "not the product's"),
        (lambda a, b: F.softmax(a @ b, 1), [(5, 7), (7, 4)], "is a reduction kernel"),
        (lambda a, b: (a @ b) + 1, [(1, 7), (7, 1)], "single element"),
    ],
)
def test_epilogue_refusals_are_logged(fn, shapes, why, caplog):
    arrays = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    check(fn, *arrays)
    with caplog.at_level("DEBUG", logger="lazytorch.fusion"):
        sched, mms = matmul_steps(fn, *arrays)
    assert mms[0].epilogue is None and len(sched.steps) == 2
    assert any(why in r.getMessage() for r in caplog.records), [
        r.getMessage() for r in caplog.records
    ]


def test_two_products_in_one_epilogue_fuse_one():
    a, b, c, d = rand(6, 8), rand(8, 5, seed=1), rand(6, 3, seed=2), rand(3, 5, seed=3)
    check(lambda w, x, y, z: F.relu(w @ x + y @ z), a, b, c, d)
    sched, mms = matmul_steps(lambda w, x, y, z: F.relu(w @ x + y @ z), a, b, c, d)
    assert len(sched.steps) == 2 and [m.epilogue is not None for m in mms] == [False, True]


# -- scan ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumsum_over_each_axis(axis):
    check(lambda t: (t * 2).cumsum(axis) + 1, rand(3, 4, 5))
    check(lambda t: t.cumsum(axis), ints(3, 4, 5))
    check(lambda t: (t > 0).cumsum(axis), rand(3, 4, 5))


def test_cumsum_small_types():
    x = rand(4, 40)
    check(lambda t: t.cumsum(1), x.astype(np.float16), rtol=1e-3, atol=1e-3)
    check(lambda t: t.cumsum(1), ints(4, 40, lo=-100, hi=100, dtype=np.int8))
    check(lambda t: t.cumsum(1), ints(4, 40, dtype=np.int32))
    src = triton_source(lt.tensor(x).cumsum(1))
    assert "tl.cumsum(" in src and "[scan 4 | 40]" in src


def test_empty_values_run_on_the_interpreter():
    lt.runtime.clear_cache()
    with lt.backend("triton"):
        out = (lt.tensor(np.zeros((0, 3), np.float32)) * 2).sum(0).numpy()
    np.testing.assert_array_equal(out, np.zeros(3, np.float32))
    assert type(get_backend("triton")).__name__ == "TritonBackend"


# -- MAX_AUTOTUNE ----------------------------------------------------------------------------------
def _autotune_cases():
    return [
        (lambda t: (t * 2 + 1).exp(), (rand(3, 700),)),  # pointwise: XBLOCK candidates
        (lambda t: t.sum(1), (rand(2, PERSISTENT_MAX + 905),)),  # looped: RBLOCK candidates
        (lambda a, b: a @ b, (rand(70, 40), rand(40, 90, seed=1))),  # matmul tiles
        (
            lambda a, b: a @ b,
            (rand(33, 9, dtype=np.float64), rand(9, 20, seed=1, dtype=np.float64)),
        ),
        (  # matmul tiles with an epilogue
            lambda a, b, c: F.relu(a @ b + c),
            (rand(70, 40), rand(40, 90, seed=1), rand(90, seed=2)),
        ),
    ]


@pytest.mark.parametrize("case", range(5))
def test_every_autotune_candidate_computes_the_same_values(case, monkeypatch):
    """The tuner may pick any candidate: force each in turn and compare with the interpreter."""
    fn, arrays = _autotune_cases()[case]
    with lt.backend("interpreter"):
        want = fn(*[lt.tensor(a) for a in arrays]).numpy()
    picked = []
    for i in range(4):
        monkeypatch.setattr(
            triton_backend.Tuner,
            "_choose",
            lambda self, name, kernel, grid, args, configs, i=i: (
                picked.append(len(configs)) or configs[i % len(configs)]
            ),
        )
        lt.runtime.clear_cache()
        with lt.backend("triton"), lt._config.max_autotune(True):
            got = fn(*[lt.tensor(a) for a in arrays]).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert max(picked) > 1  # there was a choice to make


class _Kernel:
    """Stands in for a @triton.jit kernel: launches record their config, some fail."""

    def __init__(self, failing):
        self.failing = failing
        self.launched = []

    def __getitem__(self, grid):
        def launch(*args, **config):
            if config["BLOCK"] in self.failing:
                raise RuntimeError(f"OutOfResources: shared memory for BLOCK={config['BLOCK']}")
            self.launched.append(config["BLOCK"])

        return launch


def test_autotune_skips_candidates_that_fail_to_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))
    tuner = triton_backend.Tuner("digest", TorchCPUCarrier())
    kernel = _Kernel(failing={256})
    tuner("k0", kernel, lambda c: (1,), (), [{"BLOCK": 256}, {"BLOCK": 64}])
    assert tuner.chosen["k0"] == {"BLOCK": 64} and set(kernel.launched) == {64}
    with pytest.raises(RuntimeError, match="OutOfResources: shared memory for BLOCK=256"):
        tuner("k1", _Kernel(failing={256, 64}), lambda c: (1,), (), [{"BLOCK": 256}, {"BLOCK": 64}])


def test_float32_products_take_k_blocks_of_32_for_large_tiles():
    from lazytorch.codegen.triton import TUNE_MATMUL_F32, generate

    a, b = lt.tensor(rand(200, 64)), lt.tensor(rand(64, 200, seed=1))
    bt = lt.tensor(rand(200, 64, seed=2))
    src = generate(triton_schedule(a @ bt.T), tf32=True)  # B K-major
    assert "tiles of 128x128, K blocks of 32" in src and 'input_precision="tf32"' in src
    src = generate(triton_schedule(a @ b), tf32=True)  # B row-major: copied K-major
    assert "tiles of 128x256, K blocks of 32" in src and "copied K-major" in src
    assert all(bk == 32 for *_, bk in TUNE_MATMUL_F32)  # 3 stages fit in 163 KiB


def test_autotune_choices_are_timed_once_and_kept_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYTORCH_CACHE_DIR", str(tmp_path))
    x = rand(2, PERSISTENT_MAX + 905)
    for _ in range(2):  # the second time, a new program object: as a new process would be
        lt.runtime.clear_cache()
        with lt.backend("triton"), lt._config.max_autotune(True):
            got = lt.tensor(x).sum(1).numpy()
        np.testing.assert_allclose(got, x.sum(1), rtol=1e-4, atol=1e-3)
    c = lt.metrics.counters()
    assert c["autotune_benchmarks"] == 1 and c["autotune_disk_hits"] == 1, c
    src = triton_source(lt.tensor(x).sum(1))
    assert "tuner(" not in src  # the default mode launches with fixed block sizes
    from lazytorch.codegen.triton import generate

    tuned = generate(lt.debug.schedule(lt.tensor(x).sum(1)), autotune=True)
    assert 'tuner("k0", k0, lambda c: (2,)' in tuned and "'RBLOCK': 2048" in tuned


def test_compile_max_autotune_mode_turns_tuning_on():
    seen = []
    f = lt.compile(lambda t: t.sum(1), mode="max-autotune", options={"materialize_outputs": True})

    def spy(fn):
        def inner(*a, **k):
            seen.append(lt._config.max_autotune_enabled())
            return fn(*a, **k)

        return inner

    f._fn = spy(f._fn)
    f(lt.tensor(rand(2, 5)))
    assert seen == [True] and not lt._config.max_autotune_enabled()


def test_float32_matmul_precision_high_allows_tf32():
    a, b = rand(20, 24), rand(24, 18, seed=1)
    try:
        lt.set_float32_matmul_precision("high")
        lt.runtime.clear_cache()
        with lt.backend("triton"):
            got = (lt.tensor(a) @ lt.tensor(b)).numpy()
        exe = next(iter(lt.runtime.executor._programs.values()))
        assert 'input_precision="tf32"' in exe.source and "(tf32)" in exe.source
        # TF32 keeps 10 mantissa bits of each input (the interpreter may compute exactly)
        np.testing.assert_allclose(got, a @ b, rtol=1e-2, atol=1e-2)
        lt.set_float32_matmul_precision("highest")
        with lt.backend("triton"):
            (lt.tensor(a) @ lt.tensor(b)).numpy()
        sources = [e.source for e in lt.runtime.executor._programs.values()]
        assert len(sources) == 2 and 'input_precision="ieee"' in sources[1]  # a new program
    finally:
        lt.set_float32_matmul_precision("highest")


def test_tf32_copies_a_row_major_b_k_major_first():
    """TF32 tensor cores take K-major operands: a row-major B ([K, N], N contiguous) is
    copied into a workspace by a transpose kernel, reused by every run; a K-major B
    (``x @ w.T``, as nn.Linear stores weights) and IEEE float32 products are read as
    they are. Values: the same product (the interpreter computes tl.dot exactly; a GPU in
    TF32)."""
    rng = np.random.default_rng(5)
    big = rng.standard_normal((3, 100, 150)).astype(np.float32)
    cases = {
        # a sliced B: offset, rows of 150, masks on both edges of the 64x64 tiles
        "sliced B": lambda t, a, w: t.relu(a @ w[1, 3:99, 10:140] + 1.0),
        "batched A, one B": lambda t, a, w: a.reshape(2, 35, 96) @ w[0, :96, :130],
        "K-major B": lambda t, a, w: a @ w[2, :130, :96].T,
        # one buffer as both operands: A still reads it, B the workspace
        "x @ x": lambda t, a, w: a[:, :70] @ a[:, :70],
    }
    a = rng.standard_normal((70, 96)).astype(np.float32)
    try:
        lt.set_float32_matmul_precision("high")
        for name, f in cases.items():
            lt.runtime.clear_cache()
            with lt.backend("triton"):
                for run in range(2):  # the second run reuses the workspace
                    x = a + run
                    got = f(lt, lt.tensor(x), lt.tensor(big)).numpy()
                    want = f(torch, torch.from_numpy(x), torch.from_numpy(big)).numpy()
                    # a GPU rounds each input to TF32's 10 mantissa bits (products of 96
                    # terms near 10 in size: errors to ~0.04); a misplaced element of the
                    # workspace would be off by the size of the values
                    rtol, atol = (1e-2, 5e-2) if ON_GPU else (1e-4, 1e-3)
                    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
            (exe,) = lt.runtime.executor._programs.values()
            transposed = "copied K-major for TF32" in exe.source
            assert transposed == (name != "K-major B"), name
            assert exe.launches == len(exe.sched.steps) + transposed
            if transposed:
                assert len(exe._workspace) == 1
        lt.set_float32_matmul_precision("highest")
        src = triton_source(lt.tensor(a) @ lt.tensor(big[0, :96, :130]))
        assert "copied K-major for TF32" not in src and "WORKSPACE = {}" in src
    finally:
        lt.set_float32_matmul_precision("highest")


def test_what_is_not_lowered_runs_on_the_cpp_backend_and_says_so(caplog):
    x = rand(3, 5, dtype=np.float64)
    lt.runtime.clear_cache()
    lt.metrics.reset()
    with caplog.at_level("INFO", logger="lazytorch.compile"), lt.backend("triton"):
        got = lt.tensor(x).argsort(1, descending=True).numpy()
    np.testing.assert_array_equal(got, np.argsort(-x, axis=1, kind="stable"))
    assert lt.metrics.counters()["triton_fallbacks"] == 1
    assert any(
        "extern argsort of float64" in r.getMessage()
        and "runs on the cpp backend" in r.getMessage()
        for r in caplog.records
    ), [r.getMessage() for r in caplog.records]


def test_a_dump_of_a_triton_program_holds_its_module_and_its_own_schedule(tmp_path):
    from lazytorch.runtime import observe

    x, w, b = rand(6, 10), rand(16, 10, seed=1), rand(16, seed=2)
    lt.runtime.clear_cache()
    observe.set_dump_dir(tmp_path)
    try:
        with lt.backend("triton"):
            lt.materialize(F.relu(F.linear(lt.tensor(x), lt.tensor(w), lt.tensor(b))))
    finally:
        observe.set_dump_dir(None)
    folder = tmp_path / "000"
    assert not (folder / "program.cpp").exists()
    src = (folder / "program.py").read_text()
    assert src.startswith('"""lazytorch program') and "@triton.jit" in src
    # the schedule the Triton backend ran: the epilogue inside the GEMM
    assert "+ epilogue[add, maximum] (product not stored)" in (folder / "schedule.txt").read_text()


def test_long_persistent_rows_spread_over_more_warps():
    from lazytorch.codegen.triton import generate

    for width, warps in ((4096, 16), (2048, 8), (1024, None), (64, None)):
        x = lt.tensor(rand(4, width))
        sched = triton_schedule(x.softmax(-1))
        src = generate(sched)
        launch = next(line for line in src.splitlines() if line.strip().startswith("k0["))
        if warps is None:
            assert "num_warps" not in launch, launch
        else:
            assert f"num_warps={warps}, enable_fp_fusion=False)" in launch, launch
            # what precompile builds
            assert f"'options': {{'num_warps': {warps}, 'enable_fp_fusion': False}}" in src
    check(lambda t: t.softmax(-1), rand(3, 4096))


def test_k_bound_leaves_the_gemm_masks_when_k_divides_into_blocks():
    from lazytorch.codegen.triton import generate

    for k, bounded in ((256, False), (100, True)):
        a, b = lt.tensor(rand(64, k)), lt.tensor(rand(k, 48, seed=1))
        src = generate(triton_schedule(a @ b))
        assert (f"(kk[None, :] < {k})" in src) == bounded, src
        assert (f"(kk[:, None] < {k})" in src) == bounded, src
        check(lambda x, y: x @ y, rand(64, k), rand(k, 48, seed=1), rtol=1e-4, atol=1e-4)
