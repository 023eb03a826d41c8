"""Families written as a `TransformedDistribution` of a simpler one, as torch writes them:
`HalfCauchy` (|Cauchy|), `Pareto` (scale exp(Exponential)), `Weibull` (a power of an
Exponential), `Kumaraswamy` (powers of a Uniform), `InverseGamma` (1 / Gamma) and
`LogisticNormal` (stick-breaking of a Normal), with torch.distributions' names, parameters
and formulas.
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch.distributions import constraints
from lazytorch.distributions.exponential import Exponential
from lazytorch.distributions.normal import Normal
from lazytorch.distributions.special_dists import Cauchy, Gamma
from lazytorch.distributions.transformed_distribution import TransformedDistribution
from lazytorch.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    PowerTransform,
    StickBreakingTransform,
)
from lazytorch.distributions.uniform import Uniform
from lazytorch.distributions.utils import broadcast_all, euler_constant
from lazytorch.ops.creation import full, full_like, ones_like, zeros_like
from lazytorch.ops.elementwise import where
from lazytorch.ops.special_math import digamma, lgamma
from lazytorch.tensor import Tensor

__all__ = ["HalfCauchy", "InverseGamma", "Kumaraswamy", "LogisticNormal", "Pareto", "Weibull"]


class HalfCauchy(TransformedDistribution):
    """|Cauchy(0, scale)|.

    >>> import lazytorch
    >>> HalfCauchy(lazytorch.tensor([1.0])).log_prob(lazytorch.tensor([1.0]))
    tensor([-1.1447])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale  # type: ignore[attr-defined,no-any-return]

    @property
    def mean(self) -> Tensor:
        return full(
            tuple(self._extended_shape()),
            math.inf,
            dtype=self.scale.dtype,
            device=self.scale.device,
        )

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        scale = self.base_dist.scale  # type: ignore[attr-defined]
        value = value.to(dtype=scale.dtype, device=scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class Pareto(TransformedDistribution):
    """Pareto Type 1 with `scale` and shape `alpha`: ``scale * exp(Exponential(alpha))``."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(
        self, scale: Tensor | float, alpha: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """Weibull with `scale` and `concentration`: ``scale * Exponential(1) ** (1 / k)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(
        self,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        return (
            self.scale
            * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()
        )

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (
            lgamma(1 + 2 * self.concentration_reciprocal).exp()
            - (2 * lgamma(1 + self.concentration_reciprocal)).exp()
        )

    def entropy(self) -> Tensor:
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + (self.scale * self.concentration_reciprocal).log()
            + 1
        )


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on ``(0, 1)``:
    ``(1 - U ** (1 / b)) ** (1 / a)``."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        concentration1: Tensor | float,
        concentration0: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            full_like(self.concentration0, 0),
            full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode = where((b < 1) | (a < 1), math.nan, log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


class InverseGamma(TransformedDistribution):
    """1 / Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(
        self,
        concentration: Tensor | float,
        rate: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration  # type: ignore[attr-defined,no-any-return]

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate  # type: ignore[attr-defined,no-any-return]

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        result = self.rate.square() / ((a - 1).square() * (a - 2))
        return where(a > 2, result, math.inf)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)


class LogisticNormal(TransformedDistribution):
    """The stick-breaking transform of a Normal(loc, scale): a distribution on the
    simplex of one more dimension than `loc`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base_dist: Any = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc  # type: ignore[attr-defined,no-any-return]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale  # type: ignore[attr-defined,no-any-return]
