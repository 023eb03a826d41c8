"""torch.nn.init: fill a tensor in place (under ``no_grad``) from a distribution.

The formulas (fans, gains, bounds) are torch's; the random numbers come from lazytorch's
own generator, so values differ from torch's for the same seed, while the distributions
agree. Every function returns the tensor it filled, which stays a leaf.

>>> import lazytorch
>>> w = lazytorch.empty(256, 128)
>>> _ = lazytorch.nn.init.kaiming_uniform_(w, a=5 ** 0.5)   # Linear's default
>>> bound = 1 / 128 ** 0.5
>>> bool(w.abs().max() <= bound)
True
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import random as RND
from lazytorch.tensor import Tensor

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

# Gains that depend on nothing but the nonlinearity's name (torch's table).
_GAINS: dict[str, float] = {
    "linear": 1,
    "conv1d": 1,
    "conv2d": 1,
    "conv3d": 1,
    "conv_transpose1d": 1,
    "conv_transpose2d": 1,
    "conv_transpose3d": 1,
    "sigmoid": 1,
    "tanh": 5.0 / 3,
    "relu": math.sqrt(2.0),
    "selu": 3.0 / 4,
}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``leaky_relu`` takes its slope as `param`).

    >>> from lazytorch.nn import init
    >>> init.calculate_gain("tanh"), round(init.calculate_gain("leaky_relu", 0.2), 6)
    (1.6666666666666667, 1.38675)
    """
    if nonlinearity in _GAINS:
        return _GAINS[nonlinearity]
    if nonlinearity == "leaky_relu":
        if param is None:
            slope: float = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): dims 1 and 0 times the receptive field (the product of the rest)."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with U(a, b).

    >>> import lazytorch
    >>> w = lazytorch.nn.init.uniform_(lazytorch.empty(1000), -2.0, 3.0)
    >>> bool(w.min() >= -2.0), bool(w.max() <= 3.0)
    (True, True)
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)  # type: ignore[attr-defined,no-any-return]


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with N(mean, std**2).

    >>> import lazytorch
    >>> w = lazytorch.nn.init.normal_(lazytorch.empty(100000), 3.0, 0.5)
    >>> round(w.mean().item(), 1), round(w.std().item(), 1)
    (3.0, 0.5)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)  # type: ignore[attr-defined,no-any-return]


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`.

    >>> import lazytorch
    >>> lazytorch.nn.init.constant_(lazytorch.empty(3), 0.3)
    tensor([0.3000, 0.3000, 0.3000])
    """
    with no_grad():
        return tensor.fill_(val)  # type: ignore[attr-defined,no-any-return]


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import lazytorch
    >>> lazytorch.nn.init.ones_(lazytorch.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import lazytorch
    >>> lazytorch.nn.init.zeros_(lazytorch.ones(2))
    tensor([0., 0.])
    """
    with no_grad():
        return tensor.zero_()  # type: ignore[attr-defined,no-any-return]


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d tensor with the identity matrix (ones on the diagonal).

    >>> import lazytorch
    >>> lazytorch.nn.init.eye_(lazytorch.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        eye = C.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
        return tensor.copy_(eye)  # type: ignore[attr-defined,no-any-return]


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix, as torch: the Q of a QR decomposition of a
    standard normal (rows, cols) matrix, signs fixed by R's diagonal, times `gain`; dims
    after the first are flattened into columns.

    The QR runs once on the host (NumPy): initialization is not part of any training
    program, so there is no reason to compile it.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.orthogonal_(lazytorch.empty(3, 5))
    >>> bool(((w @ w.T) - lazytorch.eye(3)).abs().max() < 1e-5)
    True
    """
    import numpy as np

    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = RND.randn(rows, cols, dtype=dt.float64, generator=generator)._values()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        value = C.tensor(np.ascontiguousarray(q * gain), dtype=tensor.dtype, device=tensor.device)
        return tensor.copy_(value.reshape(tensor.shape))  # type: ignore[attr-defined,no-any-return]


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3, 4, 5}-d conv weight with the Dirac delta: convolving with it keeps the
    input channels (per group), as torch.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.dirac_(lazytorch.empty(2, 2, 3))
    >>> w[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    import numpy as np

    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    value = np.zeros(sizes)
    centre = tuple(k // 2 for k in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            value[(g * out_per_group + d, d, *centre)] = 1
    with no_grad():
        return tensor.copy_(C.tensor(value, dtype=tensor.dtype, device=tensor.device))  # type: ignore[attr-defined,no-any-return]


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-d tensor from N(0, std) with a fraction `sparsity` of each column zeroed
    (the rows chosen at random per column), as torch.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.sparse_(lazytorch.empty(10, 3), sparsity=0.3)
    >>> [int((w[:, j] == 0).sum()) for j in range(3)]
    [3, 3, 3]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)  # type: ignore[attr-defined]
        for j in range(cols):
            rows_idx = RND.randperm(rows, generator=generator)[:num_zeros]
            tensor[rows_idx, j] = 0
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.xavier_uniform_(lazytorch.empty(30, 20))
    >>> bool(w.abs().max() <= (6 / 50) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.xavier_normal_(lazytorch.empty(500, 300))
    >>> round(w.std().item() / (2 / 800) ** 0.5, 1)
    1.0
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.kaiming_uniform_(lazytorch.empty(64, 32), mode="fan_in", nonlinearity="relu")
    >>> bool(w.abs().max() <= (6 / 32) ** 0.5)
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    >>> import lazytorch
    >>> w = lazytorch.nn.init.kaiming_normal_(lazytorch.empty(400, 500), mode="fan_out", nonlinearity="relu")
    >>> round(w.std().item() / (2 / 400) ** 0.5, 1)
    1.0
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """N(mean, std**2) truncated to [a, b].

    torch draws by rejection, which needs to look at values; here the draw is lazy, by
    the inverse CDF: u ~ U(cdf(a), cdf(b)) mapped through ``mean + std*sqrt(2)*erfinv(2u-1)``
    (the same distribution; values are clamped to [a, b] against rounding).

    >>> import lazytorch
    >>> w = lazytorch.nn.init.trunc_normal_(lazytorch.empty(10000), std=0.02, a=-0.04, b=0.04)
    >>> bool(w.abs().max() <= 0.04)
    True
    """
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    with no_grad():
        # float64 math keeps the tails accurate; the result is rounded once to the dtype
        u = C.empty(tensor.shape, dtype=dt.float64, device=tensor.device)
        u.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)  # type: ignore[attr-defined]
        z = _erfinv(u) * (std * math.sqrt(2.0)) + mean  # type: ignore[operator]
        return tensor.copy_(E.clamp(z, a, b))  # type: ignore[attr-defined,no-any-return]


def _erfinv(y: Tensor) -> Tensor:
    """Inverse error function for y in (-1, 1): Giles' polynomial (single-precision
    accurate) refined by two Newton steps on erf (float64 accurate)."""
    w = -E.log1p(-y * y)  # type: ignore[operator]
    central = w - 2.5  # type: ignore[operator]
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):  # fmt: skip
        p1 = p1 * central + c  # type: ignore[operator,assignment]
    tail = E.sqrt(E.clamp(w, min=5.0)) - 3.0  # type: ignore[operator]
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):  # fmt: skip
        p2 = p2 * tail + c  # type: ignore[operator,assignment]
    x = E.where(w < 5.0, p1, p2) * y  # type: ignore[operator]
    two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
    for _ in range(2):
        step = (E.erf(x) - y) / (two_over_sqrt_pi * E.exp(-x * x))  # type: ignore[operator]
        x = E.where(E.isfinite(step), x - step, x)  # type: ignore[operator]
    return x


def _default_weight_and_bias_(weight: Tensor, bias: Tensor | None) -> None:
    """torch's default init of a Linear or Conv layer: kaiming_uniform_(a=sqrt(5)) for the
    weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)


# -- torch's deprecated names without the trailing underscore ---------------------------------
def _deprecated(fill: Any) -> Any:
    new = fill.__name__
    old = new[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
            FutureWarning,
            stacklevel=2,
        )
        return fill(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"Deprecated: `{new}`, with torch's warning."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
dirac = _deprecated(dirac_)
eye = _deprecated(eye_)
