"""Distributions whose densities need the special functions (lgamma, digamma): `Gamma`,
`Chi2`, `Beta`, `Poisson`, and the location-scale families `Cauchy`, `Gumbel`,
`HalfNormal`, `LogNormal` — torch.distributions' names, parameters and formulas.

Sampling: `Cauchy`, `Gumbel`, `HalfNormal` and `LogNormal` draw from lazytorch's default
generator (inverse CDF or a transformed normal; differentiable `rsample`). `Gamma`, `Chi2`
and `Beta` draw gamma variates by Marsaglia and Tsang's rejection method (`standard_gamma`),
`Poisson` by `lazytorch.poisson` (CDF inversion, or PTRS rejection from rate 10), all
from the same generator, so
``manual_seed`` makes them reproducible; the numbers are not torch's (its samplers consume
its own generator differently), only their distribution is. Their ``rsample`` carries the
gradient to `rate` but not to the concentrations (torch's implicit reparameterization): a
concentration that requires grad raises NotImplementedError saying so.
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch._dtype_info import finfo
from lazytorch.autograd import is_grad_enabled, no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.utils import _EMPTY, _NUMBER, _standard_normal, broadcast_all
from lazytorch.ops.elementwise import where, xlogy
from lazytorch.ops.random import first_accepted, poisson, rand, randn
from lazytorch.ops.special_math import digamma, lgamma
from lazytorch.tensor import Size, Tensor

__all__ = ["Beta", "Cauchy", "Chi2", "Gamma", "Gumbel", "HalfNormal", "LogNormal", "Poisson"]


_GAMMA_ROUNDS = 4  # proposals drawn at once per entry (each accepted with p > 0.95)
_GAMMA_BATCHES = 20  # at most this many draws of them before giving up


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) variates, one per entry of `alpha` (no gradient), by Marsaglia and
    Tsang's method: ``d (1 + c z)**3`` for normal ``z``, accepted when
    ``log u < z**2 / 2 + d - d v + d log v``; ``alpha < 1`` draws Gamma(alpha + 1) and scales
    by ``u**(1 / alpha)``. Each batch proposes `_GAMMA_ROUNDS` candidates per entry at once
    (lazily) and keeps each entry's first accepted one; the host checks whether any entry
    has none and then draws another batch for all, at most `_GAMMA_BATCHES` times (the
    chance of needing a second batch is below 1e-5 per entry).
    """
    a = alpha.detach()
    shape, dtype, device = tuple(a.shape), a.dtype, a.device
    boosted = where(a < 1, a + 1, a)
    d = boosted - 1.0 / 3.0
    c = (9.0 * d).rsqrt()

    def propose() -> tuple[Tensor, Tensor]:
        # randn, not _standard_normal: torch draws its gamma in C, with no Tensor.normal_
        z = randn((_GAMMA_ROUNDS, *shape), dtype=dtype, device=device)
        u = rand((_GAMMA_ROUNDS, *shape), dtype=dtype, device=device)
        v = (1 + c * z) ** 3
        ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * v + d * v.clamp(min=1e-30).log())
        return d * v, ok

    result = first_accepted(
        propose,
        _GAMMA_BATCHES,
        lambda: RuntimeError(
            f"standard_gamma: no proposal accepted for some entries after "
            f"{_GAMMA_BATCHES * _GAMMA_ROUNDS} rounds (are the concentrations finite and > 0?)"
        ),
    )
    scale = rand(shape, dtype=dtype, device=device).pow(1.0 / a)
    out = where(a < 1, result * scale, result)
    return out.clamp(min=finfo(dtype).tiny)


def _no_concentration_grad(name: str, *params: Tensor) -> None:
    if is_grad_enabled() and any(p.requires_grad for p in params):
        raise NotImplementedError(
            f"{name}.rsample: the gradient with respect to the concentration (torch's implicit "
            "reparameterization of gamma samples) is not implemented in lazytorch; use "
            "sample(), or detach the concentration"
        )


class _TwoParam(Distribution):
    """The shared constructor/expand of a distribution with two broadcast parameters."""

    _params: tuple[str, str] = ("loc", "scale")

    def __init__(self, a: Any, b: Any, validate_args: bool | None = None) -> None:
        x, y = broadcast_all(a, b)
        setattr(self, self._params[0], x)
        setattr(self, self._params[1], y)
        if isinstance(a, _NUMBER) and isinstance(b, _NUMBER):
            batch_shape = Size()
        else:
            batch_shape = x.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        cls = type(self)
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for p in self._params:
            setattr(new, p, getattr(self, p).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _uniform(self, sample_shape: Any) -> Tensor:
        p = getattr(self, self._params[0])
        shape = self._extended_shape(sample_shape)
        return rand(tuple(shape), dtype=p.dtype, device=p.device)


class Cauchy(_TwoParam):
    """Cauchy(loc, scale): density ``1 / (pi scale (1 + ((x - loc) / scale)**2))``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(loc, scale, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc * math.nan

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.loc * 0 + math.inf

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        u = self._uniform(sample_shape)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_TwoParam):
    """Gumbel(loc, scale): ``loc - scale log(-log U)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(loc, scale, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * 0.57721566490153286060

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        tiny = finfo(self.loc.dtype).tiny
        u = self._uniform(sample_shape).clamp(min=tiny, max=1 - finfo(self.loc.dtype).eps)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + 0.57721566490153286060)


class LogNormal(_TwoParam):
    """exp of Normal(loc, scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(loc, scale, validate_args)

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + eps * self.scale).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return (
            -((y - self.loc) ** 2) / (2 * self.scale**2)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
            - y
        )

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log() + self.loc


class HalfNormal(Distribution):
    """|Normal(0, scale)|."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        (self.scale,) = broadcast_all(scale)
        batch_shape = Size() if isinstance(scale, _NUMBER) else self.scale.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return (
            _standard_normal(shape, dtype=self.scale.dtype, device=self.scale.device) * self.scale
        ).abs()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp = (
            -(value**2) / (2 * self.scale**2)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
            + math.log(2)
        )
        return lp.masked_fill(value < 0, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        return 2 * (0.5 * (1 + (value / (self.scale * math.sqrt(2))).erf())) - 1

    def entropy(self) -> Tensor:
        return 0.5 * math.log(math.pi * math.e / 2) + self.scale.log()


class Gamma(_TwoParam):
    """Gamma(concentration, rate): density ``rate**a x**(a-1) exp(-rate x) / Gamma(a)``."""

    _params = ("concentration", "rate")
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        super().__init__(concentration, rate, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        _no_concentration_grad(type(self).__name__, self.concentration)
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=finfo(x.dtype).tiny)

    def log_prob(self, value: Any) -> Tensor:

        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - lgamma(self.concentration)
        )

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[no-any-return]

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Beta(Distribution):
    """Beta(concentration1, concentration0) on [0, 1]."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        if isinstance(concentration1, _NUMBER) and isinstance(concentration0, _NUMBER):
            batch_shape = Size()
        else:
            batch_shape = self.concentration1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        # torch's (Dirichlet's): the clamped ratio; where both are below 1, torch's argmax over
        # that ratio (0 / 0, NaN in both places) picks the first: the mode is 1

        a, b = self.concentration1, self.concentration0
        am, bm = (a - 1).clamp(min=0), (b - 1).clamp(min=0)
        return where((a < 1) & (b < 1), 1.0, am / (am + bm))

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        _no_concentration_grad("Beta", self.concentration1, self.concentration0)
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1.expand(shape))
        y = standard_gamma(self.concentration0.expand(shape))
        tiny = finfo(x.dtype).tiny
        return (x / (x + y)).clamp(min=tiny, max=1 - finfo(x.dtype).eps / 2)

    def log_prob(self, value: Any) -> Tensor:

        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return xlogy(a - 1, value) + xlogy(b - 1, 1 - value) + lgamma(a + b) - lgamma(a) - lgamma(b)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (
            lgamma(a)
            + lgamma(b)
            - lgamma(total)
            - (a - 1) * digamma(a)
            - (b - 1) * digamma(b)
            + (total - 2) * digamma(total)
        )


class Poisson(Distribution):
    """Poisson(rate) on the nonnegative integers."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, _NUMBER) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        with no_grad():
            shape = self._extended_shape(sample_shape)
            return poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Tensor:

        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)
