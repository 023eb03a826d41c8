"""torch.nn.utils: gradient clipping, parameter/vector conversion, and folding a batch norm
into the layer before it (`fusion`).

>>> import lazytorch
>>> w = lazytorch.nn.Parameter(lazytorch.ones(4))
>>> (w * 3).sum().backward()                      # grad = [3, 3, 3, 3], norm 6
>>> lazytorch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(6.)
>>> round(w.grad.norm().item(), 4)
1.0
"""

from lazytorch.nn.utils import parametrizations, parametrize, rnn, stateless
from lazytorch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from lazytorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from lazytorch.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from lazytorch.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from lazytorch.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "stateless",
    "vector_to_parameters",
    "weight_norm",
]
