"""linear, embedding, dropout, one_hot."""

from __future__ import annotations

import lazytorch as lt
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _maybe_inplace
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops.elementwise import _tensor_arg
from lazytorch.tensor import Tensor


# -- linear, embedding, dropout -------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    x, w = _tensor_arg(input, "linear"), _tensor_arg(weight, "linear", "weight")
    if w.ndim not in (1, 2):
        raise op_error(RuntimeError, "linear", f"weight must be 1-D or 2-D, got {w.ndim}-D")
    if x.ndim == 2 and w.ndim == 1 and bias is not None:
        # torch routes a 2-d input with a bias through addmm, which wants a matrix weight
        raise op_error(RuntimeError, "linear", "mat2 must be a matrix, got 1-D tensor")
    y = lt.matmul(x, S.t(w) if w.ndim == 2 else w)
    if bias is not None:
        y = y + bias  # type: ignore[operator]
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
    idx = _tensor_arg(input, "embedding")
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
        with lt.no_grad():
            rows = lt.index_select(weight, 0, flat)
            norms = lt.linalg.vector_norm(rows, norm_type, 1, keepdim=True)
            scale = E.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)  # type: ignore[operator]
            weight.index_put_((flat,), (rows * scale).to(weight.dtype))  # type: ignore[attr-defined,operator]
    rows = lt.index_select(weight, 0, flat)
    if padding_idx is not None and rows.requires_grad:
        # torch's backward skips the padding row: the rows looked up there take no gradient
        keep = S.unsqueeze(flat != padding_idx % weight.shape[0], -1)  # type: ignore[operator]
        rows = E.where(keep, rows, rows.detach())
    return S.reshape(rows, (*idx.shape, weight.shape[-1]))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only)."""
    if not 0.0 <= p <= 1.0:
        raise op_error(
            ValueError, "dropout", f"dropout probability has to be between 0 and 1, but got {p}"
        )
    x = _tensor_arg(input, "dropout")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        # times a zero of x's own dtype: integers stay integers, NaN and inf become NaN
        zero = lt.zeros((), dtype=x.dtype, device=x.device)
        return _maybe_inplace(x, x * zero, inplace)  # type: ignore[operator]
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "dropout",
            f"result type Float can't be cast to the desired output type {x.dtype.legacy_name}",
        )
    keep = lt.rand(x.shape, dtype=x.dtype, device=x.device) >= p  # type: ignore[operator]
    # Multiply by the scaled mask (not where(keep, x, 0)), as torch: a dropped NaN or inf
    # stays NaN, like any value times zero.
    mask = keep.to(x.dtype) * (1.0 / (1.0 - p))  # type: ignore[attr-defined]
    return _maybe_inplace(x, x * mask, inplace)  # type: ignore[operator]


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    t = _tensor_arg(tensor, "one_hot")
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
    zeros = lt.zeros((*t.shape, num_classes), dtype=dt.int64, device=t.device)
    return lt.scatter(zeros, -1, S.unsqueeze(t, -1), 1)  # type: ignore[no-any-return]
