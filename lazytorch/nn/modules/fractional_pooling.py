"""`FractionalMaxPool2d` and `FractionalMaxPool3d`: torch's modules over
`lazytorch.nn.functional.fractional_max_pool2d`/``3d``."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(v: Any, n: int) -> tuple[Any, ...]:
    if isinstance(v, (int, float)):
        return (v,) * n
    return tuple(v)


class _FractionalMaxPoolNd(Module):
    _nd = 2
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = _tuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"FractionalMaxPool{nd}d requires specifying either "
                "an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (stochastic window placement; see
    ``F.fractional_max_pool2d``).

    >>> import lazytorch
    >>> m = FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    >>> tuple(m(lazytorch.randn(2, 4, 10, 8)).shape)
    (2, 4, 5, 4)
    """

    _nd = 2

    def forward(self, input: Tensor) -> Any:
        return F.fractional_max_pool2d(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (see ``F.fractional_max_pool3d``)."""

    _nd = 3

    def forward(self, input: Tensor) -> Any:
        return F.fractional_max_pool3d(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )
