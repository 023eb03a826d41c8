"""Losses: mse, l1, smooth_l1, nll, cross_entropy (and linear_cross_entropy), binary cross
entropy."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _opmath
from lazytorch.nn.functional.activation import log_sigmoid_opmath, log_softmax
from lazytorch.nn.functional.layers import linear
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import result_type, tensor_arg
from lazytorch.ops.composite import triu_indices
from lazytorch.ops.creation import arange, ones_like
from lazytorch.ops.indexing import gather, index_select
from lazytorch.ops.linalg import norm
from lazytorch.tensor import Tensor

# -- losses ------------------------------------------------------------------------------------------


def _torch_grad_fn(name: str, when: Callable[..., bool] | None = None) -> Callable[[Any], Any]:
    """Name the loss's result after torch's backward node (``grad_fn=<MseLossBackward0>``
    when a script prints its loss), where `when(*args, **kwargs)` holds: lazytorch records
    a loss as several primitives, whose last one would name it otherwise."""

    def wrap(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        @functools.wraps(fn)
        def named(*args: Any, **kwargs: Any) -> Tensor:
            out = fn(*args, **kwargs)
            x = args[0] if args else kwargs.get("input")
            named_here = isinstance(out, Tensor) and isinstance(x, Tensor)
            if named_here and (when is None or when(*args, **kwargs)):
                name_grad_fn(out, name, x)
            return out

        return named

    return wrap


def _class_targets(input: Any, target: Any, *args: Any, **kwargs: Any) -> bool:
    # torch's nll_loss node: class-index targets of a 1-d or 2-d input, no smoothing (a
    # smoothed or probability-target loss ends in other nodes there too)
    smoothing = kwargs.get("label_smoothing", args[5] if len(args) > 5 else 0.0)
    return (
        isinstance(target, Tensor)
        and not target.dtype.is_floating_point
        and input.ndim <= 2
        and not smoothing > 0
    )


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """`reduction`, or what torch's deprecated `size_average`/`reduce` flags mean when either
    is given (with torch's warning): both true -> "mean", reduce only -> "sum", else "none".

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     legacy_reduction(False, None, "mean"), legacy_reduction(None, False, "mean")
    ('sum', 'none')
    """
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        stacklevel=3,
    )
    return ret


def reduction_enum(reduction: str) -> str:
    """`reduction` as torch's loss kernels read it (torch's `_Reduction.get_enum`): the
    pre-1.0 spelling "elementwise_mean" is "mean", with torch's deprecation warning. Only the
    losses whose torch code goes through `get_enum` accept it; poisson_nll_loss,
    gaussian_nll_loss, multilabel_soft_margin_loss and triplet_margin_with_distance_loss
    reject it, as torch's do.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     reduction_enum("elementwise_mean"), reduction_enum("sum")
    ('mean', 'sum')
    """
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return "mean"
    return reduction


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "none":
        return loss
    raise op_error(ValueError, op, f"{reduction} is not a valid value for reduction")


def _float_loss_inputs(input: Tensor, target: Tensor, op: str, kernel: str) -> None:
    """torch's pointwise loss kernels exist for floating dtypes only."""
    d = result_type(input, target)
    if not d.is_floating_point:
        raise op_error(
            NotImplementedError, op, f"\"{kernel}\" not implemented for '{d.legacy_name}'"
        )


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """torch's weighted l1/mse loss: errors * weight, the mean divided by the weights' sum."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()  # type: ignore[no-any-return]
    if reduction == "mean":
        return weighted.sum() / weight.sum()  # type: ignore[no-any-return]
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@_torch_grad_fn("MseLossBackward0")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error; with `weight` (input's shape), each squared error weighted.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> x, y = lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([0.0, 0.0])
    >>> F.mse_loss(x, y).item(), F.mse_loss(x, y, weight=lazytorch.tensor([3.0, 1.0])).item()
    (2.5, 1.75)
    """
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _float_loss_inputs(input, target, "mse_loss", "mse_cpu")
    d = input - target  # type: ignore[operator]
    if weight is not None:
        return _weighted(d * d, weight, input, reduction)
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error; with `weight` (input's shape), each error weighted."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    errors = E.abs(input - target)  # type: ignore[operator]
    if weight is not None:
        return _weighted(errors, weight, input, reduction)
    return _reduce(errors, reduction, "l1_loss")


@_torch_grad_fn("SmoothL1LossBackward0")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    if beta < 0:
        raise op_error(
            RuntimeError,
            "smooth_l1_loss",
            "smooth_l1_loss does not support negative values for beta.",
        )
    _float_loss_inputs(input, target, "smooth_l1_loss", "smooth_l1_cpu")
    z = input - target  # type: ignore[operator]
    d = E.abs(z)
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    # z * z, not d * d: the same value, and its second derivative at 0 is 2 (torch's 1/beta
    # for the loss), where abs's kink would make it 0
    loss = E.where(d < beta, 0.5 * z * z / beta, d - 0.5 * beta)  # type: ignore[operator]
    return _reduce(loss, reduction, "smooth_l1_loss")


def _class_dim_last(input: Tensor) -> tuple[Tensor, int]:
    """(N, C, d1, ...) -> (N*d1*..., C); a (C,) input is one sample."""
    if input.ndim == 1:
        return S.unsqueeze(input, 0), input.shape[0]
    c = input.shape[1]
    if input.ndim == 2:
        return input, c
    moved = S.movedim(input, 1, -1)
    return S.reshape(moved, (-1, c)), c


def _check_class_targets(logp: Tensor, target: Tensor, weight: Tensor | None, op: str) -> None:
    """torch's nll_loss checks: target dtype, its shape against the input's, the weight."""
    if target.dtype not in (dt.int64, dt.uint8):
        raise op_error(
            RuntimeError,
            op,
            f"expected target dtype to be Long or Byte, but got {target.dtype.legacy_name}",
        )
    if target.dtype is dt.uint8 and logp.ndim > 2:
        # torch's spatial (k-d) kernel takes int64 targets only
        raise op_error(RuntimeError, op, "expected scalar type Long but found Byte")
    if logp.ndim < 1:
        raise op_error(RuntimeError, op, "input tensor should be 1D or more")
    if logp.ndim == 1:
        if target.ndim > 1 or (target.ndim == 1 and target.shape[0] != 1):
            raise op_error(
                ValueError,
                op,
                f"For 1D input, 1D target must have size 1, but got target size: {target.numel()}",
            )
    elif target.ndim == 0 or target.shape[0] != logp.shape[0]:
        raise op_error(
            ValueError,
            op,
            f"Expected input batch_size ({logp.shape[0]}) to match target batch_size ({target.shape[0] if target.ndim else 0}).",
        )
    elif logp.ndim == 2 and target.ndim != 1:
        raise op_error(
            RuntimeError, op, "0D or 1D target tensor expected, multi-target not supported"
        )
    elif logp.ndim > 2 and tuple(target.shape) != (logp.shape[0], *logp.shape[2:]):
        raise op_error(
            RuntimeError,
            op,
            f"Expected target size {[logp.shape[0], *logp.shape[2:]]}, got {list(target.shape)}",
        )
    c = logp.shape[0 if logp.ndim == 1 else 1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise op_error(
            RuntimeError,
            op,
            f"weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {list(weight.shape)}",
        )
    if weight is not None and weight.dtype is not logp.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"expected scalar type {logp.dtype.legacy_name} but found {weight.dtype.legacy_name}",
        )


@_torch_grad_fn("NllLossBackward0", _class_targets)
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities `input`."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    return _nll(input, target, weight, ignore_index, reduction, 0.0, "nll_loss")


def _nll(
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    smoothing: float,
    op: str,
) -> Tensor:
    _check_class_targets(logp, target, weight, op)
    batch_shape = tuple(target.shape)
    lp, c = _class_dim_last(logp)
    t = S.reshape(target, -1).long()  # type: ignore[attr-defined]
    valid = t != ignore_index  # type: ignore[operator]
    safe_t = E.where(valid, t, 0)
    picked = S.squeeze(gather(lp, 1, S.unsqueeze(safe_t, 1)), 1)
    w_t = index_select(weight, 0, safe_t) if weight is not None else ones_like(picked)
    w_t = E.where(valid, w_t, 0.0)
    loss = -picked * w_t  # type: ignore[operator]
    if smoothing:
        wrow = S.reshape(weight, (1, c)) if weight is not None else 1.0
        smooth = -R.sum(lp * wrow, 1) / c  # type: ignore[operator]
        smooth = E.where(valid, smooth, 0.0)
        loss = loss * (1 - smoothing) + smooth * smoothing  # type: ignore[operator]
    if reduction == "none":
        return S.reshape(loss, batch_shape) if logp.ndim != 1 else S.reshape(loss, ())
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "mean":
        return R.sum(loss) / R.sum(w_t)  # type: ignore[operator,no-any-return]
    raise op_error(ValueError, op, f"{reduction} is not a valid value for reduction")


@_torch_grad_fn("NllLossBackward0", _class_targets)
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dim (1) then NLL; targets are class indices or
    probabilities; optional class weights, ignore_index and label smoothing."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    x = tensor_arg(input, "cross_entropy")
    class_dim = 0 if x.ndim == 1 else 1
    # As torch: a negative label_smoothing means none; above 1 is an error.
    if label_smoothing > 1.0:
        raise op_error(
            RuntimeError,
            "cross_entropy",
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}",
        )
    smoothing = max(label_smoothing, 0.0)
    # torch takes a target of the input's shape as class probabilities (whatever its dtype).
    if tuple(target.shape) == tuple(x.shape):
        return _cross_entropy_probs(x, target, weight, ignore_index, reduction, smoothing)
    logp = log_softmax(x, class_dim)
    return _nll(logp, target, weight, ignore_index, reduction, smoothing, "cross_entropy")


def _cross_entropy_probs(
    x: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    smoothing: float,
) -> Tensor:
    op = "cross_entropy"
    if not target.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"Expected floating point type for target with class probabilities, got {target.dtype.legacy_name}",
        )
    if ignore_index >= 0:
        raise op_error(RuntimeError, op, "ignore_index is not supported for floating point target")
    class_dim = 0 if x.ndim == 1 else 1
    c = x.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise op_error(
            RuntimeError,
            op,
            f"cross_entropy: weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {list(weight.shape)}",
        )
    logp = log_softmax(x, class_dim)
    t = target * (1 - smoothing) + smoothing / c if smoothing else target  # type: ignore[operator]
    wshape = [1] * x.ndim
    wshape[class_dim] = c
    wt = S.reshape(weight, wshape) if weight is not None else 1.0
    loss = -R.sum(logp * t * wt, class_dim)  # type: ignore[operator]
    if reduction == "mean":
        n = loss.numel() if loss.ndim else 1
        return R.sum(loss) / n  # type: ignore[operator,no-any-return]
    return _reduce(loss, reduction, op)


@_torch_grad_fn("BinaryCrossEntropyBackward0")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    x = tensor_arg(input, "binary_cross_entropy")
    if tuple(target.shape) != tuple(x.shape):
        raise op_error(
            ValueError,
            "binary_cross_entropy",
            f"Using a target size ({list(target.shape)}) that is different to the input size ({list(x.shape)}) is deprecated. Please ensure they have the same size.",
        )
    if target.dtype is not x.dtype:
        raise op_error(
            RuntimeError,
            "binary_cross_entropy",
            f"Found dtype {target.dtype.legacy_name} but expected {x.dtype.legacy_name}",
        )
    loss = _bce_terms(x, target)
    if x.requires_grad:
        loss = _bce_with_torch_gradient_at_edges(x, target)
    if weight is not None:
        # the weight is applied in the input's dtype (torch converts it, not the result)
        loss = loss * S.broadcast_to(weight, x.shape).to(x.dtype)  # type: ignore[attr-defined,operator]
    return _reduce(loss, reduction, "binary_cross_entropy")


def _bce_terms(x: Tensor, target: Tensor) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    log_x = E.clamp(E.log(x), min=-100.0)
    log_1mx = E.clamp(E.log(1 - x), min=-100.0)  # type: ignore[operator]
    return -(target * log_x + (1 - target) * log_1mx)  # type: ignore[operator,no-any-return]


# torch's EPSILON in binary_cross_entropy_backward: 1e-12 as a float constant, even for
# float64 inputs
_BCE_EPS = 9.999999960041972e-13


def _bce_with_torch_gradient_at_edges(x: Tensor, target: Tensor) -> Tensor:
    """The same loss, with torch's gradient for x: (x - t) / max(x (1 - x), 1e-12).

    Inside, that is the derivative of the terms. Near 0 and 1 (x (1 - x) < 1e-12) torch's
    gradient is the linear (x - t) / 1e-12, finite even at x = 0 and 1 where the clamped
    logs' derivative is 0 * inf = NaN: there the loss is its value, computed without
    gradient for x, plus (x - x) times that slope (exactly 0 for x in [0, 1]).
    """
    xd = x.detach()  # type: ignore[attr-defined]
    w = _opmath(x)  # float16 in float32: 1e-12 is 0 in float16
    wd = w.detach()  # type: ignore[attr-defined]
    edge = wd * (1 - wd) < _BCE_EPS  # type: ignore[operator]
    inner = _bce_terms(E.where(edge, 0.5, x), target)  # 0.5 at the edges: finite gradients
    slope = (wd - target.to(w.dtype)) / _BCE_EPS  # type: ignore[attr-defined,operator]
    at_edge = _bce_terms(xd, target) + ((w - wd) * slope).to(x.dtype)  # type: ignore[attr-defined,operator]
    return E.where(edge, at_edge, inner)


@_torch_grad_fn("BinaryCrossEntropyWithLogitsBackward0")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + BCE in the numerically stable form torch uses."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    x = tensor_arg(input, "binary_cross_entropy_with_logits")
    if tuple(target.shape) != tuple(x.shape):
        raise op_error(
            ValueError,
            "binary_cross_entropy_with_logits",
            f"Target size ({list(target.shape)}) must be the same as input size ({list(x.shape)})",
        )
    if not target.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "binary_cross_entropy_with_logits",
            f"result type Float can't be cast to the desired output type {target.dtype.legacy_name}",
        )
    softplus_neg = -log_sigmoid_opmath(x)  # log(1 + exp(-x)), stable
    if pos_weight is not None:
        coef = 1 + (pos_weight - 1) * target  # type: ignore[operator]
        loss = (1 - target) * x + coef * softplus_neg  # type: ignore[operator]
    else:
        loss = (1 - target) * x + softplus_neg  # type: ignore[operator]
    if weight is not None:
        loss = loss * weight  # type: ignore[operator]
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


# -- divergences, likelihoods, margins and embeddings ---------------------------------------------
def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise op_error(ValueError, op, f"{reduction} is not a valid value for reduction")


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """KL divergence of `target` from log-probabilities `input`, pointwise:
    target * (log(target) - input) (0 where target is 0), or with `log_target`
    exp(target) * (target - input). "batchmean" divides the sum by the batch size.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> p = lazytorch.tensor([[0.5, 0.5]])
    >>> F.kl_div(p.log(), p, reduction="batchmean").item()
    0.0
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    elif reduction == "elementwise_mean":
        reduction = reduction_enum(reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=2,
        )
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise op_error(ValueError, "kl_div", f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = E.exp(target) * (target - input)  # type: ignore[operator]
    else:
        loss = E.xlogy(target, target) - target * input  # type: ignore[operator]
    if reduction == "batchmean":
        total = R.sum(loss)
        return total / input.shape[0] if input.ndim else total  # type: ignore[operator,no-any-return]
    return _reduce(loss, reduction, "kl_div")


@_torch_grad_fn("HuberLossBackward0")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 * z**2 where |z| < delta, else delta * (|z| - 0.5 * delta); z = input - target.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.huber_loss(lazytorch.tensor([0.5, 3.0]), lazytorch.zeros(2), reduction="none")
    tensor([0.1250, 2.5000])
    """
    if delta <= 0:
        raise op_error(
            RuntimeError, "huber_loss", "huber_loss does not support non-positive values for delta."
        )
    reduction = reduction_enum(reduction)
    _float_loss_inputs(input, target, "huber_loss", "huber_cpu")
    z = input - target  # type: ignore[operator]
    d = E.abs(z)
    # z * z as in smooth_l1_loss: a second derivative of 1 at 0, as torch's
    loss = E.where(d < delta, 0.5 * z * z, delta * (d - 0.5 * delta))  # type: ignore[operator]
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce(loss, reduction, "huber_loss")


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of `target` under Poisson(rate): exp(input) - target * input
    when `input` is the log-rate, else input - target * log(input + eps); `full` adds the
    Stirling term where target > 1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = E.exp(input) - target * input  # type: ignore[operator]
    else:
        loss = input - target * E.log(input + eps)  # type: ignore[operator]
    if full:
        stirling = target * E.log(target) - target + 0.5 * E.log(2 * math.pi * target)  # type: ignore[operator]
        loss = loss + E.where(target > 1, stirling, 0.0)  # type: ignore[operator]
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of `target` under N(input, var): 0.5 * (log(var) +
    (input - target)**2 / var), var clamped below at `eps` (without a gradient through the
    clamp, as torch), plus 0.5 * log(2 pi) with `full`."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var  # type: ignore[operator]
    elif bool(R.any(var < 0)):  # type: ignore[operator]
        raise ValueError("var has negative entry/entries")
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)  # type: ignore[union-attr]
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            var = S.unsqueeze(var, -1)  # type: ignore[arg-type]
        elif not (
            len(in_shape) == len(var_shape)
            and sum(v for i, v in zip(in_shape, var_shape) if i != v) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # clamp's value without its gradient: d/dvar passes through where var < eps too
    clamped = var + (E.clamp(var, min=eps) - var).detach()  # type: ignore[operator,union-attr]
    loss = 0.5 * (E.log(clamped) + (input - target) ** 2 / clamped)  # type: ignore[operator]
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)  # type: ignore[operator]
    return _reduce(loss, reduction, "gaussian_nll_loss")


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "margin_ranking_loss")
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise op_error(
            RuntimeError,
            "margin_ranking_loss",
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ",
        )
    loss = E.clamp_min(-target * (input1 - input2) + margin, 0)  # type: ignore[operator]
    return _reduce(loss, reduction, "margin_ranking_loss")


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """x where target is 1, max(0, margin - x) where target is -1 (torch's formula, which
    adds both terms where target is neither)."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "hinge_embedding_loss")
    margin_clamp = E.clamp_min(margin - input, 0)  # type: ignore[operator]
    loss = E.where(target != 1, margin_clamp, 0.0) + E.where(target != -1, input, 0.0)  # type: ignore[operator]
    return _reduce(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input))."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "soft_margin_loss")
    loss = E.log1p(E.exp(-input * target))  # type: ignore[operator]
    return _reduce(loss, reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy of sigmoid(input) per class, averaged over the classes."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * log_sigmoid_opmath(input) + (1 - target) * log_sigmoid_opmath(-input))  # type: ignore[operator]
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = R.sum(loss, class_dim) / input.shape[class_dim]  # type: ignore[operator]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "cosine_embedding_loss")
    if input1.ndim != input2.ndim:
        raise op_error(
            RuntimeError,
            "cosine_embedding_loss",
            f"cosine_embedding_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {_size(input1)}, input2: {_size(input2)}",
        )
    if input1.ndim not in (1, 2):
        raise op_error(
            RuntimeError,
            "cosine_embedding_loss",
            f"1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{_size(input1)} and {_size(input2)}.",
        )
    dim = input1.ndim - 1
    eps = 1e-12
    prod = R.sum(input1 * input2, dim)  # type: ignore[operator]
    mag1 = R.sum(input1 * input1, dim) + eps  # type: ignore[operator]
    mag2 = R.sum(input2 * input2, dim) + eps  # type: ignore[operator]
    cos = prod / E.sqrt(mag1 * mag2)  # type: ignore[operator]
    pos = E.where(target == 1, 1 - cos, 0.0)  # type: ignore[operator]
    neg = E.where(target == -1, E.clamp_min(cos - margin, 0), 0.0)  # type: ignore[operator]
    return _reduce(pos + neg, reduction, "cosine_embedding_loss")  # type: ignore[operator]


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dimension.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.pairwise_distance(lazytorch.tensor([[3.0, 0.0]]), lazytorch.tensor([[0.0, 4.0]]), eps=0)
    tensor([5.])
    """
    a, b = tensor_arg(x1, "pairwise_distance"), tensor_arg(x2, "pairwise_distance")
    out_dim = max(a.ndim, b.ndim, 1) - 1
    return norm(a - b + eps, p, out_dim, keepdim)  # type: ignore[operator,no-any-return]


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between every pair of rows (i < j), in row-major order.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.pdist(lazytorch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """

    x = tensor_arg(input, "pdist")
    if x.ndim != 2:
        raise op_error(RuntimeError, "pdist", f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise op_error(RuntimeError, "pdist", "pdist only supports non-negative p values")
    n = x.shape[0]
    i, j = triu_indices(n, n, 1)
    return norm(index_select(x, 0, i) - index_select(x, 0, j), p, 1)  # type: ignore[operator,no-any-return]


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, op: str) -> None:
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise op_error(
            RuntimeError,
            op,
            f"The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs",
        )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-norm
    distance; with `swap`, d(anchor, negative) is replaced by d(positive, negative) where
    that is smaller."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "triplet_margin_loss")
    _check_triplet(anchor, positive, negative, "triplet_margin_loss")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = E.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    loss = E.clamp_min(margin + dist_pos - dist_neg, 0)  # type: ignore[operator]
    return _reduce(loss, reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Any = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet margin loss with any distance (default: `pairwise_distance`)."""
    if margin <= 0:
        raise ValueError(
            f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
        )
    _check_reduction(reduction, "triplet_margin_with_distance_loss")
    _check_triplet(anchor, positive, negative, "triplet_margin_with_distance_loss")
    dist = distance_function if distance_function is not None else pairwise_distance
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = E.minimum(dist_neg, dist(positive, negative))
    loss = E.clamp_min(margin + dist_pos - dist_neg, 0.0)  # type: ignore[operator]
    return _reduce(loss, reduction, "triplet_margin_with_distance_loss")


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: for each sample, the sum over classes i != y of
    max(0, margin - x[y] + x[i]) ** p (times weight[y]), divided by the number of classes."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise op_error(ValueError, "multi_margin_loss", "only p == 1 and p == 2 supported")
    x = tensor_arg(input, "multi_margin_loss")
    if x.ndim > 2:
        raise op_error(
            RuntimeError,
            "multi_margin_loss",
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {_size(x)}",
        )
    one = x.ndim < 2
    x2 = S.reshape(x, (1, -1)) if one else x
    t = S.reshape(target, (-1, 1))
    c = x2.shape[1]
    x_y = gather(x2, 1, t)
    hinge = margin - x_y + x2  # type: ignore[operator]
    z = E.where(hinge > 0, hinge, 0.0)  # no gradient on the hinge itself, as torch's kernel
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * S.reshape(index_select(weight, 0, S.reshape(t, (-1,))), (-1, 1))  # type: ignore[operator]
    not_y = arange(c) != t  # type: ignore[operator]
    loss = R.sum(E.where(not_y, z, 0.0), 1) / c  # type: ignore[operator]
    if one:
        loss = S.reshape(loss, ())
    return _reduce(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss. `target` holds class indices per sample, ended by the
    first -1; the loss is the sum over target classes j and non-target classes i of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes."""
    reduction = reduction_enum(legacy_reduction(size_average, reduce, reduction))
    _check_reduction(reduction, "multilabel_margin_loss")
    x = tensor_arg(input, "multilabel_margin_loss")
    one = x.ndim < 2
    x2 = S.reshape(x, (1, -1)) if one else x
    t2 = S.reshape(target, tuple(x2.shape))
    c = x2.shape[1]
    valid = (t2 != -1).long().cumprod(1) == 1  # type: ignore[attr-defined,operator]
    safe = E.where(valid, t2, 0)
    # is_target[n, i]: class i is among sample n's targets
    hits = (S.unsqueeze(safe, 2) == arange(c)) & S.unsqueeze(valid, 2)  # type: ignore[operator]
    is_target = R.any(hits, 1)
    x_j = gather(x2, 1, safe)  # (N, C): the value of the k-th target class
    hinge = 1 - (S.unsqueeze(x_j, 2) - S.unsqueeze(x2, 1))  # type: ignore[operator]
    z = E.where(hinge > 0, hinge, 0.0)  # no gradient on the hinge itself, as torch's kernel
    keep = S.unsqueeze(valid, 2) & ~S.unsqueeze(is_target, 1)  # type: ignore[operator]
    loss = R.sum(E.where(keep, z, 0.0), (1, 2)) / c  # type: ignore[operator]
    if one:
        loss = S.reshape(loss, ())
    return _reduce(loss, reduction, "multilabel_margin_loss")


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): input (N, in)
    or (in,); linear_weight (C, *out_features, in) for a K-dimensional loss over
    out_features; targets are class indices or class probabilities of the logits' shape.

    `options` (`lazytorch.nn.LinearCrossEntropyOptions`) is accepted: torch uses it to
    compute the loss in batch chunks so the (N, C) logits never exist at once. lazytorch
    computes the same formula as one program, in which the logits are a temporary of the
    fused step (the chunking is not done), and a second backward is allowed whatever
    ``allow_retain_graph`` says.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> x, w = lazytorch.ones(2, 3), lazytorch.zeros(4, 3)
    >>> round(F.linear_cross_entropy(x, w, lazytorch.tensor([0, 3])).item(), 4)
    1.3863
    """
    op = "linear_cross_entropy"
    x = tensor_arg(input, op)
    w = tensor_arg(linear_weight, op, "linear_weight")
    if x.ndim < 1 or x.ndim > 2:
        raise op_error(RuntimeError, op, f"expected input with dimensionality 1 or 2, got {x.ndim}")
    if w.ndim < 2:
        raise op_error(
            RuntimeError,
            op,
            f"expected linear_weight with dimensionality at least 2, got {w.ndim}",
        )
    batches = tuple(x.shape[:-1])
    in_features = x.shape[-1]
    if in_features != w.shape[-1]:
        raise op_error(
            RuntimeError,
            op,
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {w.shape[-1]}, respectively",
        )
    classes = w.shape[0]
    out_features = tuple(w.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise op_error(
            RuntimeError,
            op,
            f"expected linear_bias shape {(classes, *out_features)}, "
            f"got {tuple(linear_bias.shape)}",
        )
    if out_features and not batches:
        raise op_error(
            RuntimeError,
            op,
            f"K-dimensional loss defined by linear_weight shape {tuple(w.shape)} requires "
            f"batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(x.shape)}",
        )
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise op_error(
            RuntimeError, op, "ignore_index cannot be specified when target contains probabilities"
        )
    if out_features:
        w = S.reshape(w, (math.prod(out_features, start=classes), in_features))
        if linear_bias is not None:
            linear_bias = S.reshape(linear_bias, (math.prod(out_features, start=classes),))
    logits = S.reshape(linear(x, w, linear_bias), logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
