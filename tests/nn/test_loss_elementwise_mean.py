"""reduction="elementwise_mean", the pre-1.0 spelling of "mean" that old scripts still pass
(`nn.CrossEntropyLoss(reduction='elementwise_mean')`): the losses whose torch code goes
through `_Reduction.get_enum` accept it as "mean" with a deprecation warning; the four whose
torch code checks the string itself reject it. Values and gradients against torch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_raises

RNG = np.random.default_rng(11)
X = RNG.uniform(0.1, 0.9, (4, 3)).astype(np.float32)
T = RNG.uniform(0.1, 0.9, (4, 3)).astype(np.float32)
CLS = np.array([0, 2, 1, 0])
SGN = np.sign(RNG.uniform(-1, 1, (4, 3))).astype(np.float32)
SGN1 = np.array([1.0, -1.0, 1.0, -1.0], dtype=np.float32)
ML = np.array([[0, 1, -1]] * 4)

F = Callable[..., Any]
ACCEPTED: dict[str, tuple[F, tuple[Any, ...]]] = {
    "mse_loss": (lambda f, x, t, r: f.mse_loss(x, t, reduction=r), (X, T)),
    "l1_loss": (lambda f, x, t, r: f.l1_loss(x, t, reduction=r), (X, T)),
    "smooth_l1_loss": (lambda f, x, t, r: f.smooth_l1_loss(x, t, reduction=r), (X, T)),
    "huber_loss": (lambda f, x, t, r: f.huber_loss(x, t, reduction=r), (X, T)),
    "nll_loss": (lambda f, x, c, r: f.nll_loss(x.log(), c, reduction=r), (X, CLS)),
    "cross_entropy": (lambda f, x, c, r: f.cross_entropy(x, c, reduction=r), (X, CLS)),
    "binary_cross_entropy": (
        lambda f, x, t, r: f.binary_cross_entropy(x, t, reduction=r),
        (X, T),
    ),
    "binary_cross_entropy_with_logits": (
        lambda f, x, t, r: f.binary_cross_entropy_with_logits(x, t, reduction=r),
        (X, T),
    ),
    "kl_div": (lambda f, x, t, r: f.kl_div(x.log(), t, reduction=r), (X, T)),
    "hinge_embedding_loss": (
        lambda f, x, s, r: f.hinge_embedding_loss(x, s, reduction=r),
        (X, SGN),
    ),
    "multilabel_margin_loss": (
        lambda f, x, m, r: f.multilabel_margin_loss(x, m, reduction=r),
        (X, ML),
    ),
    "soft_margin_loss": (lambda f, x, s, r: f.soft_margin_loss(x, s, reduction=r), (X, SGN)),
    "cosine_embedding_loss": (
        lambda f, x, t, y, r: f.cosine_embedding_loss(x, t, y, reduction=r),
        (X, T, SGN1),
    ),
    "margin_ranking_loss": (
        lambda f, x, t, y, r: f.margin_ranking_loss(x[:, 0], t[:, 0], y, reduction=r),
        (X, T, SGN1),
    ),
    "multi_margin_loss": (lambda f, x, c, r: f.multi_margin_loss(x, c, reduction=r), (X, CLS)),
    "triplet_margin_loss": (
        lambda f, x, t, r: f.triplet_margin_loss(x, t, x.flip(0), reduction=r),
        (X, T),
    ),
}
REJECTED: dict[str, tuple[F, tuple[Any, ...]]] = {
    "poisson_nll_loss": (lambda f, x, t, r: f.poisson_nll_loss(x, t, reduction=r), (X, T)),
    "gaussian_nll_loss": (lambda f, x, t, r: f.gaussian_nll_loss(x, t, t, reduction=r), (X, T)),
    "multilabel_soft_margin_loss": (
        lambda f, x, t, r: f.multilabel_soft_margin_loss(x, t, reduction=r),
        (X, T),
    ),
    "triplet_margin_with_distance_loss": (
        lambda f, x, t, r: f.triplet_margin_with_distance_loss(x, t, x.flip(0), reduction=r),
        (X, T),
    ),
}


def _value_and_grad(lib: Any, fn: F, x: Any, *rest: Any) -> tuple[Any, Any]:
    x = x.clone().requires_grad_(True)
    loss = fn(lib.nn.functional, x, *rest, "elementwise_mean")
    (g,) = lib.autograd.grad(loss, x)
    return loss, g


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_as_mean(name: str) -> None:
    fn, inputs = ACCEPTED[name]
    check(lambda t, *a: _value_and_grad(t, fn, *a), *inputs)
    # and it is exactly "mean"
    lti = [lt.tensor(a) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = fn(lt.nn.functional, *lti, "elementwise_mean").item()
        b = fn(lt.nn.functional, *lti, "mean").item()
    assert a == b


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_as_torch_does(name: str) -> None:
    fn, inputs = REJECTED[name]
    check_raises(
        lambda t, *a: fn(t.nn.functional, *a, "elementwise_mean"),
        *inputs,
        match="elementwise_mean is not",
    )


def test_warns_like_torch() -> None:
    for lib in (torch, lt):
        with pytest.warns(UserWarning, match="elementwise_mean' is deprecated"):
            lib.nn.functional.mse_loss(lib.zeros(2), lib.ones(2), reduction="elementwise_mean")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_modules_and_empty_batch() -> None:
    # the module losses pass the spelling through; a size-0 mean is NaN, as torch's
    check(lambda t, x, c: t.nn.CrossEntropyLoss(reduction="elementwise_mean")(x, c), X, CLS)
    check(
        lambda t, x, y: t.nn.MSELoss(reduction="elementwise_mean")(x, y),
        np.zeros((0, 3), np.float32),
        np.zeros((0, 3), np.float32),
    )
    # size_average/reduce still take precedence over the string, as in torch
    check(
        lambda t, x, y: t.nn.functional.l1_loss(
            x, y, size_average=False, reduction="elementwise_mean"
        ),
        X,
        T,
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_ctc_loss() -> None:
    lp = RNG.normal(size=(6, 2, 4))
    lp = (lp - np.log(np.exp(lp).sum(-1, keepdims=True))).astype(np.float32)
    tg = np.array([[1, 2], [3, 1]])
    il, tl = np.array([6, 6]), np.array([2, 2])
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(
            lp, tg, il, tl, reduction="elementwise_mean"
        ),
        lp,
        tg,
        il,
        tl,
    )
