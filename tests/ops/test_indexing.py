"""Indexing against torch: ``x[...]`` (basic, advanced, boolean), ``x[...] = v``,
index_put_, gather/scatter/scatter_add, index_select, take/take_along_dim, masked_fill,
masked_select, nonzero/argwhere/where(cond), and which of them materialize."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, arr, check, check_raises, randn

# The oracle's deprecation notices for behaviour lazytorch matches on purpose.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Using a non-tuple sequence for multidimensional indexing"),
    pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated"),
    pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter"),
]


def ints(*values: int, dtype: str = "int64") -> np.ndarray:
    return np.array(values, dtype=dtype)


def mask(*shape: int, seed: int = 3) -> np.ndarray:
    # np.asarray: a 0-d comparison gives a NumPy scalar, not an array
    return np.asarray(arr(*shape, dtype="bool", seed=seed))


# -- getitem: basic ---------------------------------------------------------------------------
BASIC = [
    0,
    -1,
    3,
    -4,
    (1, 2),
    (-1, -2, -3),
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    slice(1, None, 3),
    slice(-3, -1),
    slice(-100, 100),
    slice(3, 1),  # empty
    slice(5, None),  # empty, start past the end
    slice(None, -5),  # empty, stop before the start
    (slice(None), 1),
    (slice(None), slice(None), slice(None, None, 3)),
    (Ellipsis, 0),
    (Ellipsis, slice(1, None, 2)),
    (0, Ellipsis),
    (1, Ellipsis, None, slice(None, None, 2)),
    None,
    (None, None),
    (None, 0, None),
    (slice(None), None, 1),
    (Ellipsis, None),
    (None, Ellipsis, None),
    Ellipsis,
    (),
    (0, 0, 0),
    (-4, slice(None, None, 2), -5),
    True,
    False,
    (0, True),
    (slice(None), False, 1),
]


@pytest.mark.parametrize("idx", BASIC, ids=repr)
def test_getitem_basic(idx):
    check(lambda t, x: x[idx], randn(4, 3, 5))


@pytest.mark.parametrize(
    "idx",
    [
        4,  # out of range
        -5,
        (0, 3),
        (0, 0, 5),
        (0, 0, 0, 0),  # too many indices
        1.5,  # float index
        (0, 1.5),
        "a",
        object(),
    ],
    ids=lambda i: "object()" if type(i) is object else repr(i),  # no address: same in every run
)
def test_getitem_basic_errors(idx):
    check(lambda t, x: x[idx], randn(4, 3, 5))


def test_getitem_negative_step_errors():
    check(lambda t, x: x[::-1], randn(4))
    check(lambda t, x: x[::0], randn(4))


@pytest.mark.parametrize("idx", [(), Ellipsis, None, (None, None), True, False], ids=repr)
def test_getitem_0d(idx):
    check(lambda t, x: x[idx], randn())


def test_getitem_0d_errors():
    check(lambda t, x: x[0], randn())
    check(lambda t, x: x[:], randn())


ITEM_HINT = re.escape("invalid index of a 0-dim tensor. Use `tensor.item()`")


@pytest.mark.parametrize(
    ("idx", "match"),
    [
        # torch's own words: old scripts' `loss.data[0]` gets the hint to call item()
        (0, ITEM_HINT),
        (-1, ITEM_HINT),
        (np.int64(0), ITEM_HINT),
        (slice(None), "slice\\(\\) cannot be applied to a 0-dim tensor"),
        (slice(0, 1), "slice\\(\\) cannot be applied to a 0-dim tensor"),
        # a tuple or a list is still "too many indices", as torch says
        ((0,), "too many indices"),
        ([0], "too many indices"),
        ((slice(None),), "too many indices"),
    ],
    ids=repr,
)
def test_0d_index_messages(idx, match):
    check_raises(lambda t, x: x[idx], randn(), match=match)
    check_raises(lambda t, x: x.data[idx], randn(), match=match)
    # (torch's x[-1] = v says "out of bounds" instead: the type is checked)
    check_raises(lambda t, x: x.__setitem__(idx, 1.0), randn())


@pytest.mark.parametrize("dtype", ALL)
def test_getitem_dtypes(dtype):
    check(lambda t, x: x[1:, ::2], arr(3, 4, dtype=dtype))
    check(lambda t, x: x[t.tensor([2, 0])], arr(3, 4, dtype=dtype))
    check(lambda t, x: x[..., None, -1], arr(3, 4, dtype=dtype))


@pytest.mark.parametrize(
    "idx",
    [0, slice(None), slice(0, 0), (slice(None), 1), (slice(None), slice(1, 2)), None],
    ids=repr,
)
def test_getitem_size_zero(idx):
    check(lambda t, x: x[idx], randn(0, 3))


def test_getitem_chained_and_non_contiguous():
    check(lambda t, x: x.t()[1:, ::2][0], randn(4, 5))
    check(lambda t, x: x[::2][1:][::2], randn(11, 2))
    check(lambda t, x: x.permute(2, 0, 1)[..., 1][::2, t.tensor([0, 2])], randn(2, 3, 4))


def test_getitem_with_python_int_likes():
    check(lambda t, x: x[np.int64(1)], randn(4, 3))
    check(lambda t, x: x[t.tensor(2)], randn(4, 3))  # 0-d integer tensor index
    check(lambda t, x: x[t.tensor(2), t.tensor(1)], randn(4, 3))
    check(lambda t, x: x[1, t.tensor(-1)], randn(4, 3))


# -- getitem: advanced ------------------------------------------------------------------------
ADVANCED = [
    lambda t: t.tensor([0, 2, 1, 2]),
    lambda t: t.tensor([-1, 0, -4]),
    lambda t: [0, 3],
    lambda t: [[0, 1], [2, 2]],  # torch: a list holding sequences is a tuple of indices
    lambda t: [0, [1, 2]],
    lambda t: [0, slice(None)],
    lambda t: [0, None],
    lambda t: [True, 1],  # mixed bool/int is an int index
    lambda t: [[0, 1]] * 2,
    lambda t: [1.0, 2.0],  # a float list is converted to long (truncating)
    lambda t: [0, 1] * 20,  # 32 or more items: always one index list
    lambda t: t.tensor([[0, 1], [2, 3]]),
    lambda t: (t.tensor([0, 1]), t.tensor([2, 0])),  # adjacent, front
    lambda t: (slice(None), t.tensor([0, 2]), t.tensor([1, 4])),  # adjacent, not front
    lambda t: (t.tensor([0, 1]), slice(None), t.tensor([1, 4])),  # separated -> front
    lambda t: (t.tensor([[0], [1]]), slice(None), t.tensor([1, 4, 2])),  # separated, broadcast
    lambda t: (slice(1, None), t.tensor([2, 0])),
    lambda t: (slice(None), slice(None), t.tensor([4, 0, 4])),
    lambda t: (t.tensor([1]), 2),  # an int counts as an advanced index next to a tensor
    lambda t: (1, slice(None), t.tensor([0, 3])),  # int separated from the tensor
    lambda t: (t.tensor([1, 2]), Ellipsis, t.tensor([0, 3])),
    lambda t: (Ellipsis, t.tensor([0, 3])),
    lambda t: (None, t.tensor([0, 3])),
    lambda t: (t.tensor([0, 3]), None),
    lambda t: (slice(None), None, t.tensor([0, 2])),
    lambda t: (t.tensor([0, 3]), slice(None, None, 2), None),
    lambda t: (slice(None), t.tensor([[1, 0], [2, 2]]), slice(1, 4)),
    lambda t: t.tensor([], dtype=t.int64),  # empty index
    lambda t: (t.tensor([], dtype=t.int64), t.tensor([], dtype=t.int64)),
    lambda t: t.tensor([0, 2], dtype=t.int32),
    lambda t: [True, False, True, True],  # a list of bools is a mask
    lambda t: (t.tensor([[0, 1]]), t.tensor([[2], [0]]), t.tensor([3])),  # all three
    lambda t: t.tensor(1),  # 0-d index tensor
    lambda t: np.array([3, 1]),
]


@pytest.mark.parametrize("make", ADVANCED)
def test_getitem_advanced(make):
    check(lambda t, x: x[make(t)], randn(4, 3, 5))


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.tensor([0, 4]),  # out of range
        lambda t: t.tensor([-5]),
        lambda t: (slice(None), t.tensor([3])),
        lambda t: (t.tensor([0, 1]), t.tensor([0, 1, 2])),  # cannot broadcast
        lambda t: t.tensor([0.0, 1.0]),  # float index
        lambda t: t.tensor(1.0),
        lambda t: t.tensor([0, 2], dtype=t.int16),  # only long, int, byte or bool
        lambda t: t.tensor([0, 2], dtype=t.int8),
        lambda t: [[0, 1], [2, 3]],  # a tuple of indices: 3 is out of range for dim 1
        lambda t: (t.tensor([0, 1]), t.tensor([0, 1]), t.tensor([0, 1]), t.tensor([0])),
        # several indices: one out of range must not fold into a valid linear position
        lambda t: (t.tensor([0]), t.tensor([3])),
        lambda t: (t.tensor([1]), t.tensor([-4])),
        lambda t: (t.tensor([1, 0]), slice(None), t.tensor([2, 5])),
        lambda t: (slice(None), t.tensor([[0], [1]]), t.tensor([5, 0])),
    ],
)
def test_getitem_advanced_errors(make):
    check(lambda t, x: x[make(t)], randn(4, 3, 5))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_getitem_index_tensor_input(dtype):
    check(lambda t, x, i: x[i], randn(5, 2), ints(4, -5, 0, 2, dtype=dtype))
    check(lambda t, x, i: x[:, i], randn(2, 5), ints(-1, 3, dtype=dtype))
    check(lambda t, x, i: x[i], randn(5, 2), ints(5, dtype=dtype))  # out of range


# -- getitem: boolean masks -------------------------------------------------------------------
@pytest.mark.parametrize("mshape", [(4, 3, 5), (4, 3), (4,)])
def test_getitem_bool_mask(mshape):
    check(lambda t, x, m: x[m], randn(4, 3, 5), mask(*mshape))


@pytest.mark.parametrize(
    "make",
    [
        lambda t, m: (slice(None), m),  # mask after a slice
        lambda t, m: (Ellipsis, m),
        lambda t, m: (0, m),
        lambda t, m: (m, None),
        lambda t, m: (None, m),
        lambda t, m: (slice(None), m, t.tensor([0, 2])),
    ],
)
def test_getitem_bool_mask_combined(make):
    check(lambda t, x, m: x[make(t, m)], randn(2, 3, 4), mask(3, 4))


def test_getitem_bool_mask_and_index_tensor():
    # a 1-d mask next to an integer index broadcasts like the mask's nonzero()
    m = np.array([False, True, False, True])
    check(lambda t, x, m: x[m, t.tensor([0, 2])], randn(4, 3), m)
    check(lambda t, x, m: x[m, t.tensor([2])], randn(4, 3), m)
    check(lambda t, x, m: x[m, t.tensor([0, 1, 2])], randn(4, 3), m)  # cannot broadcast


def test_getitem_bool_mask_all_false_and_all_true():
    check(lambda t, x: x[x > 100], randn(3, 4))
    check(lambda t, x: x[x < 100], randn(3, 4))
    check(lambda t, x: x[t.zeros(3, dtype=t.bool)], randn(3, 4))


def test_getitem_bool_0d():
    check(lambda t, x: x[t.tensor(True)], randn(3, 2))
    check(lambda t, x: x[t.tensor(False)], randn(3, 2))
    check(lambda t, x: x[t.tensor(True)], randn())
    check(lambda t, x: x[t.tensor(False)], randn())
    check(lambda t, x: x[x > 0], randn())


def test_getitem_uint8_mask():
    # torch treats uint8 index tensors as (deprecated) masks
    check(lambda t, x, m: x[m.to(t.uint8)], randn(4, 3), mask(4, 3))


@pytest.mark.parametrize("mshape", [(3, 3), (5,), (4, 4)])
def test_getitem_bool_mask_shape_mismatch(mshape):
    check(lambda t, x, m: x[m], randn(4, 3), mask(*mshape))


@pytest.mark.parametrize("dtype", ALL)
def test_getitem_bool_mask_dtypes(dtype):
    check(lambda t, x, m: x[m], arr(3, 4, dtype=dtype), mask(3, 4))


def test_getitem_mask_on_non_contiguous():
    check(lambda t, x, m: x.t()[m], randn(4, 3), mask(3, 4))
    check(lambda t, x, m: x[::2][m], randn(6, 3), mask(3, 3))


# -- setitem ----------------------------------------------------------------------------------
def _set(idx, value):
    """fn(t, x) that assigns `value(t)` at `idx(t)` in a clone and returns it."""

    def fn(t, x):
        y = x.clone()
        y[idx(t)] = value(t)
        return y

    return fn


SET_CASES = [
    (lambda t: 0, lambda t: 7.0),
    (lambda t: -1, lambda t: t.tensor([1.0, 2.0, 3.0, 4.0, 5.0])),
    (lambda t: (slice(None), 1), lambda t: t.tensor([1.0, 2.0, 3.0, 4.0])[:, None]),
    (lambda t: (slice(1, 3), slice(None, None, 2)), lambda t: -1.0),
    (lambda t: (Ellipsis, 0), lambda t: t.tensor([9.0, 8.0, 7.0])),  # broadcast over rows
    (lambda t: (slice(None), None, 2), lambda t: 3),  # int into a float tensor
    (lambda t: Ellipsis, lambda t: t.tensor(2.5)),  # 0-d tensor value
    (lambda t: slice(None), lambda t: t.arange(5.0)),
    (lambda t: (0, slice(None)), lambda t: t.tensor([[[1.0] * 5]])),  # leading 1s dropped
    (lambda t: t.tensor([0, 2]), lambda t: 1.5),
    (lambda t: t.tensor([0, 2]), lambda t: t.tensor([1.0, 2.0, 3.0, 4.0, 5.0])),
    (lambda t: [3, 1], lambda t: t.arange(10.0).reshape(2, 5)),
    (lambda t: (slice(None), t.tensor([4, 0])), lambda t: t.tensor([10.0, 20.0])),
    (lambda t: (t.tensor([0, 1]), t.tensor([2, 3])), lambda t: t.tensor([-1.0, -2.0])),
    (lambda t: (t.tensor([[0], [3]]), t.tensor([1, 4])), lambda t: t.arange(4.0).reshape(2, 2)),
    (lambda t: (t.tensor([-1]), slice(1, 3)), lambda t: 0.0),
    (lambda t: (1, t.tensor([0, -1])), lambda t: t.tensor(5.0)),
    (lambda t: t.tensor([], dtype=t.int64), lambda t: 1.0),
    (lambda t: (slice(None), t.tensor([0, 2, 4])), lambda t: t.ones(4, 1)),
]


@pytest.mark.parametrize("idx, value", SET_CASES)
def test_setitem(idx, value):
    check(_set(idx, value), randn(4, 5))


@pytest.mark.parametrize(
    "idx, value",
    [
        (lambda t: 0, lambda t: t.ones(4)),  # value shape does not broadcast
        (lambda t: slice(None), lambda t: t.ones(2, 4, 5)),  # value has more dims
        (lambda t: t.tensor([0, 1]), lambda t: t.ones(3, 5)),
        (lambda t: 4, lambda t: 1.0),  # out of range
        (lambda t: t.tensor([4]), lambda t: 1.0),
        (lambda t: (0, 0, 0), lambda t: 1.0),  # too many indices
    ],
)
def test_setitem_errors(idx, value):
    check(_set(idx, value), randn(4, 5))


@pytest.mark.parametrize("dtype", ALL)
def test_setitem_dtypes(dtype):
    check(_set(lambda t: (0, slice(1, None)), lambda t: True), arr(3, 4, dtype=dtype))
    check(_set(lambda t: t.tensor([2, 0]), lambda t: 1), arr(3, 4, dtype=dtype))


@pytest.mark.parametrize(
    "idx, value",
    [
        (lambda t: 0, lambda t: [1.0, 2.0, 3.0]),  # torch takes tensors and numbers only
        (lambda t: 0, lambda t: (1.0, 2.0, 3.0)),
        (lambda t: 0, lambda t: np.array([1.0, 2.0, 3.0])),
        (lambda t: t.tensor([0]), lambda t: [1.0, 2.0, 3.0]),
        (lambda t: 0, lambda t: "a"),
        (lambda t: 0, lambda t: np.float64(2.5)),  # NumPy scalars are numbers
        (lambda t: 0, lambda t: np.int64(-2)),
        (lambda t: t.tensor([1]), lambda t: np.float32(4.0)),  # refused by torch
        (lambda t: 1, lambda t: np.bool_(True)),
    ],
)
def test_setitem_value_types(idx, value):
    check(_set(idx, value), randn(2, 3))


@pytest.mark.parametrize(
    "idx, value",
    [
        # through tensor indices torch puts without converting: dtypes must match
        (lambda t: t.tensor([0]), lambda t: t.tensor([1, 2, 3])),
        (lambda t: t.tensor([0]), lambda t: t.tensor(1)),
        (lambda t: t.tensor([0]), lambda t: t.tensor(1.0, dtype=t.float64)),
        (lambda t: (slice(None), t.tensor([2])), lambda t: t.ones(2, 1, dtype=t.float16)),
        (lambda t: t.tensor([True, False]), lambda t: t.tensor([1, 2, 3])),
        (lambda t: t.tensor(True), lambda t: t.tensor(1)),
        # ...except a full-shape mask with a 0-d value (a masked fill), and basic indices
        (lambda t: t.ones(2, 3, dtype=t.bool), lambda t: t.tensor(1)),
        (lambda t: t.ones(2, 3, dtype=t.bool), lambda t: t.tensor(True)),
        (lambda t: 0, lambda t: t.tensor([1, 2, 3])),
        (lambda t: (slice(None), 1), lambda t: t.tensor(7, dtype=t.int8)),
    ],
)
def test_setitem_value_dtype_rules(idx, value):
    check(_set(idx, value), randn(2, 3))


def test_setitem_value_dtype_is_converted():
    check(_set(lambda t: 0, lambda t: t.tensor([1, 2, 3])), randn(2, 3))
    check(_set(lambda t: 0, lambda t: t.tensor([1.7, -2.2, 3.9])), arr(2, 3, dtype="int32"))
    check(_set(lambda t: 1, lambda t: 2.9), arr(2, 3, dtype="int64"))


def test_setitem_0d():
    check(_set(lambda t: (), lambda t: 3.0), randn())
    check(_set(lambda t: Ellipsis, lambda t: t.tensor(4.0)), randn())
    check(_set(lambda t: None, lambda t: 5.0), randn())


def test_setitem_on_non_contiguous_view():
    def fn(t, x):
        y = x.clone().t()
        y[1:, ::2] = t.arange(6.0).reshape(3, 2)
        y[t.tensor([0, 0]), t.tensor([1, 3])] = -7.0
        return y

    check(fn, randn(4, 4))


def test_setitem_duplicate_indices_last_write_wins():
    # torch does not promise an order for duplicates (on CPU the last write wins);
    # assign the same value to every duplicate so the result is well defined.
    check(_set(lambda t: t.tensor([1, 1, 3]), lambda t: 9.0), randn(5))
    check(_set(lambda t: t.tensor([2, 2]), lambda t: t.tensor([4.0, 4.0])), randn(5))


# -- setitem with boolean masks ---------------------------------------------------------------
@pytest.mark.parametrize("value", [0.0, -3, True, lambda t: t.tensor(7.5)])
def test_setitem_mask_scalar(value):
    def fn(t, x, m):
        y = x.clone()
        y[m] = value(t) if callable(value) else value
        return y

    check(fn, randn(4, 3), mask(4, 3))


def _counts_of(fn, *inputs):
    """Run fn on lazytorch in lazy mode from fresh counters; return (result, counters)."""
    args = [lt.tensor(x) for x in inputs]
    lt.metrics.reset()
    out = fn(lt, *args)
    return out, lt.metrics.counters()


def _mask_fill_program(t, x):
    x = x * 2  # pending
    m = x > 1
    x[m] = 0.0
    x[m] = t.tensor(-1.0)
    return x


def test_setitem_mask_scalar_stays_lazy():
    out, counts = _counts_of(_mask_fill_program, randn(3, 4))
    assert counts["implicit_materializations"] == 0 and counts["materializations"] == 0
    assert not out.is_materialized
    check(_mask_fill_program, randn(3, 4))


def _mask_fill_view_program(t, x):
    x = x + 0
    v = x[1:]
    v[v > 0] = 0.0
    return x, v


def test_setitem_mask_on_view_stays_lazy():
    out, counts = _counts_of(_mask_fill_view_program, randn(3, 4))
    assert counts["implicit_materializations"] == 0 and counts["materializations"] == 0
    assert not out[0].is_materialized
    check(_mask_fill_view_program, randn(3, 4))


def test_setitem_mask_tensor_values():
    def fn(t, x, m):
        y = x.clone()
        y[m] = t.arange(float(int(m.sum()))) + 10
        return y

    check(fn, randn(4, 3), mask(4, 3))


def _mask_values_program(t, x):
    x = x + 0
    x[x > 2] = t.tensor([7.0, 8.0, 9.0])
    return x


def test_setitem_mask_tensor_values_materializes():
    # the number of selected positions depends on the data
    _, counts = _counts_of(_mask_values_program, np.arange(6.0, dtype=np.float32))
    assert counts["implicit_materializations"] == 1
    check(_mask_values_program, np.arange(6.0, dtype=np.float32))


def test_setitem_mask_broadcast_value():
    def fn(t, x, m):
        y = x.clone()
        y[m] = t.tensor([1.0, 2.0, 3.0])
        return y

    check(fn, randn(4, 3), mask(4, seed=5))  # leading-dim mask selects rows


def test_setitem_partial_mask():
    def fn(t, x, m):
        y = x.clone()
        y[m] = 0.5
        y[:, m[:3]] = -0.5
        return y

    check(fn, randn(4, 3), mask(4, seed=9))


def test_setitem_mask_wrong_count():
    def fn(t, x, m):
        y = x.clone()
        y[m] = t.ones(100)
        return y

    check(fn, randn(4, 3), mask(4, 3))


def test_setitem_mask_0d():
    def fn(t, x):
        y = x.clone()
        y[t.tensor(True)] = 4.0
        z = x.clone()
        z[t.tensor(False)] = 4.0
        return y, z

    check(fn, randn(2, 3))
    check(fn, randn())


# -- index_put_ --------------------------------------------------------------------------------
def test_index_put_accumulate_duplicates():
    def fn(t, x):
        y = x.clone()
        y.index_put_((t.tensor([0, 2, 0, 0]),), t.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
        return y

    check(fn, randn(4))


def test_index_put_accumulate_2d_and_broadcast():
    def fn(t, x):
        y = x.clone()
        idx = (t.tensor([1, 1, 2]), t.tensor([0, 0, 3]))
        y.index_put_(idx, t.tensor(1.5), accumulate=True)
        z = x.clone()
        z.index_put_((t.tensor([0, 0]),), t.ones(4), accumulate=True)  # whole rows
        return y, z

    check(fn, randn(3, 4))


def test_index_put_out_of_place():
    check(lambda t, x: t.index_put(x, (t.tensor([1, 0]),), t.tensor(5.0)), randn(3, 2))
    check(
        lambda t, x: x.index_put((t.tensor([1, 1]),), t.tensor([[1.0, 2.0]]), accumulate=True),
        randn(3, 2),
    )


def test_index_put_returns_self_and_int_dtype():
    def fn(t, x):
        y = x.clone()
        r = y.index_put_((t.tensor([2, 2, 2]),), t.tensor([1, 2, 3], dtype=y.dtype), True)
        return r, y

    check(fn, arr(4, dtype="int32"))


def test_index_put_bool_index():
    def fn(t, x, m):
        y = x.clone()
        y.index_put_((m,), t.tensor(0.0))
        return y

    check(fn, randn(4, 3), mask(4, 3))


@pytest.mark.parametrize(
    "indices, values",
    [
        (lambda t: (t.tensor([3]),), lambda t: t.tensor(1.0)),  # out of range
        (lambda t: (t.tensor([0]),), lambda t: 1.0),  # values must be a tensor
        (lambda t: (t.tensor([0]),), lambda t: [1.0, 2.0]),
        (lambda t: ([0],), lambda t: t.tensor(1.0)),  # indices must be tensors
        (lambda t: (t.tensor([0]),), lambda t: t.tensor(1)),  # dtypes must match
        (lambda t: (t.tensor([0.0]),), lambda t: t.tensor(1.0)),  # float index
        (lambda t: (t.tensor([0]), t.tensor([0]), t.tensor([0])), lambda t: t.tensor(1.0)),
        (lambda t: (t.tensor([0]), t.tensor([0, 1, 2])), lambda t: t.tensor(1.0)),
    ],
)
def test_index_put_errors(indices, values):
    def fn(t, x):
        y = x.clone()
        y.index_put_(indices(t), values(t))
        return y

    check(fn, randn(2, 3))


def test_index_put_none_index_is_refused():
    def fn(t, x):
        y = x.clone()
        y.index_put_((None, t.tensor([2, 0])), t.tensor(1.0))
        return y

    check(fn, randn(2, 3))


# -- gather / scatter --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "xshape, dim, index",
    [
        ((3, 4), 0, [[0, 2, 1, 0], [2, 2, 0, 1]]),
        ((3, 4), 1, [[3, 0], [1, 1], [0, 2]]),
        ((3, 4), -1, [[3], [0]]),  # index smaller than input off the gather dim
        ((3, 4), 0, [[0], [2], [1], [0], [1]]),  # larger along dim, smaller off it
        ((2, 3, 4), 2, [[[0, 3]], [[1, 2]]]),
        ((5,), 0, [4, 0, 0, 2]),
        ((5,), 0, []),
        ((3, 4), 1, [[4]]),  # out of range
        ((3, 4), 1, [[-1]]),  # negative: out of range for gather
        ((3, 4), 0, [0, 1]),  # rank mismatch
        ((3, 4), 1, [[0], [0], [0], [0]]),  # larger than input off the gather dim
        ((3, 4), 2, [[0]]),  # dim out of range
    ],
)
def test_gather(xshape, dim, index):
    idx = np.array(index, dtype=np.int64)
    check(lambda t, x, i: t.gather(x, dim, i), randn(*xshape), idx)
    check(lambda t, x, i: x.gather(dim, i), randn(*xshape), idx)


def test_gather_0d_and_dtypes():
    check(lambda t, x, i: t.gather(x, 0, i), randn(), np.array(0))
    check(lambda t, x, i: t.gather(x, 0, i), randn(4), ints(1, 2, dtype="int32"))  # int32 index
    for d in ALL:
        check(lambda t, x: t.gather(x, 1, t.tensor([[1, 0]])), arr(2, 2, dtype=d))


def test_gather_non_contiguous():
    check(lambda t, x: t.gather(x.t(), 1, t.tensor([[2, 0], [1, 1]])), randn(3, 4))


@pytest.mark.parametrize(
    "xshape, dim, index, sshape",
    [
        ((3, 4), 0, [[0, 1, 2, 0], [2, 0, 1, 1]], (2, 4)),
        ((3, 4), 1, [[3, 0], [1, 2]], (2, 2)),  # smaller index, leading block
        ((3, 4), 1, [[3, 0], [1, 2]], (3, 4)),  # src larger than index
        ((3, 4), -1, [[0], [1], [2]], (3, 1)),
        ((2, 3, 4), 1, [[[0, 2, 1, 0]], [[2, 1, 0, 1]]], (2, 1, 4)),
        ((5,), 0, [4, 0, 1], (3,)),
        ((5,), 0, [], (0,)),
        ((3, 4), 1, [[4]], (1, 1)),  # out of range
        ((3, 4), 1, [[0, 1]], (1, 1)),  # src smaller than index
        ((3, 4), 0, [[0, 1]], (1, 2, 1)),  # src rank mismatch
    ],
)
def test_scatter_src(xshape, dim, index, sshape):
    idx = np.array(index, dtype=np.int64)
    check(lambda t, x, i, s: t.scatter(x, dim, i, s), randn(*xshape), idx, randn(*sshape))
    check(lambda t, x, i, s: x.scatter(dim, i, s), randn(*xshape), idx, randn(*sshape))


@pytest.mark.parametrize("value", [2.5, -1, 0])
def test_scatter_value(value):
    idx = np.array([[0, 2], [1, 0]], dtype=np.int64)
    check(lambda t, x, i: t.scatter(x, 1, i, value), randn(2, 4), idx)
    check(lambda t, x, i: x.scatter(1, i, value=value), randn(2, 4), idx)
    check(lambda t, x, i: x.clone().scatter_(0, i, value), randn(3, 3), idx)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_scatter_reduce(reduce, dtype):
    idx = np.array([[0, 0, 1], [1, 1, 1]], dtype=np.int64)
    x, src = arr(2, 3, dtype=dtype), arr(2, 3, dtype=dtype)
    check(lambda t, x, i, s: x.scatter(1, i, s, reduce=reduce), x, idx, src)
    check(lambda t, x, i: x.scatter(1, i, 3, reduce=reduce), x, idx)
    check(lambda t, x, i, s: x.clone().scatter_(1, i, s, reduce=reduce), x, idx, src)


def test_scatter_reduce_unknown():
    check(lambda t, x: x.scatter(0, t.tensor([0]), t.ones(1), reduce="max"), randn(3))


def test_gather_scatter_0d():
    # torch treats a 0-d input, index or src as 1-d with one element
    check(lambda t, x: t.gather(x, 0, t.tensor(0)), randn())
    check(lambda t, x: t.gather(x, 0, t.tensor([0, 0])), randn())
    check(lambda t, x: t.gather(x, -1, t.tensor([0])), randn())
    check(lambda t, x: t.gather(x, 0, t.tensor([1])), randn())  # out of range
    check(lambda t, x: t.gather(x, 0, t.tensor([[0]])), randn())  # rank
    check(lambda t, x: t.gather(x, 0, t.tensor(2)), randn(3))
    check(lambda t, x: t.scatter(x, 0, t.tensor(0), t.tensor(5.0)), randn())
    check(lambda t, x: t.scatter(x, 0, t.tensor([0]), t.tensor([5.0])), randn())
    check(lambda t, x: t.scatter(x, 0, t.tensor([0]), 7.0), randn())
    check(lambda t, x: t.scatter(x, 0, t.tensor([0]), t.tensor(5.0)), randn())
    check(lambda t, x: t.scatter_add(x, 0, t.tensor([0, 0]), t.tensor([5.0, 1.0])), randn())
    check(lambda t, x: t.scatter(x, 0, t.tensor(1), t.tensor(9.0)), randn(3))


def test_scatter_src_dtype_must_match():
    check(lambda t, x: t.scatter(x, 0, t.tensor([[0, 1]]), t.tensor([[1, 2]])), randn(2, 3))
    check(lambda t, x: t.scatter_add(x, 0, t.tensor([[0, 1]]), t.tensor([[1, 2]])), randn(2, 3))
    check(lambda t, x: t.scatter(x, 0, t.tensor([[0, 1]]), 1.5), arr(2, 3, dtype="int32"))


def test_scatter_index_rank_and_empty():
    check(lambda t, x: t.scatter(x, 0, t.tensor([0, 1]), 1.0), randn(2, 3))  # rank
    check(lambda t, x: t.scatter(x, 1, t.zeros(2, 0, dtype=t.int64), t.ones(2, 3)), randn(2, 3))
    check(lambda t, x: t.gather(x, 1, t.zeros(0, 2, dtype=t.int64)), randn(2, 3))
    check(lambda t, x: t.scatter(x, 1, t.tensor([[0, 1]], dtype=t.int16), 1.0), randn(2, 3))


def test_scatter_add_duplicates_accumulate():
    idx = np.array([[0, 1, 0, 0, 2], [2, 2, 2, 1, 1]], dtype=np.int64)
    check(lambda t, x, i, s: t.scatter_add(x, 0, i, s), randn(3, 5), idx, randn(2, 5))
    idx1 = np.array([[0, 0, 0], [3, 3, 0]], dtype=np.int64)
    check(lambda t, x, i, s: x.scatter_add(1, i, s), randn(2, 4), idx1, randn(2, 3))
    check(
        lambda t, x, i, s: x.clone().scatter_add_(1, i, s),
        arr(2, 4, dtype="int32"),
        idx1,
        arr(2, 3, dtype="int32"),
    )


def test_scatter_inplace_on_view_writes_through():
    idx = np.array([[0, 2]], dtype=np.int64)

    def fn(t, x, i, s):
        y = x.clone()
        y[1:].scatter_(1, i, s)
        y[:1].scatter_add_(1, i, s)
        return y

    check(fn, randn(3, 3), idx, randn(1, 2))


def test_scatter_dtype_errors():
    check(lambda t, x: t.scatter(x, 0, t.tensor([0], dtype=t.int32), 1.0), randn(3))
    check(lambda t, x: t.scatter(x, 0, t.tensor([0.0]), 1.0), randn(3))
    check(lambda t, x: t.gather(x, 0, t.tensor([0.0])), randn(3))


# -- index_select / take / take_along_dim --------------------------------------------------------
@pytest.mark.parametrize("idx_dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    "xshape, dim, index",
    [
        ((4, 3), 0, [3, 0, 0]),
        ((4, 3), 1, [2]),
        ((4, 3), -1, []),
        ((2, 3, 4), 2, [1, 3, 1, 0]),
        ((5,), 0, [4, 1]),
        ((4, 3), 0, [4]),  # out of range
        ((4, 3), 2, [0]),  # dim out of range
    ],
)
def test_index_select(xshape, dim, index, idx_dtype):
    idx = np.array(index, dtype=idx_dtype)
    check(lambda t, x, i: t.index_select(x, dim, i), randn(*xshape), idx)
    check(lambda t, x, i: x.index_select(dim, i), randn(*xshape), idx)


def test_index_select_0d_and_errors():
    check(lambda t, x, i: t.index_select(x, 0, i), randn(), ints(0))
    check(lambda t, x, i: t.index_select(x, 0, i), randn(), np.array(0))
    check(lambda t, x, i: t.index_select(x, 0, i), randn(4, 2), np.array([[0, 1]]))  # 2-d index
    check(lambda t, x, i: t.index_select(x, 0, i), randn(4, 2), np.array([0.0]))  # float index
    check(lambda t, x, i: t.index_select(x, 0, i), randn(4, 2), ints(0, dtype="int16"))
    check(lambda t, x, i: t.index_select(x, 0, i), randn(4, 2), np.array(3))  # 0-d index


@pytest.mark.parametrize("dtype", ALL)
def test_index_select_dtypes(dtype):
    check(lambda t, x: t.index_select(x, 1, t.tensor([2, 0])), arr(2, 3, dtype=dtype))


@pytest.mark.parametrize(
    "xshape, index",
    [
        ((3, 4), [[0, 11], [5, -1]]),
        ((3, 4), [-12, 0]),
        ((3, 4), []),
        ((), [0, 0]),
        ((5,), 3),  # 0-d index
        ((3, 4), [12]),  # out of range
        ((3, 4), [-13]),
    ],
)
def test_take(xshape, index):
    idx = np.array(index, dtype=np.int64)
    check(lambda t, x, i: t.take(x, i), randn(*xshape), idx)
    check(lambda t, x, i: x.take(i), randn(*xshape), idx)


def test_take_index_dtype():
    check(lambda t, x: t.take(x, t.tensor([1, 2], dtype=t.int32)), randn(3, 4))
    check(lambda t, x: t.take(x, t.tensor([1.0])), randn(3, 4))


def test_take_along_dim_errors():
    check(lambda t, x: t.take_along_dim(x, t.tensor([[1, 2]], dtype=t.int32), 1), randn(3, 4))
    check(lambda t, x: t.take_along_dim(x, t.tensor([1, 2]), 1), randn(3, 4))  # rank
    check(lambda t, x: t.take_along_dim(x, t.tensor([[1], [2]]), 1), randn(3, 4))  # broadcast
    check(lambda t, x: t.take_along_dim(x, t.tensor([[0]]), 2), randn(3, 4))  # dim
    check(lambda t, x: t.take_along_dim(x, t.tensor([[0]]), 1), randn(3, 0))  # empty dim
    check(lambda t, x: t.take_along_dim(x, t.tensor([12]), None), randn(3, 4))
    check(lambda t, x: t.take_along_dim(x, t.tensor([-1]), None), randn(3, 4))


@pytest.mark.parametrize("index", [4, 5, 40, -1, -4, -5, -9])
def test_take_along_dim_wraps_indices(index):
    # torch 2.13 takes the indices modulo the dim size along `dim`
    check(lambda t, x: t.take_along_dim(x, t.tensor([[index]]), 1), randn(3, 4))
    check(lambda t, x: t.take_along_dim(x, t.tensor([[index, 0]]), 0), randn(3, 4))


def test_take_non_contiguous():
    check(lambda t, x: x.t().take(t.tensor([0, 1, 5])), randn(3, 4))


@pytest.mark.parametrize(
    "xshape, ishape, dim",
    [
        ((3, 4), (3, 2), 1),
        ((3, 4), (1, 2), 1),  # broadcast the index's other dims
        ((3, 4), (5, 4), 0),
        ((3, 1), (3, 2), 0),  # broadcast the input's other dims
        ((2, 3, 4), (2, 3, 1), -1),
        ((3, 4), (6,), None),
        ((3, 4), (2, 2), None),
    ],
)
def test_take_along_dim(xshape, ishape, dim):
    size = int(np.prod(xshape)) if dim is None else xshape[dim]
    idx = np.random.default_rng(0).integers(0, size, size=ishape).astype(np.int64)
    check(lambda t, x, i: t.take_along_dim(x, i, dim), randn(*xshape), idx)
    check(lambda t, x, i: x.take_along_dim(i, dim=dim), randn(*xshape), idx)


def test_take_along_dim_with_argsort():
    check(lambda t, x: t.take_along_dim(x, x.argsort(1), 1), randn(3, 5))


# -- masked_fill / masked_select ------------------------------------------------------------------
@pytest.mark.parametrize(
    "xshape, mshape",
    [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((3, 4), ()), ((2, 3, 4), (3, 1))],
)
@pytest.mark.parametrize("value", [-1.5, 2, True])
def test_masked_fill(xshape, mshape, value):
    check(lambda t, x, m: x.masked_fill(m, value), randn(*xshape), mask(*mshape))
    check(lambda t, x, m: t.masked_fill(x, m, value), randn(*xshape), mask(*mshape))
    check(lambda t, x, m: x.clone().masked_fill_(m, value), randn(*xshape), mask(*mshape))


def test_masked_fill_value_tensor():
    check(lambda t, x, m: x.masked_fill(m, t.tensor(3.5)), randn(3, 4), mask(3, 4))
    check(lambda t, x, m: x.masked_fill(m, t.tensor(3)), randn(3, 4), mask(3, 4))
    check(lambda t, x, m: x.masked_fill(m, t.tensor([3.5])), randn(3, 4), mask(3, 4))
    check(lambda t, x, m: x.masked_fill(m, t.ones(3, 4)), randn(3, 4), mask(3, 4))


@pytest.mark.parametrize("dtype", ALL)
def test_masked_fill_dtypes(dtype):
    check(lambda t, x, m: x.masked_fill(m, 1), arr(3, 4, dtype=dtype), mask(3, 4))


def test_masked_fill_errors():
    check(lambda t, x, m: x.masked_fill(m, 1.0), randn(3, 4), mask(2, 4))  # not broadcastable
    check(lambda t, x, m: x.masked_fill(m, 1.0), randn(3, 4), mask(2, 3, 4))  # grows the input
    check(lambda t, x, m: x.masked_fill(m.int(), 1.0), randn(3, 4), mask(3, 4))  # not bool
    check(lambda t, x, m: x.masked_fill(m, 1.5), arr(3, 4, dtype="int32"), mask(3, 4))


def test_masked_fill_0d():
    check(lambda t, x, m: x.masked_fill(m, 9.0), randn(), np.array(True))
    check(lambda t, x, m: x.masked_fill(m, 9.0), randn(), np.array(False))


@pytest.mark.parametrize(
    "xshape, mshape", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (3, 4)), ((), ()), ((0, 2), (2,))]
)
def test_masked_select(xshape, mshape):
    check(lambda t, x, m: t.masked_select(x, m), randn(*xshape), mask(*mshape))
    check(lambda t, x, m: x.masked_select(m), randn(*xshape), mask(*mshape))


def test_masked_select_errors():
    check(lambda t, x, m: t.masked_select(x, m), randn(3, 4), mask(2, 4))
    check(lambda t, x, m: t.masked_select(x, m.int()), randn(3, 4), mask(3, 4))


# -- nonzero / argwhere / where(cond) ---------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (), (0, 3), (2, 0)])
@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "uint8"])
def test_nonzero(shape, dtype):
    x = np.asarray(arr(*shape, dtype=dtype, low=-1, high=2))  # 0-d bool: an array, too
    check(lambda t, x: t.nonzero(x), x)
    check(lambda t, x: x.nonzero(as_tuple=True), x)
    check(lambda t, x: t.nonzero(x, as_tuple=False), x)
    check(lambda t, x: t.argwhere(x), x)
    check(lambda t, x: x.argwhere(), x)
    check(lambda t, x: t.where(x), x)


def test_nonzero_all_zero_and_0d():
    check(lambda t, x: t.nonzero(x * 0), randn(3, 2))
    check(lambda t, x: t.nonzero(x * 0, as_tuple=True), randn(3, 2))
    check(lambda t: t.nonzero(t.tensor(0.0)))
    check(lambda t: t.nonzero(t.tensor(0.0), as_tuple=True))
    check(lambda t: t.nonzero(t.tensor(3), as_tuple=True))
    check(lambda t: t.where(t.tensor(True)))


def test_nonzero_of_a_view_and_nan():
    check(lambda t, x: t.nonzero(x.t()[::2] > 0), randn(4, 5))
    check(lambda t: t.nonzero(t.tensor([0.0, float("nan"), -0.0, 1.0])))


# -- materialization counting --------------------------------------------------------------------
def test_basic_slicing_does_not_materialize():
    x = lt.arange(24.0).reshape(4, 6) * 2
    y = x[1:, ::2][..., None, 0]
    x[0, 1:3] = 5.0
    z = x.t()[2]
    w = x[lt.tensor([0, 2])]  # gather: still lazy
    assert not y.is_materialized and not z.is_materialized and not w.is_materialized
    c = lt.metrics.counters()
    assert c["materializations"] == 0
    assert c["implicit_materializations"] == 0
    assert lt.metrics.causes() == {}


def test_mask_getitem_is_an_implicit_materialization():
    def fn(t, x):
        x = x * 3
        return x[x > 4]

    _, counts = _counts_of(fn, randn(6))
    assert counts["implicit_materializations"] == 1
    causes = lt.metrics.causes()
    assert len(causes) == 1 and next(iter(causes.values())) == 1
    check(fn, randn(6))


@pytest.mark.parametrize(
    "op",
    [
        lambda t, x: t.nonzero(x),
        lambda t, x: x.nonzero(as_tuple=True),
        lambda t, x: t.argwhere(x),
        lambda t, x: t.where(x),
        lambda t, x: t.masked_select(x, x > 0),
    ],
)
def test_data_dependent_ops_are_implicit_materializations(op):
    x = lt.arange(-3.0, 3.0) + 0
    lt.metrics.reset()
    op(lt, x)
    assert lt.metrics.counters()["implicit_materializations"] == 1
    assert sum(lt.metrics.causes().values()) == 1


def test_mask_getitem_refused_in_strict_mode():
    x = lt.arange(6.0) * 3
    with lt.strict_mode(), pytest.raises(lt.ImplicitMaterializationError):
        x[x > 4]


# -- property-based: random basic + advanced index tuples agree with torch -------------------------
_dim_item = st.one_of(
    st.integers(-3, 2),
    st.builds(
        slice,
        st.one_of(st.none(), st.integers(-4, 4)),
        st.one_of(st.none(), st.integers(-4, 4)),
        st.one_of(st.none(), st.integers(1, 3)),
    ),
    st.lists(st.integers(-3, 2), min_size=1, max_size=3),
)


@settings(max_examples=40, deadline=None)
@given(
    items=st.lists(_dim_item, min_size=0, max_size=3),
    extras=st.lists(st.sampled_from([None, Ellipsis]), max_size=2),
    pos=st.integers(0, 3),
)
def test_getitem_random(items, extras, pos):
    idx = list(items)
    for e in extras:
        if e is Ellipsis and Ellipsis in idx:
            continue
        idx.insert(min(pos, len(idx)), e)
    index = tuple(idx)

    def fn(t, x):
        return x[tuple(t.tensor(i) if isinstance(i, list) else i for i in index)]

    check(fn, randn(3, 3, 3))


@settings(max_examples=30, deadline=None)
@given(
    items=st.lists(_dim_item, min_size=1, max_size=3),
    scalar=st.booleans(),
)
def test_setitem_random(items, scalar):
    index = tuple(items)

    def fn(t, x):
        y = x.clone()
        idx = tuple(t.tensor(i) if isinstance(i, list) else i for i in index)
        if scalar:
            y[idx] = -5.0
        else:
            shape = y[idx].shape
            y[idx] = t.arange(float(shape.numel())).reshape(shape)
        return y

    # duplicate advanced positions make "which write wins" unspecified: skip those
    lists = [i for i in items if isinstance(i, list)]
    if any(len(set(i if i >= 0 else i + 3 for i in lst)) != len(lst) for lst in lists):
        return
    if len(lists) > 1:
        return
    check(fn, randn(3, 3, 3))


def test_a_range_index_is_its_list_of_values():
    check(lambda m, x: x[range(3), m.tensor([1, 0, 2])], np.arange(12.0).reshape(3, 4))

    def write(m, x):
        x = x.clone()
        x[range(x.shape[0]), m.tensor([1, 0, 2])] = x.max()
        return x

    check(write, np.arange(12.0).reshape(3, 4))


# -- torch's rules found by tests/ops/test_indexing_fuzz.py ---------------------------------------
E = Ellipsis
T0 = "T0"  # stands for a 0-d int64 tensor index of value 0, made per library
T01 = "T01"  # a 1-d index tensor [0, 1]


def _index(t, idx):
    """`idx` with the T0/T01 placeholders made as `t`'s tensors."""
    made = {T0: lambda: t.tensor(0), T01: lambda: t.tensor([0, 1])}
    items = idx if isinstance(idx, tuple) else (idx,)
    out = tuple(made[i]() if isinstance(i, str) else i for i in items)
    return out if isinstance(idx, tuple) else out[0]


def _written(idx, value):
    def fn(t, x):
        y = x.clone()
        y[_index(t, idx)] = value(t) if callable(value) else value
        return y

    return fn


# Several Ellipses: each skips the dims no other index names (torch's applySlicing), so two
# are fine where they skip nothing or nothing follows them.
SEVERAL_ELLIPSES = [
    *((E, E), (E, E, E), (E, 0, E), (0, E, E), (E, None, E), (None, E, E)),
    *((E, True, E), (E, slice(None), E), (E, T01, E), (E, 0, E, 0)),
]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("idx", SEVERAL_ELLIPSES, ids=repr)
def test_several_ellipses(shape, idx):
    check(lambda t, x: x[_index(t, idx)], randn(*shape))
    check(_written(idx, 7.0), randn(*shape))


@pytest.mark.parametrize(
    ("shape", "idx"),
    [((3,), (E, E, 0)), ((3,), (E, E, slice(0, 1))), ((3,), (E, E, T01)), ((), (E, None, E))],
    ids=repr,
)
def test_several_ellipses_covering_nothing(shape, idx):
    check(lambda t, x: x[_index(t, idx)], randn(*shape))


@pytest.mark.parametrize(
    ("shape", "idx"),
    # after two Ellipses that skip dims, an index names a dim past the last
    [((3,), (E, E, None)), ((2, 3), (E, E, T01)), ((2, 3, 4), (E, E, E, 0))],
    ids=repr,
)
def test_several_ellipses_past_the_last_dim(shape, idx):
    check_raises(lambda t, x: x[_index(t, idx)], randn(*shape))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
@pytest.mark.parametrize(
    "idx",
    # torch counts a NumPy bool (and a 0-d array) as naming a dim, then refuses the bool
    [
        *(np.True_, np.False_, (np.True_,), (np.True_, 0), (None, np.True_), (E, np.True_)),
        *(np.array(True), np.array(False), (np.array(True), 0)),
    ],
    ids=repr,
)
def test_numpy_bool_index(shape, idx):
    check(lambda t, x: x[idx], randn(*shape))
    check(_written(idx, 7.0), randn(*shape))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4)], ids=str)
@pytest.mark.parametrize(
    "idx",
    # a Python bool indexes its new dim with [0] (True) or [] (False): an advanced index,
    # broadcast with the others and placed by the same rule
    [
        *((True, True), (True, False), (True, None, True), (slice(None), True, slice(None), True)),
        *((True, slice(None), T01), (T01, True), (True, T01), (slice(None), True, T01)),
        *((False, T01), (False, []), (0, True, [1]), (True, T0)),
    ],
    ids=repr,
)
def test_python_bools_are_advanced_indices(shape, idx):
    check(lambda t, x: x[_index(t, idx)], randn(*shape))
    check(_written(idx, 7.0), randn(*shape))


def test_python_bool_writes():
    # x[False] = v writes nothing (the value is only converted); x[True] = v is
    # x[None] = v (converted), x[(True,)] = v puts (dtypes must match)
    check(_written(False, lambda t: t.ones(5)), randn(2, 3))
    check_raises(_written(False, "a"), randn(2, 3))
    check(_written(True, lambda t: t.ones(3, dtype=t.int64)), randn(2, 3))
    check(_written((True,), lambda t: t.ones(2, 3)), randn(2, 3))
    check_raises(_written((True,), lambda t: t.ones(3, dtype=t.int64)), randn(2, 3))


def test_zero_d_index_tensor_is_a_select():
    # a 0-d integer index is torch's select: it places no advanced dim, and a write through
    # it alone converts the value
    check(lambda t, x: x[_index(t, (T0, slice(None), T01))], randn(2, 3, 4))
    check(lambda t, x: x[_index(t, (T01, T0, T01))], randn(2, 3, 4))
    check(lambda t, x: x[_index(t, (slice(None), T0, slice(None), T01))], randn(2, 3, 4, 5))
    check(_written((T0, slice(None), T01), -1.0), randn(2, 3, 4))
    check(_written(T0, lambda t: t.ones(3, dtype=t.int64)), randn(2, 3))
    check_raises(_written((T0, T01), lambda t: t.ones(2, dtype=t.int64)), randn(2, 3))
    check_raises(lambda t, x: x[t.tensor(5)], randn(2, 0))  # torch checks its range now


@pytest.mark.parametrize("value", [7.0, 7, "t0", "t1", "t11"], ids=str)
def test_mask_write_of_one_value_is_a_fill(value):
    # one mask (of any dims, anywhere) and a one-element value: torch fills (masked_fill_),
    # converting the value; a uint8 mask is refused there
    def v(t):
        if not isinstance(value, str):
            return value
        return {"t0": t.tensor(7), "t1": t.tensor([7]), "t11": t.tensor([[7]])}[value]

    m = mask(3, seed=5)
    check(lambda t, x, m: _written((slice(None), m), v)(t, x), randn(2, 3), m)
    check(lambda t, x, m: _written(m, v)(t, x), randn(3, 2), m)
    check(lambda t, x, m: _written(m, v)(t, x), randn(2, 3), mask(2, 3, seed=6))
    check(lambda t, x, m: _written((m, 0), v)(t, x), randn(3, 2), m)
    check(lambda t, x, m: _written((0, m), v)(t, x), randn(2, 3), m)
    check(lambda t, x, m: _written(m.to(t.uint8), v)(t, x), randn(3, 2), m)
    check(lambda t, x, m: _written((slice(None), m.to(t.uint8)), v)(t, x), randn(2, 3), m)


def test_mask_fill_stays_lazy():
    x = lt.zeros(2, 3)
    m = lt.tensor([True, False, True])
    lt.materialize(x, m)
    lt.metrics.reset()
    x[:, m] = lt.tensor([5])
    assert not x.is_materialized
    assert lt.metrics.counters().get("implicit_materializations", 0) == 0
    assert x.tolist() == [[5.0, 0.0, 5.0], [5.0, 0.0, 5.0]]


@pytest.mark.parametrize(
    "idx",
    # torch makes an array index int64 (floats truncated) unless it is bool or uint8 (masks)
    [
        *(np.array([0.7, 1.2]), np.array([1, 0], dtype=np.uint8), np.array([1, 0], dtype=np.int16)),
        *(np.array(1.5), (np.array(1.5),), np.array([1, 0], dtype=np.uint32)),
    ],
    ids=repr,
)
def test_numpy_array_index_dtypes(idx):
    check(lambda t, x: x[idx], randn(2, 3))


def test_numpy_uint8_array_write_with_a_number_is_refused():
    check_raises(_written(np.array([0, 1], dtype=np.uint8), 7.0), randn(2, 3))


def test_index_into_a_size_zero_dim():
    # torch's eager check: an index (not empty) into a dim of size 0 has no element to name
    check_raises(lambda t, x: x[[0]], randn(0, 3))
    check_raises(lambda t, x: x[:, [0]], randn(2, 0))
    check_raises(lambda t, x: x[[-1]], randn(0))
    check_raises(lambda t, x: x[np.array(0)], randn(0, 0))
    check_raises(_written([0], 1.0), randn(0, 3))
    check(lambda t, x: x[[0], []], randn(0, 3))  # an empty broadcast index: nothing named
    check(lambda t, x: x[[5]], randn(2, 0))  # an empty result: torch checks nothing


def test_index_errors_come_in_torchs_order():
    check_raises(lambda t, x: x[mask(1), ::0], randn(0, 0), match="step")  # not the mask
    check_raises(lambda t, x: x[::0, np.False_], randn(0, 0), match="step")  # not the bool
    check_raises(lambda t, x: x[::0], randn(), match="step")  # not the 0-dim message
    check_raises(_written((0,), np.float32(0.5)), randn())  # the value's TypeError
    check_raises(lambda t, x: x[[0, np.False_]], randn(3))  # a list of ints: no NumPy bool


def test_index_put_masks_span_their_dims():
    def put(t, x, m):
        y = x.clone()
        y.index_put_((m, t.tensor([0, 3, 1, 2, 0, 1])[: int(m.sum())]), t.tensor(5.0))
        return y

    check(put, randn(2, 3, 4), mask(2, 3, seed=7))


@pytest.mark.parametrize(
    ("indices", "values"),
    [
        # no leading size-1 dims dropped (x[i] = v drops them)
        (lambda t: (t.tensor(0),), lambda t: t.ones(1, 3)),
        (lambda t: (t.tensor([0, 1]),), lambda t: t.ones(1, 2, 3)),
        # a 0-d index is an index here (not a select): dtypes must match
        (lambda t: (t.tensor(0),), lambda t: t.tensor([100])),
        # the mask's shape is checked before its dtype is refused
        (lambda t: (t.tensor([], dtype=t.uint8),), lambda t: t.tensor(1.0)),
        (lambda t: (t.tensor([1, 0], dtype=t.uint8),), lambda t: t.tensor(1.0)),
    ],
)
def test_index_put_refusals(indices, values):
    def fn(t, x):
        y = x.clone()
        y.index_put_(indices(t), values(t))
        return y

    check(fn, randn(2, 3))


def test_ellipsis_write_on_a_0d_array_shared_with_numpy():
    a = np.zeros((), dtype=np.float32)
    x = lt.from_numpy(a)
    x[...] = 7.0
    assert a == 7.0
    assert x.item() == 7.0


@pytest.mark.parametrize(
    ("dtype", "value"), [("int8", 300), ("int8", 100), ("uint8", -1), ("int32", float("nan"))]
)
def test_mask_fill_value_tensor_is_checked_like_a_number(dtype, value):
    # torch fills with the value's item, converted with its overflow check
    m = mask(3, seed=5)
    check(
        lambda t, x, m: _written((slice(None), m), lambda t: t.tensor(value))(t, x),
        arr(2, 3, dtype=dtype),
        m,
    )
    check(lambda t, x, m: _written(m, lambda t: t.tensor(value))(t, x), arr(3, dtype=dtype), m)


def test_whole_dims_in_an_index_make_no_views():
    """``x[:, -1, :]`` is one select: the ``:`` dims are skipped, not built as identity
    slices and dropped (half of the index's recording time). The result is still a view of
    x (``x[:, :]`` a new tensor, not x), and writes through it reach x, as in torch."""
    x = lt.tensor(np.arange(24.0).reshape(2, 3, 4))
    lt.materialize(x)
    y = x[:, -1, :]
    # as many view nodes as a select alone (x.select(1, -1)), none for the ``:`` dims
    assert len(_chain(y._node, x._node)) == len(_chain(x.select(1, -1)._node, x._node))
    assert y.shape == (2, 4)
    np.testing.assert_array_equal(y.numpy(), np.arange(24.0).reshape(2, 3, 4)[:, -1, :])
    z = x[:, :]
    assert z is not x and z.shape == x.shape
    z[0, 0, 0] = -1.0
    x[:, 1:, ::2][1, 0, 1] = -2.0
    want = np.arange(24.0).reshape(2, 3, 4)
    want[:, :][0, 0, 0] = -1.0  # (NumPy's basic indexing makes views as torch's does)
    want[:, 1:, ::2][1, 0, 1] = -2.0
    np.testing.assert_array_equal(x.numpy(), want)


def _chain(n, base) -> list:
    """The view nodes from `n` down to `base`."""
    out = []
    while n is not base:
        out.append(n)
        n = n.inputs[0]
    return out
