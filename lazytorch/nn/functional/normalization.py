"""layer_norm, rms_norm, batch_norm, group_norm, instance_norm, local_response_norm, normalize,
and cosine_similarity (torch.cosine_similarity, defined in `lazytorch.ops.linalg`)."""

from __future__ import annotations

from collections.abc import Sequence

from lazytorch._dtype_info import finfo
from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _opmath
from lazytorch.nn.functional.pooling import avg_pool2d, avg_pool3d
from lazytorch.ops import elementwise as E
from lazytorch.ops import linalg as LA
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops import transcendental as TR
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.linalg import cosine_similarity as cosine_similarity
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor


# -- normalization -------------------------------------------------------------------------------
def _check_param_dtypes(x: Tensor, params: Sequence[Tensor | None], op: str) -> None:
    """torch's CPU norm kernels take parameters of the input's dtype, or float32 ones for a
    float16 input (its one "mixed" case); anything else is an error, not a promotion."""
    given = [p for p in params if p is not None]
    if not given:
        return
    if x.dtype.is_low_float and given[0].dtype is not x.dtype:
        if any(p.dtype is not dt.float32 for p in given):
            raise op_error(
                RuntimeError, op, "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
    elif any(p.dtype is not x.dtype for p in given):
        raise op_error(RuntimeError, op, "mixed dtype (CPU): all inputs must share same datatype.")


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims, then scale and shift."""
    x = tensor_arg(input, "layer_norm")
    if not isinstance(normalized_shape, (list, tuple)):  # torch.Size is a tuple
        raise op_error(
            TypeError,
            "layer_norm",
            f"argument 'normalized_shape' (position 2) must be tuple of ints, not {type(normalized_shape).__name__}",
        )
    ns = tuple(normalized_shape)
    k = len(ns)
    if k == 0:
        raise op_error(
            RuntimeError,
            "layer_norm",
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        )
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != ns:
        raise op_error(
            RuntimeError,
            "layer_norm",
            f"Given normalized_shape={list(ns)}, expected input with shape [*, {', '.join(map(str, ns))}], "
            f"but got input of size{list(x.shape)}",
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != ns:
            raise op_error(
                RuntimeError,
                "layer_norm",
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape {list(p.shape)} and normalized_shape = {list(ns)}",
            )
    _check_param_dtypes(x, (weight, bias), "layer_norm")
    dims = tuple(range(x.ndim - k, x.ndim))
    work = _opmath(x)
    mu = R.mean(work, dims, keepdim=True)
    centered = work - mu  # type: ignore[operator]
    var = R.mean(centered * centered, dims, keepdim=True)  # type: ignore[operator]
    y = centered * TR.rsqrt(var + eps)  # type: ignore[operator]
    if weight is not None:
        y = y * weight  # type: ignore[operator]
    if bias is not None:
        y = y + bias  # type: ignore[operator]
    return name_grad_fn(y.to(x.dtype), "NativeLayerNormBackward0", x)  # type: ignore[attr-defined]


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Divide by the root mean square over the trailing `normalized_shape` dims (plus `eps`,
    by default the machine epsilon of the computing dtype), then scale by `weight`. The
    result has the input's dtype, whatever the weight's, as torch.

    >>> import lazytorch
    >>> lazytorch.nn.functional.rms_norm(lazytorch.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    x = tensor_arg(input, "rms_norm")
    ns = tuple(normalized_shape)
    k = len(ns)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != ns:
        raise op_error(
            RuntimeError,
            "rms_norm",
            f"Given normalized_shape={list(ns)}, expected input with shape [*{', '.join(map(str, ns))}], "
            f"but got input of size{list(x.shape)}",
        )
    if weight is not None and tuple(weight.shape) != ns:
        raise op_error(
            RuntimeError,
            "rms_norm",
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(ns)}",
        )
    work = _opmath(x)
    if eps is None:
        eps = float(finfo(work.dtype).eps)
    dims = tuple(range(x.ndim - k, x.ndim))
    y = work * TR.rsqrt(R.mean(work * work, dims, keepdim=True) + eps)  # type: ignore[operator]
    if weight is not None:
        y = y * weight  # type: ignore[operator]
    return y.to(x.dtype)  # type: ignore[attr-defined,no-any-return]


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over every dim but the channel dim (1); updates running stats in training."""
    x = tensor_arg(input, "batch_norm")
    dims = tuple(d for d in range(x.ndim) if d != 1)
    if training:
        count = 1
        for d in dims:
            count *= x.shape[d]
        if count <= 1:
            raise op_error(
                ValueError,
                "batch_norm",
                f"Expected more than 1 value per channel when training, got input size {list(x.shape)}",
            )
    # torch sizes the parameters before it looks at the channel dim (a 1-d input has 0).
    channels = x.shape[1] if x.ndim >= 2 else 0
    params = (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    )
    for name, p in params:
        if p is not None and p.numel() != channels:
            raise op_error(
                RuntimeError,
                "batch_norm",
                f"{name} should contain {channels} elements not {p.numel()}",
            )
    if x.ndim < 2:
        raise op_error(
            IndexError,
            "batch_norm",
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got 1)",
        )
    _check_param_dtypes(x, [p for _, p in params], "batch_norm")
    shape = [1] * x.ndim
    shape[1] = channels
    work = _opmath(x)
    if training:
        mu = R.mean(work, dims, keepdim=True)
        var = R.var(work, dims, keepdim=True, correction=0)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(S.reshape(mu, -1).detach() * momentum)  # type: ignore[attr-defined,operator]
        if running_var is not None:
            unbiased = S.reshape(var, -1) * (count / (count - 1))  # type: ignore[operator]
            running_var.mul_(1 - momentum).add_(unbiased.detach() * momentum)  # type: ignore[attr-defined]
    else:
        if running_mean is None or running_var is None:
            raise op_error(
                RuntimeError,
                "batch_norm",
                "running_mean and running_var must be defined in evaluation mode",
            )
        mu = S.reshape(running_mean, shape)
        var = S.reshape(running_var, shape)
    y = (work - mu) * TR.rsqrt(var + eps)  # type: ignore[operator]
    if weight is not None:
        y = y * S.reshape(weight, shape)  # type: ignore[operator]
    if bias is not None:
        y = y + S.reshape(bias, shape)  # type: ignore[operator]
    return name_grad_fn(y.to(x.dtype), "NativeBatchNormBackward0", x)  # type: ignore[attr-defined]


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Split the channels (dim 1) into `num_groups` groups and normalize each group of each
    sample over its channels and spatial dims, then scale and shift per channel.

    >>> import lazytorch
    >>> y = lazytorch.nn.functional.group_norm(lazytorch.randn(2, 4, 3), 2)
    >>> bool(y.reshape(2, 2, 6).mean(-1).abs().max() < 1e-6)
    True
    """
    x = tensor_arg(input, "group_norm")
    if x.ndim < 2:
        raise op_error(
            RuntimeError,
            "group_norm",
            f"Expected at least 2 dimensions for input tensor but received {x.ndim}",
        )
    n, c = x.shape[0], x.shape[1]
    spatial = 1
    for d in x.shape[2:]:
        spatial *= d
    if n * c // num_groups * spatial == 1:
        size = [n * c // num_groups, num_groups, *x.shape[2:]]
        raise op_error(
            ValueError,
            "group_norm",
            f"Expected more than 1 value per channel when training, got input size {size}",
        )
    if c % num_groups:
        raise op_error(
            RuntimeError,
            "group_norm",
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(x.shape)} and num_groups={num_groups}",
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.ndim != 1 or p.numel() != c):
            raise op_error(
                RuntimeError,
                "group_norm",
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(p.shape)} and input of shape "
                f"{list(x.shape)}",
            )
    _check_param_dtypes(x, (weight, bias), "group_norm")
    work = S.reshape(_opmath(x), (n, num_groups, c // num_groups * spatial))
    mu = R.mean(work, -1, keepdim=True)
    var = R.var(work, -1, keepdim=True, correction=0)
    y = S.reshape((work - mu) * TR.rsqrt(var + eps), x.shape)  # type: ignore[operator]
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * S.reshape(weight, shape)  # type: ignore[operator]
    if bias is not None:
        y = y + S.reshape(bias, shape)  # type: ignore[operator]
    return name_grad_fn(y.to(x.dtype), "NativeGroupNormBackward0", x)  # type: ignore[attr-defined]


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample over its spatial dims (with `use_input_stats`),
    or with the running statistics; then scale and shift per channel.

    As torch computes it: batch_norm of the input seen as one sample of N*C channels, the
    parameters and running statistics repeated N times; the running statistics then take
    the mean of their N updated copies.

    >>> import lazytorch
    >>> mean, var = lazytorch.zeros(2), lazytorch.ones(2)
    >>> _ = lazytorch.nn.functional.instance_norm(lazytorch.ones(3, 2, 4), mean, var)
    >>> mean, var
    (tensor([0.1000, 0.1000]), tensor([0.9000, 0.9000]))
    """
    x = tensor_arg(input, "instance_norm")
    if use_input_stats:
        spatial = 1
        for d in x.shape[2:]:
            spatial *= d
        if spatial == 1:
            raise op_error(
                ValueError,
                "instance_norm",
                f"Expected more than 1 spatial element when training, got input size "
                f"{list(x.shape)}",
            )
    elif running_mean is None or running_var is None:
        raise op_error(
            RuntimeError,
            "instance_norm",
            "Expected running_mean and running_var to be defined when use_input_stats is false",
        )
    if x.ndim < 2:
        raise op_error(
            IndexError,
            "instance_norm",
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, "
            f"{max(x.ndim, 1) - 1}], but got 1)",
        )
    n, c = x.shape[0], x.shape[1]

    def repeated(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(n)  # type: ignore[attr-defined,no-any-return]

    mean_n, var_n = repeated(running_mean), repeated(running_var)
    y = batch_norm(
        S.reshape(x, (1, n * c, *x.shape[2:])),
        mean_n,
        var_n,
        repeated(weight),
        repeated(bias),
        use_input_stats,
        momentum,
        eps,
    )
    if use_input_stats:
        for running, updated in ((running_mean, mean_n), (running_var, var_n)):
            if running is not None:
                running.copy_(R.mean(S.reshape(updated, (n, c)), 0))  # type: ignore[attr-defined]
    return S.reshape(y, x.shape)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide each element by (k + alpha * mean of the squares over `size` neighbouring
    channels) ** beta, the window zero-padded at the channel ends, as torch.

    >>> import lazytorch
    >>> lazytorch.nn.functional.local_response_norm(lazytorch.ones(1, 3, 1), 2, alpha=1.0)
    tensor([[[0.7378],
             [0.5946],
             [0.5946]]])
    """
    x = tensor_arg(input, "local_response_norm")
    if x.ndim < 3:
        raise op_error(
            ValueError,
            "local_response_norm",
            f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)",
        )
    if x.numel() == 0:
        return x
    # The channel window is an average pool of the squares along a new pooled dim.
    div = x * x  # type: ignore[operator]
    if x.ndim == 3:
        div = pad(S.unsqueeze(div, 1), (0, 0, size // 2, (size - 1) // 2))
        div = S.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        n, c = x.shape[0], x.shape[1]
        div = S.reshape(div, (n, 1, c, x.shape[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = S.reshape(S.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1), x.shape)
    return x / E.pow(div * alpha + k, beta)  # type: ignore[operator,no-any-return]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim`."""
    n = LA.vector_norm(input, p, dim, keepdim=True)
    return input / E.clamp(n, min=eps)  # type: ignore[operator,no-any-return]
