"""`ExponentialFamily`: the base class torch gives Normal, Bernoulli and Exponential."""

from __future__ import annotations

from typing import Any

from lazytorch.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``.

    Each subclass here defines its entropy in closed form; torch's generic entropy through
    the log normalizer's gradient (a Bregman divergence) is not provided.
    """

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError
