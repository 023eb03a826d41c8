"""``torch.*`` forms of functional ops (torch.dropout, torch.layer_norm, torch.kl_div, ...),
with torch's torch.* signatures (lazytorch.nn._torch_functions), against torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_grad, check_raises, positive, randn


# -- dropout family -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"]
)
def test_dropout_identity_cases(name: str) -> None:
    # not training, or p == 0: the input itself, as torch
    for p, train in ((0.5, False), (0.0, True)):
        x = lt.randn(2, 3, 4)
        assert getattr(lt, name)(x, p, train) is x
        assert getattr(torch, name)(torch.randn(2, 3), p, train) is not None
    check(lambda t, x: getattr(t, name)(x, 1.0, True) * 0, randn(2, 3))
    check(lambda t, x: getattr(t, name)(x, 0.5, False), randn(2, 3))
    check_raises(lambda t, x: getattr(t, name)(x, 1.5, True), randn(2, 3))
    with pytest.raises(TypeError):
        getattr(lt, name)(lt.randn(2), 0.5)  # no defaults, as torch


def test_dropout_statistics_and_in_place() -> None:
    lt.manual_seed(0)
    x = lt.ones(200, 100)
    y = lt.dropout(x, 0.25, True)
    vals = set(np.unique(y.numpy()).tolist())
    assert vals <= {0.0, float(np.float32(1 / 0.75))}
    assert abs(float((y == 0).float().mean()) - 0.25) < 0.02
    assert x.sum().item() == 20000  # not in place
    z = lt.ones(200, 100)
    assert lt.dropout_(z, 0.25, True) is z
    assert abs(float((z == 0).float().mean()) - 0.25) < 0.02
    # feature dropout: whole (sample, channel) slices
    f = lt.feature_dropout(lt.ones(50, 40, 3, 2), 0.5, True).numpy().reshape(50, 40, 6)
    assert ((f == f[..., :1]).all()) and set(np.unique(f).tolist()) <= {0.0, 2.0}
    g = lt.ones(50, 40, 3)
    lt.feature_dropout_(g, 0.5, True)
    assert set(np.unique(g.numpy()).tolist()) == {0.0, 2.0}
    a = lt.feature_alpha_dropout(lt.ones(50, 40, 3), 0.5, True).numpy()
    assert (a == a[..., :1]).all() and len(np.unique(a)) == 2
    b = lt.ones(30, 30)
    lt.alpha_dropout_(b, 0.5, True)
    lt.feature_alpha_dropout_(lt.ones(4, 3, 2), 0.5, True)
    assert len(np.unique(b.numpy())) == 2
    check_raises(lambda t, x: t.feature_dropout(x, 0.5, True), randn(3))


# -- normalization and embedding ------------------------------------------------------------------
def test_layer_group_rms_norm() -> None:
    x, w, b = randn(2, 3, 4), randn(4), randn(4)
    check(lambda t, x, w, b: t.layer_norm(x, [4], w, b, 1e-3, False), x, w, b)
    check(lambda t, x: t.layer_norm(x, (3, 4)), x)
    check_grad(lambda t, x, w, b: t.layer_norm(x, [4], w, b), x, w, b)
    check(
        lambda t, x, w, b: t.group_norm(x, 3, w, b, 1e-5, True), randn(2, 6, 5), randn(6), randn(6)
    )
    check_grad(lambda t, x, w: t.group_norm(x, 2, w), randn(2, 4, 3), randn(4))
    check(lambda t, x, w: t.rms_norm(x, [4], w, 1e-4), x, w)
    check(lambda t, x: t.rms_norm(x, (4,)), x)
    check_grad(lambda t, x, w: t.rms_norm(x, [4], w), x, w)


@pytest.mark.parametrize("training", [True, False])
def test_batch_and_instance_norm(training: bool) -> None:
    def bn(t: Any, x: Any, w: Any, b: Any, m: Any, v: Any) -> Any:
        out = t.batch_norm(x, w, b, m, v, training, 0.2, 1e-4, False)
        return out, m, v  # the running statistics are updated in place in training

    stats = (randn(3), positive(3))
    check(bn, randn(4, 3, 5), randn(3), randn(3), *stats)
    check(lambda t, x: t.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, True), randn(4, 3))
    check_grad(
        lambda t, x, w, b: t.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
        randn(4, 3, 2),
        randn(3),
        randn(3),
    )

    def inorm(t: Any, x: Any, w: Any, b: Any, m: Any, v: Any) -> Any:
        return t.instance_norm(x, w, b, m, v, training, 0.1, 1e-5, False), m, v

    check(inorm, randn(2, 3, 5), randn(3), randn(3), *stats)
    check_grad(
        lambda t, x, w: t.instance_norm(x, w, None, None, None, True, 0.1, 1e-5, True),
        randn(2, 3, 4),
        randn(3),
    )


def test_embedding() -> None:
    idx = np.array([[0, 4, 4], [1, 2, 4]], dtype=np.int64)
    check(lambda t, w, i: t.embedding(w, i), randn(5, 3), idx)
    for pad in (-1, 4, 0, -2):
        check_grad(lambda t, w, i, p=pad: t.embedding(w, i, p), randn(5, 3), idx)
    check_grad(lambda t, w, i: t.embedding(w, i, -1, True), randn(5, 3), idx)
    check_raises(lambda t, w, i: t.embedding(w, i.float()), randn(5, 3), idx)


# -- activations ----------------------------------------------------------------------------------
def test_activations() -> None:
    x = randn(3, 4, dtype="float64")
    check(lambda t, x: t.selu(x), x)
    check(lambda t, x: (t.selu_(x), x), x)
    check(lambda t, x: t.celu(x, 0.7), x)
    check(lambda t, x: t.celu(x), x)
    check(lambda t, x: (t.celu_(x, 2.0), x), x)
    check(lambda t, x: t.threshold(x, 0.1, -3.0), x)
    check(lambda t, x: (t.threshold_(x, 0.1, 20), x), x)
    check(lambda t, x: t.threshold(x, 1, 5), arr(3, 4, dtype="int64", low=-3, high=3))
    check(lambda t, x, w: t.prelu(x, w), randn(2, 3, 4), randn(3))
    check(lambda t, x, w: t.prelu(x, w), randn(2, 3), randn(1))
    check(lambda t, x: t.hardshrink(x), x)
    check(lambda t, x: t.hardshrink(x, 1.0), x)
    check(lambda t, x: t.rrelu(x, 0.1, 0.3), x)
    check(lambda t, x: t.rrelu(x), x)
    check(lambda t, x: (t.rrelu_(x), x), x)
    for f in (
        lambda t, x: t.selu(x),
        lambda t, x: t.celu(x, 0.5),
        lambda t, x: t.threshold(x, 0.2, 1.0),
        lambda t, x: t.hardshrink(x, 0.3),
        lambda t, x: t.rrelu(x, 0.2, 0.4, False),
    ):
        check_grad(f, x)
    check_grad(lambda t, x, w: t.prelu(x, w), randn(2, 3, 4), randn(3))


def test_threshold_and_hardshrink_out() -> None:
    def fn(t: Any, x: Any) -> Any:
        o1, o2 = t.empty(0), t.empty(0)
        r1 = t.threshold(x, 0.0, 1.0, out=o1)
        r2 = t.hardshrink(x, 0.5, out=o2)
        return r1 is o1, r2 is o2, o1, o2

    check(fn, randn(4))


def test_rrelu_training() -> None:
    x = lt.full((2000,), -1.0)
    y = lt.rrelu(x, 0.1, 0.3, True).numpy()
    assert ((y <= -0.1 + 1e-6) & (y >= -0.3 - 1e-6)).all() and y.std() > 0.03
    assert (x.numpy() == -1).all()
    g = lt.Generator().manual_seed(3)
    y1 = lt.rrelu(x, 0.1, 0.3, True, g).numpy()
    y2 = lt.rrelu(x, 0.1, 0.3, True, lt.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(y1, y2)
    lt.rrelu_(x, 0.1, 0.3, True)
    assert (x.numpy() < -0.09).all() and (x.numpy() > -0.31).all()


# -- losses: int reductions, and torch's default (none) -------------------------------------------
LOSSES = {
    "kl_div": (lambda t, a, b, *r: t.kl_div(a, b, *r), (randn(3, 4), positive(3, 4))),
    "kl_div_log_target": (
        lambda t, a, b, *r: t.kl_div(a, b, *r, log_target=True),
        (randn(3, 4), randn(3, 4)),
    ),
    "bce_logits": (
        lambda t, a, b, w, pw, *r: t.binary_cross_entropy_with_logits(a, b, w, pw, *r),
        (randn(3, 4), arr(3, 4, low=0, high=1), positive(4), positive(4)),
    ),
    "bce_logits_plain": (
        lambda t, a, b, *r: t.binary_cross_entropy_with_logits(a, b, None, None, *r),
        (randn(3, 4), arr(3, 4, low=0, high=1)),
    ),
    "cosine_embedding": (
        lambda t, a, b, y, *r: t.cosine_embedding_loss(a, b, y, 0.2, *r),
        (randn(3, 4), randn(3, 4), np.array([1.0, -1.0, 1.0], dtype=np.float32)),
    ),
    "hinge_embedding": (
        lambda t, a, y, *r: t.hinge_embedding_loss(a, y, 0.5, *r),
        (randn(3, 4), np.sign(randn(3, 4)).astype(np.float32)),
    ),
    "margin_ranking": (
        lambda t, a, b, y, *r: t.margin_ranking_loss(a, b, y, 0.1, *r),
        (randn(5), randn(5), np.sign(randn(5)).astype(np.float32)),
    ),
    "triplet_margin": (
        lambda t, a, p, n, *r: t.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6, True, *r),
        (randn(3, 4), randn(3, 4), randn(3, 4)),
    ),
    "triplet_margin_p1": (
        lambda t, a, p, n, *r: t.triplet_margin_loss(a, p, n, 0.5, 1.0, 1e-6, False, *r),
        (randn(3, 4), randn(3, 4), randn(3, 4)),
    ),
}


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("reduction", [None, 0, 1, 2])
def test_losses(name: str, reduction: int | None) -> None:
    fn, inputs = LOSSES[name]
    r = () if reduction is None else (reduction,)
    check(lambda t, *xs: fn(t, *xs, *r), *inputs)
    check_grad(
        lambda t, *xs: fn(t, *xs, *r), *inputs, diff=[0, 1] if name != "hinge_embedding" else [0]
    )


def test_reduction_errors() -> None:
    check(lambda t, a, b: t.kl_div(a, b, 3), randn(3), positive(3))  # torch: none
    check_raises(lambda t, a, b: t.kl_div(a, b, "mean"), randn(3), randn(3))


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("log_input,full", [(True, False), (False, True), (True, True)])
def test_poisson_nll_loss(reduction: int, log_input: bool, full: bool) -> None:
    def fn(t: Any, x: Any, y: Any) -> Any:
        return t.poisson_nll_loss(x, y, log_input, full, 1e-6, reduction)

    inputs = (positive(3, 4), arr(3, 4, low=0, high=5))
    check(fn, *inputs)
    check_grad(fn, *inputs, diff=[0])
    with pytest.raises(TypeError):
        lt.poisson_nll_loss(lt.ones(2), lt.ones(2), True, False, 1e-8)  # no defaults


@pytest.mark.parametrize("reduction", [None, 0, 1, 2])
@pytest.mark.parametrize("lengths_as", ["list", "tensor"])
def test_ctc_loss(reduction: int | None, lengths_as: str) -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 2, 5)).astype(np.float32)
    targets = np.array([[1, 2, 2], [3, 1, 0]], dtype=np.int64)
    r = () if reduction is None else (0, reduction)

    def fn(t: Any, lg: Any, tg: Any) -> Any:
        il, tl = [6, 5], [3, 2]
        if lengths_as == "tensor":
            il, tl = t.tensor(il), t.tensor(tl)
        return t.ctc_loss(lg.log_softmax(2), tg, il, tl, *r)

    check(fn, logits, targets, atol=1e-4)
    check_grad(fn, logits, targets, diff=[0], atol=1e-4)


# -- pooling --------------------------------------------------------------------------------------
def test_pooling() -> None:
    x1, x2, x3 = randn(2, 3, 9), randn(1, 2, 6, 7), randn(1, 2, 4, 5, 6)
    check(lambda t, x: t.max_pool1d(x, 2), x1)
    check(lambda t, x: t.max_pool1d(x, 3, 2, 1, 1, True), x1)
    check(lambda t, x: t.max_pool1d(x, [2], [], [0], [2]), x1)
    check(lambda t, x: t.max_pool2d(x, 2), x2)
    check(lambda t, x: t.max_pool2d(x, (3, 2), (2, 1), 1, 1, True), x2)
    check(lambda t, x: t.max_pool3d(x, 2), x3)
    check(lambda t, x: t.max_pool3d(x, 3, 1, 1), x3)
    check(lambda t, x: t.max_pool1d_with_indices(x, 2), x1)
    check(lambda t, x: t.max_pool1d_with_indices(x, 3, 2, 1, 1, True), x1)
    check(lambda t, x: t.avg_pool1d(x, 3), x1)
    check(lambda t, x: t.avg_pool1d(x, 3, 2, 1, True, False), x1)
    check(lambda t, x: t.adaptive_avg_pool1d(x, 4), x1)
    check(lambda t, x: t.adaptive_max_pool1d(x, 4), x1)
    check(lambda t, x: t.adaptive_max_pool1d(x, [3]), x1)
    for f in (
        lambda t, x: t.max_pool1d(x, 2),
        lambda t, x: t.avg_pool1d(x, 3, 2, 1),
        lambda t, x: t.adaptive_avg_pool1d(x, 4),
        lambda t, x: t.adaptive_max_pool1d(x, 4)[0],
        lambda t, x: t.max_pool1d_with_indices(x, 2)[0],
    ):
        check_grad(f, x1)
    check_grad(lambda t, x: t.max_pool2d(x, 2), x2)
    check_grad(lambda t, x: t.max_pool3d(x, 2), x3)


# -- the rest -------------------------------------------------------------------------------------
def test_bilinear_pad_shuffle_pdist() -> None:
    check(
        lambda t, a, b, w, c: t.bilinear(a, b, w, c),
        randn(3, 4),
        randn(3, 5),
        randn(2, 4, 5),
        randn(2),
    )
    check(lambda t, a, b, w: t.bilinear(a, b, w), randn(3, 4), randn(3, 5), randn(2, 4, 5))
    check_grad(
        lambda t, a, b, w, c: t.bilinear(a, b, w, c),
        randn(3, 4),
        randn(3, 5),
        randn(2, 4, 5),
        randn(2),
    )
    x = randn(2, 3, 4)
    check(lambda t, x: t.constant_pad_nd(x, [1, 2]), x)
    check(lambda t, x: t.constant_pad_nd(x, (1, 0, -1, 2), 3.5), x)
    check(lambda t, x: t.constant_pad_nd(x, [1, 1], 2), arr(3, 2, dtype="int64"))
    check_grad(lambda t, x: t.constant_pad_nd(x, (1, 0, -1, 2), 3.5), x)
    check(lambda t, x: t.channel_shuffle(x, 2), randn(2, 6, 3))
    check(lambda t, x: t.channel_shuffle(x, 3), arr(1, 6, 2, 2, dtype="int64"))
    check_raises(lambda t, x: t.channel_shuffle(x, 4), randn(2, 6, 3))
    check(lambda t, x: t.pdist(x), randn(5, 3))
    check(lambda t, x: t.pdist(x, 1.0), randn(5, 3))
    check_grad(lambda t, x: t.pdist(x, 3), randn(4, 3))


@pytest.mark.parametrize("bias", [True, False])
def test_rnn_cells(bias: bool) -> None:
    n, i, h = 3, 4, 5

    def b(k: int) -> tuple[np.ndarray, ...]:
        return (randn(k * h), randn(k * h)) if bias else ()

    def lstm(t: Any, x: Any, h0: Any, c0: Any, wi: Any, wh: Any, *bs: Any) -> Any:
        return t.lstm_cell(x, (h0, c0), wi, wh, *bs)

    def gru(t: Any, x: Any, h0: Any, wi: Any, wh: Any, *bs: Any) -> Any:
        return t.gru_cell(x, h0, wi, wh, *bs)

    def rnn_t(t: Any, x: Any, h0: Any, wi: Any, wh: Any, *bs: Any) -> Any:
        return t.rnn_tanh_cell(x, h0, wi, wh, *bs)

    def rnn_r(t: Any, x: Any, h0: Any, wi: Any, wh: Any, *bs: Any) -> Any:
        return t.rnn_relu_cell(x, h0, wi, wh, *bs)

    lstm_in = (randn(n, i), randn(n, h), randn(n, h), randn(4 * h, i), randn(4 * h, h), *b(4))
    check(lstm, *lstm_in)
    check_grad(lstm, *lstm_in)
    for fn, k in ((gru, 3), (rnn_t, 1), (rnn_r, 1)):
        inputs = (randn(n, i), randn(n, h), randn(k * h, i), randn(k * h, h), *b(k))
        check(fn, *inputs)
        check_grad(fn, *inputs)
    check_raises(gru, randn(i), randn(h), randn(3 * h, i), randn(3 * h, h))
    check_raises(
        lambda t, x, h0, wi, wh: t.lstm_cell(x, [h0, h0], wi, wh),
        randn(i),
        randn(h),
        randn(4 * h, i),
        randn(4 * h, h),
    )


def test_names_are_public() -> None:
    for name in ("dropout", "layer_norm", "kl_div", "lstm_cell", "max_pool2d", "pdist"):
        assert name in lt.__all__ and name in dir(lt)
        assert getattr(lt, name).__module__ == "lazytorch.nn._torch_functions"


def test_functional_embedding_scale_grad_by_freq() -> None:
    # F.embedding ignored scale_grad_by_freq (each row's gradient was not divided by its count)
    idx = np.array([[0, 4, 4], [1, 4, 0]], dtype=np.int64)
    check_grad(
        lambda t, w, i: t.nn.functional.embedding(i, w, scale_grad_by_freq=True), randn(5, 3), idx
    )
    check_grad(
        lambda t, w, i: t.nn.functional.embedding(i, w, 4, scale_grad_by_freq=True),
        randn(5, 3),
        idx,
    )
    check(
        lambda t, w, i: t.nn.functional.embedding(i, w, scale_grad_by_freq=True), randn(5, 3), idx
    )
