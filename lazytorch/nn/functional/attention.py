"""scaled_dot_product_attention."""

from __future__ import annotations

import math

import lazytorch as lt
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional.activation import softmax
from lazytorch.nn.functional.layers import dropout
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.tensor import Tensor


def _repeat_heads(x: Tensor, n: int) -> Tensor:
    """(..., H, S, E) -> (..., H*n, S, E), each head repeated n times in a row, as
    repeat_interleave(n, dim=-3) does."""
    *batch, h, s, e = x.shape
    y = S.expand(S.unsqueeze(x, -3), (*batch, h, n, s, e))
    return S.reshape(y, (*batch, h * n, s, e))


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, but 0 (not NaN) for rows that are entirely -inf, as torch's
    attention does for queries that may attend to no key."""
    p = softmax(scores, -1)
    dead = R.all(scores == -math.inf, -1, keepdim=True)  # type: ignore[operator]
    return E.where(dead, 0.0, p)  # type: ignore[no-any-return]


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q kᵀ · scale + mask) v, with an optional causal mask (combined with attn_mask,
    as torch does), grouped-query heads and dropout."""
    q, k, v = query, key, value
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3:
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hq % hk or hq % hv:
            raise op_error(
                RuntimeError,
                "scaled_dot_product_attention",
                "Number of heads in key and value must divide the number of heads in query",
            )
        k, v = _repeat_heads(k, hq // hk), _repeat_heads(v, hq // hv)
    L, Skv = q.shape[-2], k.shape[-2]
    s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = lt.matmul(q, S.transpose(k, -2, -1)) * s  # type: ignore[operator]
    if is_causal:
        causal = S.tril(lt.ones(L, Skv, dtype=dt.bool_, device=q.device))
        scores = lt.masked_fill(scores, ~causal, -math.inf)  # type: ignore[operator]
    if attn_mask is not None:
        if attn_mask.dtype is dt.bool_:
            scores = lt.masked_fill(scores, ~attn_mask, -math.inf)  # type: ignore[operator]
        else:
            scores = scores + attn_mask  # type: ignore[operator]
    p = _safe_softmax(scores)
    if dropout_p > 0.0:
        p = dropout(p, dropout_p)
    return lt.matmul(p, v)
