"""Connectionist temporal classification loss: torch's forward (alpha) recursion in log
space, one step of lazytorch ops per time step, differentiated by autograd.

The recursion runs over the extended label sequence (blank, l1, blank, l2, ..., blank) of
every sample at once; a sample whose input is shorter keeps its alphas once its last step is
taken. Log-space "minus infinity" is a large finite negative number (`_NEG`) inside the
recursion, so no ``-inf - -inf`` appears in a forward or a backward pass; a sample whose
target cannot be aligned (log-likelihood at or below `_IMPOSSIBLE`) gets torch's infinite
loss.

torch's backward returns ``exp(log_probs) - posterior`` at each of a sample's time steps,
the gradient with respect to the logits under an assumed log_softmax, not the gradient with
respect to `log_probs` itself; the two give the same gradient through a log_softmax. Here a
term of value exactly zero whose gradient is ``exp(log_probs)`` is added to each sample's
loss, so the gradient reaching `log_probs` is torch's too.

>>> import lazytorch
>>> import lazytorch.nn.functional as F
>>> lp = lazytorch.full((2, 1, 2), 0.5).log()
>>> round(F.ctc_loss(lp, lazytorch.tensor([[1]]), [2], [1], reduction="sum").item(), 4)
0.2877
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional.loss import reduction_enum
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import shape as S
from lazytorch.tensor import Tensor

__all__ = ["ctc_loss"]

_NEG = -1e30  # "log 0" inside the recursion (finite: its gradients stay 0, never NaN)
_IMPOSSIBLE = -1e29  # a log-likelihood at or below this has no alignment: infinite loss


def _lengths(v: Any, name: str, op: str = "ctc_loss") -> list[int]:
    if isinstance(v, Tensor):
        if v.dtype.is_floating_point or v.dtype is dt.bool_:
            raise op_error(RuntimeError, op, f"{name} must be integral")
        return [int(k) for k in np.asarray(v.tolist()).reshape(-1)]
    if isinstance(v, int):
        return [v]
    return [int(k) for k in v]


def _padded_targets(targets: Tensor, tls: list[int], n: int) -> Tensor:
    """(N, S) targets (S at least 1) from the padded or the concatenated layout."""
    tg = targets.to(dt.int64)
    if tg.ndim == 2:
        if tg.shape[0] != n:
            raise op_error(
                RuntimeError,
                "ctc_loss",
                f"Expected tensor to have size {n} at dimension 0, but got size {tg.shape[0]} "
                "for argument #2 'targets'",
            )
        for k in tls:
            if k > tg.shape[1]:
                raise op_error(
                    RuntimeError,
                    "ctc_loss",
                    f"Expected tensor to have size at least {k} at dimension 1, but got size "
                    f"{tg.shape[1]} for argument #2 'targets'",
                )
        return tg if tg.shape[1] else C.zeros(n, 1, dtype=dt.int64, device=tg.device)
    if tg.ndim != 1:
        raise op_error(
            RuntimeError,
            "ctc_loss",
            f"ctc_loss: targets must be 1-d (concatenated) or 2-d (padded), got {tg.ndim}-d",
        )
    total = sum(tls)
    if tg.shape[0] != total:
        raise op_error(
            RuntimeError,
            "ctc_loss",
            f"Expected tensor to have size {total} at dimension 0, but got size {tg.shape[0]} "
            "for argument #2 'targets'",
        )
    width = max([1, *tls])
    starts = np.concatenate([[0], np.cumsum(tls)[:-1]]).astype(np.int64)
    idx = starts[:, None] + np.minimum(np.arange(width)[None, :], np.maximum(tls, 1)[:, None] - 1)
    if total == 0:
        return C.zeros(n, width, dtype=dt.int64, device=tg.device)
    idx = np.minimum(idx, total - 1)
    return tg.index_select(0, C.tensor(idx.reshape(-1), device=tg.device)).reshape(n, width)


def _logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    m = E.maximum(E.maximum(a, b), c)
    return m + ((a - m).exp() + (b - m).exp() + (c - m).exp()).log()


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor,
    target_lengths: Tensor,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The CTC loss of (T, N, C) log-probabilities (or (T, C) unbatched) against targets
    padded to (N, S) or concatenated to (sum(target_lengths),), per torch: "mean" divides
    each sample's loss by its target length (at least 1) and averages; `zero_infinity`
    zeroes infinite losses and their gradients.

    Work: one small step of ops per time step (the graph grows with T).
    """
    reduction = reduction_enum(reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    lp = log_probs
    if not isinstance(lp, Tensor) or not isinstance(targets, Tensor):
        raise op_error(TypeError, "ctc_loss", "log_probs and targets must be tensors")
    if lp.dtype not in (dt.float32, dt.float64):
        raise op_error(
            NotImplementedError,
            "ctc_loss",
            f"\"ctc_loss_cpu\" not implemented for '{lp.dtype.legacy_name}'",
        )
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise op_error(
            TypeError,
            "ctc_loss",
            "ctc_loss() takes input_lengths and target_lengths both as tensors or both as "
            "sequences of ints",
        )
    batched = lp.ndim == 3
    if not batched:
        if lp.ndim != 2:
            raise op_error(
                RuntimeError, "ctc_loss", f"log_probs must be 2-d or 3-d, got {lp.ndim}-d"
            )
        lp = lp.unsqueeze(1)  # a 1-d target is then the concatenated layout of one sample
    t_max, n, classes = lp.shape
    ils = _lengths(input_lengths, "input_lengths")
    tls = _lengths(target_lengths, "target_lengths")
    if len(ils) != n:
        raise op_error(RuntimeError, "ctc_loss", "input_lengths must be of size batch_size")
    if len(tls) != n:
        raise op_error(RuntimeError, "ctc_loss", "target_lengths must be of size batch_size")
    if not 0 <= blank < classes:
        raise op_error(RuntimeError, "ctc_loss", "blank must be in label range")
    for k in ils:
        if k > t_max:
            raise op_error(
                RuntimeError,
                "ctc_loss",
                f"Expected input_lengths to have value at most {t_max}, but got value {k}",
            )
    tg = _padded_targets(targets, tls, n)  # (N, S)
    width = tg.shape[1]
    dev, d = lp.device, lp.dtype
    tl_t = C.tensor(tls, dtype=dt.int64, device=dev)
    il_t = C.tensor(ils, dtype=dt.int64, device=dev)
    pos = C.arange(width, device=dev)
    blank_t = C.full((), blank, dtype=dt.int64, device=dev)
    tg = E.where(pos < tl_t.unsqueeze(1), tg, blank_t)  # padding -> blank: always gatherable
    # extended labels (N, 2S+1): blank, l1, blank, l2, ..., blank
    ext = S.stack([blank_t.expand(n, width), tg], 2).reshape(n, 2 * width)
    ext = S.cat([ext, blank_t.expand(n, 1)], 1)
    length = 2 * width + 1
    s_idx = C.arange(length, device=dev)
    prev2 = S.cat([C.full((n, 2), -1, dtype=dt.int64, device=dev), ext[:, :-2]], 1)
    skip = (ext != blank) & (ext != prev2) & (s_idx >= 2)  # may jump over a blank
    neg = C.full((), _NEG, dtype=d, device=dev)
    lpe = lp.gather(2, ext.unsqueeze(0).expand(t_max, n, length)).clamp(min=_NEG)  # (T, N, L)
    t_used = max(ils) if ils else 0
    if t_used > 0:
        start = (s_idx < 2) & (s_idx < 2 * tl_t.unsqueeze(1) + 1)
        alpha = E.where(start, lpe[0], neg)
        neg1 = neg.expand(n, 1)
        neg2 = neg.expand(n, 2)
        for t in range(1, t_used):
            b = S.cat([neg1, alpha[:, :-1]], 1)
            c = E.where(skip, S.cat([neg2, alpha[:, :-2]], 1), neg)
            step = _logsumexp3(alpha, b, c) + lpe[t]
            alpha = E.where((il_t > t).unsqueeze(1), step, alpha)
        last = alpha.gather(1, (2 * tl_t).unsqueeze(1)).squeeze(1)
        before = alpha.gather(1, (2 * tl_t - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        before = E.where(tl_t > 0, before, neg)
        m = E.maximum(last, before)
        ll = m + ((last - m).exp() + (before - m).exp()).log()
    else:
        ll = C.zeros(n, dtype=d, device=dev)
    empty_input = il_t == 0  # nothing to align: likelihood 1 for an empty target, else 0
    ll = E.where(empty_input, E.where(tl_t == 0, C.zeros((), dtype=d, device=dev), neg), ll)
    impossible = ll <= _IMPOSSIBLE
    inf = C.full((), float("inf"), dtype=d, device=dev)
    nll = E.where(impossible, inf, -ll)
    # torch's gradient adds exp(log_probs) at each sample's time steps (see the module doc)
    live = (C.arange(t_max, device=dev).unsqueeze(1) < il_t).unsqueeze(2)  # (T, N, 1)
    live = live & (lp > _NEG)  # (-inf * exp(-inf) would be NaN)
    weighted = E.where(live, lp * lp.detach().exp(), C.zeros((), dtype=d, device=dev))
    extra = weighted.sum((0, 2))
    nll = nll + (extra - extra.detach())
    if zero_infinity:
        nll = E.where(impossible, C.zeros((), dtype=d, device=dev), nll)
    if reduction == "none":
        return nll if batched else nll.squeeze(0)
    if reduction == "sum":
        return nll.sum()
    return (nll / tl_t.clamp(min=1).to(d)).mean()
