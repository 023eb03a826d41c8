"""linear, embedding, the dropout family (element, channel and alpha dropout), one_hot."""

from __future__ import annotations

import math
import warnings
from typing import Any

from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn, note_sparse_rows
from lazytorch.autograd.function import Function
from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _maybe_inplace
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import indexing as IX
from lazytorch.ops import linalg as LA
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops import views as V
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.composite import searchsorted
from lazytorch.ops.random import rand
from lazytorch.tensor import Tensor


# -- linear, embedding, dropout -------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    x, w = tensor_arg(input, "linear"), tensor_arg(weight, "linear", "weight")
    if w.ndim not in (1, 2):
        raise op_error(RuntimeError, "linear", f"weight must be 1-D or 2-D, got {w.ndim}-D")
    if x.ndim == 2 and w.ndim == 1 and bias is not None:
        # torch routes a 2-d input with a bias through addmm, which wants a matrix weight
        raise op_error(RuntimeError, "linear", "mat2 must be a matrix, got 1-D tensor")
    if (
        bias is not None
        and x.dtype.is_low_float
        and w.ndim == 2
        and x.ndim >= 1
        and (x.ndim <= 2 or x._view is None or V.is_contiguous(x))
    ):
        # torch's linear adds the bias inside the GEMM here (addmm, a contiguous input's
        # leading dims folded into rows): the float32 product plus the bias, rounded once.
        # A strided input of 3 or more dims takes matmul, then the bias: two roundings.
        rows = x if x.ndim == 2 else S.reshape(x, (-1, x.shape[-1]))
        y = LA.addmm(bias, rows, S.t(w))
        y = y if x.ndim == 2 else S.reshape(y, (*x.shape[:-1], w.shape[0]))
    else:
        y = LA.matmul(x, S.t(w) if w.ndim == 2 else w)
        if bias is not None:
            y = y + bias  # type: ignore[operator]
    if bias is not None and w.ndim == 2:
        # torch's node: addmm for a matrix input, then a view of it for a contiguous input
        # of more dims (a strided one takes matmul and an add)
        if x.ndim == 2:
            name_grad_fn(y, "AddmmBackward0", x if x.requires_grad else w)
        elif x.ndim >= 3 and (x._view is None or V.is_contiguous(x)):
            name_grad_fn(y, "ViewBackward0", x if x.requires_grad else w)
    return y


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` at the (integer) positions in `input`."""
    idx = tensor_arg(input, "embedding")
    if idx.dtype not in (dt.int64, dt.int32):
        raise op_error(
            RuntimeError,
            "embedding",
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {idx.dtype} instead",
        )
    if padding_idx is not None and not -weight.shape[0] <= padding_idx < weight.shape[0]:
        # torch asserts this (padding_idx only matters for gradients, not the values).
        raise op_error(AssertionError, "embedding", "Padding_idx must be within num_embeddings")
    flat = S.reshape(idx, -1)
    if max_norm is not None:
        # torch renormalizes, in place and outside autograd (embedding_renorm_), the rows of
        # `weight` that `input` looks up and whose norm exceeds max_norm; the lookup below
        # then reads them, so the gradient does not see the rescale. Repeated indices write
        # the same row value, so their order is moot.
        with no_grad():
            rows = IX.index_select(weight, 0, flat)
            norms = LA.vector_norm(rows, norm_type, 1, keepdim=True)
            scale = E.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)  # type: ignore[operator]
            weight.index_put_((flat,), (rows * scale).to(weight.dtype))  # type: ignore[attr-defined,operator]
    rows = IX.index_select(weight, 0, flat)
    if padding_idx is not None and rows.requires_grad:
        # torch's backward skips the padding row: the rows looked up there take no gradient
        keep = S.unsqueeze(flat != padding_idx % weight.shape[0], -1)  # type: ignore[operator]
        rows = E.where(keep, rows, rows.detach())
    if scale_grad_by_freq and rows.requires_grad:
        # torch divides each looked-up row's gradient by how often its index occurs in `input`
        counts = IX.index_select(IX.bincount(flat, minlength=weight.shape[0]), 0, flat)
        rows = _ScaleGrad.apply(rows, S.unsqueeze(1.0 / counts.to(rows.dtype), -1))  # type: ignore[operator]
    if sparse and rows.requires_grad:
        rows = _SparseRows.apply(rows, (weight, flat, padding_idx))
    return name_grad_fn(
        S.reshape(rows, (*idx.shape, weight.shape[-1])), "EmbeddingBackward0", weight
    )


class _SparseRows(Function):
    """The identity on looked-up rows, whose backward notes (`note_sparse_rows`) which rows
    of the weight the gradient touches: torch's sparse=True gradient holds those rows only
    (not the padding row), which SparseAdam's update depends on. The gradient itself stays
    dense, with the same values."""

    @staticmethod
    def forward(ctx: Any, rows: Tensor, lookup: tuple[Tensor, Tensor, int | None]) -> Tensor:
        ctx.lookup = lookup
        return rows.view_as(rows)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        weight, flat, padding_idx = ctx.lookup
        if weight.requires_grad:
            pad = None if padding_idx is None else padding_idx % weight.shape[0]
            note_sparse_rows(weight, (flat, pad))
        return grad, None


class _ScaleGrad(Function):
    """The identity, whose gradient is multiplied by `scale` (embedding's scale_grad_by_freq)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, scale: Tensor) -> Tensor:
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        return grad * ctx.scale, None  # type: ignore[operator]


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embedding rows, without the (bags, length, dim)
    intermediate. A 2-D `input` is one bag per row; a 1-D `input` is cut into bags where
    `offsets` start them. An empty bag (and a bag of only `padding_idx`) gives zeros.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> w = lazytorch.arange(15.0).reshape(5, 3)
    >>> F.embedding_bag(lazytorch.tensor([1, 2, 4]), w, lazytorch.tensor([0, 2]), mode="sum")
    tensor([[ 9., 11., 13.],
            [12., 13., 14.]])
    """
    idx = tensor_arg(input, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
            "on GitHub."
        )
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(idx.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({list(idx.shape)})"
        )
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        bags, length = idx.shape
        starts = C.arange(0, bags * length, max(length, 1), dtype=idx.dtype)[:bags]
        idx = S.reshape(idx, -1)
        if per_sample_weights is not None:
            per_sample_weights = S.reshape(per_sample_weights, -1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets[:-1] if include_last_offset else offsets
        if starts.shape[0] and int(starts[0]) != 0:
            raise op_error(
                RuntimeError,
                "embedding_bag",
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {int(starts[0])}",
            )
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    n, bags = idx.shape[0], starts.shape[0]
    ends = offsets[-1] if include_last_offset and offsets is not None else None
    # (padding_idx: the padding rows take no gradient and, with sparse=True, are not held)
    rows = embedding(idx, weight, padding_idx, max_norm, norm_type, sparse=sparse)
    # bag[k]: the bag element k falls in (the last start at or before k)
    position = C.arange(n, dtype=starts.dtype)
    bag = searchsorted(starts, position, right=True) - 1  # type: ignore[operator]
    keep = bag >= 0  # type: ignore[operator]
    if ends is not None:
        keep = keep & (position < ends)  # type: ignore[operator]
    if padding_idx is not None:
        keep = keep & (idx != padding_idx % weight.shape[0])  # type: ignore[operator]
    if per_sample_weights is not None:
        rows = rows * S.unsqueeze(per_sample_weights, -1)  # type: ignore[operator]
    dim = weight.shape[-1]
    if mode == "max":
        member = (S.unsqueeze(C.arange(bags, dtype=bag.dtype), 1) == bag) & keep  # type: ignore[operator]
        filled = E.where(S.unsqueeze(member, -1), S.unsqueeze(rows, 0).detach(), -math.inf)
        # the first maximal element per (bag, column), as torch's kernel keeps (a strict
        # comparison): the gradient goes to that one element, not shared between ties
        first = R.argmax(filled, 1)
        best = IX.gather(rows, 0, first)
        return E.where(S.unsqueeze(R.any(member, 1), -1), best, 0.0)
    rows = E.where(S.unsqueeze(keep, -1), rows, 0.0)
    target = E.where(keep, bag, 0)
    out = C.zeros((bags, dim), dtype=rows.dtype).index_add(0, target, rows)  # type: ignore[attr-defined]
    if mode == "sum":
        return out  # type: ignore[no-any-return]
    count = C.zeros(bags, dtype=rows.dtype).index_add(0, target, keep.to(rows.dtype))  # type: ignore[attr-defined]
    return out / S.unsqueeze(E.clamp_min(count, 1), -1)  # type: ignore[no-any-return]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]``; weight is (out, in1, in2).

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.bilinear(lazytorch.ones(1, 2), lazytorch.ones(1, 3), lazytorch.ones(4, 2, 3)).shape
    lazytorch.Size([1, 4])
    """
    o, i, j = weight.shape
    if input1.shape[-1] != i:
        raise op_error(
            RuntimeError,
            "bilinear",
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {i}",
        )
    if input2.shape[-1] != j:
        raise op_error(
            RuntimeError,
            "bilinear",
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {j}",
        )
    # input1 @ weight viewed as (i, o*j): one matmul, then a product with input2 summed over j
    w = S.reshape(S.permute(weight, (1, 0, 2)), (i, o * j))
    t = S.reshape(input1 @ w, (*input1.shape[:-1], o, j))  # type: ignore[operator]
    y = R.sum(t * S.unsqueeze(input2, -2), -1)  # type: ignore[operator]
    if bias is not None:
        y = y + bias  # type: ignore[operator]
    return y


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channels (dim 1) split into `groups` and interleaved: (N, g, C/g, ...) -> (N, C/g, g, ...).

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.channel_shuffle(lazytorch.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    x = tensor_arg(input, "channel_shuffle")
    if groups <= 0:
        raise op_error(
            RuntimeError,
            "channel_shuffle",
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}",
        )
    if x.ndim < 3:
        raise op_error(
            RuntimeError,
            "channel_shuffle",
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes {list(x.shape)}",
        )
    n, c, rest = x.shape[0], x.shape[1], tuple(x.shape[2:])
    if c % groups:
        raise op_error(
            RuntimeError,
            "channel_shuffle",
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.",
        )
    y = S.reshape(x, (n, groups, c // groups, *rest))
    return S.reshape(S.transpose(y, 1, 2), (n, c, *rest))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only)."""
    return _dropout(input, p, training, inplace, "dropout", feature=False, alpha=False)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (C, L) or (N, C, L) input with probability p, scale the
    rest by 1/(1-p) (training only).

    >>> import lazytorch
    >>> out = lazytorch.nn.functional.dropout1d(lazytorch.ones(2, 8, 3))
    >>> sorted(set(out.sum(-1).flatten().tolist())) in ([0.0, 6.0], [0.0], [6.0])
    True
    """
    _check_p(p, "dropout1d")
    x = tensor_arg(input, "dropout1d")
    if x.ndim not in (2, 3):
        raise op_error(
            RuntimeError,
            "dropout1d",
            f"Expected 2D or 3D input, but received a {x.ndim}D input. Note that dropout1d "
            "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
            "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).",
        )
    return _unbatched_feature_dropout(x, 3, p, training, inplace, "dropout1d")


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels (dim 1) of an (N, C, H, W) input with probability p, scale the
    rest by 1/(1-p) (training only). As torch, a 3-d input is read as (N, C, L), with a
    warning, and other ranks are accepted with a deprecation warning.

    >>> import lazytorch
    >>> lazytorch.nn.functional.dropout2d(lazytorch.ones(1, 2, 2, 2), training=False).sum()
    tensor(8.)
    """
    _check_p(p, "dropout2d")
    x = tensor_arg(input, "dropout2d")
    if x.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout(x, p, training, inplace, "dropout2d", feature=True, alpha=False)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (C, D, H, W) or (N, C, D, H, W) input with probability p,
    scale the rest by 1/(1-p) (training only).

    >>> import lazytorch
    >>> lazytorch.nn.functional.dropout3d(lazytorch.ones(2, 1, 1, 1), p=1.0).sum()
    tensor(0.)
    """
    _check_p(p, "dropout3d")
    x = tensor_arg(input, "dropout3d")
    if x.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {x.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _unbatched_feature_dropout(x, 5, p, training, inplace, "dropout3d")


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: a dropped element is set to SELU's negative saturation,
    then all are scaled and shifted so the mean and variance stay 0 and 1 (training only).

    >>> import lazytorch
    >>> lazytorch.nn.functional.alpha_dropout(lazytorch.ones(3), 0.2)
    tensor([1., 1., 1.])
    """
    return _dropout(input, p, training, inplace, "alpha_dropout", feature=False, alpha=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """alpha_dropout of whole channels (dim 1) of an input with 2 or more dims.

    >>> import lazytorch
    >>> lazytorch.nn.functional.feature_alpha_dropout(lazytorch.ones(2, 3), 0.5, True).shape
    lazytorch.Size([2, 3])
    """
    return _dropout(input, p, training, inplace, "feature_alpha_dropout", feature=True, alpha=True)


def _check_p(p: float, op: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise op_error(
            ValueError, op, f"dropout probability has to be between 0 and 1, but got {p}"
        )


def _unbatched_feature_dropout(
    x: Tensor, batched_ndim: int, p: float, training: bool, inplace: bool, op: str
) -> Tensor:
    """Channel dropout where an input one dim short of `batched_ndim` has no batch dim."""
    if x.ndim == batched_ndim:
        return _dropout(x, p, training, inplace, op, feature=True, alpha=False)
    if not training or p == 0.0:
        return x
    y = _dropout(S.unsqueeze(x, 0), p, training, False, op, feature=True, alpha=False)
    return _maybe_inplace(x, S.squeeze(y, 0), inplace)


# SELU's negative saturation, scale * alpha: where SELU sends -inf
_SELU_SATURATION = 1.7580993408473766


def _dropout(
    input: Tensor, p: float, training: bool, inplace: bool, op: str, *, feature: bool, alpha: bool
) -> Tensor:
    """torch's one dropout kernel: an independent keep/drop draw per element or, with
    `feature`, per (sample, channel); dropped units become 0 (or, with `alpha`, SELU's
    saturation) and the result is rescaled (alpha: an affine map keeping mean and variance)."""
    _check_p(p, op)
    x = tensor_arg(input, op)
    if not training or p == 0.0 or x.numel() == 0:
        return x
    if p == 1.0:
        # times a zero of x's own dtype: integers stay integers, NaN and inf become NaN
        zero = C.zeros((), dtype=x.dtype, device=x.device)
        return _maybe_inplace(x, x * zero, inplace)  # type: ignore[operator]
    if feature and x.ndim < 2:
        raise op_error(
            RuntimeError, op, "Feature dropout requires at least 2 dimensions in the input"
        )
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"result type Float can't be cast to the desired output type {x.dtype.legacy_name}",
        )
    shape = (x.shape[0], x.shape[1], *[1] * (x.ndim - 2)) if feature else tuple(x.shape)
    keep = (rand(shape, dtype=x.dtype, device=x.device) >= p).to(x.dtype)  # type: ignore[operator,attr-defined]
    if alpha:
        a = 1.0 / math.sqrt((_SELU_SATURATION**2 * p + 1) * (1 - p))
        shift = (keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p
        return _maybe_inplace(x, x * (keep * a) + shift, inplace)  # type: ignore[operator]
    # Multiply by the scaled mask (not where(keep, x, 0)), as torch: a dropped NaN or inf
    # stays NaN, like any value times zero.
    return _maybe_inplace(x, x * (keep * (1.0 / (1.0 - p))), inplace)  # type: ignore[operator]


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    t = tensor_arg(tensor, "one_hot")
    if t.dtype is not dt.int64:
        raise op_error(
            RuntimeError,
            "one_hot",
            "one_hot is only applicable to index tensor of type LongTensor.",
        )
    if num_classes == -1:
        if t.numel() == 0:
            raise op_error(
                RuntimeError, "one_hot", "Can not infer total number of classes from empty tensor."
            )
        num_classes = int(R.amax(t).item()) + 1
    elif num_classes < 0:
        raise op_error(RuntimeError, "one_hot", "num_classes should be positive")
    # A scatter (not t == arange) so that a class outside [0, num_classes) raises when the
    # values are computed, as torch's check does; the values are unknown while recording.
    zeros = C.zeros((*t.shape, num_classes), dtype=dt.int64, device=t.device)
    return IX.scatter(zeros, -1, S.unsqueeze(t, -1), 1)  # type: ignore[no-any-return]
