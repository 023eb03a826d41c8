"""``torch.*`` forms of functional ops (``torch.dropout``, ``torch.layer_norm``, ...).

Real scripts call these directly. Their signatures are torch's ``torch.*`` ones, which differ
from ``torch.nn.functional``'s: ``torch.dropout(input, p, train)`` has no defaults,
``torch.batch_norm`` takes ``weight, bias`` before the running statistics, ``torch.embedding``
takes the weight first, and the losses take ``reduction`` as an int (0: none, 1: mean,
2: sum). Every one wraps the `lazytorch.nn.functional` implementation.

A quirk of torch kept here: torch's argument parser cannot read the ``Mean`` default its
losses declare, so a ``torch.*`` loss called without ``reduction`` reduces nothing
(``torch.kl_div(a, b)`` is elementwise), although torch's stubs show ``reduction=1``.

The facade (``lazytorch.__init__``) loads this module on the first use of one of its names.

>>> import lazytorch
>>> x = lazytorch.ones(2, 3)
>>> lazytorch.dropout(x, 0.5, False) is x
True
>>> lazytorch.layer_norm(x, (3,)).tolist()
[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazytorch._errors import op_error
from lazytorch.nn import functional as F
from lazytorch.nn.functional.layers import _dropout
from lazytorch.nn.modules.rnn import _STEPS, _Weights
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.reduction import _into_out
from lazytorch.tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "cosine_embedding_loss",
    "ctc_loss",
    "dropout",
    "dropout_",
    "embedding",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "group_norm",
    "gru_cell",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "layer_norm",
    "lstm_cell",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "pdist",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
]


# -- dropout: no defaults, `train` not `training`; p == 0 or not train returns `input` ------------
def _run_dropout(
    input: Tensor, p: float, train: bool, inplace: bool, op: str, *, feature: bool, alpha: bool
) -> Tensor:
    # torch.* raises RuntimeError for a bad p (F.* raises ValueError)
    if not 0.0 <= p <= 1.0:
        raise op_error(
            RuntimeError, op, f"dropout probability has to be between 0 and 1, but got {p}"
        )
    return _dropout(input, p, train, inplace, op, feature=feature, alpha=alpha)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout``: F.dropout with every argument given (returns `input` itself when
    nothing is dropped, as torch)."""
    return _run_dropout(input, p, train, False, "dropout", feature=False, alpha=False)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.dropout``."""
    return _run_dropout(input, p, train, True, "dropout", feature=False, alpha=False)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: F.alpha_dropout with every argument given."""
    return _run_dropout(input, p, train, False, "alpha_dropout", feature=False, alpha=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.alpha_dropout``."""
    return _run_dropout(input, p, train, True, "alpha_dropout", feature=False, alpha=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout``: drop whole (sample, channel) slices of an input of 2 or more
    dims (what F.dropout1d/2d/3d run on a batched input)."""
    return _run_dropout(input, p, train, False, "feature_dropout", feature=True, alpha=False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.feature_dropout``."""
    return _run_dropout(input, p, train, True, "feature_dropout", feature=True, alpha=False)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout``: alpha dropout of whole channels."""
    return _run_dropout(input, p, train, False, "feature_alpha_dropout", feature=True, alpha=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.feature_alpha_dropout``."""
    return _run_dropout(input, p, train, True, "feature_alpha_dropout", feature=True, alpha=True)


# -- normalization: torch's argument order; the cudnn flags are accepted and ignored -------------
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """``torch.layer_norm`` (F.layer_norm; `cudnn_enable` changes nothing)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """``torch.batch_norm``: F.batch_norm with torch's order (weight and bias first)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enabled: bool = True,
) -> Tensor:
    """``torch.group_norm`` (F.group_norm)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """``torch.instance_norm``: F.instance_norm with torch's order (weight and bias first)."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``torch.rms_norm`` (F.rms_norm)."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding``: the weight first; a negative `padding_idx` means none (torch's
    kernel, which F.embedding calls after wrapping a negative index)."""
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


# -- activations --------------------------------------------------------------------------------
def selu(input: Tensor) -> Tensor:
    """``torch.selu``."""
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place ``torch.selu``."""
    return F.selu_(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu``."""
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``torch.celu``."""
    return F.celu_(input, alpha)


def threshold(input: Tensor, threshold: float, value: float, *, out: Any = None) -> Tensor:
    """``torch.threshold``: `value` where ``input <= threshold``, else `input`."""
    return _into_out(F.threshold(input, threshold, value), out, "threshold")


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``torch.threshold``."""
    return F.threshold_(input, threshold, value)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``torch.prelu`` (also ``Tensor.prelu``)."""
    return F.prelu(input, weight)


def rrelu(
    input: Tensor,
    lower: float = 0.125,
    upper: float = 0.3333333333333333,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    """``torch.rrelu``: random negative slopes in training, their mean otherwise."""
    if not training:
        return F.rrelu(input, lower, upper, False)
    x = tensor_arg(input, "rrelu")
    return F.rrelu_(x.clone(), lower, upper, True, generator)


def rrelu_(
    input: Tensor,
    lower: float = 0.125,
    upper: float = 0.3333333333333333,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    """In-place ``torch.rrelu``."""
    return F.rrelu_(input, lower, upper, training, generator)


def hardshrink(input: Tensor, lambd: float = 0.5, *, out: Any = None) -> Tensor:
    """``torch.hardshrink`` (also ``Tensor.hardshrink``)."""
    return _into_out(F.hardshrink(input, lambd), out, "hardshrink")


# -- losses: reduction is an int -----------------------------------------------------------------
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int, op: str) -> str:
    """torch's int reduction: 1 is mean, 2 sum, and any other int none (torch's kernels
    reduce only for Mean and Sum)."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise op_error(
            TypeError,
            op,
            f"{op}(): argument 'reduction' must be int, not {type(reduction).__name__}",
        )
    return _REDUCTIONS.get(reduction, "none")


def kl_div(
    input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False
) -> Tensor:
    """``torch.kl_div``: 1 (mean) averages over every element (F.kl_div's 'mean', without
    its warning)."""
    red = _reduction(reduction, "kl_div")
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    if red == "mean":
        return loss.mean()
    return loss.sum() if red == "sum" else loss


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 0,
) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``."""
    red = _reduction(reduction, "binary_cross_entropy_with_logits")
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=red, pos_weight=pos_weight
    )


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """``torch.cosine_embedding_loss``."""
    red = _reduction(reduction, "cosine_embedding_loss")
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0
) -> Tensor:
    """``torch.hinge_embedding_loss``."""
    red = _reduction(reduction, "hinge_embedding_loss")
    return F.hinge_embedding_loss(input, target, margin, reduction=red)


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """``torch.margin_ranking_loss``."""
    red = _reduction(reduction, "margin_ranking_loss")
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=red)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-06,
    swap: bool = False,
    reduction: int = 0,
) -> Tensor:
    """``torch.triplet_margin_loss``."""
    red = _reduction(reduction, "triplet_margin_loss")
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=red)


def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    """``torch.poisson_nll_loss``: every argument given."""
    red = _reduction(reduction, "poisson_nll_loss")
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=red)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 0,
    zero_infinity: bool = False,
) -> Tensor:
    """``torch.ctc_loss``: the lengths as tensors or lists of ints; 1 (mean) divides each
    loss by its target length, then averages (F.ctc_loss's 'mean')."""
    red = _reduction(reduction, "ctc_loss")
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, red, zero_infinity)


# -- pooling: stride () means the kernel size ----------------------------------------------------
def _stride(stride: Any) -> Any:
    return None if isinstance(stride, (tuple, list)) and len(stride) == 0 else stride


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """``torch.max_pool1d``."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """``torch.max_pool2d``."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """``torch.max_pool3d``."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: (values, int64 indices)."""
    out = F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, True)
    return out[0], out[1]


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """``torch.avg_pool1d``."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """``torch.adaptive_avg_pool1d``."""
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: always (values, int64 indices)."""
    out = F.adaptive_max_pool1d(input, output_size, True)
    return out[0], out[1]


# -- the rest ------------------------------------------------------------------------------------
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``torch.bilinear`` (F.bilinear)."""
    return F.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    """``torch.constant_pad_nd``: F.pad in constant mode (negative pads crop)."""
    return F.pad(input, pad, "constant", value)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.channel_shuffle`` (F.channel_shuffle)."""
    return F.channel_shuffle(input, groups)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """``torch.pdist`` (F.pdist)."""
    return F.pdist(input, p)


def _cell(
    mode: str,
    input: Tensor,
    hx: tuple[Tensor, ...],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> tuple[Tensor, ...]:
    op = mode.lower() + "_cell"
    input = tensor_arg(input, op, "input")
    for h in hx:
        tensor_arg(h, op, "hx")
    if input.ndim != 2 or any(h.ndim != 2 for h in hx):
        # torch's kernels read size(1) of both: a 1-D one fails there
        bad = input if input.ndim != 2 else next(h for h in hx if h.ndim != 2)
        raise op_error(
            IndexError,
            op,
            f"Dimension out of range (expected to be in range of [{-max(bad.ndim, 1)}, "
            f"{max(bad.ndim, 1) - 1}], but got 1)",
        )
    w = _Weights(w_ih, w_hh, b_ih, b_hh)
    return _STEPS[mode](F.linear(input, w_ih, b_ih), hx, w)


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell``: one LSTM step on 2-D input, ``hx = (h, c)``; returns (h', c')."""
    hx = tuple(hx)
    if len(hx) != 2:
        raise op_error(
            RuntimeError, "lstm_cell", f"lstm_cell: Expected hx to have 2 tensors, got {len(hx)}"
        )
    h, c = _cell("LSTM", input, hx, w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``torch.gru_cell``: one GRU step on 2-D input."""
    return _cell("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``torch.rnn_tanh_cell``: ``tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)``."""
    return _cell("RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``torch.rnn_relu_cell``: ``relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)``."""
    return _cell("RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
