"""Helpers shared by the distributions, with torch.distributions.utils' names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import lazytorch.nn.functional as F
from lazytorch import _config
from lazytorch._dtype_info import finfo
from lazytorch.autograd import enable_grad
from lazytorch.ops.creation import empty, tensor
from lazytorch.ops.creation import tensor as _index_tensor
from lazytorch.ops.shape import broadcast_tensors
from lazytorch.tensor import Size, Tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

_NUMBER = (bool, int, float)
_EMPTY = Size()  # the default sample shape (a module-level singleton: a Size is immutable)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's
    dtype and device (the default dtype when all are numbers).

    >>> import lazytorch
    >>> [tuple(v.shape) for v in broadcast_all(lazytorch.zeros(2, 1), 1.0)]
    [(2, 1), (2, 1)]
    """
    if not all(isinstance(v, (Tensor, *_NUMBER)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = {"dtype": _config.get_default_dtype()}
        for v in values:
            if isinstance(v, Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = tuple(v if isinstance(v, Tensor) else tensor(v, **options) for v in values)
    return tuple(broadcast_tensors(*values))


def _standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    # torch's: an empty tensor filled by ``Tensor.normal_`` (not ``randn``), so a tool that
    # records and replays torch's draws by the call that made them (tests/realworld's
    # harness) sees the same calls here; the values are randn's
    return empty(tuple(shape), dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape((*value.shape[:-dim], -1)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (`is_binary`) or from unnormalized log probabilities
    along the last dimension."""
    if is_binary:
        return logits.sigmoid()
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into ``[eps, 1 - eps]`` (eps of their dtype).

    >>> import lazytorch
    >>> clamp_probs(lazytorch.tensor([0.0, 0.5, 1.0]))
    tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (`is_binary`) or log probabilities from probabilities (clamped first)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed on first access (with gradients enabled) and then stored as an
    instance attribute: ``probs`` of a distribution made from ``logits``, or the reverse."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__name__ = wrapped.__name__
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_flat_indices(n: int, diag: int) -> list[int]:
    """Row-major flat indices of the entries ``j < i + diag + 1`` of an n x n matrix (the
    order of torch's boolean-mask indexing)."""
    return [i * n + j for i in range(n) for j in range(n) if j < i + diag + 1]


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular part of `mat` (below diagonal `diag`), flattened row by row.

    >>> import lazytorch
    >>> tril_matrix_to_vec(lazytorch.arange(9.0).reshape(3, 3), diag=-1)
    tensor([3., 6., 7.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    idx = _index_tensor(_tril_flat_indices(n, diag), device=mat.device)
    return mat.reshape(*mat.shape[:-2], n * n).index_select(-1, idx)


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular matrix (below diagonal `diag`) whose entries, row by row, are
    `vec`; zeros elsewhere.

    >>> import lazytorch
    >>> vec_to_tril_matrix(lazytorch.tensor([1.0, 2.0, 3.0]), diag=-1)
    tensor([[0., 0., 0.],
            [1., 0., 0.],
            [2., 3., 0.]])
    """
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    idx = _index_tensor(_tril_flat_indices(n, diag), device=vec.device)
    flat = vec.new_zeros((*vec.shape[:-1], n * n)).index_copy(-1, idx, vec)
    return flat.reshape(*vec.shape[:-1], n, n)
