"""nn.MultiheadAttention and the Transformer modules against torch.

Each case builds the module on both sides from one constructor ``ctor(t)`` (``t`` torch or
lazytorch), copies torch's weights into lazytorch with ``load_state_dict``, runs both on the
same inputs and masks, and compares the outputs (attention weights included) and the
gradients of every parameter and float input. The loss is a fixed random weighting of the
outputs: a plain sum would give LayerNorm'd outputs zero gradients.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt

pytestmark = pytest.mark.filterwarnings(
    "ignore:enable_nested_tensor is True:UserWarning",  # compared with torch's in a test
    "ignore:The PyTorch API of nested tensors:UserWarning",
    "ignore:Support for mismatched:UserWarning",  # cases mix bool and float masks on purpose
)

TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
GRAD_TOL = {"float32": dict(rtol=1e-4, atol=5e-5), "float64": dict(rtol=1e-9, atol=1e-10)}
E, H = 8, 2  # embed_dim and heads of every case: programs of one shape family
L, S, N = 4, 5, 3  # target length, source length, batch


@pytest.fixture(autouse=True)
def _interpreter():
    # Many small distinct programs: the NumPy interpreter runs them without a compile each
    # (test_word_language_model_subclass_trains runs on the default backend).
    with lt.backend("interpreter"):
        yield


def lt_from_torch(x: torch.Tensor) -> lt.Tensor:
    return lt.tensor(x.detach().numpy().copy())


def load_torch_weights(ours: lt.nn.Module, theirs: torch.nn.Module) -> None:
    ours.load_state_dict({k: lt_from_torch(v) for k, v in theirs.state_dict().items()})


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x.detach().numpy()  # type: ignore[no-any-return]


# -- inputs ------------------------------------------------------------------------------------
_rng = np.random.default_rng(0)
X_SEQ = _rng.standard_normal((L, N, E))  # (L, N, E) queries / targets
M_SEQ = _rng.standard_normal((S, N, E))  # (S, N, E) keys / memory
CAUSAL_BOOL = np.triu(np.ones((L, L), bool), 1)  # True above the diagonal: masked
CAUSAL_FLOAT = np.where(CAUSAL_BOOL, -np.inf, 0.0)
KPM_BOOL = np.zeros((N, L), bool)
KPM_BOOL[0, -1] = KPM_BOOL[2, 1:3] = True  # no row fully masked
KPM_FLOAT = np.where(KPM_BOOL, -np.inf, 0.0)
MEM_KPM = np.zeros((N, S), bool)
MEM_KPM[1, -2:] = True
SOFT_MASK = _rng.standard_normal((L, S))  # float masks with finite values
SOFT_SRC_MASK = _rng.standard_normal((S, S))
MASK_3D = _rng.random((N * H, L, L)) < 0.3
MASK_3D[..., 0] = False  # every query may attend to key 0


def seq(a: np.ndarray, batch_first: bool) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(1, 0, 2)) if batch_first else a


@dataclass
class Case:
    """A module, how to call it, and its inputs: `arrays` are floats (they get gradients
    unless named in `no_grad`) or bool masks; `call(m, **tensors)` returns a tensor or a
    tuple of tensors/None."""

    ctor: Callable[[Any], Any]
    call: Callable[..., Any]
    arrays: dict[str, np.ndarray]
    no_grad: tuple[str, ...] = ()


def mha(bf: bool = False, **kw: Any) -> Callable[[Any], Any]:
    return lambda t: t.nn.MultiheadAttention(E, H, batch_first=bf, **kw)


def self_attn(**kw: Any) -> Callable[..., Any]:
    return lambda m, x, **masks: m(x, x, x, **kw, **masks)


def cross_attn(**kw: Any) -> Callable[..., Any]:
    return lambda m, x, mem, **masks: m(x, mem, mem, **kw, **masks)


def enc_layer(bf: bool = False, nf: bool = False, **kw: Any) -> Callable[[Any], Any]:
    return lambda t: t.nn.TransformerEncoderLayer(
        E, H, 16, dropout=0.0, batch_first=bf, norm_first=nf, **kw
    )


def dec_layer(bf: bool = False, nf: bool = False, **kw: Any) -> Callable[[Any], Any]:
    return lambda t: t.nn.TransformerDecoderLayer(
        E, H, 16, dropout=0.0, batch_first=bf, norm_first=nf, **kw
    )


CASES: dict[str, Case] = {
    # MultiheadAttention, self-attention
    **{
        f"mha_self_bf{bf}_weights{nw}_avg{avg}": Case(
            mha(bf),
            self_attn(need_weights=nw, average_attn_weights=avg),
            {"x": seq(X_SEQ, bf)},
        )
        for bf in (False, True)
        for nw, avg in ((True, True), (True, False), (False, True))
    },
    **{
        f"mha_mask_{kind}_weights{nw}": Case(
            mha(True),
            self_attn(need_weights=nw),
            {"x": seq(X_SEQ, True), **masks},
            no_grad=("attn_mask", "key_padding_mask"),
        )
        for kind, masks in {
            "attn_bool": {"attn_mask": CAUSAL_BOOL},
            "attn_float": {"attn_mask": CAUSAL_FLOAT},
            "attn_3d": {"attn_mask": MASK_3D},
            "kpm_bool": {"key_padding_mask": KPM_BOOL},
            "kpm_float": {"key_padding_mask": KPM_FLOAT},
            "both_bool": {"attn_mask": CAUSAL_BOOL, "key_padding_mask": KPM_BOOL},
            "both_float": {"attn_mask": CAUSAL_FLOAT, "key_padding_mask": KPM_FLOAT},
        }.items()
        for nw in (True, False)
    },
    "mha_is_causal": Case(
        mha(),
        self_attn(need_weights=False, is_causal=True),
        {"x": X_SEQ, "attn_mask": CAUSAL_FLOAT},
        no_grad=("attn_mask",),
    ),
    "mha_is_causal_kpm": Case(
        mha(),
        self_attn(is_causal=True),
        {"x": X_SEQ, "attn_mask": CAUSAL_BOOL, "key_padding_mask": KPM_BOOL},
    ),
    "mha_unbatched": Case(
        mha(True),  # batch_first is ignored for unbatched input
        self_attn(average_attn_weights=False),
        {"x": X_SEQ[:, 0], "attn_mask": CAUSAL_BOOL, "key_padding_mask": KPM_BOOL[2]},
    ),
    "mha_unbatched_sdpa": Case(
        mha(), self_attn(need_weights=False), {"x": X_SEQ[:, 1], "attn_mask": CAUSAL_FLOAT}
    ),
    # MultiheadAttention, attention to another sequence
    **{
        f"mha_cross_weights{nw}": Case(
            mha(),
            cross_attn(need_weights=nw),
            # a finite float mask is differentiable: its gradient is compared too
            {"x": X_SEQ, "mem": M_SEQ, "attn_mask": SOFT_MASK, "key_padding_mask": MEM_KPM},
        )
        for nw in (True, False)
    },
    "mha_kdim_vdim": Case(
        mha(True, kdim=3, vdim=6),
        lambda m, x, k, v: m(x, k, v),
        {
            "x": seq(X_SEQ, True),
            "k": _rng.standard_normal((N, S, 3)),
            "v": _rng.standard_normal((N, S, 6)),
        },
    ),
    "mha_bias_kv_zero_attn": Case(
        mha(add_bias_kv=True, add_zero_attn=True),
        cross_attn(),
        {"x": X_SEQ, "mem": M_SEQ, "attn_mask": SOFT_MASK, "key_padding_mask": MEM_KPM},
        no_grad=("attn_mask",),
    ),
    "mha_no_bias_sdpa": Case(
        mha(bias=False, add_zero_attn=True),
        cross_attn(need_weights=False),
        {"x": X_SEQ, "mem": M_SEQ, "key_padding_mask": MEM_KPM},
    ),
    # encoder layer
    **{
        f"enc_layer_bf{bf}_nf{nf}": Case(
            enc_layer(bf, nf),
            lambda m, x, **masks: m(x, **masks),
            {"x": seq(X_SEQ, bf), "src_mask": CAUSAL_FLOAT, "src_key_padding_mask": KPM_FLOAT},
            no_grad=("src_mask", "src_key_padding_mask"),
        )
        for bf in (False, True)
        for nf in (False, True)
    },
    "enc_layer_gelu_bool_masks": Case(
        enc_layer(True, activation="gelu", layer_norm_eps=1e-3),
        lambda m, x, **masks: m(x, **masks),
        {"x": seq(X_SEQ, True), "src_mask": CAUSAL_BOOL, "src_key_padding_mask": KPM_BOOL},
    ),
    "enc_layer_callable_no_bias_causal": Case(
        lambda t: t.nn.TransformerEncoderLayer(E, H, 16, 0.0, t.nn.functional.silu, bias=False),
        lambda m, x, src_mask: m(x, src_mask=src_mask, is_causal=True),
        {"x": X_SEQ, "src_mask": CAUSAL_FLOAT},
        no_grad=("src_mask",),
    ),
    "enc_layer_module_activation_unbatched": Case(
        lambda t: t.nn.TransformerEncoderLayer(E, H, 16, 0.0, t.nn.GELU("tanh"), norm_first=True),
        lambda m, x, **masks: m(x, **masks),
        {"x": X_SEQ[:, 0], "src_mask": CAUSAL_BOOL, "src_key_padding_mask": KPM_BOOL[0]},
    ),
    # encoder stacks
    **{
        f"encoder_bf{bf}_nf{nf}": Case(
            lambda t, bf=bf, nf=nf: t.nn.TransformerEncoder(
                enc_layer(bf, nf)(t), 2, t.nn.LayerNorm(E), enable_nested_tensor=False
            ),
            lambda m, x, **masks: m(x, **masks),
            {"x": seq(X_SEQ, bf), "mask": CAUSAL_BOOL, "src_key_padding_mask": KPM_BOOL},
        )
        for bf, nf in ((False, False), (True, True))
    },
    "encoder_causal_hint": Case(
        lambda t: t.nn.TransformerEncoder(enc_layer()(t), 2, enable_nested_tensor=False),
        lambda m, x, mask: m(x, mask=mask, is_causal=True),
        {"x": X_SEQ, "mask": CAUSAL_FLOAT},
        no_grad=("mask",),
    ),
    # decoder layer and stack
    **{
        f"dec_layer_bf{bf}_nf{nf}": Case(
            dec_layer(bf, nf),
            lambda m, x, mem, **masks: m(x, mem, **masks),
            {
                "x": seq(X_SEQ, bf),
                "mem": seq(M_SEQ, bf),
                "tgt_mask": CAUSAL_FLOAT,
                "memory_mask": SOFT_MASK,
                "tgt_key_padding_mask": KPM_FLOAT,
                "memory_key_padding_mask": np.where(MEM_KPM, -np.inf, 0.0),
            },
            no_grad=("tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"),
        )
        for bf in (False, True)
        for nf in (False, True)
    },
    "decoder_bool_masks_unbatched": Case(
        lambda t: t.nn.TransformerDecoder(dec_layer(nf=True)(t), 2, t.nn.LayerNorm(E)),
        lambda m, x, mem, **masks: m(x, mem, **masks),
        {
            "x": X_SEQ[:, 0],
            "mem": M_SEQ[:, 0],
            "tgt_mask": CAUSAL_BOOL,
            "tgt_key_padding_mask": KPM_BOOL[2],
            "memory_key_padding_mask": MEM_KPM[1],
        },
    ),
    "decoder_causal_hints": Case(
        lambda t: t.nn.TransformerDecoder(dec_layer(True)(t), 2),
        lambda m, x, mem, tgt_mask: m(
            x, mem, tgt_mask=tgt_mask, tgt_is_causal=True, memory_is_causal=False
        ),
        {"x": seq(X_SEQ, True), "mem": seq(M_SEQ, True), "tgt_mask": CAUSAL_BOOL},
    ),
    # the whole model
    **{
        f"transformer_bf{bf}_nf{nf}": Case(
            lambda t, bf=bf, nf=nf: t.nn.Transformer(
                E, H, 2, 2, 16, 0.0, batch_first=bf, norm_first=nf
            ),
            lambda m, src, tgt, **masks: m(src, tgt, **masks),
            {
                "src": seq(M_SEQ, bf),
                "tgt": seq(X_SEQ, bf),
                "tgt_mask": CAUSAL_BOOL,
                "src_key_padding_mask": MEM_KPM,
                "tgt_key_padding_mask": KPM_BOOL,
                "memory_key_padding_mask": MEM_KPM,
            },
        )
        for bf, nf in ((False, False), (True, True))
    },
    "transformer_gelu_no_bias": Case(
        lambda t: t.nn.Transformer(E, H, 1, 1, 16, 0.0, "gelu", layer_norm_eps=1e-6, bias=False),
        lambda m, src, tgt, **masks: m(src, tgt, **masks),
        {
            "src": M_SEQ,
            "tgt": X_SEQ,
            "src_mask": SOFT_SRC_MASK,
            "tgt_mask": CAUSAL_FLOAT,
            "memory_mask": SOFT_MASK,
        },
        no_grad=("src_mask", "tgt_mask", "memory_mask"),
    ),
}


def _tensors(lib: Any, case: Case, dtype: str) -> dict[str, Any]:
    out = {}
    for name, a in case.arrays.items():
        if a.dtype == bool:
            out[name] = lib.tensor(a)
            continue
        t = lib.tensor(a.astype(dtype))
        if name not in case.no_grad:
            t.requires_grad_(True)
        out[name] = t
    return out


def _outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def run_both(case: Case, dtype: str, mode: str) -> None:
    torch.manual_seed(0)
    theirs = case.ctor(torch).to(getattr(torch, dtype))
    ours = case.ctor(lt).to(getattr(lt, dtype))
    load_torch_weights(ours, theirs)
    theirs.train(mode == "train")
    ours.train(mode == "train")
    tin, lin = _tensors(torch, case, dtype), _tensors(lt, case, dtype)
    touts = _outputs(case.call(theirs, **tin))
    louts = _outputs(case.call(ours, **lin))
    assert [o is None for o in louts] == [o is None for o in touts]
    rng = np.random.default_rng(1)
    weights = [None if o is None else rng.standard_normal(tuple(o.shape)) for o in touts]
    for lib, outs in ((torch, touts), (lt, louts)):
        loss = sum(
            (o * lib.tensor(w.astype(dtype))).sum() for o, w in zip(outs, weights) if o is not None
        )
        loss.backward()  # type: ignore[union-attr]

    t_params = dict(theirs.named_parameters())
    l_params = dict(ours.named_parameters())
    assert list(l_params) == list(t_params)
    pairs = [(f"output {i}", lo, to) for i, (lo, to) in enumerate(zip(louts, touts))]
    pairs += [(f"param {k}", l_params[k].grad, p.grad) for k, p in t_params.items()]
    pairs += [(f"input {k}", lin[k].grad, t.grad) for k, t in tin.items() if t.requires_grad]
    # one program computes every compared value
    lt.materialize(*[ours for _, ours, _ in pairs if ours is not None])
    for what, l_val, t_val in pairs:
        assert (l_val is None) == (t_val is None), what
        if t_val is None:
            continue
        assert tuple(l_val.shape) == tuple(t_val.shape), what
        assert l_val.dtype == getattr(lt, dtype), what
        tol = TOL[dtype] if what.startswith("output") else GRAD_TOL[dtype]
        np.testing.assert_allclose(to_numpy(l_val), to_numpy(t_val), **tol, err_msg=what)


# Every case in train mode (dropout 0.0) and eval mode in float64, and in train mode in
# float32: eval mode in float32 would add only the rounding already covered.
@pytest.mark.parametrize(
    "name,dtype,mode",
    [
        (name, dtype, mode)
        for name in CASES
        for dtype, mode in (("float64", "train"), ("float64", "eval"), ("float32", "train"))
    ],
)
def test_matches_torch(name, dtype, mode):
    run_both(CASES[name], dtype, mode)


# -- behaviour beyond the table ----------------------------------------------------------------
MODULE_CTORS = {
    "mha_kdim_bias_kv": lambda t: t.nn.MultiheadAttention(E, H, kdim=3, vdim=5, add_bias_kv=True),
    "mha_no_bias": lambda t: t.nn.MultiheadAttention(E, H, bias=False, batch_first=True),
    "encoder_layer_module_activation": lambda t: t.nn.TransformerEncoderLayer(
        E, H, 16, activation=t.nn.GELU()
    ),
    "decoder": lambda t: t.nn.TransformerDecoder(t.nn.TransformerDecoderLayer(E, H, 16), 2),
    "transformer": lambda t: t.nn.Transformer(E, H, 1, 1, 16, bias=False, norm_first=True),
}


@pytest.mark.parametrize("name", MODULE_CTORS)
def test_structure_matches_torch(name):
    """Same submodules, parameter names and shapes, state_dict keys in order, and repr."""
    theirs, ours = MODULE_CTORS[name](torch), MODULE_CTORS[name](lt)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [(k, tuple(p.shape)) for k, p in ours.named_parameters()] == [
        (k, tuple(p.shape)) for k, p in theirs.named_parameters()
    ]
    assert repr(ours) == repr(theirs)


def test_module_paths_and_functional():
    from lazytorch.nn.modules.activation import MultiheadAttention
    from lazytorch.nn.modules.linear import NonDynamicallyQuantizableLinear
    from lazytorch.nn.modules.transformer import TransformerEncoderLayer

    assert lt.nn.MultiheadAttention is MultiheadAttention
    assert lt.nn.TransformerEncoderLayer is TransformerEncoderLayer
    assert type(lt.nn.MultiheadAttention(E, H).out_proj) is NonDynamicallyQuantizableLinear
    assert issubclass(NonDynamicallyQuantizableLinear, lt.nn.Linear)
    assert callable(lt.nn.functional.multi_head_attention_forward)


def test_initialization_distributions():
    """torch's schemes: xavier_uniform_ projections, zero biases, Linear's default for
    out_proj.weight, xavier_normal_ bias_k/v; Transformer re-draws every matrix with
    xavier_uniform_ (values differ from torch's: another generator)."""
    lt.manual_seed(0)
    d = 64
    m = lt.nn.MultiheadAttention(d, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (d + 3 * d))  # xavier_uniform_: fan_in d, fan_out 3d
    assert np.abs(w).max() <= bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    assert np.all(m.in_proj_bias.detach().numpy() == 0) and np.all(
        m.out_proj.bias.detach().numpy() == 0
    )
    assert np.abs(m.out_proj.weight.detach().numpy()).max() <= 1 / math.sqrt(d)
    # xavier_normal_ on (1, 1, d): fan_in = 1 * d, fan_out = 1 * d
    bias_kv = np.concatenate([m.bias_k.detach().numpy().ravel(), m.bias_v.detach().numpy().ravel()])
    assert bias_kv.std() == pytest.approx(math.sqrt(2 / (2 * d)), rel=0.3)

    sep = lt.nn.MultiheadAttention(d, 4, kdim=32, vdim=16)
    k = sep.k_proj_weight.detach().numpy()
    assert np.abs(k).max() <= math.sqrt(6 / (d + 32))
    assert k.std() == pytest.approx(math.sqrt(6 / (d + 32)) / math.sqrt(3), rel=0.05)

    model = lt.nn.Transformer(d, 4, 1, 1, 128)
    lin = model.encoder.layers[0].linear1.weight.detach().numpy()  # (128, d)
    xavier = math.sqrt(6 / (d + 128))
    assert xavier > 1 / math.sqrt(d)  # tells xavier apart from Linear's default bound
    assert lin.std() == pytest.approx(xavier / math.sqrt(3), rel=0.05)
    assert np.all(model.encoder.layers[0].linear1.bias.detach().numpy() != 0)  # vectors keep theirs
    assert np.all(model.encoder.norm.weight.detach().numpy() == 1)


def test_warnings_match_torch():
    for batch_first, norm_first in ((False, False), (True, True), (True, False)):
        caught = []
        for lib in (torch, lt):
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                layer = lib.nn.TransformerEncoderLayer(
                    E, H, 16, batch_first=batch_first, norm_first=norm_first
                )
                enc = lib.nn.TransformerEncoder(layer, 1)
            caught.append([str(w.message) for w in rec])
            assert enc.use_nested_tensor == (batch_first and not norm_first)
        assert caught[1] == caught[0]
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m = lt.nn.MultiheadAttention(E, H).double()
        m(
            lt.tensor(X_SEQ),
            lt.tensor(X_SEQ),
            lt.tensor(X_SEQ),
            key_padding_mask=lt.tensor(KPM_BOOL),
            attn_mask=lt.tensor(CAUSAL_FLOAT),
        )


@pytest.mark.parametrize("left_aligned", [True, False])
def test_encoder_inference_zeroes_padding_like_torch(left_aligned):
    """In inference torch runs a batch_first encoder with a padding mask on nested tensors:
    padded positions come back as zeros (before the final norm), unless the padding is not
    all at the end of each row (then it keeps its Python path)."""
    kpm = np.zeros((N, L), bool)
    kpm[0, 2:] = kpm[1, 3:] = True
    if not left_aligned:
        kpm[2, 0] = True
    x = seq(X_SEQ, True).astype("float32")
    outs = []
    for lib in (torch, lt):
        torch.manual_seed(0)
        enc = lib.nn.TransformerEncoder(
            lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True), 2, lib.nn.LayerNorm(E)
        )
        if lib is torch:
            theirs = enc
        else:
            load_torch_weights(enc, theirs)
        enc.eval()
        with lib.no_grad():
            outs.append(to_numpy(enc(lib.tensor(x), src_key_padding_mask=lib.tensor(kpm))))
        # with gradients on, torch stays on its Python path: nothing is zeroed
        outs.append(to_numpy(enc(lib.tensor(x), src_key_padding_mask=lib.tensor(kpm))))
    np.testing.assert_allclose(outs[2], outs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[3], outs[1], rtol=1e-5, atol=1e-5)
    bias = theirs.norm.bias.detach().numpy()
    assert np.allclose(outs[0][0, 2:], bias) == left_aligned  # LayerNorm of a zero row
    assert not np.allclose(outs[1][0, 2:], bias)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_query_like_torch(need_weights):
    """A query that may attend to nothing: NaN through the explicit softmax
    (need_weights=True), zeros through scaled_dot_product_attention."""
    mask = np.zeros((L, L), bool)
    mask[1] = True
    outs = []
    for lib in (torch, lt):
        torch.manual_seed(0)
        m = lib.nn.MultiheadAttention(E, H)
        if lib is torch:
            theirs = m
        else:
            load_torch_weights(m, theirs)
        x = lib.tensor(X_SEQ.astype("float32"))
        out, weights = m(x, x, x, attn_mask=lib.tensor(mask), need_weights=need_weights)
        outs.append([to_numpy(out), None if weights is None else to_numpy(weights)])
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-6)
    assert np.isnan(outs[1][0][1]).all() == need_weights
    if need_weights:
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)


def test_errors_match_torch():
    def raises(fn):
        with pytest.raises(Exception) as t_err:
            fn(torch)
        message = str(t_err.value).replace("torch.Size", "lazytorch.Size")
        with pytest.raises(type(t_err.value), match=re.escape(message)):
            fn(lt)

    def call(t, **kw):
        m = t.nn.MultiheadAttention(E, H)
        x = t.tensor(X_SEQ.astype("float32"))
        return m(x, x, x, **kw)

    raises(lambda t: t.nn.MultiheadAttention(E, 3))
    raises(lambda t: t.nn.MultiheadAttention(0, 2))
    raises(lambda t: call(t, need_weights=False, is_causal=True))
    raises(lambda t: call(t, attn_mask=t.zeros(L, L, dtype=t.int64)))
    raises(lambda t: call(t, attn_mask=t.zeros(L, L + 1)))
    raises(lambda t: call(t, key_padding_mask=t.zeros(N, L + 1)))
    raises(lambda t: t.nn.TransformerEncoderLayer(E, H, activation="tanh"))
    raises(lambda t: t.nn.Transformer(E, H, 1, 1, 16)(t.zeros(S, N, E), t.zeros(L, N + 1, E)))
    raises(lambda t: t.nn.Transformer(E, H, 1, 1, 16)(t.zeros(S, N, E), t.zeros(L, N, E + 2)))


def test_dropout_applies_in_training_only():
    lt.manual_seed(0)
    layer = lt.nn.TransformerEncoderLayer(E, H, 16, dropout=0.5)
    mha = lt.nn.MultiheadAttention(E, H, dropout=0.5)
    x = lt.tensor(X_SEQ.astype("float32"))
    for m, f in ((layer, lambda: layer(x)), (mha, lambda: mha(x, x, x)[0])):
        m.eval()
        a, b = f().detach().numpy(), f().detach().numpy()
        np.testing.assert_array_equal(a, b)
        m.train()
        c = f().detach().numpy()
        assert not np.allclose(a, c)
    # attention-weight dropout: each weight zeroed or scaled by 1/(1-p)
    mha.eval()
    kept = mha(x, x, x, average_attn_weights=False)[1].detach().numpy()
    mha.train()
    dropped = mha(x, x, x, average_attn_weights=False)[1].detach().numpy()
    assert (dropped == 0).any() and (dropped != 0).any()
    np.testing.assert_allclose(dropped[dropped != 0], 2 * kept[dropped != 0], rtol=1e-6)


def test_square_subsequent_mask():
    for n in (1, 5):
        ours = lt.nn.Transformer.generate_square_subsequent_mask(n, dtype=lt.float64)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours.dtype == lt.float64


def test_functional_static_kv():
    """F.multi_head_attention_forward with separate projections and static keys/values."""
    rng = np.random.default_rng(3)
    arrays = {
        "q": rng.standard_normal((L, N, E)),
        "k": rng.standard_normal((S, N, 3)),
        "v": rng.standard_normal((S, N, 5)),
        "wq": rng.standard_normal((E, E)),
        "wk": rng.standard_normal((E, 3)),
        "wv": rng.standard_normal((E, 5)),
        "b": rng.standard_normal(3 * E),
        "wo": rng.standard_normal((E, E)),
        "sk": rng.standard_normal((N * H, S + 1, E // H)),
        "sv": rng.standard_normal((N * H, S + 1, E // H)),
    }
    res = []
    for lib in (torch, lt):
        a = {k: lib.tensor(v).requires_grad_(True) for k, v in arrays.items()}
        out, w = lib.nn.functional.multi_head_attention_forward(
            a["q"],
            a["k"],
            a["v"],
            E,
            H,
            None,
            a["b"],
            None,
            None,
            False,
            0.0,
            a["wo"],
            None,
            use_separate_proj_weight=True,
            q_proj_weight=a["wq"],
            k_proj_weight=a["wk"],
            v_proj_weight=a["wv"],
            static_k=a["sk"],
            static_v=a["sv"],
            average_attn_weights=False,
        )
        (
            out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        ).sum().backward()
        res.append(
            [to_numpy(out), to_numpy(w)]
            + [to_numpy(a[k].grad) for k in ("q", "wq", "b", "sk", "sv")]
        )
    for ours, theirs in zip(res[1], res[0]):
        np.testing.assert_allclose(ours, theirs, **GRAD_TOL["float64"])


@pytest.mark.parametrize("need_weights", [False, True])
def test_functional_out_proj_changes_the_width(need_weights):
    """CLIP's AttentionPool2d: out_proj maps the embed_dim to another width (output_dim), with
    one query (the mean token) over the positions; torch reshapes to the projection's width."""
    rng = np.random.default_rng(4)
    out_dim = 3
    arrays = {
        "x": rng.standard_normal((S, N, E)),
        "wq": rng.standard_normal((E, E)),
        "wk": rng.standard_normal((E, E)),
        "wv": rng.standard_normal((E, E)),
        "b": rng.standard_normal(3 * E),
        "wo": rng.standard_normal((out_dim, E)),
        "bo": rng.standard_normal(out_dim),
    }
    res = []
    for lib in (torch, lt):
        a = {k: lib.tensor(v).requires_grad_(True) for k, v in arrays.items()}
        out, _ = lib.nn.functional.multi_head_attention_forward(
            query=a["x"][:1],
            key=a["x"],
            value=a["x"],
            embed_dim_to_check=E,
            num_heads=H,
            q_proj_weight=a["wq"],
            k_proj_weight=a["wk"],
            v_proj_weight=a["wv"],
            in_proj_weight=None,
            in_proj_bias=a["b"],
            bias_k=None,
            bias_v=None,
            add_zero_attn=False,
            dropout_p=0,
            out_proj_weight=a["wo"],
            out_proj_bias=a["bo"],
            use_separate_proj_weight=True,
            training=True,
            need_weights=need_weights,
        )
        out = out.squeeze(0)
        (
            out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        ).sum().backward()
        res.append([to_numpy(out)] + [to_numpy(a[k].grad) for k in ("x", "wq", "wo", "b")])
    assert res[1][0].shape == (N, out_dim)
    for ours, theirs in zip(res[1], res[0]):
        np.testing.assert_allclose(ours, theirs, **GRAD_TOL["float64"])


# -- a language model written against nn.Transformer, as pytorch/examples does -------------------
VOCAB, SEQ_LEN, BATCH = 11, 6, 3


def build_language_model(t: Any) -> Any:
    """A subclass of nn.Transformer that keeps only the encoder (made of a subclassed
    TransformerEncoderLayer) and swaps the decoder for a projection to the vocabulary."""

    class HalfFeedForwardLayer(t.nn.TransformerEncoderLayer):
        """Reaches into the layer's submodules: the feed-forward branch scaled by 1/2."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.ff_scale = 0.5

        def _ff_block(self, x: Any) -> Any:
            h = self.linear2(self.dropout(self.activation(self.linear1(x))))
            return self.dropout2(h * self.ff_scale)

    class Positions(t.nn.Module):
        """Sinusoidal position codes in a buffer, (max_len, 1, d) for (seq, batch, d) input."""

        def __init__(self, d: int, max_len: int = 16) -> None:
            super().__init__()
            pos = t.arange(max_len, dtype=t.float32).unsqueeze(1)
            freq = t.exp(t.arange(0, d, 2).float() * (-math.log(10000.0) / d))
            table = t.zeros(max_len, 1, d)
            table[:, 0, 0::2] = t.sin(pos * freq)
            table[:, 0, 1::2] = t.cos(pos * freq)
            self.register_buffer("table", table)

        def forward(self, x: Any) -> Any:
            return x + self.table[: x.size(0)]

    class LanguageModel(t.nn.Transformer):
        def __init__(self) -> None:
            super().__init__(
                d_model=E, nhead=H, dim_feedforward=16, num_encoder_layers=2, dropout=0.0
            )
            layer = HalfFeedForwardLayer(E, H, 16, dropout=0.0, activation="gelu")
            self.encoder = t.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.decoder = t.nn.Linear(E, VOCAB)
            self.embedding = t.nn.Embedding(VOCAB, E)
            self.positions = Positions(E)
            self.mask = None

        def forward(self, tokens: Any) -> Any:
            if self.mask is None or self.mask.size(0) != len(tokens):
                self.mask = t.log(t.tril(t.ones(len(tokens), len(tokens))))
            h = self.positions(self.embedding(tokens) * math.sqrt(self.d_model))
            h = self.encoder(h, mask=self.mask)
            return t.nn.functional.log_softmax(self.decoder(h), dim=-1)

    return LanguageModel()


def test_word_language_model_subclass_trains():
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, VOCAB, (3, SEQ_LEN + 1, BATCH))
    losses, params = [], []
    with lt.backend("auto"):  # the default backend: compiled programs
        for lib in (torch, lt):
            torch.manual_seed(0)
            model = build_language_model(lib)
            if lib is torch:
                initial = {k: lt_from_torch(v) for k, v in model.state_dict().items()}
            else:
                model.load_state_dict(initial)
            opt = lib.optim.SGD(model.parameters(), lr=0.5)
            model.train()
            step_losses = []
            for batch in tokens:
                opt.zero_grad()
                out = model(lib.tensor(batch[:-1]))
                loss = lib.nn.functional.nll_loss(
                    out.view(-1, VOCAB), lib.tensor(batch[1:]).reshape(-1)
                )
                loss.backward()
                lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                step_losses.append(loss.item())
            losses.append(step_losses)
            params.append({k: to_numpy(v) for k, v in model.state_dict().items()})
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    assert losses[0][-1] != losses[0][0]
    assert list(params[1]) == list(params[0])
    for k in params[0]:
        np.testing.assert_allclose(params[1][k], params[0][k], rtol=1e-4, atol=1e-5, err_msg=k)
