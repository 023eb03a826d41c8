"""torch.nn.functional: activations, softmax family, normalization, linear/embedding,
dropout, convolution (1-3d, transposed, fold/unfold), pooling (incl. adaptive), interpolate,
pixel shuffle, affine_grid/grid_sample, losses, pad, attention.

All of these are decompositions into primitives, written with tensor ops so they read like
the math; the scheduler fuses what they record. Convolution is im2col: the kernel-offset
windows of the (padded) input are strided slices stacked into columns, then one matmul.
"""

from lazytorch.nn.functional import attention as _attention
from lazytorch.nn.functional.activation import (
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    relu,
    relu6,
    selu,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
)
from lazytorch.nn.functional.attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from lazytorch.nn.functional.col2im import (
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from lazytorch.nn.functional.conv import conv1d, conv2d, conv3d
from lazytorch.nn.functional.grid import affine_grid, grid_sample
from lazytorch.nn.functional.layers import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    embedding,
    feature_alpha_dropout,
    linear,
    one_hot,
)
from lazytorch.nn.functional.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from lazytorch.nn.functional.normalization import (
    batch_norm,
    cosine_similarity,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from lazytorch.nn.functional.pooling import (
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from lazytorch.nn.functional.sampling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from lazytorch.ops import autocast as _autocast
from lazytorch.ops import elementwise as _E
from lazytorch.ops.pad import pad

sigmoid = _E.sigmoid
tanh = _E.tanh
# private in torch too, but called as F._canonical_mask by torch's modules and their copies
_canonical_mask = _attention._canonical_mask
_none_or_dtype = _attention._none_or_dtype
_autocast.install("F", globals())  # the names torch's autocast lists (lazytorch.ops.autocast)

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "embedding",
    "feature_alpha_dropout",
    "fold",
    "gelu",
    "grid_sample",
    "group_norm",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "instance_norm",
    "interpolate",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "relu",
    "relu6",
    "rms_norm",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
