"""The concrete (Gumbel-softmax) relaxations: `LogitRelaxedBernoulli`, `RelaxedBernoulli`,
`ExpRelaxedCategorical` and `RelaxedOneHotCategorical`, with torch.distributions' names,
parameters and formulas. ``rsample`` is differentiable in the logits/probs (and the
temperature); draws come from lazytorch's default generator.
"""

from __future__ import annotations

from typing import Any

from lazytorch.distributions import constraints
from lazytorch.distributions.categorical import Categorical
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.transformed_distribution import TransformedDistribution
from lazytorch.distributions.transforms import ExpTransform, SigmoidTransform
from lazytorch.distributions.utils import (
    _EMPTY,
    _NUMBER,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from lazytorch.ops.creation import full_like
from lazytorch.ops.random import rand
from lazytorch.tensor import Size, Tensor

__all__ = [
    "ExpRelaxedCategorical",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a `RelaxedBernoulli` sample, parameterized by `temperature` and
    `probs` or `logits`."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _NUMBER)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, _NUMBER)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(tuple(shape), dtype=probs.dtype, device=probs.device))
        return (
            uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()
        ) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The sigmoid of a `LogitRelaxedBernoulli`: a relaxed (continuous, reparameterizable)
    Bernoulli on ``(0, 1)`` at `temperature`."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature  # type: ignore[attr-defined,no-any-return]

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits  # type: ignore[attr-defined,no-any-return]

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs  # type: ignore[attr-defined,no-any-return]


class ExpRelaxedCategorical(Distribution):
    """The log of a `RelaxedOneHotCategorical` sample (Gumbel-softmax scores in log
    space)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(
            rand(tuple(shape), dtype=self.logits.dtype, device=self.logits.device)
        )
        gumbels = -((-uniforms.log()).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() - self.temperature.log().mul(
            -(k - 1)
        )
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A relaxed one-hot categorical on the simplex at `temperature` (Gumbel-softmax):
    the exp of an `ExpRelaxedCategorical`.

    >>> import lazytorch
    >>> d = RelaxedOneHotCategorical(lazytorch.tensor(0.5), logits=lazytorch.zeros(3))
    >>> tuple(d.rsample((2,)).shape)
    (2, 3)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature  # type: ignore[attr-defined,no-any-return]

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits  # type: ignore[attr-defined,no-any-return]

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs  # type: ignore[attr-defined,no-any-return]
