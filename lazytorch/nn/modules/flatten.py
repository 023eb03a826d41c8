"""Flatten, Unflatten."""

from __future__ import annotations

from typing import Any

from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims `start_dim` through `end_dim` into one (by default all but the batch).

    >>> import lazytorch
    >>> lazytorch.nn.Flatten()(lazytorch.zeros(32, 1, 5, 5)).shape
    lazytorch.Size([32, 25])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)  # type: ignore[attr-defined,no-any-return]

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size`.

    >>> import lazytorch
    >>> lazytorch.nn.Unflatten(1, (2, 5, 5))(lazytorch.zeros(2, 50)).shape
    lazytorch.Size([2, 2, 5, 5])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input: Any) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, "
                        f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(
            f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}"
        )

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)  # type: ignore[attr-defined,no-any-return]

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
