"""Autocast op policies: torch's lists, per device type, and the public names that follow them.

`POLICIES` is torch's table (``aten/src/ATen/autocast_mode.cpp``, the ``AutocastCPU`` and
``AutocastCUDA`` registrations, overloads folded): aten op name -> cast policy. The CPU and
CUDA lists differ: the CPU keeps softmax, sums, ``exp`` and layer_norm in the input's dtype,
and promotes ``cat``/``stack``; CUDA runs them in float32. The table holds every op torch
lists, whether lazytorch has it or not; `PUBLIC` maps lazytorch's public names (per
namespace: ``torch`` functions, ``Tensor`` methods, ``F`` = ``nn.functional``, ``linalg``)
to the aten op whose policy they follow (or, in `RESOLVERS`, to a choice of aten op made from
the call's arguments, as ``F.pad`` picks a pad op by its mode), and `LACKING` names the
listed ops lazytorch has no public name for (tests/api/test_autocast.py checks that the three agree with torch).

The policies (torch's ``CastPolicy``):

* ``lower`` — floating inputs cast to the autocast dtype (matmul, linear, conv, bmm...);
* ``fp32`` — floating inputs cast to float32 (losses, ``exp``/``log`` family on CUDA...);
* ``fp32_set_opt_dtype`` — when the first input is eligible and no ``dtype=`` is given, the
  op runs with ``dtype=float32`` (softmax, sum, cumsum on CUDA);
* ``fp32_append_dtype`` — the same for ``norm``, whose overloads without a dtype torch
  redirects to the one with ``dtype=float32``;
* ``promote`` — the widest floating input dtype among the arguments (cat, stack, addcmul);
* ``banned`` — raises (``binary_cross_entropy`` under CUDA autocast, as torch).

>>> POLICIES["cpu"]["matmul"], POLICIES["cuda"]["softmax"], "softmax" in POLICIES["cpu"]
('lower', 'fp32_set_opt_dtype', False)
>>> PUBLIC["Tensor"]["__matmul__"], PUBLIC["F"]["cross_entropy"]
('matmul', 'cross_entropy_loss')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LACKING", "POLICIES", "POLICY_NAMES", "PUBLIC", "RESOLVERS"]

POLICY_NAMES = ("lower", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")


def _table(**groups: str) -> dict[str, str]:
    """policy=``"op op ..."`` groups -> {op: policy}; an op listed twice is an error."""
    table: dict[str, str] = {}
    for policy, ops in groups.items():
        if policy not in POLICY_NAMES:
            raise ValueError(f"autocast policy: no policy {policy!r} (one of {POLICY_NAMES})")
        for op in ops.split():
            if table.setdefault(op, policy) != policy:
                raise ValueError(f"autocast policy: {op} is listed as {table[op]} and {policy}")
    return table


# torch 2.13's AutocastCPU registrations.
_CPU = _table(
    lower="""
        conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm
        linear _convolution matmul conv_tbc mkldnn_rnn_layer conv_transpose1d
        conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
        _native_multi_head_attention
    """,
    fp32="""
        avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft
        cdist grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace
        view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr
        ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d
        reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d
        replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d
        hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss
        huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
        multi_margin_loss ctc_loss kl_div multilabel_margin_loss
        binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn
        fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft
        fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky
        linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
        linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf
        _lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d
        adaptive_max_pool3d multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex
        linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex
    """,
    promote="stack cat index_copy",
)

# torch 2.13's AutocastCUDA registrations (the AT_FORALL_* lists of autocast_mode.h).
_CUDA = _table(
    lower="""
        _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
        conv_transpose3d convolution cudnn_convolution cudnn_convolution_transpose prelu
        addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm
        chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell
        gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
        scaled_dot_product_attention
    """,
    fp32="""
        acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
        softplus layer_norm native_layer_norm rms_norm group_norm frobenius_norm
        nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss
        nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss
        margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss
        multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm
        logsumexp upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
        _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d
        upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa upsample_trilinear3d
        upsample_bicubic2d _upsample_bicubic2d_aa
    """,
    fp32_set_opt_dtype="""
        prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm sum
    """,
    fp32_append_dtype="norm",
    promote="addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add",
    banned="binary_cross_entropy",
)

POLICIES: dict[str, dict[str, str]] = {"cpu": _CPU, "cuda": _CUDA}
"""device type -> {aten op: policy}."""

# Ops that torch's CUDA autocast reaches through a decomposition rather than a listing of
# their own: torch's cross_entropy_loss is log_softmax + nll_loss there, both float32.
_CUDA["cross_entropy_loss"] = "fp32"


def _names(ops: str, **renamed: str) -> dict[str, str]:
    """``"a b c"`` (public name = aten name) plus public name -> aten name."""
    return {**{n: n for n in ops.split()}, **renamed}


# torch functions that are Tensor methods too
_MATH = """
    acos asin cosh exp expm1 log log10 log1p log2 reciprocal rsqrt sinh tan pow addcdiv
    addcmul atan2 cross dot scatter_add index_put index_copy addmm baddbmm bmm matmul mm mv
    dist logsumexp prod sum cumsum cumprod norm trace quantile
"""

PUBLIC: dict[str, dict[str, str]] = {
    "torch": _names(
        _MATH + " tensordot einsum cdist cat stack cosine_similarity softmax log_softmax",
        arccos="acos",
        arcsin="asin",
        arctan2="atan2",
        concat="cat",
        concatenate="cat",
    ),
    "Tensor": _names(
        _MATH + " softmax log_softmax",
        arccos="acos",
        arcsin="asin",
        arctan2="atan2",
        __matmul__="matmul",
        __rmatmul__="matmul",
        __pow__="pow",
        __rpow__="pow",
    ),
    "F": _names(
        """
        conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d linear
        scaled_dot_product_attention softmax log_softmax softplus layer_norm group_norm
        rms_norm cosine_similarity l1_loss mse_loss smooth_l1_loss nll_loss
        binary_cross_entropy binary_cross_entropy_with_logits avg_pool3d max_pool3d
        adaptive_avg_pool3d adaptive_max_pool3d pad interpolate upsample_nearest
        upsample_bilinear
        """,
        upsample="interpolate",
        cross_entropy="cross_entropy_loss",
        softmin="softmax",  # torch's softmin is Python: (-input).softmax(dim)
        grid_sample="grid_sampler",
    ),
    "linalg": _names(
        "matmul",
        vector_norm="linalg_vector_norm",
        matrix_norm="linalg_matrix_norm",
        norm="linalg_vector_norm",  # torch's linalg.norm runs vector_norm or matrix_norm
    ),
}
"""namespace -> {lazytorch public name: the aten op whose policy it follows}."""


# -- functions whose aten op depends on their arguments ------------------------------------
def _pad_op(a: dict[str, Any]) -> str | None:
    """torch's F.pad: reflect/replicate over 1-3 dims are aten ops of their own."""
    n = len(a["pad"]) // 2
    if a["mode"] == "reflect" and n in (1, 2):
        return f"reflection_pad{n}d"
    if a["mode"] == "replicate" and n in (1, 2, 3):
        return f"replication_pad{n}d"
    return None


def _interpolate_op(a: dict[str, Any]) -> str | None:
    """torch's F.interpolate: one aten op per mode and number of spatial dims."""
    n, mode = a["input"].ndim - 2, a.get("mode", "nearest")
    aa = "_aa" if a.get("antialias") else ""
    return {
        ("nearest", 1): "upsample_nearest1d",
        ("nearest", 2): "upsample_nearest2d",
        ("nearest", 3): "upsample_nearest3d",
        ("nearest-exact", 1): "_upsample_nearest_exact1d",
        ("nearest-exact", 2): "_upsample_nearest_exact2d",
        ("nearest-exact", 3): "_upsample_nearest_exact3d",
        ("linear", 1): "upsample_linear1d",
        ("bilinear", 2): "_upsample_bilinear2d_aa" if aa else "upsample_bilinear2d",
        ("bicubic", 2): "_upsample_bicubic2d_aa" if aa else "upsample_bicubic2d",
        ("trilinear", 3): "upsample_trilinear3d",
        ("area", 3): "adaptive_avg_pool3d",
    }.get((mode, n))


def _upsample_nearest_op(a: dict[str, Any]) -> str | None:
    return _interpolate_op({**a, "mode": "nearest"})


def _upsample_bilinear_op(a: dict[str, Any]) -> str | None:
    return _interpolate_op({**a, "mode": "bilinear"})


def _max_pool3d_op(a: dict[str, Any]) -> str | None:
    """With indices torch calls max_pool3d_with_indices, which autocast does not list."""
    return None if a["return_indices"] else "max_pool3d"


RESOLVERS: dict[str, tuple[Callable[[dict[str, Any]], str | None], tuple[str, ...]]] = {
    "pad": (_pad_op, ("reflection_pad1d", "reflection_pad2d", "replication_pad1d",
                      "replication_pad2d", "replication_pad3d")),
    "interpolate": (_interpolate_op, (
        "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
        "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
        "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa",
        "upsample_bicubic2d", "_upsample_bicubic2d_aa", "upsample_trilinear3d",
        "adaptive_avg_pool3d",
    )),
    "upsample_nearest": (_upsample_nearest_op, ("upsample_nearest1d", "upsample_nearest2d",
                                                "upsample_nearest3d")),
    "upsample_bilinear": (_upsample_bilinear_op, ("upsample_bilinear2d",)),
    "max_pool3d": (_max_pool3d_op, ("max_pool3d",)),
}  # fmt: skip
"""PUBLIC op names that stand for a choice: name -> (the choice, from the bound arguments
with their defaults: an aten op or None for an unlisted one; the ops it can choose)."""

LACKING: frozenset[str] = frozenset(
    """
    _addmm_activation _convolution _native_multi_head_attention conv_tbc mkldnn_rnn_layer prelu
    linalg_vecdot addbmm addmv addr convolution cudnn_convolution cudnn_convolution_transpose
    chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell
    rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
    grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d polar nanquantile stft
    view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr
    pinverse max_unpool2d max_unpool3d cosine_embedding_loss nll_loss2d hinge_embedding_loss
    poisson_nll_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
    multi_margin_loss ctc_loss kl_div multilabel_margin_loss multilabel_margin_loss_forward
    fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2
    fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank
    linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv
    linalg_householder_product linalg_tensorinv linalg_tensorsolve
    fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
    fractional_max_pool2d fractional_max_pool3d linalg_qr linalg_cholesky_ex linalg_svd
    linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex
    erfinv native_layer_norm frobenius_norm nuclear_norm pdist renorm bilinear vdot
    """.split()
)
"""torch's listed ops (either device) that no lazytorch public name follows: lazytorch has
no such op."""
