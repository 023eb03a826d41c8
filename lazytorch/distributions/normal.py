"""`Normal`, parameterized by `loc` and `scale`."""

from __future__ import annotations

import math
from typing import Any

from lazytorch.autograd import no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.exp_family import ExponentialFamily
from lazytorch.distributions.utils import _EMPTY, _NUMBER, _standard_normal, broadcast_all
from lazytorch.ops.elementwise import erf
from lazytorch.ops.special_math import erfinv
from lazytorch.tensor import Size, Tensor

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean `loc` and standard deviation `scale`.

    ``rsample`` is ``loc + eps * scale`` with ``eps ~ N(0, 1)``: gradients reach both.

    >>> import lazytorch
    >>> m = Normal(lazytorch.tensor([0.0]), lazytorch.tensor([1.0]))
    >>> m.log_prob(lazytorch.tensor([0.0]))
    tensor([-0.9189])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, _NUMBER) and isinstance(scale, _NUMBER):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
