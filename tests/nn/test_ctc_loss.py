"""F.ctc_loss and nn.CTCLoss against torch: both target layouts, reductions, blank index,
zero_infinity, unbatched input, impossible alignments, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises

RNG = np.random.default_rng(5)


def _log_probs(t: int, n: int, c: int, dtype: str = "float32") -> np.ndarray:
    x = RNG.normal(size=(t, n, c))
    x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return x.astype(dtype)


def _targets(n: int, s: int, c: int, blank: int = 0) -> np.ndarray:
    labels = [k for k in range(c) if k != blank]
    return RNG.choice(labels, size=(n, s)).astype(np.int64)


IL = np.array([7, 5, 6, 2])
TL = np.array([3, 0, 2, 1])


@pytest.mark.parametrize(
    ("reduction", "dtype"), [("none", "float32"), ("sum", "float32"), ("mean", "float64")]
)
def test_padded_targets(reduction: str, dtype: str) -> None:
    lp, tg = _log_probs(7, 4, 5, dtype), _targets(4, 3, 5)
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction),
        lp,
        tg,
        IL,
        TL,
    )


def test_concatenated_targets_and_sequences_of_lengths() -> None:
    lp, tg = _log_probs(7, 4, 5), _targets(4, 3, 5)
    cat = np.concatenate([tg[k, : TL[k]] for k in range(4)])
    check(
        lambda t, lp, tg: t.nn.functional.ctc_loss(
            lp, tg, (7, 5, 6, 2), (3, 0, 2, 1), reduction="none"
        ),
        lp,
        cat,
    )
    check(lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl), lp, cat, IL, TL)
    check(lambda t, lp, tg: t.nn.functional.ctc_loss(lp, tg, [7, 5, 6, 2], [3, 0, 2, 1]), lp, tg)


def test_repeated_labels_blank_index_and_module() -> None:
    lp = _log_probs(8, 2, 4)
    tg = np.array([[1, 1, 2], [3, 3, 3]])  # repeats need a blank between them
    il, tl = np.array([8, 7]), np.array([3, 3])
    check(lambda t, lp, tg, il, tl: t.nn.CTCLoss()(lp, tg, il, tl), lp, tg, il, tl)
    tg3 = np.array([[0, 0, 1], [2, 2, 2]])
    check(
        lambda t, lp, tg, il, tl: t.nn.CTCLoss(blank=3, reduction="none")(lp, tg, il, tl),
        lp,
        tg3,
        il,
        tl,
    )
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl, 3, "sum"),
        lp,
        tg3,
        il,
        tl,
    )


def test_impossible_alignments_and_zero_infinity() -> None:
    lp = _log_probs(4, 3, 3)
    tg = np.array([[1, 1, 1], [1, 2, 1], [2, 2, 0]])
    il, tl = np.array([4, 4, 0]), np.array([3, 3, 2])  # 1,1,1 needs 5 steps; no input for the last
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl, reduction="none"),
        lp,
        tg,
        il,
        tl,
    )
    for red in ("none", "mean", "sum"):
        check(
            lambda t, lp, tg, il, tl, red=red: t.nn.functional.ctc_loss(
                lp, tg, il, tl, reduction=red, zero_infinity=True
            ),
            lp,
            tg,
            il,
            tl,
        )
    check_grad(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl, zero_infinity=True),
        lp,
        tg,
        il,
        tl,
        diff=[0],
    )


def test_empty_input_and_empty_target() -> None:
    lp = _log_probs(3, 2, 3)
    tg = np.array([[1, 2], [1, 1]])
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl, reduction="sum"),
        lp,
        tg,
        np.array([0, 3]),
        np.array([0, 2]),
    )
    check(
        lambda t, lp, tg, il, tl: t.nn.functional.ctc_loss(lp, tg, il, tl),
        lp,
        tg,
        np.array([3, 3]),
        np.array([0, 0]),
    )


def test_unbatched() -> None:
    lp, tg = _log_probs(6, 1, 4)[:, 0], _targets(1, 3, 4)[0]
    check(
        lambda t, lp, tg: t.nn.functional.ctc_loss(
            lp, tg, t.tensor(6), t.tensor(3), reduction="none"
        ),
        lp,
        tg,
    )
    check(lambda t, lp, tg: t.nn.functional.ctc_loss(lp, tg, (5,), (2,)), lp, tg)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_gradients_through_log_softmax_and_direct(reduction: str) -> None:
    logits = RNG.normal(size=(7, 4, 5)).astype(np.float32)
    tg = _targets(4, 3, 5)

    def through(t: Any, x: Any, tg: Any, il: Any, tl: Any) -> Any:
        return t.nn.functional.ctc_loss(x.log_softmax(2), tg, il, tl, reduction=reduction)

    def direct(t: Any, x: Any, tg: Any, il: Any, tl: Any) -> Any:
        return t.nn.functional.ctc_loss(x, tg, il, tl, reduction=reduction)

    check_grad(through, logits, tg, IL, TL, diff=[0])
    check_grad(direct, _log_probs(7, 4, 5), tg, IL, TL, diff=[0])  # torch's exp(lp) - posterior


def test_log_probs_with_minus_infinity() -> None:
    lp = _log_probs(5, 2, 4)
    lp[:, :, 3] = -np.inf  # a class masked out everywhere
    tg = np.array([[1, 2], [2, 1]])
    fn = lambda t, lp, tg: t.nn.functional.ctc_loss(lp, tg, [5, 4], [2, 2], reduction="none")  # noqa: E731
    check(fn, lp, tg)
    x = lt.tensor(lp, requires_grad=True)
    lt.nn.functional.ctc_loss(x, lt.tensor(tg), [5, 4], [2, 2]).backward()
    want = torch.tensor(lp, requires_grad=True)
    torch.nn.functional.ctc_loss(want, torch.tensor(tg), [5, 4], [2, 2]).backward()
    got, ref = x.grad.numpy(), want.grad.numpy()
    # torch's gradient is NaN where log_probs is -inf (exp(-inf + nll - -inf)); ours is 0
    assert np.isnan(ref[:, 0, 3]).all() and np.isnan(ref[:4, 1, 3]).all()
    assert (got[..., 3] == 0).all()
    np.testing.assert_allclose(got[..., :3], ref[..., :3], atol=1e-5)


def test_errors() -> None:
    lp, tg = _log_probs(7, 4, 5), _targets(4, 3, 5)
    F = "nn.functional"

    def ctc(t: Any, *args: Any, **kw: Any) -> Any:
        return t.nn.functional.ctc_loss(*args, **kw)

    assert F
    check_raises(lambda t, lp, tg, tl: ctc(t, lp, tg, t.tensor([8, 5, 6, 2]), tl), lp, tg, TL)
    check_raises(lambda t, lp, tg, il: ctc(t, lp, tg, il, t.tensor([4, 0, 2, 1])), lp, tg, IL)
    check_raises(lambda t, lp, tg, tl: ctc(t, lp, tg, t.tensor([7, 5]), tl), lp, tg, TL)
    check_raises(lambda t, lp, tg, il, tl: ctc(t, lp, tg, il.float(), tl), lp, tg, IL, TL)
    check_raises(lambda t, lp, tg, il, tl: ctc(t, lp, tg, il, tl, blank=5), lp, tg, IL, TL)
    check_raises(lambda t, lp, tg, il, tl: ctc(t, lp, tg, il, tl, reduction="avg"), lp, tg, IL, TL)
    check_raises(lambda t, lp, tg, il, tl: ctc(t, lp.half(), tg, il, tl), lp, tg, IL, TL)
    check_raises(
        lambda t, lp, tg, il: ctc(t, lp, tg.reshape(-1)[:5], il, t.tensor([3, 0, 2, 1])), lp, tg, IL
    )
    check_raises(lambda t, lp, tg, il: ctc(t, lp, tg, il, [3, 0, 2, 1]), lp, tg, IL)
