"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer): torch's layers, with
its submodule names (``self_attn``, ``linear1``, ``norm1``, ``dropout1``, ...) so a torch
``state_dict`` loads unchanged and subclasses that reach into them work.

Torch runs these through fused "fast path" kernels in inference; the values are the same as
its Python path, which is what is written here, with one visible exception reproduced on
purpose: `TransformerEncoder` with a padding mask in inference gives zeros at the padded
positions (torch runs it on nested tensors and pads the result back with zeros).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from lazytorch.autograd.grad_mode import is_grad_enabled
from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.activation import GELU, MultiheadAttention, ReLU
from lazytorch.nn.modules.container import ModuleList
from lazytorch.nn.modules.dropout import Dropout
from lazytorch.nn.modules.linear import Linear
from lazytorch.nn.modules.module import Module
from lazytorch.nn.modules.normalization import LayerNorm
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops.creation import full, zeros
from lazytorch.ops.elementwise import where
from lazytorch.ops.shape import triu
from lazytorch.tensor import Tensor

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """(sz, sz) float mask: 0 on and below the diagonal, -inf above (position i attends to
    positions <= i)."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None) -> bool:
    """The is_causal hint passed to the layers: True only when the caller said so.

    Torch, given ``is_causal=None`` and a mask, compares the mask with the causal one, which
    here would read the mask's values (a materialization). The answer only chooses between
    the mask and an equal causal mask, so skipping the comparison gives the same values."""
    return is_causal is True


def _activation_kind(activation: Callable[[Tensor], Tensor]) -> int:
    """torch's ``activation_relu_or_gelu`` flag: 1 for relu, 2 for gelu, 0 otherwise."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


def _add_feed_forward_and_norms(
    layer: Module,
    blocks: int,
    d_model: int,
    dim_feedforward: int,
    dropout: float,
    eps: float,
    bias: bool,
    factory: dict[str, Any],
) -> None:
    """Register a layer's feed-forward parts (linear1, dropout, linear2), then one LayerNorm
    and one Dropout per residual block (norm1.., dropout1..), in torch's order, which is the
    order of the state_dict keys."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    for i in range(1, blocks + 1):
        layer.add_module(f"norm{i}", LayerNorm(d_model, eps=eps, bias=bias, **factory))
    for i in range(1, blocks + 1):
        layer.add_module(f"dropout{i}", Dropout(dropout))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with
    dropout and a residual connection, and LayerNorm after each (``norm_first=False``, the
    original paper) or before each (``norm_first=True``).

    >>> import lazytorch
    >>> layer = lazytorch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(lazytorch.randn(5, 3, 8)).shape
    lazytorch.Size([5, 3, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory
        )
        _add_feed_forward_and_norms(
            self, 2, d_model, dim_feedforward, dropout, layer_norm_eps, bias, factory
        )
        self.norm_first = norm_first
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _activation_kind(activation)
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            F._none_or_dtype(src_mask),
            "src_mask",
            src.dtype,
        )
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)  # type: ignore[no-any-return]


class TransformerDecoderLayer(Module):
    """Self-attention on the target, attention from the target to the encoder's `memory`,
    then a feed-forward block; each with dropout, a residual connection and LayerNorm
    (after each block, or before with ``norm_first=True``).

    >>> import lazytorch
    >>> layer = lazytorch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(lazytorch.randn(3, 4, 8), lazytorch.randn(3, 6, 8)).shape
    lazytorch.Size([3, 4, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        _add_feed_forward_and_norms(
            self, 3, d_model, dim_feedforward, dropout, layer_norm_eps, bias, factory
        )
        self.norm_first = norm_first
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)  # type: ignore[no-any-return]


def _why_no_nested_tensor(layer: Module) -> str:
    """Why torch would not run an encoder built from `layer` on nested tensors ('' if it
    would); the reasons are torch's, word for word, for its warning."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (
            f"{name}.self_attn.batch_first was not True"
            "(use batch_first for better inference performance)"
        )
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _left_aligned(not_padding: Tensor) -> Tensor:
    """Whether every row of an (N, S) bool mask is some Trues then only Falses: torch's test
    that padding sits at the end, as a lazy bool scalar (nothing is read)."""
    gap_then_token = not_padding[:, 1:] & ~not_padding[:, :-1]  # type: ignore[operator]
    return ~R.any(gap_then_token)  # type: ignore[operator,no-any-return]


class TransformerEncoder(Module):
    """`num_layers` deep copies of `encoder_layer` applied in turn, then `norm` if given.

    ``enable_nested_tensor`` is accepted (torch's warning and ``use_nested_tensor`` attribute
    included) but no nested tensors are built; where torch would use them (inference with a
    padding mask, batch_first layers) padded positions of the output are zeros, as in torch.

    >>> import lazytorch
    >>> layer = lazytorch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> encoder = lazytorch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    >>> mask = lazytorch.nn.Transformer.generate_square_subsequent_mask(5)
    >>> encoder(lazytorch.randn(5, 3, 8), mask=mask).shape
    lazytorch.Size([5, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            F._none_or_dtype(mask),
            "mask",
            src.dtype,
        )
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, False)
        causal = _detect_is_causal_mask(mask, is_causal)
        output = src
        for mod in self.layers:
            output = mod(
                output, src_mask=mask, is_causal=causal, src_key_padding_mask=src_key_padding_mask
            )
        if src_key_padding_mask is not None and self._torch_uses_nested_tensor(src, mask):
            output = self._zero_padded(output, src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _torch_uses_nested_tensor(self, src: Tensor, mask: Tensor | None) -> bool:
        """Whether torch would run this call on nested tensors (its sparsity fast path),
        leaving aside the data-dependent left-alignment check (see `_zero_padded`)."""
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training:
            return False
        if src.dim() != 3 or mask is not None:
            return False
        weights = (
            src,
            first.self_attn.in_proj_weight,
            first.self_attn.in_proj_bias,
            first.self_attn.out_proj.weight,
            first.self_attn.out_proj.bias,
            first.norm1.weight,
            first.norm1.bias,
            first.norm2.weight,
            first.norm2.bias,
            first.linear1.weight,
            first.linear1.bias,
            first.linear2.weight,
            first.linear2.bias,
        )
        return not (is_grad_enabled() and any(w.requires_grad for w in weights))

    def _zero_padded(self, output: Tensor, key_padding_mask: Tensor) -> Tensor:
        """Zeros where `key_padding_mask` marks padding, as torch's nested-tensor round trip
        gives; with `mask_check`, torch takes that path only when the padding of every row is
        at its end, so the zeroing is conditioned on that (lazily)."""
        not_padding = key_padding_mask == 0  # torch: the float mask's logical_not()
        padded = S.unsqueeze(~not_padding, -1)  # type: ignore[operator]
        if getattr(self, "mask_check", True):
            padded = padded & _left_aligned(not_padding)  # type: ignore[operator]
        zero = zeros((), dtype=output.dtype, device=output.device)
        return where(padded, zero, output)


class TransformerDecoder(Module):
    """`num_layers` deep copies of `decoder_layer` applied in turn to the target (each
    attending to `memory`), then `norm` if given.

    >>> import lazytorch
    >>> layer = lazytorch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> decoder = lazytorch.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(lazytorch.randn(4, 3, 8), lazytorch.randn(6, 3, 8)).shape
    lazytorch.Size([4, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal)
        output = tgt
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": a TransformerEncoder and a
    TransformerDecoder (each with a final LayerNorm), or the `custom_encoder` and
    `custom_decoder` given. Matrices are re-initialized with xavier_uniform_, as in torch.

    >>> import lazytorch
    >>> model = lazytorch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                                  num_decoder_layers=1, dim_feedforward=16)
    >>> src, tgt = lazytorch.randn(6, 3, 8), lazytorch.randn(4, 3, 8)
    >>> tgt_mask = model.generate_square_subsequent_mask(4)
    >>> model(src, tgt, tgt_mask=tgt_mask).shape
    lazytorch.Size([4, 3, 8])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """A causal mask for a sequence of length `sz`: 0 where position i may attend to j
        (j <= i), -inf above the diagonal.

        >>> import lazytorch
        >>> lazytorch.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        """xavier_uniform_ for every parameter with more than one dimension."""
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
