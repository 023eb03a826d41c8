"""Small ops real scripts stop on (index_add/copy/fill, shifts, multinomial, bernoulli,
unfold, diag, type, ...) and the everyday calls they sit next to, against torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_raises, randn

# -- index_add / index_copy / index_fill ------------------------------------------------------


def _idx(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_index_add_values_and_grads(dtype: str) -> None:
    def fn(t: Any, x: Any, src: Any, idx: Any) -> Any:
        x.requires_grad_()
        src.requires_grad_()
        out = t.index_add(x, 1, idx, src, alpha=-2.5)
        gx, gs = t.autograd.grad((out * out).sum(), [x, src])
        return out, gx, gs

    check(fn, randn(3, 4, dtype=dtype), randn(3, 3, dtype=dtype), _idx(1, 3, 1))  # repeats add


def test_index_add_methods_and_in_place() -> None:
    check(lambda t, x, s, i: x.index_add(0, i, s), randn(4, 2), randn(2, 2), _idx(3, 0))
    check(lambda t, x, s, i: x.index_add_(-1, i, s, alpha=3), randn(2, 3), randn(2, 1), _idx(2))
    check(lambda t, x, s, i: x.index_add(0, i.int(), s), randn(3), randn(2), _idx(0, 0))
    check(
        lambda t, x, s, i: x.index_add(0, i, s),
        arr(3, dtype="int64"),
        arr(1, dtype="int64"),
        _idx(1),
    )


def test_index_add_errors() -> None:
    check_raises(lambda t, x, s, i: x.index_add(0, i, s), randn(3, 4), randn(2, 4), _idx(0))
    check_raises(lambda t, x, s, i: x.index_add(0, i.float(), s), randn(3, 4), randn(1, 4), _idx(0))
    check_raises(
        lambda t, x, s, i: x.index_add(0, i.reshape(1, 1), s), randn(3, 4), randn(1, 4), _idx(0)
    )
    check_raises(lambda t, x, s, i: x.index_add(0, i, s.double()), randn(3), randn(1), _idx(0))
    check_raises(lambda t, x, s, i: x.index_add(0, i, s), randn(3, 4), randn(1, 3), _idx(0))
    check_raises(lambda t, x, s, i: x.index_add(0, i, s), randn(3, 4), randn(1, 4), _idx(5))


def test_index_copy_values_and_grads() -> None:
    def fn(t: Any, x: Any, src: Any, idx: Any) -> Any:
        x.requires_grad_()
        src.requires_grad_()
        out = x.index_copy(0, idx, src)
        w = t.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        return out, *t.autograd.grad((out * w).sum(), [x, src])

    check(fn, randn(4, 3, dtype="float64"), randn(2, 3, dtype="float64"), _idx(3, 1))
    check(lambda t, x, s, i: x.index_copy_(1, i, s), randn(2, 3), randn(2, 2), _idx(2, 0))
    check_raises(lambda t, x, s, i: x.index_copy(0, i, s), randn(3, 4), randn(2, 3), _idx(2, 0))
    check_raises(lambda t, x, s, i: x.index_copy(0, i, s), randn(3), randn(1), _idx(3))


def test_index_fill_values_and_grads() -> None:
    def fn(t: Any, x: Any, idx: Any) -> Any:
        x.requires_grad_()
        out = x.index_fill(1, idx, -7.0)
        return out, *t.autograd.grad((out * out).sum(), [x])

    check(fn, randn(3, 4), _idx(0, -1, 0))
    check(lambda t, x, i: x.index_fill_(0, i, 2), arr(3, 2, dtype="int32"), _idx(1))
    check(lambda t, x, i: x.index_fill(0, i, t.tensor(1.5)), randn(3), _idx(2))
    check(lambda t, x, i: x.index_fill(0, i[0], 4.0), randn(3, 2), _idx(1))  # 0-d index
    check_raises(lambda t, x, i: x.index_fill(0, i, t.ones(1)), randn(3), _idx(1))
    check_raises(lambda t, x, i: x.index_fill(0, i, 1.0), randn(3), _idx(-4))


def test_index_fill_value_tensor_gets_gradient() -> None:
    def fn(t: Any, x: Any, v: Any, idx: Any) -> Any:
        v.requires_grad_()
        out = x.index_fill(1, idx, v)
        return out, *t.autograd.grad((out * x).sum(), [v])

    check(fn, randn(2, 3), randn(), _idx(0, 2))


# -- shifts -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_shifts_over_every_amount(dtype: str) -> None:
    bits = np.dtype(dtype).itemsize * 8
    a = arr(bits + 3, dtype=dtype, low=-100, high=100)
    b = np.arange(-1, bits + 2).astype(dtype)  # includes a negative (or wrapped) amount
    check(lambda t, x, s: x << s, a, b)
    check(lambda t, x, s: x >> s, a, b)
    check(lambda t, x, s: t.bitwise_left_shift(x, s), a, b)
    check(lambda t, x, s: t.bitwise_right_shift(x, s), a, b)


def test_shift_extremes_and_scalars() -> None:
    big = np.array([1, -5, 3, 2**62 + 7, -(2**63)], dtype=np.int64)
    check(lambda t, x: (x << 63, x >> 63, x << 64, x >> 64, x << 1), big)
    check(lambda t, x: (3 << x, 100 >> x), arr(4, dtype="int64", low=0, high=8))
    check(
        lambda t, x: (x.bitwise_left_shift(2), x.bitwise_right_shift(t.tensor(1))),
        arr(3, 2, dtype="int32"),
    )
    check(lambda t, x, s: x << s, arr(3, 2, dtype="int16"), arr(2, dtype="int8", low=0, high=4))


def test_in_place_shifts() -> None:
    def fn(t: Any, x: Any) -> Any:
        y = x.clone()
        y <<= 2
        z = x.clone()
        z >>= 1
        w = x.clone().bitwise_left_shift_(1)
        return y, z, w

    check(fn, arr(5, dtype="int64"))


def test_shift_errors() -> None:
    check_raises(lambda t, x: x << 1, randn(3))
    check_raises(lambda t, x: x >> 1.5, arr(3, dtype="int64"))


# -- multinomial ------------------------------------------------------------------------------


def _counts(samples: lt.Tensor, k: int) -> np.ndarray:
    return np.bincount(samples.numpy().reshape(-1), minlength=k)


def _chi_square_ok(counts: np.ndarray, probs: np.ndarray) -> None:
    n = counts.sum()
    expected = n * probs
    keep = expected > 0
    assert not counts[~keep].any(), f"zero-probability categories drawn: {counts}"
    stat = float((((counts - expected) ** 2)[keep] / expected[keep]).sum())
    # 99.9% quantile of chi-square with up to 9 degrees of freedom is 27.9
    assert stat < 27.9, f"chi-square {stat:.1f} for counts {counts} vs {expected}"


@pytest.mark.parametrize("backend, sync", [("interpreter", True), ("cpp", False)])
def test_multinomial_with_replacement_follows_the_weights(backend: str, sync: bool) -> None:
    w = np.array([1.0, 0.0, 3.0, 0.5, 2.0, 0.0, 4.0], dtype=np.float32)  # unnormalized
    g = lt.Generator().manual_seed(1234)
    with lt.backend(backend), lt.sync_mode(sync):
        s = lt.multinomial(lt.from_numpy(w), 20000, replacement=True, generator=g)
        assert s.dtype is lt.int64 and tuple(s.shape) == (20000,)
        _chi_square_ok(_counts(s, 7), w / w.sum())


@pytest.mark.parametrize("backend", ["interpreter", "cpp"])
def test_multinomial_without_replacement(backend: str) -> None:
    w = np.array([[0.1, 0.0, 5.0, 1.0, 2.0], [1.0, 1.0, 0.0, 1.0, 1.0]], dtype=np.float64)
    g = lt.Generator().manual_seed(7)
    with lt.backend(backend):
        s = lt.from_numpy(w).multinomial(4, generator=g).numpy()
        assert s.shape == (2, 4)
        assert sorted(s[1].tolist()) == [0, 1, 3, 4]  # no repeats, never the zero weight
        assert len(set(s[0].tolist())) == 4 and 1 not in s[0]
        # the first draw without replacement follows the weights too
        first = lt.multinomial(lt.from_numpy(w[0]).expand(4000, 5), 1, generator=g)
        _chi_square_ok(_counts(first, 5), w[0] / w[0].sum())
        # and the second draw is the second-stage law: P(j second | i first) = w_j / (1 - w_i)
        two = lt.multinomial(lt.tensor([[0.5, 0.5, 0.0]]).expand(4000, 3), 2, generator=g)
        assert set(map(tuple, two.numpy().tolist())) == {(0, 1), (1, 0)}


def test_multinomial_zero_weights_fill_up_as_torch() -> None:
    # torch does not refuse more samples than positive weights: zero weights come last
    s = lt.multinomial(lt.tensor([0.0, 2.0, 0.0]), 3).tolist()
    assert s[0] == 1 and sorted(s) == [0, 1, 2]


def test_multinomial_is_reproducible_from_a_generator_and_the_seed() -> None:
    p = lt.softmax(lt.arange(10, dtype=lt.float32), 0)
    a = lt.multinomial(p, 5, generator=lt.Generator().manual_seed(3))
    b = lt.multinomial(p, 5, generator=lt.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()
    lt.manual_seed(11)
    c = lt.multinomial(p, 5, replacement=True)
    lt.manual_seed(11)
    assert lt.multinomial(p, 5, replacement=True).tolist() == c.tolist()


def test_multinomial_nanogpt_sampling_step() -> None:
    # model.generate: logits -> softmax -> multinomial(probs, 1) -> cat onto idx
    lt.manual_seed(0)
    idx = lt.zeros(3, 2, dtype=lt.long)
    for _ in range(3):
        logits = lt.randn(3, 50)
        logits[:, 7] = 40.0  # all but certain
        probs = lt.softmax(logits, dim=-1)
        idx_next = lt.multinomial(probs, num_samples=1)
        assert tuple(idx_next.shape) == (3, 1)
        idx = lt.cat((idx, idx_next), dim=1)
    assert idx[:, 2:].tolist() == [[7, 7, 7]] * 3


@pytest.mark.parametrize(
    "weights, n, replacement",
    [
        ([1.0, -1.0], 1, True),
        ([1.0, float("nan")], 1, False),
        ([1.0, float("inf")], 1, True),
        ([0.0, 0.0], 1, True),
        ([[1.0, 0.0], [0.0, 0.0]], 1, False),
        ([1.0, 0.0], 3, False),
        ([1.0, 0.0], 0, True),
        (1.0, 1, True),
        ([[[1.0]]], 1, True),
        (np.ones((2, 0)), 1, True),
    ],
)
def test_multinomial_errors(weights: Any, n: int, replacement: bool) -> None:
    w = np.array(weights, dtype=np.float32)
    check_raises(lambda t, x: t.multinomial(x, n, replacement), w)


def test_multinomial_integer_weights_raise() -> None:
    check_raises(lambda t, x: t.multinomial(x, 1), arr(3, dtype="int64", low=1, high=3))


def test_multinomial_out() -> None:
    out = lt.empty(2, dtype=lt.long)
    r = lt.multinomial(lt.tensor([0.0, 1.0]), 2, replacement=True, out=out)
    assert r is out and out.tolist() == [1, 1]


# -- bernoulli --------------------------------------------------------------------------------


def test_bernoulli() -> None:
    g = lt.Generator().manual_seed(5)
    p = lt.tensor([0.0, 0.25, 1.0]).expand(8000, 3)
    s = lt.bernoulli(p, generator=g).numpy()
    assert s.dtype == np.float32 and set(np.unique(s)) <= {0.0, 1.0}
    assert s[:, 0].sum() == 0 and s[:, 2].sum() == 8000
    assert abs(s[:, 1].mean() - 0.25) < 0.02  # 4.1 standard deviations
    x = lt.empty(10000).bernoulli_(0.7, generator=g)
    assert abs(x.mean().item() - 0.7) < 0.02
    y = lt.zeros(10000, dtype=lt.float64).bernoulli_(lt.full((10000,), 0.1, dtype=lt.float64))
    assert y.dtype is lt.float64 and abs(y.mean().item() - 0.1) < 0.015
    check_raises(lambda t, x: t.bernoulli(x), arr(3, dtype="int64", low=0, high=2))


# -- small missing ops and calls scripts make -------------------------------------------------


def test_flip_dims_keyword_unfold_diag() -> None:
    check(lambda t, x: (t.flip(x, dims=(1,)), x.flip(dims=[0, 1])), randn(2, 3))
    check(lambda t, x: (x.unfold(1, 2, 1), x.unfold(0, 2, 2), x.unfold(1, 4, 3)), randn(5, 4))
    check(lambda t, x: t.arange(5).unfold(0, 5, 1), randn(1))

    def grads(t: Any, x: Any) -> Any:
        x.requires_grad_()
        y = x.unfold(-1, 3, 2)
        return y, *t.autograd.grad((y * y).sum(), [x])

    check(grads, randn(2, 7, dtype="float64"))
    check_raises(lambda t, x: x.unfold(0, 4, 1), randn(3))
    check_raises(lambda t, x: x.unfold(0, 1, 0), randn(3))
    for k in (-2, -1, 0, 1, 3):
        check(lambda t, x, k=k: (t.diag(x, k), x.diag(k)), randn(3, 4))
        check(lambda t, v, k=k: t.diag(v, k), randn(3))
    check(
        lambda t, x: (x.diagonal(), x.diagonal(1, 0, 2), t.diagonal(x, -1, -1, 0)), randn(2, 3, 4)
    )
    check(lambda t, x: (t.trace(x), x.trace()), randn(3, 4))
    check_raises(lambda t, x: t.diag(x), randn(2, 2, 2))

    def diag_grad(t: Any, v: Any) -> Any:
        v.requires_grad_()
        m = t.diag(v, 1)
        return m, *t.autograd.grad((m * t.arange(16.0).reshape(4, 4)).sum(), [v])

    check(diag_grad, randn(3))


def test_type_and_conversions() -> None:
    check(lambda t, x: (x.type(t.float64), x.type_as(t.ones(1, dtype=t.int32))), randn(3))
    check(lambda t, x: (x.type(), x.int().type(), x.type("torch.DoubleTensor")), randn(3))
    check(lambda t, x: (x.to(t.ones(2, dtype=t.float64)), t.numel(x), t.is_tensor(x)), randn(3))
    check(lambda t, x: (x.new_zeros(2, 3), x.new_ones((2,)), x.new_full((2,), 3.0)), randn(3))
    check(lambda t, x: (x.new_tensor([1, 2]), x.new_empty(2).shape), randn(3))
    check(lambda t: t.tensor([t.tensor(1.0), t.tensor(2.5)]))
    check(lambda t: t.stack([t.tensor(1.0), t.tensor(2.5)]))
    check(lambda t: t.from_numpy(np.arange(3.0)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x, y: t.roll(x, shifts=1, dims=0),
        lambda t, x, y: x.clone().scatter_add_(1, t.zeros(3, 2, dtype=t.long), y[:, :2]),
        lambda t, x, y: t.where(x > 0),
        lambda t, x, y: t.clamp(x, min=y, max=y + 1),
        lambda t, x, y: x.clone().masked_fill_(x > 0, 0.5),
        lambda t, x, y: t.gather(x, 1, t.ones(3, 2, dtype=t.long)),
        lambda t, x, y: t.topk(x, 2),
        lambda t, x, y: t.cumsum(x, dim=1),
        lambda t, x, y: (t.tril(x, diagonal=1), t.triu(x, diagonal=-1)),
        lambda t, x, y: t.einsum("ij,kj->ik", x, y),
        lambda t, x, y: t.bmm(x.unsqueeze(0), y.T.unsqueeze(0)),
        lambda t, x, y: t.baddbmm(x.unsqueeze(0), x.unsqueeze(0), y.T.unsqueeze(0)[:, :, :4]),
        lambda t, x, y: t.addmm(x[:, 0], x, y.T[:, :3], beta=0.5, alpha=2.0),
        lambda t, x, y: (t.chunk(x, 2, dim=1), t.split(x, [1, 3], dim=1)),
        lambda t, x, y: t.outer(x[0], y[1]),
        lambda t, x, y: (
            t.norm(x, p=1, dim=1),
            t.norm(x),
            x.norm(),
            x.norm(2, dim=0, keepdim=True),
        ),
        lambda t, x, y: t.nn.functional.normalize(x, dim=1),
        lambda t, x, y: (t.logsumexp(x, dim=1), t.var_mean(x, dim=1)),
        lambda t, x, y: (t.std(x, unbiased=False), t.std(x, 1, unbiased=False)),
    ],
)
def test_everyday_calls_match_torch(fn: Any) -> None:
    check(fn, randn(3, 4), randn(3, 4))


def test_manual_seed_returns_a_generator_and_no_grad_decorates() -> None:
    assert isinstance(lt.manual_seed(3), lt.Generator)

    @lt.no_grad()
    def double(x: lt.Tensor) -> lt.Tensor:
        return x * 2

    assert not double(lt.ones(2, requires_grad=True)).requires_grad


def test_set_printoptions() -> None:
    try:
        for lib in (lt, torch):
            lib.set_printoptions(precision=2, threshold=5, edgeitems=1)
        assert repr(lt.tensor([1.23456])) == repr(torch.tensor([1.23456])) == "tensor([1.23])"
        assert repr(lt.arange(10)) == repr(torch.arange(10))
    finally:
        for lib in (lt, torch):
            lib.set_printoptions(profile="default")
    assert repr(lt.tensor([1.23456])) == "tensor([1.2346])"


# -- the classic manual SGD step on leaves ----------------------------------------------------


@pytest.mark.parametrize("style", ["sub_", "data", "zero_"])
def test_manual_sgd_updates_match_torch(style: str) -> None:
    def fn(t: Any, x: Any, y: Any, w0: Any) -> Any:
        w = w0.clone().requires_grad_()
        b = t.full((), 0.5, dtype=x.dtype, requires_grad=True)  # a 0-d leaf from a number
        for _ in range(3):
            loss = ((x @ w + b - y) ** 2).mean()
            loss.backward()
            if style == "sub_":
                with t.no_grad():
                    w -= 0.1 * w.grad
                    b -= 0.1 * b.grad
                w.grad = None
                b.grad = None
            elif style == "data":
                w.data.add_(-0.1 * w.grad)
                b.data.add_(-0.1 * b.grad)
                w.grad = None
                b.grad = None
            else:
                with t.no_grad():
                    w.sub_(0.1 * w.grad)
                    b.sub_(0.1 * b.grad)
                w.grad.zero_()
                b.grad.zero_()
        return w, b, w.is_leaf, b.is_leaf, w.requires_grad

    check(
        fn, randn(6, 3, dtype="float64"), randn(6, 2, dtype="float64"), randn(3, 2, dtype="float64")
    )


# -- composite ops (lazytorch.ops.composite) --------------------------------------------------

NAN_ROW = np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]], dtype=np.float32)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (
            lambda t, x, y: (t.isclose(x, y), t.isclose(x, x + 1e-7), t.allclose(x, x + 1e-9)),
            (randn(3, 4), randn(3, 4)),
        ),
        (lambda t, x, y: (t.isclose(x, x, equal_nan=True), t.isclose(x, x)), (NAN_ROW, NAN_ROW)),
        (
            lambda t, x, y: (t.equal(x, y), t.equal(x, x.clone()), t.equal(x, x[:1])),
            (randn(2, 3), randn(2, 3)),
        ),
        (
            lambda t, x, y: (t.isin(x, y), t.isin(x, y, invert=True)),
            (arr(3, 4, dtype="int64", low=0, high=6), arr(3, dtype="int64", low=0, high=6)),
        ),
        (lambda t, x, y: t.meshgrid(x, y, indexing="ij"), (randn(3), randn(2))),
        (lambda t, x, y: t.meshgrid(x, y, indexing="xy"), (randn(3), randn(2))),
        (lambda t, x, y: t.meshgrid(x, y, x, indexing="xy"), (randn(3), randn(2))),
        (
            lambda t, x, y: (
                t.tril_indices(3, 4),
                t.triu_indices(4, 3, 1),
                t.tril_indices(3, 3, -1),
            ),
            (),
        ),
        (
            lambda t, x, y: (
                t.searchsorted(x, y),
                t.searchsorted(x, y, right=True),
                t.bucketize(y, x),
            ),
            (
                np.array([-1.0, 0.0, 0.0, 2.0], np.float32),
                np.array([[-2.0, 0.0], [0.5, 3.0]], np.float32),
            ),
        ),
        (
            lambda t, x, y: (
                t.searchsorted(x, y),
                t.searchsorted(x, y, side="right", out_int32=True),
            ),
            (np.sort(randn(2, 5), axis=1), randn(2, 3)),
        ),
        (
            lambda t, x, y: (
                t.repeat_interleave(x, 2, dim=1),
                x.repeat_interleave(3),
                x.repeat_interleave(t.tensor([1, 0, 2]), dim=0),
            ),
            (randn(3, 2), ()),
        ),
        (lambda t, x, y: t.repeat_interleave(t.tensor([2, 0, 1])), ()),
        (
            lambda t, x, y: (
                t.atleast_3d(x),
                t.atleast_3d(x[0]),
                t.column_stack((x[0], x[1])),
                t.dstack((x, x)),
                t.row_stack((x, x)),
            ),
            (randn(2, 3), ()),
        ),
        (
            lambda t, x, y: (
                t.diff(x),
                t.diff(x, n=2, dim=0),
                t.diff(x, prepend=x[:, :1], append=x),
                t.diff(x > 0),
            ),
            (randn(3, 4), ()),
        ),
        (
            lambda t, x, y: (t.cumprod(x, 1), t.cumprod(x, dim=0), x.cumprod(-1)),
            (np.array([[1.0, -2.0, 0.0, 3.0], [0.5, 2.0, -1.0, 4.0]], np.float32), ()),
        ),
        (
            lambda t, x, y: (t.cumprod(x, 0), t.cumprod(x, 0, dtype=t.float64)),
            (arr(5, dtype="int32", low=-3, high=4), ()),
        ),
        (
            lambda t, x, y: (t.logspace(0, 2, 3), t.logspace(-1, 1, 5, base=2.0, dtype=t.float64)),
            (),
        ),
        (
            lambda t, x, y: (
                t.deg2rad(x),
                t.rad2deg(x),
                t.signbit(x),
                t.copysign(x, y),
                t.copysign(x, -1.0),
            ),
            (
                np.array([0.0, -0.0, 1.5, -2.0], np.float32),
                np.array([-0.0, 0.0, -1.0, 1.0], np.float32),
            ),
        ),
        (
            lambda t, x, y: (
                t.heaviside(x, y),
                t.float_power(x, 2),
                t.sinc(x),
                t.logit(y.sigmoid()),
                t.logit(y.sigmoid(), eps=0.3),
            ),
            (np.array([0.0, -1.5, 2.0, 0.0], np.float32), randn(4)),
        ),
        (
            lambda t, x, y: (
                t.dist(x, y),
                t.dist(x, y, 1),
                t.cdist(x, y),
                t.cdist(x, y, p=1),
                t.cdist(x, y, p=3.0),
            ),
            (randn(3, 4), randn(2, 4)),
        ),
        (
            lambda t, x, y: (
                t.median(x),
                t.median(x, dim=1).values,
                t.median(x, 0, keepdim=True).values,
            ),
            (randn(3, 5), ()),
        ),
        (lambda t, x, y: (t.median(x), t.median(x, 1).values), (NAN_ROW, ())),
        (
            lambda t, x, y: (
                t.quantile(x, 0.3),
                t.quantile(x, t.tensor([0.0, 0.25, 1.0]), dim=1),
                t.quantile(x, 0.5, dim=0, keepdim=True),
            ),
            (randn(3, 5), ()),
        ),
        (
            lambda t, x, y: tuple(
                t.quantile(x, 0.4, dim=1, interpolation=m)
                for m in ("lower", "higher", "midpoint", "nearest")
            ),
            (randn(2, 6), ()),
        ),
        (
            lambda t, x, y: (
                t.tensor_split(x, 3, dim=1),
                t.tensor_split(x, [1, 3]),
                x.tensor_split((0, 5), 1),
            ),
            (randn(3, 4), ()),
        ),
        (
            lambda t, x, y: (
                t.cross(x, y, dim=1),
                t.cross(x.T, y.T, dim=0),
                t.linalg.cross(x, y) if hasattr(t.linalg, "cross") else t.cross(x, y, dim=-1),
            ),
            (randn(2, 3), randn(2, 3)),
        ),
        (lambda t, x, y: (t.kron(x, y), t.kron(x[0], y)), (randn(2, 3), randn(2, 2))),
        (
            lambda t, x, y: (
                t.rot90(x),
                t.rot90(x, 2),
                t.rot90(x, -1, (1, 0)),
                t.rot90(x, 3, [0, 2]),
            ),
            (randn(2, 3, 4), ()),
        ),
        (
            lambda t, x, y: (t.block_diag(x, y, t.tensor(5.0)), t.block_diag(x[0], y)),
            (randn(2, 3), randn(1, 2)),
        ),
        (lambda t, x, y: (t.cartesian_prod(x, y), t.cartesian_prod(x)), (randn(3), randn(2))),
        (lambda t, x, y: t.cosine_similarity(x, y, dim=1), (randn(3, 4), randn(3, 4))),
    ],
)
def test_composite_ops_match_torch(fn: Any, inputs: tuple[Any, ...]) -> None:
    ins = [x for x in inputs if isinstance(x, np.ndarray)]
    check(lambda t, *xs: fn(t, *xs, *([None] * (2 - len(xs)))), *ins)


def test_composite_ops_gradients() -> None:
    def fn(t: Any, x: Any, y: Any) -> Any:
        x.requires_grad_()
        y.requires_grad_()
        outs = (
            t.cumprod(x, 1),
            t.cdist(x, y),
            t.kron(x, y),
            t.quantile(x, 0.3, dim=1),
            x.repeat_interleave(2, dim=0),
            t.diff(x, dim=1),
            t.cross(x[:, :3], y[:, :3], dim=1),
        )
        loss = sum((o * o).sum() for o in outs)
        return t.autograd.grad(loss, [x, y])

    check(fn, randn(3, 4, dtype="float64"), randn(2, 4, dtype="float64"))


def test_composite_ops_errors() -> None:
    check_raises(lambda t, x: t.isclose(x, x.double()), randn(3))
    check_raises(lambda t, x: t.meshgrid(x, indexing="yx"), randn(3))
    check_raises(lambda t, x: t.diff(x[0, 0]), randn(2, 2))
    check_raises(lambda t, x: t.quantile(x, 1.5), randn(3))
    check_raises(lambda t, x: t.quantile(x.long(), 0.5), randn(3))
    check_raises(lambda t, x: t.cross(x, x, dim=1), randn(2, 4))
    check_raises(lambda t, x: t.rot90(x, 1, (0, 0)), randn(2, 2))
    check_raises(lambda t, x: t.tensor_split(x, 0), randn(3))
    check_raises(lambda t, x: t.bucketize(x, x.reshape(1, -1)), randn(3))
    check_raises(lambda t, x: t.cdist(x, x[:, :2]), randn(2, 3))


def test_finfo_iinfo_and_constants() -> None:
    for name in ("float16", "float32", "float64"):
        ours, theirs = lt.finfo(getattr(lt, name)), torch.finfo(getattr(torch, name))
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(ours, field) == getattr(theirs, field), (name, field)
    assert lt.finfo().eps == torch.finfo().eps
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ours, theirs = lt.iinfo(getattr(lt, name)), torch.iinfo(getattr(torch, name))
        assert (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)
    with pytest.raises(TypeError):
        lt.finfo(lt.int32)
    assert (lt.pi, lt.e, lt.inf) == (torch.pi, torch.e, torch.inf) and lt.nan != lt.nan
    assert repr(lt.channels_last) == repr(torch.channels_last)
    x = lt.ones(2, 3)
    assert x.clone(memory_format=lt.contiguous_format).tolist() == x.tolist()


# -- more distributions -----------------------------------------------------------------------


def test_normal_forms() -> None:
    g = lt.Generator().manual_seed(9)
    mean = lt.arange(4, dtype=lt.float64).reshape(4, 1)
    s = lt.normal(mean.expand(4, 5000), 2.0, generator=g).numpy()
    assert np.allclose(s.mean(1), np.arange(4), atol=0.1) and np.allclose(s.std(1), 2.0, atol=0.1)
    t = lt.normal(1.0, lt.full((5000,), 0.5), generator=g).numpy()
    assert t.dtype == np.float32 and abs(t.mean() - 1.0) < 0.03 and abs(t.std() - 0.5) < 0.03
    u = lt.normal(-3.0, 1.0, size=(2, 5000), generator=g)
    assert tuple(u.shape) == (2, 5000) and abs(u.mean().item() + 3.0) < 0.05
    check_raises(lambda t: t.normal(0.0, -1.0, size=(2,)))


def test_in_place_distributions() -> None:
    g = lt.Generator().manual_seed(4)
    n = 20000
    e = lt.empty(n, dtype=lt.float64).exponential_(2.0, generator=g).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.02
    ln = lt.empty(n, dtype=lt.float64).log_normal_(0.0, 0.5, generator=g).numpy()
    assert ln.min() > 0 and abs(np.log(ln).std() - 0.5) < 0.02
    c = lt.empty(n, dtype=lt.float64).cauchy_(1.0, 2.0, generator=g).numpy()
    assert abs(np.median(c) - 1.0) < 0.1  # the median is the location
    geo = lt.empty(n).geometric_(0.25, generator=g).numpy()
    assert geo.min() >= 1 and abs(geo.mean() - 4.0) < 0.15  # mean 1/p
    r = lt.empty(n, dtype=lt.int64).random_(3, 7, generator=g).numpy()
    assert set(np.unique(r)) == {3, 4, 5, 6}
    r = lt.zeros(n, dtype=lt.int32).random_(5, generator=g).numpy()
    assert set(np.unique(r)) == {0, 1, 2, 3, 4}
    r = lt.zeros(n, dtype=lt.uint8).random_(generator=g).numpy()
    assert r.max() > 200 and r.min() < 50
    with pytest.raises(RuntimeError):
        lt.empty(3).exponential_(0.0)
    with pytest.raises(RuntimeError):
        lt.empty(3).random_(5, 5)


# -- running reductions, diagonals, data-dependent sizes ----------------------------------------

TIES = np.array([[1.0, 3.0, 3.0, 2.0, 5.0, 5.0], [0.0, -1.0, 2.0, 2.0, -3.0, 9.0]], np.float32)


def test_cummax_cummin_logcumsumexp() -> None:
    def fn(t: Any, x: Any) -> Any:
        a, b = t.cummax(x, 1), x.cummin(dim=-1)
        return a.values, a.indices, b.values, b.indices, t.logcumsumexp(x, 1), t.cummax(x, 0)

    check(fn, TIES)  # ties report the latest position, as torch
    check(lambda t, x: (t.cummax(x, 0), t.cummin(x, 1)), arr(3, 4, dtype="int16", low=-3, high=3))
    check(lambda t, x: (t.cummin(x, 0), x.cummax(0)), arr(6, dtype="bool"))

    def into_out(t: Any, x: Any) -> Any:
        v, i = t.empty(0), t.empty(0, dtype=t.long)
        r = t.cummax(x, 1, out=(v, i))
        return r.values is v and r.indices is i, v, i

    check(into_out, TIES)

    def grads(t: Any, x: Any) -> Any:
        x.requires_grad_()
        y = t.logcumsumexp(x, 1) + t.cummax(x, 1).values
        return t.autograd.grad((y * y).sum(), [x])

    check(grads, randn(3, 5, dtype="float64"))


def test_diag_embed_and_pairwise_distance() -> None:
    for k in (-1, 0, 2):
        check(lambda t, x, k=k: (t.diag_embed(x, k), x.diag_embed(k, 0, 2)), randn(2, 3))
    check(
        lambda t, x, y: (t.pairwise_distance(x, y), t.pairwise_distance(x, y, p=1, keepdim=True)),
        randn(3, 4),
        randn(3, 4),
    )


def test_fill_diagonal() -> None:
    check(
        lambda t, x: (x.clone().fill_diagonal_(2.5), x.clone().fill_diagonal_(2.5, wrap=True)),
        randn(7, 3),
    )
    check(
        lambda t, x: (x.clone().fill_diagonal_(1.0), x.clone().fill_diagonal_(-1, wrap=True)),
        randn(3, 5),
    )
    check(lambda t, x: x.clone().fill_diagonal_(4.0), randn(3, 3, 3))
    check_raises(lambda t, x: x.clone().fill_diagonal_(1.0), randn(3, 3, 2))


def test_unique_and_bincount() -> None:
    x = arr(20, dtype="int64", low=0, high=6)
    check(lambda t, x: (t.unique(x), x.unique(return_inverse=True, return_counts=True)), x)
    check(lambda t, x: t.unique(x.reshape(5, 4) % 2, dim=0, return_counts=True), x)
    check(lambda t, x: (t.bincount(x), x.bincount(minlength=10)), x)
    check(lambda t, x, w: t.bincount(x, weights=w), x, randn(20))
    check_raises(lambda t, x: t.bincount(x - 3), x)
    check_raises(lambda t, x: t.bincount(x.reshape(4, 5)), x)
    assert lt.zeros(2).get_device() == torch.zeros(2).get_device() == -1
