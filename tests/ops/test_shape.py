"""Shape and view ops against torch: view/reshape, permute/transpose, (un)squeeze, flatten,
expand/broadcast, repeat/tile, flip/roll, tril/triu, cat/stack, split/chunk/unbind,
narrow/select and nn.functional.pad — values, dtypes, shapes and error types."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, arr, check, randn


def F(lib):
    return lib.nn.functional


# -- view / reshape ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, new",
    [
        ((2, 3, 4), (6, 4)),
        ((2, 3, 4), (-1,)),
        ((2, 3, 4), (4, -1)),
        ((2, 3, 4), (2, -1, 2)),
        ((2, 3, 4), (24,)),
        ((2, 3, 4), (1, 24, 1)),
        ((6,), (2, 3)),
        ((), (1,)),
        ((), ()),
        ((), (-1,)),
        ((1,), ()),
        ((0, 3), (3, 0)),
        ((0, 3), (0, -1)),
        ((4, 0), (-1, 2, 0)),
    ],
)
@pytest.mark.parametrize("op", ["view", "reshape"])
def test_view_reshape(shape, new, op):
    check(lambda t, x: getattr(x, op)(*new), randn(*shape))
    check(lambda t, x: getattr(x, op)(new), randn(*shape))


def test_reshape_function_and_size_arg():
    check(lambda t, x: t.reshape(x, (3, -1)), randn(2, 3))
    check(lambda t, x: x.view(x.shape[::-1]), randn(2, 3))


@pytest.mark.parametrize(
    "shape, new",
    [
        ((2, 3), (4, 2)),  # wrong numel
        ((2, 3), (-1, -1)),  # two inferred dims
        ((2, 3), (4, -1)),  # not divisible
        ((2, 3), (-2, 3)),  # invalid negative
        ((0, 3), (-1, 0)),  # cannot infer with a zero
        ((), (2,)),
    ],
)
@pytest.mark.parametrize("op", ["view", "reshape"])
def test_view_reshape_invalid(shape, new, op):
    check(lambda t, x: getattr(x, op)(*new), randn(*shape))


@pytest.mark.parametrize("dtype", ALL)
def test_reshape_dtypes(dtype):
    check(lambda t, x: x.reshape(3, 2).t(), arr(2, 3, dtype=dtype))


@pytest.mark.parametrize("op", ["view", "reshape", "permute", "expand", "repeat"])
def test_shape_methods_need_an_argument(op):
    # x.view() is a TypeError in torch, while x.view(()) is a valid 0-d shape.
    check(lambda t, x: getattr(x, op)(), randn(2, 3))


def test_view_as_reshape_as():
    check(lambda t, x, y: x.view_as(y), randn(2, 6), randn(3, 4))
    check(lambda t, x, y: x.reshape_as(y), randn(2, 6), randn(4, 3))
    check(lambda t, x, y: x.reshape_as(y), randn(2, 6), randn(4, 4))


def test_reshape_of_non_contiguous():
    check(lambda t, x: x.t().reshape(-1), randn(3, 4))
    check(lambda t, x: x[:, ::2].reshape(6), randn(3, 4))
    check(lambda t, x: x.permute(2, 0, 1).reshape(4, 6), randn(2, 3, 4))


# -- permute / transpose ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, dims",
    [
        ((2, 3, 4), (2, 0, 1)),
        ((2, 3, 4), (-1, 0, -2)),
        ((2, 3, 4), (0, 1, 2)),
        ((2, 3), (1, 0)),
        ((5,), (0,)),
        ((), ()),
        ((2, 0, 3), (2, 1, 0)),
        ((1, 2, 1, 3), (3, 1, 2, 0)),
    ],
)
def test_permute(shape, dims):
    check(lambda t, x: x.permute(*dims), randn(*shape))
    check(lambda t, x: t.permute(x, dims), randn(*shape))


@pytest.mark.parametrize(
    "shape, dims",
    [
        ((2, 3, 4), (0, 1)),  # too few
        ((2, 3, 4), (0, 1, 2, 3)),  # too many
        ((2, 3, 4), (0, 0, 1)),  # repeated
        ((2, 3, 4), (0, 1, 3)),  # out of range
        ((2, 3, 4), (0, -1, 2)),  # repeated after normalizing
    ],
)
def test_permute_errors(shape, dims):
    check(lambda t, x: x.permute(*dims), randn(*shape))


@pytest.mark.parametrize(
    "shape, a, b",
    [((2, 3, 4), 0, 2), ((2, 3, 4), -1, 0), ((2, 3, 4), 1, 1), ((2, 3), 0, 1), ((5,), 0, -1)],
)
@pytest.mark.parametrize("op", ["transpose", "swapaxes", "swapdims"])
def test_transpose(shape, a, b, op):
    check(lambda t, x: getattr(x, op)(a, b), randn(*shape))
    check(lambda t, x: getattr(t, op)(x, a, b), randn(*shape))


def test_transpose_0d_and_errors():
    check(lambda t, x: x.transpose(0, -1), randn())
    check(lambda t, x: x.transpose(0, 3), randn(2, 3))
    check(lambda t, x: x.transpose(-4, 0), randn(2, 3))


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 3), (2, 3, 4)])
def test_t(shape):
    check(lambda t, x: x.t(), randn(*shape))
    check(lambda t, x: t.t(x), randn(*shape))


# torch deprecates .T on non-matrices and .mT on 0-d (both still work there)
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_T_and_mT(shape):
    check(lambda t, x: x.T, randn(*shape))
    check(lambda t, x: x.mT, randn(*shape))


@pytest.mark.parametrize(
    "shape, src, dst",
    [
        ((2, 3, 4), 0, 2),
        ((2, 3, 4), -1, 0),
        ((2, 3, 4), (0, 1), (2, 0)),
        ((2, 3, 4, 5), (0, 3), (1, 2)),
        ((2, 3, 4, 5), (3, 1), (0, 3)),
        ((2, 3, 4), [], []),
        ((2, 3, 4), (0, 0), (1, 2)),  # repeated source
        ((2, 3, 4), (0, 1), (1, 1)),  # repeated destination
        ((2, 3, 4), (0, 1), (1,)),  # length mismatch
        ((2, 3), 2, 0),  # out of range
    ],
)
@pytest.mark.parametrize("op", ["movedim", "moveaxis"])
def test_movedim(shape, src, dst, op):
    check(lambda t, x: getattr(t, op)(x, src, dst), randn(*shape))


# -- squeeze / unsqueeze / flatten ------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, dim", [((2, 3), 0), ((2, 3), 2), ((2, 3), -1), ((2, 3), -3), ((), 0), ((), -1)]
)
def test_unsqueeze(shape, dim):
    check(lambda t, x: x.unsqueeze(dim), randn(*shape))
    check(lambda t, x: t.unsqueeze(x, dim), randn(*shape))


@pytest.mark.parametrize("shape, dim", [((2, 3), 3), ((2, 3), -4), ((), 2)])
def test_unsqueeze_errors(shape, dim):
    check(lambda t, x: x.unsqueeze(dim), randn(*shape))


@pytest.mark.parametrize(
    "shape, dim",
    [
        ((1, 3, 1, 2), None),
        ((1, 3, 1, 2), 0),
        ((1, 3, 1, 2), 1),  # no-op on a non-1 dim
        ((1, 3, 1, 2), -2),
        ((1, 3, 1, 2), (0, 2)),
        ((1, 3, 1, 2), (0, 1)),
        ((1, 3, 1, 2), (-1, -2)),
        ((1, 3, 1, 2), ()),
        ((1, 1), None),
        ((), None),
        ((), 0),
        ((), -1),
        ((), (0,)),
        ((1,), 0),
        ((0, 1), None),
        ((1, 3, 1, 2), 4),  # out of range
        ((1, 3, 1, 2), (0, 0)),  # repeated
        ((1, 3, 1, 2), (0, -4)),  # repeated after normalizing
        ((), 5),  # out of range on 0-d
        ((), (0, -1)),  # the same dim of a 0-d tensor twice
    ],
)
def test_squeeze(shape, dim):
    if dim is None:
        check(lambda t, x: x.squeeze(), randn(*shape))
        check(lambda t, x: t.squeeze(x), randn(*shape))
    else:
        check(lambda t, x: x.squeeze(dim), randn(*shape))
        check(lambda t, x: t.squeeze(x, dim), randn(*shape))


@pytest.mark.parametrize(
    "shape, start, end",
    [
        ((2, 3, 4), 0, -1),
        ((2, 3, 4), 1, 2),
        ((2, 3, 4), 0, 1),
        ((2, 3, 4), -2, -1),
        ((2, 3, 4), 1, 1),
        ((2, 0, 4), 0, 1),
        ((5,), 0, 0),
        ((), 0, -1),
        ((), 0, 0),
        ((2, 3, 4), 2, 1),  # start after end
        ((2, 3, 4), 0, 3),  # out of range
        ((), 0, 1),  # out of range on 0-d
    ],
)
def test_flatten(shape, start, end):
    check(lambda t, x: x.flatten(start, end), randn(*shape))
    check(lambda t, x: t.flatten(x, start_dim=start, end_dim=end), randn(*shape))


def test_ravel():
    check(lambda t, x: t.ravel(x), randn(2, 3))
    check(lambda t, x: x.t().ravel(), randn(2, 3))
    check(lambda t, x: x.ravel(), randn())


@pytest.mark.parametrize(
    "shape, dim, sizes",
    [
        ((2, 12), 1, (3, 4)),
        ((2, 12), -1, (3, -1)),
        ((12,), 0, (2, 2, 3)),
        ((2, 12, 3), 1, (-1, 6)),
        ((2, 12), 0, (2,)),
        ((2, 12), 0, (1, 2, 1)),
        ((0, 2), 0, (0, 5)),
        ((2, 12), 1, (5, -1)),  # not divisible
        ((2, 12), 1, (3, 5)),  # wrong product
        ((2, 12), 1, (-1, -1)),  # two inferred
        ((2, 12), 2, (3, 4)),  # out of range
    ],
)
def test_unflatten(shape, dim, sizes):
    check(lambda t, x: x.unflatten(dim, sizes), randn(*shape))
    check(lambda t, x: t.unflatten(x, dim, sizes), randn(*shape))


# -- expand / broadcast ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, sizes",
    [
        ((3, 1), (3, 4)),
        ((3, 1), (-1, 4)),
        ((3, 1), (2, 3, 4)),
        ((3, 1), (2, -1, -1)),
        ((1,), (0,)),
        ((), (2, 3)),
        ((), ()),
        ((1, 1), (0, 5)),
        ((2, 3), (2, 3)),
        ((3, 1), (3, 0)),
        ((3, 1), (4, 4)),  # non-singleton mismatch
        ((3, 1), (4,)),  # fewer sizes than dims
        ((3, 1), (-1, 3, 4)),  # -1 in a new leading dim
        ((3, 1), (3, -2)),  # invalid negative size
    ],
)
def test_expand(shape, sizes):
    check(lambda t, x: x.expand(*sizes), randn(*shape))
    check(lambda t, x: x.expand(sizes), randn(*shape))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float16"])
def test_expand_dtypes(dtype):
    check(lambda t, x: x.expand(2, 3, 4) * 1, arr(3, 1, dtype=dtype))


def test_expand_as_broadcast_to():
    check(lambda t, x, y: x.expand_as(y), randn(3, 1), randn(2, 3, 5))
    check(lambda t, x, y: x.expand_as(y), randn(3, 2), randn(2, 3, 5))
    check(lambda t, x: t.broadcast_to(x, (2, 3, 4)), randn(1, 4))
    check(lambda t, x: x.broadcast_to((2, -1, 4)), randn(3, 1))
    check(lambda t, x: t.broadcast_to(x, (2, 3)), randn(4))


@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 1), (1, 4)],
        [(2, 1, 3), (4, 1), ()],
        [(5,), (5,)],
        [(0, 1), (1, 3)],
        [(2,), (3,)],  # incompatible
    ],
)
def test_broadcast_tensors(shapes):
    check(lambda t, *xs: t.broadcast_tensors(*xs), *[randn(*s) for s in shapes])


@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 1), (1, 4)],
        [(2, 1, 3), (4, 1), ()],
        [3, (2, 1)],
        [(0,), (1,)],
        [],
        [(2,), (3,)],  # incompatible
    ],
)
def test_broadcast_shapes(shapes):
    check(lambda t: t.broadcast_shapes(*shapes))


# -- repeat / tile / contiguous / clone --------------------------------------------------------
@pytest.mark.parametrize(
    "shape, reps",
    [
        ((2, 3), (2, 2)),
        ((2, 3), (1, 1)),
        ((2, 3), (3, 1, 2)),
        ((3,), (2,)),
        ((3,), (2, 0)),
        ((), (2, 3)),
        ((), ()),
        ((0, 2), (2, 2)),
        ((2, 3), (2,)),  # fewer repeats than dims
        ((2, 3), (2, -1)),  # negative
    ],
)
def test_repeat(shape, reps):
    check(lambda t, x: x.repeat(*reps), randn(*shape))
    check(lambda t, x: x.repeat(reps), randn(*shape))


@pytest.mark.parametrize("dtype", ALL)
def test_repeat_dtypes(dtype):
    check(lambda t, x: x.repeat(2, 1, 3), arr(2, 2, dtype=dtype))


@pytest.mark.parametrize(
    "shape, reps",
    [((2, 3), (2, 2)), ((2, 3), (2,)), ((2, 3), (2, 1, 2)), ((), (3,)), ((4,), ()), ((2, 3), [3])],
)
def test_tile(shape, reps):
    check(lambda t, x: x.tile(reps), randn(*shape))
    check(lambda t, x: t.tile(x, reps), randn(*shape))
    if reps:
        check(lambda t, x: x.tile(*reps), randn(*shape))  # the method takes varargs


@pytest.mark.parametrize("make", ["plain", "transposed", "strided", "expanded"])
def test_contiguous_and_clone(make):
    def build(t, x):
        if make == "transposed":
            return x.t()
        if make == "strided":
            return x[:, ::2]
        if make == "expanded":
            return x[:1].expand(3, 4)
        return x

    check(lambda t, x: build(t, x).contiguous(), randn(3, 4))
    check(lambda t, x: build(t, x).contiguous().is_contiguous(), randn(3, 4))
    check(lambda t, x: build(t, x).is_contiguous(), randn(3, 4))
    check(lambda t, x: build(t, x).clone(), randn(3, 4))
    check(lambda t, x: t.clone(build(t, x)), randn(3, 4))


# -- flip / roll -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, dims",
    [
        ((2, 3, 4), (0,)),
        ((2, 3, 4), (0, 2)),
        ((2, 3, 4), (-1,)),
        ((2, 3, 4), (0, 1, 2)),
        ((2, 3, 4), ()),
        ((5,), [0]),
        ((), (0,)),
        ((), ()),
        ((0, 3), (0, 1)),
        ((2, 3), (0, 0)),  # repeated
        ((2, 3), (0, -2)),  # repeated after normalizing
        ((2, 3), (2,)),  # out of range
        ((), (5,)),  # out of range on 0-d
        ((), (0, 0)),
    ],
)
def test_flip(shape, dims):
    check(lambda t, x: x.flip(dims), randn(*shape))
    check(lambda t, x: t.flip(x, dims), randn(*shape))
    check(lambda t, x: x.flip(*dims), randn(*shape))  # the method also takes varargs


def test_flip_int_dim_method():
    check(lambda t, x: x.flip(1), randn(2, 3))
    check(lambda t, x: x.flip(-1, 0), randn(2, 3))


@pytest.mark.parametrize("dtype", ALL)
def test_flip_dtypes(dtype):
    check(lambda t, x: x.flip(-1), arr(3, 4, dtype=dtype))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (4,), ()])
def test_fliplr_flipud(shape):
    check(lambda t, x: t.fliplr(x), randn(*shape))
    check(lambda t, x: t.flipud(x), randn(*shape))
    check(lambda t, x: x.fliplr(), randn(*shape))
    check(lambda t, x: x.flipud(), randn(*shape))


@pytest.mark.parametrize(
    "shape, shifts, dims",
    [
        ((2, 5), 1, None),
        ((2, 5), -3, None),
        ((2, 5), 13, None),
        ((2, 5), 0, None),
        ((2, 5), 2, 1),
        ((2, 5), -2, -1),
        ((2, 5), 7, 1),
        ((2, 5), (1, 2), (0, 1)),
        ((2, 5), (1, -2), (1, 1)),  # the same dim twice accumulates
        ((3, 4, 5), (5, -7, 11), (0, 1, 2)),
        ((0, 3), 2, 1),
        ((0, 3), 1, None),
        ((), 3, None),
        ((), 1, 0),
        ((2, 5), (1, 2), None),  # several shifts without dims
        ((2, 5), (1, 2), (0,)),  # misaligned
        ((2, 5), 1, 2),  # out of range
    ],
)
def test_roll(shape, shifts, dims):
    check(lambda t, x: t.roll(x, shifts, dims), randn(*shape))
    check(lambda t, x: x.roll(shifts=shifts, dims=dims), randn(*shape))


@pytest.mark.parametrize("dtype", ALL)
def test_roll_dtypes(dtype):
    check(lambda t, x: x.roll(1, 0).roll(-1), arr(3, 4, dtype=dtype))


# -- tril / triu -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4), (2, 1, 3, 3), (0, 3), (1, 1)])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 2, -3, 10, -10])
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu(shape, diagonal, op):
    check(lambda t, x: getattr(t, op)(x, diagonal), randn(*shape))
    check(lambda t, x: getattr(x, op)(diagonal=diagonal), randn(*shape))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_dtypes(dtype, op):
    check(lambda t, x: getattr(t, op)(x, 1), arr(3, 4, dtype=dtype))


@pytest.mark.parametrize("shape", [(), (4,)])
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_errors(shape, op):
    check(lambda t, x: getattr(t, op)(x), randn(*shape))


# -- cat / stack -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shapes, dim",
    [
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 0)], 1),
        ([(2, 3), (2, 5)], -1),
        ([(2, 3, 4), (2, 1, 4)], 1),
        ([(3,), (0,), (2,)], 0),
        ([(2, 3), (0,)], 1),  # legacy: empty 1-d tensors are skipped
        ([(0,), (2, 3)], 0),
        ([(0,), (0,)], 0),
        ([(2, 3)], 0),
        ([(2, 3), (3, 3)], 1),  # size mismatch off the cat dim
        ([(2, 3), (2, 3, 1)], 0),  # rank mismatch
        ([(2, 3), (2, 3)], 2),  # dim out of range
        ([(), ()], 0),  # 0-d cannot be concatenated
        ([(2,), ()], 0),
    ],
)
@pytest.mark.parametrize("op", ["cat", "concat", "concatenate"])
def test_cat(shapes, dim, op):
    check(lambda t, *xs: getattr(t, op)(xs, dim), *[randn(*s) for s in shapes])


@pytest.mark.parametrize(
    "dtypes",
    [
        ("int32", "float32"),
        ("bool", "int8"),
        ("uint8", "int8"),
        ("float16", "float64"),
        ("int64", "bool", "float16"),
        ("bool", "bool"),
    ],
)
def test_cat_promotion(dtypes):
    check(lambda t, *xs: t.cat(list(xs), 0), *[arr(2, 2, dtype=d) for d in dtypes])
    check(lambda t, *xs: t.stack(list(xs), 1), *[arr(2, 2, dtype=d) for d in dtypes])


def test_cat_promotion_with_skipped_empty():
    # the skipped empty tensor still takes part in type promotion
    check(lambda t, x, e: t.cat([x, e]), arr(2, 3, dtype="int32"), arr(0, dtype="float32"))


def test_cat_empty_list_and_non_tensors():
    check(lambda t: t.cat([]))
    check(lambda t, x: t.cat([x, 1.0]), randn(2))
    check(lambda t: t.stack([]))


def test_cat_non_contiguous_inputs():
    check(lambda t, x, y: t.cat([x.t(), y[:, ::2]], 0), randn(3, 2), randn(4, 4))


@pytest.mark.parametrize(
    "shapes, dim",
    [
        ([(2, 3), (2, 3)], 0),
        ([(2, 3), (2, 3), (2, 3)], 1),
        ([(2, 3), (2, 3)], 2),
        ([(2, 3), (2, 3)], -1),
        ([(2, 3), (2, 3)], -3),
        ([(), ()], 0),
        ([(), (), ()], -1),
        ([(0, 2)], 1),
        ([(2, 3), (2, 4)], 0),  # size mismatch
        ([(2, 3), (2, 3)], 3),  # out of range
        ([(2, 3), (2, 3)], -4),
    ],
)
def test_stack(shapes, dim):
    check(lambda t, *xs: t.stack(xs, dim), *[randn(*s) for s in shapes])
    check(lambda t, *xs: t.stack(list(xs), dim=dim), *[randn(*s) for s in shapes])


@pytest.mark.parametrize(
    "shapes",
    [
        [(3,), (2,)],
        [(2, 3), (2, 1)],
        [(), ()],
        [(2, 3, 4), (2, 1, 4)],
        [(2, 3), (3, 3)],  # hstack mismatch
    ],
)
def test_hstack(shapes):
    check(lambda t, *xs: t.hstack(xs), *[randn(*s) for s in shapes])


@pytest.mark.parametrize(
    "shapes",
    [
        [(3,), (3,)],
        [(2, 3), (3,)],
        [(), ()],
        [(2, 3, 4), (1, 3, 4)],
        [(3,), (4,)],  # vstack mismatch
    ],
)
def test_vstack(shapes):
    check(lambda t, *xs: t.vstack(xs), *[randn(*s) for s in shapes])


def test_hstack_vstack_promotion():
    check(lambda t, x, y: t.hstack([x, y]), arr(3, dtype="int16"), arr(2, dtype="float32"))
    check(lambda t, x, y: t.vstack([x, y]), arr(3, dtype="bool"), arr(3, dtype="uint8"))


def test_atleast():
    for shape in [(), (3,), (2, 3)]:
        check(lambda t, x: t.atleast_1d(x), randn(*shape))
        check(lambda t, x: t.atleast_2d(x), randn(*shape))


# -- split / chunk / unbind / narrow / select ---------------------------------------------------
@pytest.mark.parametrize(
    "shape, arg, dim",
    [
        ((6, 2), 2, 0),
        ((7, 2), 3, 0),  # uneven
        ((7, 2), 10, 0),  # larger than the dim
        ((2, 7), 3, -1),
        ((6, 2), [1, 2, 3], 0),
        ((6, 2), (6,), 0),
        ((6, 2), [0, 6, 0], 0),
        ((2, 6), [4, 2], 1),
        ((0, 2), 2, 0),
        ((0, 2), 0, 0),
        ((6, 2), [1, 2], 0),  # sections don't sum up
        ((6, 2), [7, -1], 0),  # negative section
        ((6, 2), 0, 0),  # zero split size on a non-empty dim
        ((6, 2), 2, 2),  # out of range
    ],
)
def test_split(shape, arg, dim):
    check(lambda t, x: t.split(x, arg, dim), randn(*shape))
    check(lambda t, x: x.split(arg, dim=dim), randn(*shape))


def test_split_with_sizes_method():
    check(lambda t, x: x.split_with_sizes([1, 3], 1), randn(2, 4))


def test_split_with_sizes_function():
    check(lambda t, x: t.split_with_sizes(x, [2, 2]), randn(4, 2))


@pytest.mark.parametrize(
    "shape, chunks, dim",
    [
        ((6, 2), 3, 0),
        ((7, 2), 3, 0),  # uneven
        ((5, 2), 4, 0),  # torch returns fewer chunks than asked
        ((2, 3), 5, 1),  # more chunks than elements
        ((2, 3), 1, -1),
        ((0, 3), 2, 0),
        ((3,), 0, 0),  # chunks must be positive
        ((3,), -1, 0),
        ((3,), 2, 1),  # out of range
    ],
)
def test_chunk(shape, chunks, dim):
    check(lambda t, x: t.chunk(x, chunks, dim), randn(*shape))
    check(lambda t, x: x.chunk(chunks, dim=dim), randn(*shape))


@pytest.mark.parametrize(
    "shape, dim", [((3, 2), 0), ((3, 2), 1), ((3, 2), -1), ((2, 0), 0), ((0, 2), 0), ((3,), 0)]
)
def test_unbind(shape, dim):
    check(lambda t, x: t.unbind(x, dim), randn(*shape))
    check(lambda t, x: x.unbind(dim), randn(*shape))


def test_unbind_errors_and_iteration():
    check(lambda t, x: t.unbind(x, 2), randn(3, 2))
    check(lambda t, x: t.unbind(x), randn())
    check(lambda t, x: tuple(x), randn(3, 2))


@pytest.mark.parametrize(
    "shape, dim, start, length",
    [
        ((5, 3), 0, 1, 3),
        ((5, 3), 0, 0, 5),
        ((5, 3), 0, 5, 0),
        ((5, 3), 1, -2, 2),
        ((5, 3), -1, 1, 1),
        ((5, 3), 0, -5, 5),
        ((5, 3), 0, 3, 3),  # runs past the end
        ((5, 3), 0, 6, 0),  # start out of range
        ((5, 3), 0, -6, 1),  # negative start out of range
        ((5, 3), 0, 1, -1),  # negative length
        ((5, 3), 2, 0, 1),  # dim out of range
        ((), 0, 0, 1),  # 0-d
    ],
)
def test_narrow(shape, dim, start, length):
    check(lambda t, x: x.narrow(dim, start, length), randn(*shape))
    check(lambda t, x: t.narrow(x, dim, start, length), randn(*shape))


def test_narrow_tensor_start():
    check(lambda t, x: x.narrow(0, t.tensor(2), 2), randn(5, 3))


@pytest.mark.parametrize(
    "shape, dim, index",
    [
        ((4, 3), 0, 2),
        ((4, 3), 1, -1),
        ((4, 3), -1, 0),
        ((4, 3, 2), 1, 1),
        ((4,), 0, 3),
        ((4, 3), 0, 4),  # out of range
        ((4, 3), 0, -5),
        ((4, 3), 2, 0),  # dim out of range
        ((), 0, 0),  # 0-d
        ((0, 3), 0, 0),  # empty dim
    ],
)
def test_select(shape, dim, index):
    check(lambda t, x: x.select(dim, index), randn(*shape))
    check(lambda t, x: t.select(x, dim, index), randn(*shape))


# -- nn.functional.pad ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, pad",
    [
        ((3, 4), (1, 2)),
        ((3, 4), (1, 2, 3, 0)),
        ((3, 4), (0, 0)),
        ((3, 4), ()),
        ((3, 4), (-1, 2)),  # crop left, pad right
        ((3, 4), (-1, -2, 1, -1)),
        ((3, 4), (-2, -2)),  # crops to size 0
        ((2, 3, 4), (1, 1, 1, 1, 1, 1)),
        ((4,), (2, 3)),
        ((0, 2), (1, 1)),
        ((3, 4), (1,)),  # odd length
        ((3,), (1, 1, 1, 1)),  # too many pads
        ((3, 4), (-3, -2)),  # crops below size 0
    ],
)
@pytest.mark.parametrize("value", [None, 0.0, 2.5, -1])
def test_pad_constant(shape, pad, value):
    kwargs = {} if value is None else {"value": value}
    check(lambda t, x: F(t).pad(x, pad, **kwargs), randn(*shape))
    check(lambda t, x: F(t).pad(x, pad, mode="constant", **kwargs), randn(*shape))


@pytest.mark.parametrize(
    "dtype, value", [("int32", 2.7), ("int64", -3), ("bool", True), ("float32", float("nan"))]
)
def test_pad_constant_value_conversion(dtype, value):
    check(lambda t, x: F(t).pad(x, (1, 1), value=value), arr(2, 3, dtype=dtype))


@pytest.mark.parametrize(
    "dtype, value", [("uint8", -1), ("uint8", 256), ("uint8", 255), ("int8", 200), ("int8", -128)]
)
def test_pad_constant_value_range(dtype, value):
    check(lambda t, x: F(t).pad(x, (1, 1), value=value), arr(2, 3, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL)
def test_pad_constant_dtypes(dtype):
    check(lambda t, x: F(t).pad(x, (1, 1, 0, 2)), arr(2, 3, dtype=dtype))
    check(lambda t, x: F(t).pad(x, (1, 1), value=1), arr(2, 3, dtype=dtype))


@pytest.mark.parametrize(
    "shape, pad",
    [
        ((2, 5), (1, 2)),  # 2-d: (C, W)
        ((2, 5), (0, 4)),
        ((1, 2, 5), (2, 1)),  # 3-d: (N, C, W)
        ((2, 4, 5), (1, 2, 3, 0)),  # 3-d: (C, H, W)
        ((1, 2, 4, 5), (1, 2, 3, 1)),  # 4-d: (N, C, H, W)
        ((1, 2, 3, 4, 5), (1, 1, 1, 1, 1, 1)),  # 5-d: (N, C, D, H, W)
        ((2, 3, 4, 5), (0, 0, 1, 0)),
    ],
)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes(shape, pad, mode):
    check(lambda t, x: F(t).pad(x, pad, mode=mode), randn(*shape))


@pytest.mark.parametrize(
    "shape, pad, mode",
    [
        ((2, 5), (5, 0), "reflect"),  # pad must be < the dim for reflect
        ((2, 5), (1, 5), "reflect"),
        ((2, 5), (1, 1, 1, 1), "reflect"),  # 2-d input only pads the last dim
        ((1, 2, 5), (6, 0), "circular"),  # circular pad larger than the dim
        ((2, 5), (1, 1), "wrap"),  # unknown mode
        ((2, 5), (1, 1, 1), "replicate"),  # odd length
    ],
)
def test_pad_mode_errors(shape, pad, mode):
    check(lambda t, x: F(t).pad(x, pad, mode=mode), randn(*shape))


@pytest.mark.parametrize("pad", [(-1, 2), (2, -1), (-1, -1), (-2, -2), (1, -2), (-2, 0), (0, -4)])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_mode_negative_crops(pad, mode):
    check(lambda t, x: F(t).pad(x, pad, mode=mode), randn(1, 2, 5))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_mode_negative_crops_2d(mode):
    check(lambda t, x: F(t).pad(x, (1, -2, -1, 1), mode=mode), randn(1, 2, 4, 5))
    check(lambda t, x: F(t).pad(x, (-1, 2, 2, -1), mode=mode), randn(2, 4, 5))


@pytest.mark.parametrize(
    "shape, pad, mode",
    [
        ((1, 2, 5), (4, -3), "reflect"),  # reflection reaches into the cropped part
        ((1, 2, 5), (-5, 1), "reflect"),
        ((1, 2, 5), (-5, 1), "replicate"),
        ((1, 2, 5), (5, -5), "replicate"),
        ((1, 2, 5), (5, 5), "circular"),  # exactly one wrap
        ((1, 2, 5), (-3, -2), "reflect"),  # nothing left
        ((1, 2, 5), (-3, -2), "replicate"),
        ((1, 2, 5), (5, -5), "reflect"),
        ((0, 5), (1, 1), "reflect"),  # empty channel dim
        ((2, 0), (1, 1), "replicate"),  # empty padded dim
        ((0, 2, 5), (1, 1), "reflect"),  # an empty batch is fine
        ((0, 2, 5), (1, 1), "replicate"),
        ((0, 5), (1, 1), "circular"),
        ((2, 0), (1, 1), "circular"),
    ],
)
def test_pad_mode_edge_cases(shape, pad, mode):
    check(lambda t, x: F(t).pad(x, pad, mode=mode), randn(*shape))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("value", [0, 0.0, 1.5])
def test_pad_mode_value(mode, value):
    check(lambda t, x: F(t).pad(x, (1, 1), mode=mode, value=value), randn(2, 5))


@pytest.mark.parametrize("shape, npad", [((5,), 2), ((2, 3, 4, 5), 2), ((2, 3), 6), ((2, 3), 4)])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_mode_unsupported_ranks(shape, npad, mode):
    check(lambda t, x: F(t).pad(x, (1,) * npad, mode=mode), randn(*shape))


@pytest.mark.parametrize("mode", ["replicate", "reflect", "circular"])
# (torch has no bool kernels for reflect/replicate; lazytorch pads any dtype)
@pytest.mark.parametrize("dtype", ["int8", "int32", "float16", "float64"])
def test_pad_mode_dtypes(mode, dtype):
    check(lambda t, x: F(t).pad(x, (2, 1), mode=mode), arr(2, 5, dtype=dtype))


def test_pad_non_contiguous_input():
    check(lambda t, x: F(t).pad(x.transpose(-1, -2), (1, 2), mode="reflect"), randn(1, 4, 3))
    check(lambda t, x: F(t).pad(x[:, ::2], (1, 1), value=3.0), randn(3, 6))


# -- property-based: random reshapes and permutations agree with torch -------------------------
def test_random_view_chains():
    rng = np.random.default_rng(7)
    for _ in range(20):
        ndim = int(rng.integers(1, 5))
        shape = tuple(int(s) for s in rng.integers(1, 4, size=ndim))
        perm = tuple(int(p) for p in rng.permutation(ndim))
        flat = int(np.prod(shape))

        def fn(t, x, perm=perm, flat=flat):
            y = x.permute(*perm).reshape(-1)
            return y.reshape(flat, 1).squeeze(1).flip(0).unsqueeze(0)

        check(fn, randn(*shape))


def _view_chain(t, x):
    return x.permute(2, 0, 1)[1:, :, ::2].flatten(1).t().flip(0)


def test_view_of_lazy_result_is_lazy():
    x = lt.tensor(randn(2, 3, 4)) * 2
    lt.metrics.reset()
    y = _view_chain(lt, x)
    assert not y.is_materialized
    assert lt.metrics.counters()["materializations"] == 0
    check(lambda t, x: _view_chain(t, x * 2), randn(2, 3, 4))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize(
    "out_shape, out_dtype",
    [
        ((4, 3), "float32"),
        ((4, 3), "float64"),
        ((0,), "float32"),
        ((2, 2), "float32"),
        ((4, 3), "int64"),
    ],
)
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_stack_out(out_shape, out_dtype, op):
    def fn(t, x, y):
        o = t.zeros(out_shape, dtype=getattr(t, out_dtype))  # resizable, unlike from_numpy
        if op == "cat":
            r = t.cat([x, y], out=o)
        else:
            r = t.stack([x, y], 1, out=o)
        return r, o

    check(fn, randn(2, 3), randn(2, 3))


def test_cat_out_writes_through_a_view():
    def fn(t, x, y, o):
        v = o[1:]
        t.cat([x, y], out=o)
        return o, v

    check(fn, randn(2), randn(3), np.zeros(5, dtype="float32"))


@settings(max_examples=200, deadline=None)
@given(
    src=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    target=st.lists(st.integers(-3, 6), min_size=0, max_size=4),
)
def test_reshape_shapes_and_errors_match_torch(src, target):
    """``reshape``/``view`` targets with -1, zeros and bad sizes: the inferred shape, or
    the error type, as torch's (the plain-int fast path of _infer_shape and its checks)."""
    got, want = [], []
    for lib, out in ((lt, got), (torch, want)):
        x = lib.zeros(tuple(src))
        for op in ("reshape", "view"):
            try:
                out.append(tuple(getattr(x, op)(tuple(target)).shape))
            except Exception as e:  # the type is what is compared
                out.append(type(e).__name__)
    assert got == want
