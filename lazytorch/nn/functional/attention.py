"""scaled_dot_product_attention and multi_head_attention_forward (nn.MultiheadAttention's
math), with torch's mask conventions."""

from __future__ import annotations

import math
import warnings
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional.activation import softmax
from lazytorch.nn.functional.layers import dropout, linear
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import indexing as IX
from lazytorch.ops import linalg as LA
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops.autocast import autocast_op, surface
from lazytorch.ops.pad import pad
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
    if scores.shape[-1] == 0:
        return p  # no keys: nothing to attend to, and no row to zero
    # A row is all -inf exactly when its max is -inf (a NaN row's max is NaN). The max is
    # the one softmax shifts by, so the test costs no pass over the scores of its own.
    top = R.amax(scores.detach(), -1, keepdim=True)
    return E.where(top == -math.inf, 0.0, p)  # type: ignore[no-any-return,operator]


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
    low = q.dtype if q.dtype in (dt.bfloat16, dt.float16) else None
    if low is not None and k.dtype is low and v.dtype is low:
        # torch's CPU kernels compute a bfloat16/float16 attention in float32 and round
        # the output once; its flash kernel (no dropout, 4-d inputs) also rounds the
        # unnormalized probabilities to the input dtype before their product with v
        q, k, v = q.float(), k.float(), v.float()
        if attn_mask is not None and attn_mask.dtype is not dt.bool_:
            attn_mask = attn_mask.float()
    scores = LA.matmul(q, S.transpose(k, -2, -1)) * s  # type: ignore[operator]
    if is_causal:
        causal = S.tril(C.ones(L, Skv, dtype=dt.bool_, device=q.device))
        scores = IX.masked_fill(scores, ~causal, -math.inf)  # type: ignore[operator]
    if attn_mask is not None:
        if attn_mask.dtype is dt.bool_:
            scores = IX.masked_fill(scores, ~attn_mask, -math.inf)  # type: ignore[operator]
        else:
            scores = scores + attn_mask  # type: ignore[operator]
    if low is not None and q.dtype is not low and dropout_p == 0.0 and q.ndim == 4:
        top = R.amax(scores, -1, keepdim=True).detach()
        top = E.where(E.isfinite(top), top, 0.0)  # a row with no key: every exp is 0
        e = E.exp(scores - top)  # type: ignore[operator]
        total = R.sum(e, -1, keepdim=True)
        out = LA.matmul(e.to(low).float(), v) / total  # type: ignore[operator]
        return E.where(total > 0, out, 0.0).to(low)  # type: ignore[operator, no-any-return]
    p = _safe_softmax(scores)
    if dropout_p > 0.0:
        p = dropout(p, dropout_p)
    out = LA.matmul(p, v)
    return out if low is None or out.dtype is low else out.to(low)


# -- multi-head attention ------------------------------------------------------------------
def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or lazytorch.Tensor")


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask (True = masked out) as an additive float mask of `target_type` (0 or
    -inf); a float mask passes through. Other dtypes are an error, as in torch."""
    if mask is None:
        return None
    if mask.dtype is not dt.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} "
            "is deprecated. Use same type for both instead.",
            stacklevel=2,
        )
    if mask.dtype.is_floating_point:
        return mask
    return IX.masked_fill(C.zeros_like(mask, dtype=target_type), mask, -math.inf)


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Check the ranks of the inputs and masks; True for batched (3-D) input."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


@surface
def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """Project q, k, v with the (3E, E) packed weight: one matmul for self-attention (q, k,
    v the same tensor), two for encoder-decoder attention (k is v), three otherwise."""
    E = q.size(-1)
    if k is v and q is k:
        proj = S.unflatten(_linear(q, w, b), -1, (3, E))
        return S.unbind(proj, -2)  # type: ignore[return-value]
    if k is v:
        w_q, w_kv = S.split(w, [E, 2 * E])
        b_q, b_kv = (None, None) if b is None else S.split(b, [E, 2 * E])
        k_p, v_p = S.unbind(S.unflatten(_linear(k, w_kv, b_kv), -1, (2, E)), -2)
        return _linear(q, w_q, b_q), k_p, v_p
    w_q, w_k, w_v = S.chunk(w, 3)
    b_q, b_k, b_v = (None, None, None) if b is None else S.chunk(b, 3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


@surface
def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    b_q: Tensor | None,
    b_k: Tensor | None,
    b_v: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Project q, k, v with separate weights (kdim/vdim different from embed_dim)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (
        ("query", w_q, (Eq, Eq)),
        ("key", w_k, (Eq, Ek)),
        ("value", w_v, (Eq, Ev)),
    ):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


@surface
def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """nn.MultiheadAttention's forward on sequence-first input: (L, N, E) query, (S, N, E)
    key and value (or unbatched (L, E), (S, E)). Returns the output (L, N, E) and, with
    `need_weights`, the attention weights (N, L, S) averaged over heads or (N, H, L, S).

    Masks follow torch: bool True (or a float added to the scores) masks out a position;
    `attn_mask` is (L, S) or (N*H, L, S), `key_padding_mask` (N, S). With `need_weights`
    the weights come from a plain softmax (a fully masked row is NaN); without, from
    scaled_dot_product_attention (a fully masked row gives 0), as in torch.

    >>> import lazytorch
    >>> E, H = 4, 2
    >>> w_in, w_out = lazytorch.randn(3 * E, E), lazytorch.randn(E, E)
    >>> x = lazytorch.randn(5, 3, E)
    >>> out, weights = multi_head_attention_forward(
    ...     x, x, x, E, H, w_in, None, None, None, False, 0.0, w_out, None)
    >>> tuple(out.shape), tuple(weights.shape)
    ((5, 3, 4), (3, 5, 5))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # run as a batch of one; the batch dim is squeezed off the results at the end
        same_kv, same_qk = key is value, query is key
        query = S.unsqueeze(query, 1)
        key = query if same_qk else S.unsqueeze(key, 1)
        value = key if same_kv else S.unsqueeze(value, 1)
        if key_padding_mask is not None:
            key_padding_mask = S.unsqueeze(key_padding_mask, 0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. "
            "You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint alone decides: attention runs causal, the mask is not used
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            # the merged mask is no longer the causal one
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else S.chunk(in_proj_bias, 3)
        q, k, v = _in_projection(
            query,
            key,
            value,
            q_proj_weight,
            k_proj_weight,
            v_proj_weight,
            b_q,
            b_k,
            b_v,  # type: ignore[arg-type]
        )

    # the attention mask as (1 or N*H, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = S.unsqueeze(attn_mask, 0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # learned bias key/value appended to the source sequence
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = S.cat([k, bias_k.repeat(1, bsz, 1)])
        v = S.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads into the batch: (N*H, L or S, head_dim)
    q = S.transpose(q.reshape(tgt_len, bsz * num_heads, head_dim), 0, 1)
    k = _static_or_heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _static_or_heads(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:
        zeros = C.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = S.cat([k, zeros], 1)
        v = S.cat([v, zeros.to(v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        kpm = S.expand(key_padding_mask.reshape(bsz, 1, 1, src_len), (bsz, num_heads, 1, src_len))
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm  # type: ignore[operator]

    if not training:
        dropout_p = 0.0

    if need_weights:
        # scores and weights by hand, in torch's order (q scaled first, mask added by baddbmm)
        q_scaled = q * math.sqrt(1.0 / float(head_dim))  # type: ignore[operator]
        if attn_mask is not None:
            weights = _baddbmm(attn_mask, q_scaled, S.transpose(k, -2, -1))
        else:
            weights = _bmm(q_scaled, S.transpose(k, -2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = _bmm(weights, v)
        out = S.transpose(out, 0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.shape[-1])  # out_proj may change the width
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = S.squeeze(out, 1), S.squeeze(weights, 0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = S.unsqueeze(attn_mask, 0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = _sdpa(q, k, v, attn_mask, dropout_p, is_causal)
    out = S.permute(out, (2, 0, 1, 3)).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    # out_proj may change the width (CLIP's AttentionPool2d projects to its output_dim)
    out = out.reshape(tgt_len, bsz, out.shape[-1])
    if not is_batched:
        out = S.squeeze(out, 1)
    return out, None


def _static_or_heads(
    x: Tensor, static: Tensor | None, name: str, batch_heads: int, head_dim: int
) -> Tensor:
    """The projected key (or value) split into heads, (N*H, S, head_dim), or the given static
    key (value) of that shape instead."""
    if static is None:
        return S.transpose(x.reshape(x.shape[0], batch_heads, head_dim), 0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


# torch's multi_head_attention_forward is Python calling public ops, which autocast sees; the
# functions marked @surface above call them through their autocast wrappers, as the user would
_linear = autocast_op(linear, "linear")
_baddbmm = autocast_op(LA.baddbmm, "baddbmm")
_bmm = autocast_op(LA.bmm, "bmm")
_softmax = autocast_op(softmax, "softmax")
_sdpa = autocast_op(scaled_dot_product_attention, "scaled_dot_product_attention")
