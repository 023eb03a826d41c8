"""Tensor creation against torch: from data, fills, *_like, ranges, eye, dtype and device args.

Creation ops take no tensor inputs, so most tests are ``check(lambda t: t.op(...))``: the
same call on torch and on lazytorch (lazy and sync), compared in dtype, shape and values.
"""

from __future__ import annotations

import array
import collections
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, DTYPE_PAIRS, FLOATS, INTS, arr, check, check_raises

NAN, INF = math.nan, math.inf


def dt(lib, name):
    """The dtype called `name` in torch or lazytorch."""
    return DTYPE_PAIRS[name][0 if lib is lt else 1]


# -- tensor() -------------------------------------------------------------------------------------
DATA = [
    0,
    -3,
    2.5,
    True,
    False,
    2**62,
    -(2**63),
    1e300,
    NAN,
    -INF,
    [],
    [1, 2, 3],
    [1.0, 2.5],
    [True, False],
    [1, 2.5],  # mixed int/float is float
    [True, 2],  # mixed bool/int is int
    [True, 2.5],
    [[1, 2], [3, 4]],
    [[1.5], [2.5], [-0.0]],
    [[[1]], [[2]]],
    [[]],
    [[], []],
    (1, 2),
    ((1, 2), (3, 4)),
    [(1, 2), [3, 4]],
    [np.float32(1.5), np.float32(2)],
    [np.int8(3), 4],
]


@pytest.mark.parametrize("data", DATA, ids=repr)
def test_tensor_from_python_data(data):
    check(lambda t: t.tensor(data))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "data",
    [[1, 0, 3], [1.7, -1.2, 0.0], [True, False], 5, -2.9, [[1, 2], [3, 4]], [-1, 300]],
    ids=repr,
)
def test_tensor_with_dtype(data, dtype):
    # Conversions: float -> int truncates toward zero; anything -> bool is `!= 0`; values
    # that do not fit an integer dtype are a RuntimeError (uint8 takes -255..-1, wrapped).
    check(lambda t: t.tensor(data, dtype=dt(t, dtype)))


def test_tensor_integer_overflow_rules():
    # An int that does not fit int64 is an error, as in torch.
    check_raises(lambda t: t.tensor(2**63))
    check_raises(lambda t: t.tensor([1, 2**64]))
    check(lambda t: t.tensor([-1, 300], dtype=t.int16))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 3)])
def test_tensor_from_numpy_array(shape, dtype):
    a = arr(*shape, dtype=dtype, seed=1)
    check(lambda t: t.tensor(a))  # keeps the array's dtype
    check(lambda t: t.tensor(a, dtype=t.float64))
    check(lambda t: t.as_tensor(a))


@pytest.mark.parametrize("dtype", ALL)
def test_tensor_from_numpy_scalar(dtype):
    v = arr(1, dtype=dtype, seed=2)[0]  # a NumPy scalar such as np.int16(3)
    check(lambda t: t.tensor(v))
    check(lambda t: t.tensor(np.array(v)))


def test_tensor_from_non_contiguous_array():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in [a.T, a[:, ::2], a[1:3, 2:5], np.broadcast_to(a[0], (3, 6))]:
        check(lambda t, view=view: t.tensor(view))
        check(lambda t, view=view: t.as_tensor(view))
        check(lambda t, view=view: t.from_numpy(view))


def test_negative_strides_are_accepted_unlike_torch():
    # torch refuses arrays with negative strides (it would share their memory); lazytorch
    # copies, so it accepts them. A deliberate, documented difference.
    a = np.arange(12, dtype=np.int16).reshape(3, 4)[::-1, ::-2]
    with pytest.raises(ValueError):
        torch.from_numpy(a)
    for make in [lt.tensor, lt.as_tensor, lt.from_numpy]:
        x = make(a)
        assert x.dtype is lt.int16
        np.testing.assert_array_equal(x.numpy(), a)


def test_tensor_from_tensors():
    check(lambda t: t.tensor([t.tensor(1.5), t.tensor(2.0)]))
    check(lambda t: t.tensor(t.ones(2, 3), dtype=t.int32))
    check(lambda t: t.tensor(t.arange(4) * 2))


def test_tensor_copies_its_input():
    x = lt.ones(3)
    y = lt.tensor(x)
    x.add_(1)  # a later in-place op on the source must not reach the copy
    np.testing.assert_array_equal(y.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])
    data = [1.0, 2.0]
    z = lt.tensor(data)
    data[0] = 9.0
    np.testing.assert_array_equal(z.numpy(), [1, 2])


# Any Python sequence is data, as torch's PySequence_Check reads it (reinforce.py of
# pytorch/examples builds its returns in a deque)
SEQUENCES = [
    collections.deque([1.0, 2.5]),
    collections.deque([[1, 2], [3, 4]]),
    [collections.deque([1, 2]), (3, 4)],
    range(4),
    array.array("f", [1.5, 2.0]),
    collections.UserList([1, 2]),
]


@pytest.mark.parametrize("data", SEQUENCES, ids=repr)
def test_tensor_from_other_sequences(data):
    check(lambda t: t.tensor(data))


@pytest.mark.parametrize(
    "data",
    [
        *([1, [2, 3]], [[1, 2], [3]], [[1], 2], "abc", ["a", "b"], None, [None], {1: 2}),
        *(object(), {1, 2}, b"ab", collections.deque([1, [2]])),
    ],
    ids=lambda d: "object()" if type(d) is object else repr(d),  # no address: same in every run
)
def test_tensor_rejects_bad_data(data):
    # Ragged lists and non-numeric data: the same exception type as torch.
    check(lambda t: t.tensor(data))


@pytest.mark.parametrize("dtype", ALL)
def test_tensor_device_and_dtype_args(dtype):
    check(lambda t: t.tensor([1, 2], dtype=dt(t, dtype), device="cpu"))
    check(lambda t: t.tensor([1, 2], dtype=dt(t, dtype), device=t.device("cpu")))
    x = lt.tensor([1, 2], device="cpu")
    assert x.device.type == "cpu"


def test_dtype_given_by_name_or_alias():
    for alias in ["float", "double", "half", "long", "int", "short", "bool"]:
        check(lambda t, alias=alias: t.tensor([1, 0], dtype=getattr(t, alias)))


# -- devices -------------------------------------------------------------------------------------
FACTORIES = {
    "tensor": lambda t, **kw: t.tensor([1.0], **kw),
    "zeros": lambda t, **kw: t.zeros(2, **kw),
    "ones": lambda t, **kw: t.ones(2, **kw),
    "empty": lambda t, **kw: t.empty(2, **kw),
    "full": lambda t, **kw: t.full((2,), 1.0, **kw),
    "arange": lambda t, **kw: t.arange(3, **kw),
    "linspace": lambda t, **kw: t.linspace(0, 1, 3, **kw),
    "eye": lambda t, **kw: t.eye(2, **kw),
    "rand": lambda t, **kw: t.rand(2, **kw),
    "randn": lambda t, **kw: t.randn(2, **kw),
    "randint": lambda t, **kw: t.randint(0, 3, (2,), **kw),
    "randperm": lambda t, **kw: t.randperm(3, **kw),
    "as_tensor": lambda t, **kw: t.as_tensor([1.0], **kw),
    "scalar_tensor": lambda t, **kw: t.scalar_tensor(1.0, **kw),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_device_cpu_is_accepted(name):
    make = FACTORIES[name]
    for device in ["cpu", lt.device("cpu")]:
        x = make(lt, device=device)
        assert x.device.type == "cpu"
        lt.materialize(x)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_device_cuda_raises_a_clear_error(name):
    # No CUDA backend: RuntimeError that names the device (torch's CPU build raises one too).
    with pytest.raises(RuntimeError, match="cuda"):
        FACTORIES[name](lt, device="cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        FACTORIES[name](lt, device="cuda:0")


def test_to_cuda_raises():
    x = lt.ones(2)
    with pytest.raises(RuntimeError, match="cuda"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        x.cuda()


def test_like_factories_keep_the_device():
    x = lt.ones(2)
    for fn in [lt.zeros_like, lt.ones_like, lt.empty_like, lt.rand_like, lt.randn_like]:
        assert fn(x).device == x.device
    with pytest.raises(RuntimeError, match="cuda"):
        lt.zeros_like(x, device="cuda")


# -- from_numpy / as_tensor ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
def test_from_numpy(dtype):
    a = arr(2, 3, dtype=dtype, seed=3)
    check(lambda t: t.from_numpy(a.copy()))
    check(lambda t: t.from_numpy(np.ascontiguousarray(a.T)))
    check(lambda t: t.from_numpy(np.array(a[0, 0])))  # 0-d


def test_from_numpy_shares_memory_as_torch():
    # The rules are tests/ops/test_numpy_bridge.py's; here the one difference left, written
    # down (lazytorch.ops.numpy_bridge): a NumPy write reaches a computation recorded before
    # it and still pending, which torch had already computed.
    a = np.arange(4, dtype=np.float32)
    x = lt.from_numpy(a)
    t = torch.from_numpy(a.copy())
    a[:] = -1
    np.testing.assert_array_equal(x.numpy(), [-1, -1, -1, -1])
    y = x * 2  # pending
    a[:] = 3
    np.testing.assert_array_equal(y.numpy(), [6, 6, 6, 6])  # torch's y: [-2, -2, -2, -2]
    b = np.arange(3)
    z = lt.as_tensor(b)
    b[0] = 100
    assert z.tolist() == [100, 1, 2]
    assert t.tolist() == [0, 1, 2, 3]


def test_from_numpy_views_and_strides():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    for view in [a.T, a[:, ::2], a[::-1]]:
        got = lt.from_numpy(view)
        np.testing.assert_array_equal(got.numpy(), view)
        assert got.dtype is lt.int32


@pytest.mark.parametrize(
    "bad",
    [[1, 2], 3.0, np.array(["a"]), np.array([1], dtype=object)],
    ids=["list", "float", "str", "object"],
)
def test_from_numpy_rejects(bad):
    check(lambda t: t.from_numpy(bad))


def test_from_numpy_rejects_unsupported_dtypes():
    # torch supports uint16/32/64; lazytorch does not: a TypeError naming the dtype. (Complex
    # arrays are supported: tests/ops/test_complex_factories.py; clongdouble is not, as in torch.)
    for d in ["uint16", "uint32", "uint64", np.dtype("clongdouble").name]:
        with pytest.raises(TypeError, match=d):
            lt.from_numpy(np.zeros(2, dtype=d))
        with pytest.raises(TypeError, match=d):
            lt.tensor(np.zeros(2, dtype=d))


def test_as_tensor_returns_the_same_tensor_when_nothing_changes():
    x = lt.ones(3)
    assert lt.as_tensor(x) is x
    assert lt.as_tensor(x, dtype=lt.float32) is x
    y = lt.as_tensor(x, dtype=lt.float64)
    assert y is not x and y.dtype is lt.float64
    check(lambda t: t.as_tensor(t.arange(3), dtype=t.float16))
    check(lambda t: t.as_tensor([1, 2], dtype=t.int8))
    check(lambda t: t.as_tensor(2.5))


# -- fills ------------------------------------------------------------------------------------
SHAPES = [(), (0,), (3,), (2, 3), (1, 0, 2), (2, 1, 1, 2)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_zeros_ones_shape_forms(name, shape):
    check(lambda t: getattr(t, name)(*shape))
    check(lambda t: getattr(t, name)(shape))
    check(lambda t: getattr(t, name)(list(shape)))
    check(lambda t: getattr(t, name)(t.Size(shape)))
    check(lambda t: getattr(t, name)(size=shape))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_fill_dtypes(name, dtype):
    want = getattr(torch, name)(2, 3, dtype=dt(torch, dtype))
    got = getattr(lt, name)(2, 3, dtype=dt(lt, dtype))
    assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)
    check(lambda t: getattr(t, name)(2, 3, dtype=dt(t, dtype)))


@pytest.mark.parametrize("dtype", ALL)
def test_empty_dtypes(dtype):
    # empty's values are unspecified: its dtype and shape are compared, on no backend matrix
    want = torch.empty(2, 3, dtype=dt(torch, dtype))
    got = lt.empty(2, 3, dtype=dt(lt, dtype))
    assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)


def test_empty_shape_forms():
    for shape in SHAPES:
        for args in [shape, (shape,), (list(shape),)] if shape else [(shape,), ([],)]:
            want = torch.empty(*args)
            got = lt.empty(*args)
            assert tuple(got.shape) == tuple(want.shape) and got.dtype is lt.float32
            lt.materialize(got)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_fill_size_keyword_and_missing_size(name):
    def values(x):
        return x.shape if name == "empty" else x  # empty's values are unspecified

    check(lambda t: values(getattr(t, name)(size=(2, 3))))
    check(lambda t: values(getattr(t, name)(size=[0])))
    check(lambda t: getattr(t, name)())  # torch: TypeError, missing "size"
    check(lambda t: getattr(t, name)(2, size=(2,)))  # multiple values for size
    check(lambda t: getattr(t, name)(2, sizes=(2,)))  # unknown keyword


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, o: t.zeros(3, out=o),
        lambda t, o: t.ones(3, out=o),
        lambda t, o: t.arange(3, out=o),
        lambda t, o: t.arange(0, 0.75, 0.25, out=o),
        lambda t, o: t.linspace(0, 1, 3, out=o),
        lambda t, o: t.full((3,), 7, out=o),
        lambda t, o: t.arange(5, out=o),  # out is resized
        lambda t, o: t.eye(2, out=o),  # out is resized
    ],
)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_factory_out(fn, dtype):
    # out= receives the result in out's own dtype and is what the call returns.
    def run(t):
        o = t.full((3,), 9, dtype=dt(t, dtype))
        r = fn(t, o)
        assert r is o
        return o

    check(run)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_fill_shape_errors(name):
    check_raises(lambda t: getattr(t, name)(2, -1))
    check_raises(lambda t: getattr(t, name)((2, 1.5)))
    check_raises(lambda t: getattr(t, name)("a"))


@pytest.mark.parametrize("value", [0, 7, -3, 2.5, -0.0, NAN, INF, True, False, 2**40], ids=repr)
def test_full_infers_dtype_from_value(value):
    # int -> int64, float -> default dtype, bool -> bool.
    check(lambda t: t.full((2, 3), value))
    check(lambda t: t.full([2], value))
    check(lambda t: t.full((), value))


@pytest.mark.parametrize(
    "value, dtype",
    [
        pytest.param(value, dtype, id=f"{value!r}-{dtype}")
        for dtype in ALL
        for value in [0, 3, -2.7, True, 1e10]
        # undefined behaviour in torch: an out-of-range float into an int, a negative one
        # into an unsigned int
        if not (dtype in INTS and value == 1e10) and not (dtype == "uint8" and value == -2.7)
    ],
)
def test_full_with_dtype(value, dtype):
    check(lambda t: t.full((2, 2), value, dtype=dt(t, dtype)))


def test_full_with_tensor_value():
    check(lambda t: t.full((2,), t.tensor(3.5)))
    check(lambda t: t.full((2, 2), t.tensor(2), dtype=t.float16))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like"])
def test_like(name, dtype):
    x = arr(2, 3, dtype=dtype, seed=4)

    def fn(t, x, **kw):
        if name == "full_like":
            return t.full_like(x, 2, **kw)
        return getattr(t, name)(x, **kw)

    check(fn, x)
    check(lambda t, x: fn(t, x, dtype=t.float64), x)
    check(lambda t, x: fn(t, x.T), x)
    check(lambda t, x: fn(t, x[:, :0]), x)


@pytest.mark.parametrize("dtype", ALL)
def test_empty_like_dtypes(dtype):
    # empty_like's values are unspecified: its dtype and shape, on no backend matrix
    x = arr(2, 3, dtype=dtype, seed=4)
    for kw in [{}, {"dtype": lt.float64}]:
        got = lt.empty_like(lt.from_numpy(x), **kw)
        assert tuple(got.shape) == (2, 3)
        assert got.dtype is kw.get("dtype", dt(lt, dtype))


@pytest.mark.parametrize("dtype", ALL)
def test_full_like_value_conversion(dtype):
    x = arr(3, dtype=dtype, seed=5)
    for value in [2.7, -1, True, 0.0]:
        if dtype == "uint8" and value == -1:
            continue
        check(lambda t, x, value=value: t.full_like(x, value), x)


def test_like_rejects_non_tensor():
    check_raises(lambda t: t.zeros_like([1, 2]))
    check_raises(lambda t: t.ones_like(3))


def test_new_factories():
    x = arr(2, dtype="float16", seed=6)
    check(lambda t, x: x.new_zeros(3), x)
    check(lambda t, x: x.new_ones((2, 2), dtype=t.int32), x)
    check(lambda t, x: x.new_full((2,), 7), x)
    check(lambda t, x: x.new_tensor([1, 2]), x)


def test_scalar_tensor():
    check(lambda t: t.scalar_tensor(3))
    check(lambda t: t.scalar_tensor(2.5, dtype=t.float64))
    check(lambda t: t.scalar_tensor(True, dtype=t.int32))


def test_fill_value_changes_do_not_recompile():
    # Fill values are program inputs: a new value reuses the compiled program.
    lt.materialize(lt.full((3,), 1.5) + 1)
    built = lt.metrics.counters()["programs_built"]
    for v in [2.5, -7.0, 1e9]:
        y = lt.full((3,), v) + 1
        np.testing.assert_array_equal(y.numpy(), np.full(3, v + 1, np.float32))
    assert lt.metrics.counters()["programs_built"] == built


# -- arange -----------------------------------------------------------------------------------
ARANGE_ARGS = [
    (5,),
    (0,),
    (-3,),
    (1, 5),
    (5, 1),
    (-5, 5, 2),
    (5, -5, -3),
    (0, 1, 0.1),
    (0, 1, 0.3),
    (1, 0, -0.3),
    (-1.5, 2.5, 0.5),
    (0.5,),
    (2.5,),
    (1, 2.5, 0.5),
    (0, 10, 3),
    (0, -10, -3),
    (0, 1e6 + 3, 1),
    (1e8, 1e8 + 5, 1.0),
    (-0.7, 0.71, 0.1),
    (0, 100, 0.7),
    (0, 5, 2.5),
    (3, 3),
    (3, 3, -1),
]


@pytest.mark.parametrize("args", ARANGE_ARGS, ids=repr)
def test_arange(args):
    # Length and values, including float steps whose accumulation torch computes exactly:
    # ceil((end - start) / step) elements, each start + i * step (not a running sum).
    check(lambda t: t.arange(*args))


@pytest.mark.parametrize(
    "args, dtype",
    [
        pytest.param(args, dtype, id=f"{args!r}-{dtype}")
        for dtype in ALL
        for args in [(5,), (1, 7, 2), (0, 2, 0.25), (-2.5, 2.5, 0.5)]
        if not (dtype == "uint8" and args[0] < 0)  # negative into uint8: undefined in torch
    ],
)
def test_arange_dtype(args, dtype):
    if dtype == "bool":
        # torch has no bool arange kernel
        check(lambda t: t.arange(*args, dtype=dt(t, dtype)))
        return
    check(lambda t: t.arange(*args, dtype=dt(t, dtype)))


def test_arange_float16_and_large_counts():
    check(lambda t: t.arange(0, 2048 + 10, dtype=t.float16))  # past float16's exact ints
    check(lambda t: t.arange(0, 1, 1 / 3, dtype=t.float64))
    check(lambda t: t.arange(10, 0, -1, dtype=t.int8))


def test_arange_with_tensor_arguments():
    check(lambda t: t.arange(t.tensor(5)))
    check(lambda t: t.arange(t.tensor(1), t.tensor(4.5), t.tensor(0.5)))


@pytest.mark.parametrize(
    "args",
    [(0, 5, 0), (0, 5, -1), (5, 0, 1), (0, INF), (0, NAN), (-INF, 0), (0, 1, INF)],
    ids=repr,
)
def test_arange_errors(args):
    check(lambda t: t.arange(*args))


def test_arange_keyword_forms():
    check(lambda t: t.arange(start=2, end=8, step=3))
    check(lambda t: t.arange(end=4))
    check(lambda t: t.arange(4, dtype=t.float32))


@settings(max_examples=80, deadline=None)
@given(
    start=st.integers(-50, 50),
    length=st.integers(0, 40),
    step=st.sampled_from([1, 2, 3, -1, -2, 0.1, 0.25, -0.3, 0.7, 1.5, 1e-3]),
)
def test_arange_random(start, length, step):
    end = start + length * step
    check(lambda t: t.arange(start, end, step))
    check(lambda t: t.arange(start, end, step, dtype=t.float64))


# -- linspace ----------------------------------------------------------------------------------
LINSPACE_ARGS = [
    (0, 1, 5),
    (0, 1, 1),
    (0, 1, 0),
    (-1, 1, 7),
    (1, 0, 4),
    (0, 10, 11),
    (0.5, 0.5, 3),
    (-3.3, 7.9, 100),
    (0, 1, 2),
    (1e-3, 1e3, 9),
    (5, -5, 6),
]


@pytest.mark.parametrize("args", LINSPACE_ARGS, ids=repr)
def test_linspace(args):
    check(lambda t: t.linspace(*args))
    check(lambda t: t.linspace(*args, dtype=t.float64))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("args", [(0, 10, 5), (0, 10, 4), (-7, 7, 6), (10, 0, 7), (0, 1, 5)])
def test_linspace_dtype(args, dtype):
    # Integer dtypes truncate start and end first (uint8 wraps -7 to 249, as torch does).
    check(lambda t: t.linspace(*args, dtype=dt(t, dtype)))


def test_linspace_errors_and_tensor_args():
    check(lambda t: t.linspace(0, 1, -1))
    check(lambda t: t.linspace(t.tensor(0.0), t.tensor(2.0), 5))
    check(lambda t: t.linspace(0, 1, steps=3))


# -- eye -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (1,), (0, 3), (3, 0)], ids=repr)
def test_eye(args):
    check(lambda t: t.eye(*args))


@pytest.mark.parametrize("dtype", ALL)
def test_eye_dtype(dtype):
    check(lambda t: t.eye(3, dtype=dt(t, dtype)))
    check(lambda t: t.eye(2, 3, dtype=dt(t, dtype)))


def test_eye_errors():
    check(lambda t: t.eye(-1))
    check(lambda t: t.eye(2, -3))


# -- default dtype ---------------------------------------------------------------------------------
@pytest.fixture
def restore_default_dtype():
    yield
    lt.set_default_dtype(lt.float32)
    torch.set_default_dtype(torch.float32)


FLOAT_FACTORIES = [
    lambda t: t.tensor([1.5, 2]),
    lambda t: t.tensor(2.5),
    lambda t: t.zeros(2),
    lambda t: t.ones(2, 2),
    lambda t: t.full((2,), 1.5),
    lambda t: t.arange(0.5, 3),
    lambda t: t.arange(3, dtype=None),
    lambda t: t.linspace(0, 1, 3),
    lambda t: t.eye(2),
    lambda t: t.scalar_tensor(1),
    lambda t: t.tensor([1, 2]) / 2,
    lambda t: t.tensor([1, 2]) * 1.5,
    lambda t: t.exp(t.tensor([1, 2])),
    lambda t: t.tensor(np.array([1.0], dtype=np.float32)),  # NumPy arrays keep their dtype
]


@pytest.mark.parametrize("default", FLOATS)
@pytest.mark.parametrize("fn", FLOAT_FACTORIES)
def test_set_default_dtype(fn, default, restore_default_dtype):
    lt.set_default_dtype(dt(lt, default))
    torch.set_default_dtype(dt(torch, default))
    check(lambda t: fn(t))


@pytest.mark.parametrize("fn", FLOAT_FACTORIES)
def test_default_dtype_context(fn, restore_default_dtype):
    with lt.default_dtype(lt.float64):
        torch.set_default_dtype(torch.float64)
        want = fn(torch)
        got = fn(lt)
    torch.set_default_dtype(torch.float32)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy(), want.numpy())
    assert lt.get_default_dtype() is lt.float32  # restored on exit
    assert fn(lt).dtype.name == str(fn(torch).dtype).replace("torch.", "")


def test_default_dtype_rejects_non_float(restore_default_dtype):
    with pytest.raises(TypeError):
        lt.set_default_dtype(lt.int32)
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int32)
    with pytest.raises(TypeError), lt.default_dtype(lt.int64):
        pass
    assert lt.get_default_dtype() is lt.float32


def test_default_dtype_context_nests_and_is_thread_local(restore_default_dtype):
    import threading

    seen = []
    with lt.default_dtype(lt.float64):
        with lt.default_dtype(lt.float16):
            assert lt.zeros(1).dtype is lt.float16
        assert lt.zeros(1).dtype is lt.float64
        th = threading.Thread(target=lambda: seen.append(lt.zeros(1).dtype))
        th.start()
        th.join()
    assert seen == [lt.float32]
    assert lt.zeros(1).dtype is lt.float32


def test_factories_honour_requires_grad():
    for make in [
        lambda: lt.tensor([1.0], requires_grad=True),
        lambda: lt.zeros(2, requires_grad=True),
        lambda: lt.full((2,), 1.0, requires_grad=True),
        lambda: lt.randn(2, requires_grad=True),
        lambda: lt.ones(2).new_zeros(3, requires_grad=True),
    ]:
        t = make()
        assert t.requires_grad and t.is_leaf and t.grad is None
    # as in torch: only floating-point tensors can require gradients
    for make in [
        lambda: lt.tensor([1], requires_grad=True),
        lambda: lt.zeros(2, dtype=lt.int64, requires_grad=True),
        lambda: lt.arange(3, requires_grad=True),
    ]:
        with pytest.raises(RuntimeError, match="floating point"):
            make()


@pytest.mark.parametrize("steps", [2, 3, 16, 17, 28, 33, 100, 257, 1000, 4097])
@pytest.mark.parametrize("ends", [(-1, 1), (0, 1), (-3.5, 7.25), (1e-3, 5e4), (2, -9)], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_linspace_bits_equal_torch(steps, ends, dtype):
    # torch's CPU kernel forms start + step * i as one fused multiply-add; a separate
    # multiply and add differ from it by an ulp in some entries (e.g. 6 of linspace(-1, 1,
    # 28) in float32, 9 of 10 float64 linspaces; after truncation, an integer one by 1),
    # which moved affine_grid's sampling points and grid_sample's gradient.
    import torch

    if dtype == "uint8" and min(ends) < 0:
        ends = (abs(ends[0]), abs(ends[1]))
    if dtype == "uint8" and max(ends) > 255:  # torch: "cannot be converted ... without overflow"
        with pytest.raises(RuntimeError, match="overflow"):
            torch.linspace(*ends, steps, dtype=torch.uint8)
        with pytest.raises(RuntimeError, match="overflow"):
            lt.linspace(*ends, steps, dtype=lt.uint8)
        return
    got = lt.linspace(*ends, steps, dtype=getattr(lt, dtype)).numpy()
    want = torch.linspace(*ends, steps, dtype=getattr(torch, dtype)).numpy()
    assert np.array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(
    start=st.floats(-1e4, 1e4, allow_nan=False),
    step=st.floats(1e-3, 50, allow_nan=False),
    n=st.integers(1, 600) | st.integers(32000, 70000),
    negative=st.booleans(),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_arange_bits_equal_torch(start, step, n, negative, dtype):
    # torch's CPU kernel computes in float64 with fused multiply-adds, two AVX2 vectors per
    # loop iteration from a rounded base, the tail element by element, and parallel_for
    # chunks past 32768 elements restart the vectors (lazytorch's thread count stands in
    # for torch's): a plain start + i * step is an ulp off in about one element in five.
    import torch

    step = -step if negative else step
    end = start + step * n
    got = lt.arange(start, end, step, dtype=getattr(lt, dtype)).numpy()
    want = torch.arange(start, end, step, dtype=getattr(torch, dtype)).numpy()
    assert np.array_equal(got, want)


def test_arange_common_float_ranges_bits_equal_torch():
    import torch

    for args in [(-5, 5, 0.1), (0, 1, 0.01), (0.5, 7), (0, 10, 0.5), (-3.0, 3.0, 0.25)]:
        assert np.array_equal(lt.arange(*args).numpy(), torch.arange(*args).numpy()), args
        got = lt.arange(*args, dtype=lt.float64).numpy()
        assert np.array_equal(got, torch.arange(*args, dtype=torch.float64).numpy()), args


@settings(max_examples=200, deadline=None)
@given(
    start=st.floats(-1e6, 1e6, allow_nan=False),
    end=st.floats(-1e6, 1e6, allow_nan=False),
    steps=st.integers(2, 3000),
    dtype=st.sampled_from(["float64", "int64"]),
)
def test_linspace_float64_and_integers_bits_equal_torch(start, end, steps, dtype):
    import torch

    got = lt.linspace(start, end, steps, dtype=getattr(lt, dtype)).numpy()
    want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    assert np.array_equal(got, want)


# -- float16 / bfloat16 / logspace bits (torch's kernels: lazytorch.ops.range_values) -------------
LOW = ["float16", "bfloat16"]
_INT_VIEW = {2: np.int16, 4: np.int32, 8: np.int64}


def _bits(t):
    """A float tensor's values as integers (bit patterns), from torch or lazytorch: exact
    comparison that tells -0.0 from 0.0 and one NaN from another."""
    if isinstance(t, torch.Tensor):
        t = t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
        return t.numpy()
    a = t.numpy()
    return a.view(_INT_VIEW[a.dtype.itemsize]) if t.is_floating_point() else a


def _same_bits(make):
    """`make(lib)` from torch and lazytorch: the same dtype and bit for bit the same values."""
    want, got = make(torch), make(lt)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if want.is_floating_point():
        assert np.array_equal(_bits(got), _bits(want))
    else:
        assert np.array_equal(got.numpy(), want.numpy())


@settings(max_examples=300, deadline=None)
@given(
    start=st.floats(-10, 10) | st.floats(-6e4, 6e4) | st.integers(-3000, 3000),
    end=st.floats(-10, 10) | st.floats(-6e4, 6e4) | st.integers(-3000, 3000),
    steps=st.integers(0, 300) | st.integers(32760, 70000),
    dtype=st.sampled_from([*LOW, "float32"]),
)
def test_linspace_low_precision_bits_equal_torch(start, end, steps, dtype):
    # torch computes float16/bfloat16 linspace in c10's Half/BFloat16 arithmetic (each
    # operation in float, rounded to the dtype; the index converted to the dtype), float32
    # with one fused multiply-add from start and end rounded to float32. bfloat16 computed
    # in float32 and rounded once differed in about one element in twenty (1,702 of 30,689
    # over 200 ranges in [-10, 10]); float32 from an unrounded start or end was up to 2 ulps
    # off where the range is narrow (linspace(1050.0, 1050.005, 1000)[500]).
    _same_bits(lambda t: t.linspace(start, end, steps, dtype=getattr(t, dtype)))


@pytest.mark.parametrize("dtype", [*LOW, "float32", "float64"])
@pytest.mark.parametrize(
    "args",
    [
        (-3.7, 9.1, 28),
        (1050.0, 1050.005, 1000),  # float32: start/end rounded first (was 2 ulps off)
        (0.1, 0.7, 100001),  # past float16's 65504 as an index count, past parallel chunks
        (-1, 1, 1),
        (5, -5, 0),
        (2**60 + 2**36 + 1, 0, 3),  # an int converts to float with one rounding
        (1 + 2**-11 + 2**-40, 0, 1),  # a double converts to float16 by way of float
        (1 + 2**-8 + 2**-40, 2, 3),  # ... and to bfloat16
        (1e5, 0, 1),  # one step is a fill: inf in float16, unchecked
        (math.inf, 0, 3),
        (math.nan, 1, 4),  # bfloat16 NaN is 0x7FC0, whatever its sign
        (6e4, -6e4, 5),
        (3e38, -3e38, 3),
        (-1e308, 1e308, 5),  # float64: a step of inf (was all nan)
    ],
    ids=repr,
)
def test_linspace_edge_bits_equal_torch(args, dtype):
    def make(t):
        return t.linspace(*args, dtype=getattr(t, dtype))

    try:
        make(torch)
    except RuntimeError as e:
        assert "overflow" in str(e)
        with pytest.raises(RuntimeError, match="overflow"):
            make(lt)
        return
    _same_bits(make)


def test_linspace_out_of_range_start_with_no_or_one_step_as_torch():
    # torch converts nothing for 0 steps and fills for 1 (fill_: unchecked in float16)
    _same_bits(lambda t: t.linspace(1e5, 0, 0, dtype=t.float16))
    _same_bits(lambda t: t.linspace(1e39, 0, 1, dtype=t.bfloat16))
    _same_bits(lambda t: t.linspace(300, 0, 0, dtype=t.uint8))
    _same_bits(lambda t: t.linspace(0, 1, 1, dtype=t.bool))
    for make in [
        lambda t: t.linspace(1e5, 0, 3, dtype=t.float16),
        lambda t: t.linspace(1e39, 0, 1, dtype=t.float32),
        lambda t: t.linspace(300, 0, 1, dtype=t.uint8),
    ]:
        check_raises(make)


@settings(max_examples=300, deadline=None)
@given(
    start=st.floats(-1e3, 1e3) | st.integers(-300, 300),
    step=st.floats(1e-3, 3) | st.sampled_from([0.1, 0.25, 1 / 3, 2 / 3, 1 / 7, 0.01, 3.0]),
    n=st.integers(1, 600) | st.integers(32000, 70000),
    negative=st.booleans(),
    dtype=st.sampled_from(LOW),
)
def test_arange_low_precision_bits_equal_torch(start, step, n, negative, dtype):
    # torch's kernel accumulates in float32 (fused), rounds each vector's base to the dtype
    # and adds lane * step to it (fused in float16, the product rounded first in bfloat16),
    # 16 lanes, two vectors an iteration, the tail element by element; parallel chunks past
    # 32768 elements. Computed in float32 and rounded once, 1 element in 5 differed.
    step = -step if negative else step
    end = start + step * n
    _same_bits(lambda t: t.arange(start, end, step, dtype=getattr(t, dtype)))


@pytest.mark.parametrize("dtype", [*LOW, "float32", "float64"])
@pytest.mark.parametrize(
    "args",
    [
        (0, 3, 0.1),
        (28, -552.3333333333333, -1 / 3),
        (257, 1000),
        (-3000, 3000, 7),
        (-1.9e-11, 32, 1.0),
        (-1e-50, 40, 1.0),
    ],
)
def test_arange_low_precision_cases_bits_equal_torch(args, dtype):
    # (28, ..., -1/3)[95]: bfloat16's lane sum is not fused (-3.65625, a fused one gives
    # -3.671875); (257, 1000): whole numbers past bfloat16's 256 differ from a plain cast;
    # (-1.9e-11, ...) in float16, (-1e-50, ...) in float32: a vector's first lane is its
    # base, -0.0 (base + 0 * step would be 0.0)
    _same_bits(lambda t: t.arange(*args, dtype=getattr(t, dtype)))


@settings(max_examples=300, deadline=None)
@given(
    start=st.floats(-30, 30) | st.integers(-30, 30),
    end=st.floats(-30, 30) | st.integers(-30, 30),
    steps=st.integers(0, 400),
    base=st.sampled_from([10.0, 2.0, 2, 3.5, 0.5]),
    dtype=st.sampled_from(["float64", "float32", "float16", "bfloat16", "int64", "int32"]),
)
def test_logspace_bits_equal_torch(start, end, steps, base, dtype):
    # torch: start and end converted to the dtype (truncated for integers), their difference
    # in its arithmetic, float64 exponents (no fused multiply-add), the C library's pow,
    # converted to the dtype. Before: linspace in float64 of the unconverted ends and
    # NumPy's power (an ulp off libm's in 1 element in 20): 8,243 of 38,233 float64
    # elements differed, and logspace(0.5, 3.7, 5, dtype=int32) was [3, 19, ...], not [1, 5, ...]
    if dtype.startswith("int"):
        start, end = start / 3, end / 3  # (values that fit)
    if dtype == "float16":
        start, end = start / 8, end / 8

    def make(t):
        return t.logspace(start, end, steps, base=base, dtype=getattr(t, dtype))

    try:
        make(torch)
    except RuntimeError as e:
        assert "overflow" in str(e)
        with pytest.raises(RuntimeError, match="overflow"):
            make(lt)
        return
    _same_bits(make)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int8", "uint8"])
@pytest.mark.parametrize(
    "args",
    [
        (-259, -35, 215, 3.5),
        (-150, 17, 272, 10.0),
        (0.5, 3.7, 5, 10.0),
        (2.5, 0, 1, 10.0),  # one step: pow(base, start) filled, checked outside float16/bf16
        (5, 5, 1, 10.0),
        (1e39, 0, 0, 10.0),
        (2.5, 0, 2, 10.0),
        (0, 1, 5, -2.0),
        (-1, 1, 3, 0.0),
        (400, 500, 3, 10.0),
        (math.inf, 0, 3, 10.0),
        (-2, 2, 5, 2.0),
    ],
    ids=repr,
)
def test_logspace_cases_bits_equal_torch(args, dtype):
    def make(t):
        return t.logspace(*args[:3], base=args[3], dtype=getattr(t, dtype))

    try:
        make(torch)
    except RuntimeError as e:
        assert "overflow" in str(e)
        with pytest.raises(RuntimeError, match="overflow"):
            make(lt)
        return
    _same_bits(make)


def test_logspace_errors_as_torch():
    assert isinstance(
        check_raises(lambda t: t.logspace(0, 1, 3, dtype=t.bool)), NotImplementedError
    )
    check_raises(lambda t: t.logspace(0, 1, -1))
    _same_bits(lambda t: t.logspace(0, 1, 1, dtype=t.bool))
    assert lt.logspace(0, 1, 3, requires_grad=True).requires_grad
