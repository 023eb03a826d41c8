"""parameters_to_vector and vector_to_parameters."""

from __future__ import annotations

from collections.abc import Iterable

from lazytorch.ops import shape as S
from lazytorch.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(params: list[Tensor]) -> None:
    if len({str(p.device) for p in params}) > 1:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-d tensor.

    >>> import lazytorch
    >>> lin = lazytorch.nn.Linear(3, 2)
    >>> lazytorch.nn.utils.parameters_to_vector(lin.parameters()).shape
    lazytorch.Size([8])
    """
    params = list(parameters)
    _check_same_device(params)
    return S.cat([S.reshape(p, -1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d `vec` into the parameters' values (``.data``).

    >>> import lazytorch
    >>> lin = lazytorch.nn.Linear(2, 1)
    >>> lazytorch.nn.utils.vector_to_parameters(lazytorch.arange(3.0), lin.parameters())
    >>> lin.weight.tolist(), lin.bias.tolist()
    ([[0.0, 1.0]], [2.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected lazytorch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _check_same_device(params)
    pointer = 0
    for param in params:
        n = param.numel()
        param.data = S.reshape(vec[pointer : pointer + n], param.shape).detach()  # type: ignore[index,attr-defined]
        pointer += n
