"""The rest of torch.nn.functional that real scripts call: shrinkage and gated activations,
the in-place forms, the margin / embedding / likelihood losses, kl_div, embedding_bag,
bilinear, channel_shuffle, the `*_with_indices` pools and max_unpool — each against torch,
values (lazy and sync) and gradients, with torch's errors.

Also the deprecated `size_average` / `reduce` flags, which every functional loss must honour:
ignoring them silently returned the mean where torch returns the sum.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_grad, check_raises, positive, randn


def _labels(*shape: int, classes: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, size=shape).astype(np.int64)


def _signs(*shape: int, seed: int = 0) -> np.ndarray:
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0).astype(np.float32)


# -- activations ------------------------------------------------------------------------------
# inputs put values on the kinks (+-0.5 for the shrinks, the threshold itself) and NaN
EDGES = np.array([-1.5, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 2.0, np.nan], dtype=np.float32)

ACTIVATIONS = {
    "threshold": lambda t, x: t.nn.functional.threshold(x, 0.5, -3.0),
    "hardshrink": lambda t, x: t.nn.functional.hardshrink(x),
    "hardshrink_lambd": lambda t, x: t.nn.functional.hardshrink(x, 0.25),
    "softshrink": lambda t, x: t.nn.functional.softshrink(x),
    "softshrink_lambd": lambda t, x: t.nn.functional.softshrink(x, 0.25),
    "tanhshrink": lambda t, x: t.nn.functional.tanhshrink(x),
    "glu": lambda t, x: t.nn.functional.glu(x.reshape(3, 6), 1),
    "glu_dim0": lambda t, x: t.nn.functional.glu(x.reshape(6, 3), 0),
    "rrelu_eval": lambda t, x: t.nn.functional.rrelu(x),
    "prelu_scalar": lambda t, x: t.nn.functional.prelu(x, t.tensor([0.3])),
    "prelu_channels": lambda t, x: t.nn.functional.prelu(
        x.reshape(2, 3, 3), t.tensor([0.1, -0.2, 0.5])
    ),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_torch_with_gradients(name):
    fn = ACTIVATIONS[name]
    x = np.concatenate([EDGES, arr(9, seed=3)])
    check(fn, x)
    finite = np.concatenate([EDGES[:-1], arr(10, seed=4)])
    check_grad(fn, finite)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prelu_gradient_reaches_the_weight(dtype):
    check_grad(
        lambda t, x, w: t.nn.functional.prelu(x, w),
        randn(4, 3, 5, dtype=dtype),
        arr(3, dtype=dtype, low=0.0, high=0.5),
    )


def test_inplace_forms_write_their_input():
    for name, args in [
        ("relu_", ()),
        ("elu_", (0.5,)),
        ("selu_", ()),
        ("celu_", (2.0,)),
        ("leaky_relu_", (0.2,)),
        ("hardtanh_", (-0.5, 0.5)),
        ("threshold_", (0.1, 7.0)),
        ("rrelu_", ()),
    ]:
        x = randn(3, 4)

        def fn(t, v, name=name, args=args):
            v = v.clone()
            out = getattr(t.nn.functional, name)(v, *args)
            return out, v  # the result and the input it overwrote

        check(fn, x)


def test_activation_errors_match_torch():
    check_raises(lambda t, x: t.nn.functional.glu(x), randn(3, 5), match="Halving dimension")
    check_raises(lambda t, x: t.nn.functional.softshrink(x, -1.0), randn(3))
    check_raises(
        lambda t, x: t.nn.functional.prelu(x, t.ones(4)), randn(2, 3, 5), match="channel size"
    )


def test_rrelu_training_slopes_lie_between_lower_and_upper():
    lt.manual_seed(0)
    x = -lt.rand(10_000) - 0.5
    y = lt.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slope = (y / x).numpy()
    assert slope.min() >= 0.1 and slope.max() <= 0.3
    assert abs(slope.mean() - 0.2) < 0.005  # uniform: the mean of 10k draws
    pos = lt.rand(100)
    assert np.array_equal(lt.nn.functional.rrelu(pos, training=True).numpy(), pos.numpy())


def test_gumbel_softmax_rows_are_distributions_and_hard_is_one_hot():
    lt.manual_seed(0)
    logits = lt.tensor(randn(5, 7), requires_grad=True)
    soft = lt.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(5), rtol=1e-5)
    hard = lt.nn.functional.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and np.array_equal(h.sum(-1), np.ones(5))
    (hard * lt.arange(7.0)).sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


# -- losses -----------------------------------------------------------------------------------
def _log_probs(*shape: int, seed: int) -> np.ndarray:
    x = arr(*shape, seed=seed)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(np.float32)


def _probs(*shape: int, seed: int) -> np.ndarray:
    p = arr(*shape, seed=seed, low=0.0, high=1.0)
    p[0, 0] = 0.0  # a zero target: xlogy's 0 * log 0 = 0
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


LOSSES = {
    "kl_div_batchmean": (
        lambda t, x, y: t.nn.functional.kl_div(x, y, reduction="batchmean"),
        lambda: (_log_probs(4, 5, seed=1), _probs(4, 5, seed=2)),
    ),
    "kl_div_sum_log_target": (
        lambda t, x, y: t.nn.functional.kl_div(x, y, reduction="sum", log_target=True),
        lambda: (_log_probs(4, 5, seed=1), _log_probs(4, 5, seed=2)),
    ),
    "kl_div_none": (
        lambda t, x, y: t.nn.functional.kl_div(x, y, reduction="none"),
        lambda: (_log_probs(4, 5, seed=1), _probs(4, 5, seed=2)),
    ),
    "huber": (
        lambda t, x, y: t.nn.functional.huber_loss(x, y, delta=0.7),
        lambda: (randn(6, 4), randn(6, 4)),
    ),
    "huber_none": (
        lambda t, x, y: t.nn.functional.huber_loss(x, y, reduction="none"),
        lambda: (randn(6, 4), randn(6, 4)),
    ),
    "poisson_log": (
        lambda t, x, y: t.nn.functional.poisson_nll_loss(x, y),
        lambda: (randn(5, 3), positive(5, 3)),
    ),
    "poisson_full": (
        lambda t, x, y: t.nn.functional.poisson_nll_loss(x, y, log_input=False, full=True),
        lambda: (positive(5, 3), positive(5, 3) * 2),
    ),
    "gaussian_nll": (
        lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v),
        lambda: (randn(5, 3), randn(5, 3), positive(5, 3)),
    ),
    "gaussian_nll_homoscedastic_full": (
        lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v, full=True, reduction="sum"),
        lambda: (randn(5, 3), randn(5, 3), positive(5)),
    ),
    "gaussian_nll_clamped": (
        lambda t, x, y, v: t.nn.functional.gaussian_nll_loss(x, y, v, eps=0.5, reduction="none"),
        lambda: (randn(5, 3), randn(5, 3), positive(5, 1)),
    ),
    "margin_ranking": (
        lambda t, a, b, y: t.nn.functional.margin_ranking_loss(a, b, y, margin=0.3),
        lambda: (randn(8), randn(8), _signs(8)),
    ),
    "hinge_embedding": (
        lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, y, margin=0.5),
        lambda: (randn(4, 5), _signs(4, 5)),
    ),
    "soft_margin": (
        lambda t, x, y: t.nn.functional.soft_margin_loss(x, y),
        lambda: (randn(4, 5), _signs(4, 5)),
    ),
    "multilabel_soft_margin": (
        lambda t, x, y, w: t.nn.functional.multilabel_soft_margin_loss(x, y, weight=w),
        lambda: (randn(4, 5), (_signs(4, 5) > 0).astype(np.float32), positive(5)),
    ),
    "cosine_embedding": (
        lambda t, a, b, y: t.nn.functional.cosine_embedding_loss(a, b, y, margin=0.1),
        lambda: (randn(6, 4), randn(6, 4), _signs(6)),
    ),
    "cosine_embedding_1d": (
        lambda t, a, b, y: t.nn.functional.cosine_embedding_loss(a, b, y, reduction="sum"),
        lambda: (randn(4), randn(4), np.array(-1.0, dtype=np.float32)),
    ),
    "pairwise_distance": (
        lambda t, a, b: t.nn.functional.pairwise_distance(a, b),
        lambda: (randn(5, 3), randn(5, 3)),
    ),
    "pairwise_distance_p1_keepdim": (
        lambda t, a, b: t.nn.functional.pairwise_distance(a, b, p=1.0, keepdim=True),
        lambda: (randn(5, 3), randn(3)),
    ),
    "pdist": (lambda t, x: t.nn.functional.pdist(x), lambda: (randn(5, 3),)),
    "pdist_p1": (lambda t, x: t.nn.functional.pdist(x, p=1), lambda: (randn(4, 3),)),
    "triplet_margin": (
        lambda t, a, p, n: t.nn.functional.triplet_margin_loss(a, p, n),
        lambda: (randn(6, 4), randn(6, 4), randn(6, 4)),
    ),
    "triplet_margin_swap_p1": (
        lambda t, a, p, n: t.nn.functional.triplet_margin_loss(
            a, p, n, margin=2.0, p=1, swap=True, reduction="none"
        ),
        lambda: (randn(6, 4), randn(6, 4), randn(6, 4)),
    ),
    "triplet_with_distance": (
        lambda t, a, p, n: t.nn.functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - t.nn.functional.cosine_similarity(u, v)
        ),
        lambda: (randn(6, 4), randn(6, 4), randn(6, 4)),
    ),
    "multi_margin": (
        lambda t, x, y: t.nn.functional.multi_margin_loss(x, y),
        lambda: (randn(6, 4), _labels(6, classes=4)),
    ),
    "multi_margin_p2_weight": (
        lambda t, x, y, w: t.nn.functional.multi_margin_loss(
            x, y, p=2, margin=0.5, weight=w, reduction="none"
        ),
        lambda: (randn(6, 4), _labels(6, classes=4), positive(4)),
    ),
    "multilabel_margin": (
        lambda t, x, y: t.nn.functional.multilabel_margin_loss(x, y),
        lambda: (
            randn(3, 4),
            np.array([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 2, 0, 0]], dtype=np.int64),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_match_torch_with_gradients(name):
    fn, make = LOSSES[name]
    inputs = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's note on reduction="mean"
        check(fn, *inputs)
        diff = [i for i, a in enumerate(inputs) if a.dtype.kind == "f" and a.ndim > 0]
        if (
            name.startswith(("margin_ranking", "hinge", "soft_margin", "cosine"))
            or "weight" in name
        ):
            diff = diff[:-1]  # the +-1 target is a label; torch refuses a gradient for weight
        if name.startswith("kl_div"):
            # torch's d/dtarget of xlogy(t, t) at t = 0 is 0/0 = NaN; lazytorch's xlogy gives 0
            # there (its documented choice): compare the gradients away from that point
            inputs = (inputs[0], np.where(inputs[1] == 0, 0.05, inputs[1]).astype(np.float32))
        check_grad(fn, *inputs, diff=diff)


def test_kl_div_mean_warns_as_torch_does():
    x, y = lt.tensor(_log_probs(2, 3, seed=1)), lt.tensor(_probs(2, 3, seed=2))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        lt.nn.functional.kl_div(x, y)


@pytest.mark.parametrize(
    "loss",
    [
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "soft_margin_loss",
        "poisson_nll_loss",
    ],
)
@pytest.mark.parametrize(
    "flags", [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}]
)
def test_deprecated_size_average_and_reduce_are_honoured(loss, flags):
    x = arr(4, 3, low=0.05, high=0.95, seed=5)
    y = arr(4, 3, low=0.0, high=1.0, seed=6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        check(lambda t, a, b: getattr(t.nn.functional, loss)(a, b, **flags), x, y)
    assert any("size_average and reduce args will be deprecated" in str(w.message) for w in seen)


@pytest.mark.parametrize("flags", [{"size_average": False}, {"reduce": False}])
def test_deprecated_flags_on_class_losses(flags):
    x, y = randn(5, 4), _labels(5, classes=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda t, a, b: t.nn.functional.cross_entropy(a, b, **flags), x, y)
        check(lambda t, a, b: t.nn.functional.nll_loss(t.log_softmax(a, 1), b, **flags), x, y)


def test_loss_errors_match_torch():
    check_raises(
        lambda t, x, v: t.nn.functional.gaussian_nll_loss(x, x, v), randn(3, 4), -positive(3, 4)
    )
    check_raises(
        lambda t, x, v: t.nn.functional.gaussian_nll_loss(x, x, v), randn(3, 4), positive(2, 2)
    )
    check_raises(lambda t, x: t.nn.functional.huber_loss(x, x, delta=0.0), randn(3))
    check_raises(lambda t, x: t.nn.functional.kl_div(x, x, reduction="avg"), randn(3))
    check_raises(lambda t, x: t.nn.functional.pdist(x), randn(2, 3, 4))
    check_raises(
        lambda t, a, b, c: t.nn.functional.triplet_margin_loss(a, b, c),
        randn(2, 3),
        randn(2, 3),
        randn(3),
    )


# -- layers -----------------------------------------------------------------------------------
EMBEDDING_BAGS = {
    "sum_offsets": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 4, 5, 4, 3, 2, 9]), w, t.tensor([0, 4]), mode="sum"
    ),
    "mean_empty_bag": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 4, 5]), w, t.tensor([0, 2, 2]), mode="mean"
    ),
    "max_empty_bag": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 4, 5]), w, t.tensor([0, 2, 2]), mode="max"
    ),
    "mean_2d": lambda t, w: t.nn.functional.embedding_bag(t.tensor([[1, 2, 4], [4, 3, 9]]), w),
    # (the last offset at the input's end, as it is used: elements past it get a gradient
    # of uninitialized memory from torch 2.13's backward)
    "sum_last_offset": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 4, 5, 6]), w, t.tensor([0, 2, 5]), mode="sum", include_last_offset=True
    ),
    "mean_padding": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 2, 5]), w, t.tensor([0, 2]), padding_idx=2
    ),
    "per_sample_weights": lambda t, w: t.nn.functional.embedding_bag(
        t.tensor([1, 2, 4, 5]),
        w,
        t.tensor([0, 1]),
        mode="sum",
        per_sample_weights=t.tensor([0.5, 2.0, -1.0, 3.0]),
    ),
}


@pytest.mark.parametrize("name", sorted(EMBEDDING_BAGS))
def test_embedding_bag_matches_torch_with_gradients(name):
    w = randn(10, 3)
    check(EMBEDDING_BAGS[name], w)
    check_grad(EMBEDDING_BAGS[name], w)


def test_embedding_bag_module_and_errors():
    w = randn(10, 3)

    def module(t, weight, mode):
        m = t.nn.EmbeddingBag(10, 3, mode=mode)
        with t.no_grad():
            m.weight.copy_(weight)
        return m(t.tensor([1, 2, 4, 5, 4]), t.tensor([0, 3]))

    for mode in ("sum", "mean", "max"):
        check(module, w, mode)
    check_raises(lambda t, w: t.nn.functional.embedding_bag(t.tensor([1, 2]), w), w)
    check_raises(lambda t, w: t.nn.functional.embedding_bag(t.tensor([1, 2]), w, t.tensor([1])), w)
    check_raises(
        lambda t, w: t.nn.functional.embedding_bag(t.tensor([[1, 2]]), w, t.tensor([0])), w
    )


def test_bilinear_and_channel_shuffle_match_torch():
    fn = lambda t, a, b, w, c: t.nn.functional.bilinear(a, b, w, c)  # noqa: E731
    inputs = (randn(4, 3), randn(4, 5), randn(2, 3, 5), randn(2))
    check(fn, *inputs)
    check_grad(fn, *inputs)
    check_raises(
        lambda t, a, b, w: t.nn.functional.bilinear(a, b, w),
        randn(4, 5),
        randn(4, 3),
        randn(2, 3, 5),
        match="input1 size does not match",
    )
    shuffle = lambda t, x: t.nn.functional.channel_shuffle(x, 3)  # noqa: E731
    check(shuffle, randn(2, 6, 2, 2))
    check(lambda t, x: t.nn.ChannelShuffle(2)(x), randn(1, 4, 3))
    check_raises(shuffle, randn(2, 5, 2, 2))


# -- pools ------------------------------------------------------------------------------------
def test_with_indices_pools_match_torch():
    x = randn(2, 3, 6, 6)
    check(lambda t, v: t.nn.functional.max_pool2d_with_indices(v, 2), x)
    check(lambda t, v: t.nn.functional.max_pool1d_with_indices(v[:, :, 0], 3, 2, 1), x)
    check(lambda t, v: t.nn.functional.max_pool3d_with_indices(v[None], 2), x)
    check(lambda t, v: t.nn.functional.adaptive_max_pool2d_with_indices(v, (4, 3)), x)
    check(lambda t, v: t.nn.functional.adaptive_max_pool1d_with_indices(v[:, :, 0], 4), x)


@pytest.mark.parametrize(
    "n, shape, kernel, stride, padding, size",
    [
        (1, (2, 3, 9), 3, 2, 1, None),
        (2, (2, 3, 6, 6), 2, None, 0, None),
        (2, (1, 2, 7, 5), 3, 2, 1, (7, 5)),
        (2, (2, 6, 6), 2, 2, 0, (1, 2, 7, 7)),
        (3, (1, 2, 4, 4, 4), 2, 2, 0, None),
    ],
)
def test_max_unpool_inverts_max_pool_like_torch(n, shape, kernel, stride, padding, size):
    pool = f"max_pool{n}d"
    unpool = f"max_unpool{n}d"

    def fn(t, x):
        F = t.nn.functional
        y, i = getattr(F, pool)(x, kernel, stride, padding, return_indices=True)
        return getattr(F, unpool)(y, i, kernel, stride, padding, output_size=size)

    check(fn, randn(*shape))
    check_grad(fn, randn(*shape))


def test_max_unpool_modules_and_errors():
    def fn(t, x):
        pool, unpool = t.nn.MaxPool2d(2, return_indices=True), t.nn.MaxUnpool2d(2)
        y, i = pool(x)
        return unpool(y, i, output_size=x.size())

    check(fn, randn(1, 2, 5, 5))
    check_raises(
        lambda t, x: t.nn.functional.max_unpool2d(
            *t.nn.functional.max_pool2d(x, 2, return_indices=True), 2, output_size=(9, 9)
        ),
        randn(1, 1, 4, 4),
        match="invalid output_size",
    )
    with pytest.raises(Exception, match="out of bounds"):
        y = lt.ones(1, 1, 2, 2)
        lt.nn.functional.max_unpool2d(y, lt.full((1, 1, 2, 2), 99), 2).numpy()


def test_every_public_functional_of_torch_exists_or_is_listed():
    import inspect

    # not here, and why: torch.jit's helpers, fused low-precision GEMM entry points
    missing_on_purpose = {
        "conv_tbc",
        "grouped_mm",
        "scaled_grouped_mm",
        "scaled_mm",
        "native_channel_shuffle",
        "assert_int_or_pair",
        "boolean_dispatch",
        "handle_torch_function",
        "has_torch_function",
        "has_torch_function_unary",
        "has_torch_function_variadic",
    }
    F = torch.nn.functional
    public = {
        n
        for n in dir(F)
        if not n.startswith("_")
        and callable(getattr(F, n))
        and not inspect.isclass(getattr(F, n))
        and getattr(getattr(F, n), "__module__", "") not in ("typing",)
    }
    absent = sorted(n for n in public if n not in vars(lt.nn.functional))
    assert absent == sorted(missing_on_purpose & public), absent


# -- the modules ------------------------------------------------------------------------------
MODULES = {
    "Threshold": (lambda nn: nn.Threshold(0.1, 20.0), (randn(3, 4),)),
    "Hardshrink": (lambda nn: nn.Hardshrink(), (randn(3, 4),)),
    "Softshrink": (lambda nn: nn.Softshrink(0.3), (randn(3, 4),)),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), (randn(3, 4),)),
    "GLU": (lambda nn: nn.GLU(), (randn(3, 4),)),
    "PReLU": (lambda nn: nn.PReLU(3), (randn(2, 3, 4),)),
    "RReLU": (lambda nn: nn.RReLU().eval(), (randn(3, 4),)),
    "Softmax2d": (lambda nn: nn.Softmax2d(), (randn(2, 3, 2, 2),)),
    "KLDivLoss": (
        lambda nn: nn.KLDivLoss(reduction="batchmean"),
        (_log_probs(3, 4, seed=1), _probs(3, 4, seed=2)),
    ),
    "HuberLoss": (lambda nn: nn.HuberLoss(delta=0.5), (randn(3, 4), randn(3, 4))),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(), (randn(3, 4), positive(3, 4))),
    "GaussianNLLLoss": (
        lambda nn: nn.GaussianNLLLoss(full=True),
        (randn(3, 4), randn(3, 4), positive(3, 4)),
    ),
    "MarginRankingLoss": (
        lambda nn: nn.MarginRankingLoss(0.2),
        (randn(5), randn(5), _signs(5)),
    ),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(), (randn(5), _signs(5))),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(), (randn(5), _signs(5))),
    "MultiLabelSoftMarginLoss": (
        lambda nn: nn.MultiLabelSoftMarginLoss(),
        (randn(3, 4), (_signs(3, 4) > 0).astype(np.float32)),
    ),
    "CosineEmbeddingLoss": (
        lambda nn: nn.CosineEmbeddingLoss(0.1),
        (randn(3, 4), randn(3, 4), _signs(3)),
    ),
    "TripletMarginLoss": (
        lambda nn: nn.TripletMarginLoss(swap=True),
        (randn(3, 4), randn(3, 4), randn(3, 4)),
    ),
    "TripletMarginWithDistanceLoss": (
        lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.5),
        (randn(3, 4), randn(3, 4), randn(3, 4)),
    ),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(p=2), (randn(3, 4), _labels(3, classes=4))),
    "MultiLabelMarginLoss": (
        lambda nn: nn.MultiLabelMarginLoss(),
        (randn(2, 3), np.array([[2, -1, 0], [0, 1, -1]], dtype=np.int64)),
    ),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(p=3.0), (randn(3, 4), randn(3, 4))),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(dim=0), (randn(3, 4), randn(3, 4))),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), (randn(1, 4, 2, 2),)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_match_torch_and_print_like_torch(name):
    make, inputs = MODULES[name]
    check(lambda t, *xs: make(t.nn)(*xs), *inputs)
    assert repr(make(lt.nn)) == repr(make(torch.nn))


def test_prelu_and_embedding_bag_modules_hold_torch_parameters():
    assert [tuple(p.shape) for p in lt.nn.PReLU(4).parameters()] == [(4,)]
    assert float(lt.nn.PReLU(init=0.1).weight) == pytest.approx(0.1)
    bag = lt.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-1)
    assert repr(bag) == repr(torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-1))
    assert bag.weight[9].abs().sum().item() == 0
    frozen = lt.nn.EmbeddingBag.from_pretrained(lt.ones(4, 2))
    assert not frozen.weight.requires_grad
    unpool = lt.nn.MaxUnpool2d(2)
    assert repr(unpool) == repr(torch.nn.MaxUnpool2d(2))


# -- weight normalization (the hook form) ---------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch_values_gradients_and_removal(dim):
    w0, b0, x0 = randn(4, 3, 3, 3), randn(4), randn(2, 3, 5, 5)

    def run(t):
        conv = t.nn.Conv2d(3, 4, 3)
        with t.no_grad():
            conv.weight.copy_(t.tensor(w0))
            conv.bias.copy_(t.tensor(b0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            t.nn.utils.weight_norm(conv, dim=dim)
        names = sorted(n for n, _ in conv.named_parameters())
        y = conv(t.tensor(x0))
        (y * y).sum().backward()
        grads = [conv.weight_g.grad.numpy(), conv.weight_v.grad.numpy()]
        with t.no_grad():
            conv.weight_g.mul_(2.0)  # the next forward recomputes the weight from g
        y2 = conv(t.tensor(x0)).detach().numpy()
        t.nn.utils.remove_weight_norm(conv)
        after = sorted(n for n, _ in conv.named_parameters())
        return names, y.detach().numpy(), grads, y2, after, conv.weight.detach().numpy()

    ours, theirs = run(lt), run(torch)
    assert ours[0] == theirs[0] == ["bias", "weight_g", "weight_v"]
    assert ours[4] == theirs[4] == ["bias", "weight"]
    for a, b in [
        (ours[1], theirs[1]),
        *zip(ours[2], theirs[2]),
        (ours[3], theirs[3]),
        (ours[5], theirs[5]),
    ]:
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_weight_norm_refuses_twice_and_warns_as_deprecated():
    m = lt.nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        lt.nn.utils.weight_norm(m)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lt.nn.utils.weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        lt.nn.utils.remove_weight_norm(m, "bias")
