"""Activation modules: thin wrappers that hold the settings and call `nn.functional`."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.linear import NonDynamicallyQuantizableLinear
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.ops import shape as S
from lazytorch.tensor import Tensor

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "MultiheadAttention",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


class _Inplace(Module):
    """An elementwise activation with an ``inplace`` flag (printed only when set)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """max(x, 0).

    >>> import lazytorch
    >>> lazytorch.nn.ReLU()(lazytorch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


class ReLU6(_Inplace):
    """min(max(x, 0), 6).

    >>> import lazytorch
    >>> lazytorch.nn.ReLU6()(lazytorch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input, inplace=self.inplace)


class SiLU(_Inplace):
    """x * sigmoid(x).

    >>> import lazytorch
    >>> lazytorch.nn.SiLU()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x)).

    >>> import lazytorch
    >>> lazytorch.nn.Mish()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6.

    >>> import lazytorch
    >>> lazytorch.nn.Hardswish()(lazytorch.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    >>> import lazytorch
    >>> lazytorch.nn.Hardsigmoid()(lazytorch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, inplace=self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with the self-normalizing constants.

    >>> import lazytorch
    >>> lazytorch.nn.SELU()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, inplace=self.inplace)


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or ``'tanh'``.

    >>> import lazytorch
    >>> lazytorch.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class _Stateless(Module):
    """An activation with no settings: ``forward`` is one functional call."""

    _fn: Any = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input)  # type: ignore[no-any-return]


class Tanh(_Stateless):
    """tanh(x).

    >>> import lazytorch
    >>> lazytorch.nn.Tanh()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.tanh)


class Sigmoid(_Stateless):
    """1 / (1 + exp(-x)).

    >>> import lazytorch
    >>> lazytorch.nn.Sigmoid()(lazytorch.tensor([0.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.sigmoid)


class LogSigmoid(_Stateless):
    """log(sigmoid(x)), computed stably.

    >>> import lazytorch
    >>> lazytorch.nn.LogSigmoid()(lazytorch.tensor([0.0]))
    tensor([-0.6931])
    """

    _fn = staticmethod(F.logsigmoid)


class Softsign(_Stateless):
    """x / (1 + |x|).

    >>> import lazytorch
    >>> lazytorch.nn.Softsign()(lazytorch.tensor([1.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.softsign)


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x.

    >>> import lazytorch
    >>> lazytorch.nn.LeakyReLU(0.1)(lazytorch.tensor([-1.0, 2.0]))
    tensor([-0.1000,  2.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import lazytorch
    >>> lazytorch.nn.ELU()
    ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import lazytorch
    >>> lazytorch.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class Hardtanh(Module):
    """clamp(x, min_val, max_val).

    >>> import lazytorch
    >>> lazytorch.nn.Hardtanh(-2.0, 2.0)(lazytorch.tensor([-3.0, 3.0]))
    tensor([-2.,  2.])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`.

    >>> import lazytorch
    >>> lazytorch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _SoftmaxBase(Module):
    """Softmax, Softmin and LogSoftmax: a `dim` (None picks torch's legacy default)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.Softmax(dim=1)(lazytorch.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)


class Softmin(_SoftmaxBase):
    """softmax(-x) along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.Softmin(dim=0)(lazytorch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along `dim`, computed stably.

    >>> import lazytorch
    >>> lazytorch.nn.LogSoftmax(dim=0)(lazytorch.zeros(2))
    tensor([-0.6931, -0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(q kᵀ / sqrt(head_dim) + mask) v`` per head, between
    torch's packed input projection (``in_proj_weight`` (3E, E), or ``q/k/v_proj_weight``
    when `kdim`/`vdim` differ from `embed_dim`) and ``out_proj``.

    Inputs are (L, N, E) (or (N, L, E) with `batch_first`, or unbatched (L, E)). Returns
    ``(output, weights)``; weights are (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, or None with ``need_weights=False``. Masks are torch's:
    bool True (or a float added to the scores) masks a position out.

    Parameters are initialized as torch does: xavier_uniform_ for the projection weights,
    zeros for the projection biases, xavier_normal_ for `add_bias_kv`'s ``bias_k``/``bias_v``
    (``out_proj.weight`` keeps Linear's default).

    >>> import lazytorch
    >>> mha = lazytorch.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = lazytorch.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> tuple(out.shape), tuple(weights.shape)
    ((3, 5, 8), (3, 5, 5))
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0,"
                f" got embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(C.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(C.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(C.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(C.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(C.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(C.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(C.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            F._none_or_dtype(attn_mask),
            "attn_mask",
            query.dtype,
        )
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if self.batch_first and is_batched:
            # to sequence-first, keeping which of query, key, value are the same tensor
            # (self-attention projects them with one matmul)
            if key is value:
                if query is key:
                    query = key = value = S.transpose(query, 1, 0)
                else:
                    query, key = (S.transpose(x, 1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (S.transpose(x, 1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {
                "use_separate_proj_weight": True,
                "q_proj_weight": self.q_proj_weight,
                "k_proj_weight": self.k_proj_weight,
                "v_proj_weight": self.v_proj_weight,
            }
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and is_batched:
            out = S.transpose(out, 1, 0)
        return out, weights

    def merge_masks(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor
    ) -> tuple[Tensor | None, int | None]:
        """Combine an (L, L) or (N*H, L, L) attention mask and an (N, L) padding mask for a
        batch-first `query` as torch's fast path does: returns ``(mask, mask_type)`` with
        type 1 for the padding mask alone, 2 for a (N, H, L, L) merged mask."""
        mask_type: int | None = None
        merged: Tensor | None = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = S.expand(
                    attn_mask.view(1, 1, seq_len, seq_len),
                    (batch_size, self.num_heads, seq_len, seq_len),
                )
            if key_padding_mask is not None:
                kpm = S.expand(
                    key_padding_mask.view(batch_size, 1, 1, seq_len),
                    (batch_size, self.num_heads, 1, seq_len),
                )
                merged = merged + kpm  # type: ignore[operator]
        return merged, mask_type


class Threshold(Module):
    """`value` where x <= `threshold`, else x.

    >>> import lazytorch
    >>> lazytorch.nn.Threshold(0.5, 9.0)(lazytorch.tensor([0.0, 1.0]))
    tensor([9., 1.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class Hardshrink(Module):
    """0 inside [-lambd, lambd], x outside.

    >>> import lazytorch
    >>> lazytorch.nn.Hardshrink()(lazytorch.tensor([0.25, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x -+ lambd outside [-lambd, lambd], 0 inside.

    >>> import lazytorch
    >>> lazytorch.nn.Softshrink()(lazytorch.tensor([0.25, 1.0]))
    tensor([0.0000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Tanhshrink(_Stateless):
    """x - tanh(x).

    >>> import lazytorch
    >>> lazytorch.nn.Tanhshrink()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.tanhshrink)


class GLU(Module):
    """The gated linear unit: a * sigmoid(b), a and b the halves of the input along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.GLU()(lazytorch.zeros(2, 4)).shape
    lazytorch.Size([2, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """max(0, x) + a * min(0, x), `a` learned: one for all channels or one per channel.

    >>> import lazytorch
    >>> m = lazytorch.nn.PReLU()
    >>> m(lazytorch.tensor([-4.0, 2.0])).tolist(), [tuple(p.shape) for p in m.parameters()]
    ([-1.0, 2.0], [(1,)])
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(C.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope set to `init`."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: negative slopes drawn from U(lower, upper) in training, their
    mean in evaluation.

    >>> import lazytorch
    >>> lazytorch.nn.RReLU(0.1, 0.3).eval()(lazytorch.tensor([-1.0, 1.0]))
    tensor([-0.2000,  1.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class Softmax2d(Module):
    """softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input.

    >>> import lazytorch
    >>> lazytorch.nn.Softmax2d()(lazytorch.zeros(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
