"""Losses: mse, l1, smooth_l1, nll, cross_entropy, binary cross entropy."""

from __future__ import annotations

from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _opmath
from lazytorch.nn.functional.activation import log_sigmoid_opmath, log_softmax
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import result_type, tensor_arg
from lazytorch.ops.creation import ones_like
from lazytorch.ops.indexing import gather, index_select
from lazytorch.tensor import Tensor


# -- losses ------------------------------------------------------------------------------------------
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
    errors = E.abs(input - target)  # type: ignore[operator]
    if weight is not None:
        return _weighted(errors, weight, input, reduction)
    return _reduce(errors, reduction, "l1_loss")


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
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


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
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
