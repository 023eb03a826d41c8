"""`OneHotCategorical`: a `Categorical` whose samples are one-hot vectors; its
straight-through variant."""

from __future__ import annotations

from typing import Any

from lazytorch.distributions import constraints
from lazytorch.distributions.categorical import Categorical
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.utils import _EMPTY
from lazytorch.nn.functional import one_hot
from lazytorch.ops.creation import eye
from lazytorch.tensor import Size, Tensor

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """One-hot vectors of size ``probs.size(-1)``, parameterized as `Categorical`.

    >>> import lazytorch
    >>> m = OneHotCategorical(lazytorch.tensor([0.0, 1.0, 0.0]))
    >>> m.sample()
    tensor([0., 1., 0.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(Size(sample_shape))
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n, *self.batch_shape, n))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """`OneHotCategorical` with a straight-through ``rsample``: the one-hot sample forward,
    the gradient of `probs` backward (Bengio et al., 2013).

    >>> import lazytorch
    >>> logits = lazytorch.zeros(3, requires_grad=True)
    >>> s = OneHotCategoricalStraightThrough(logits=logits).rsample()
    >>> (s * lazytorch.tensor([1.0, 0.0, 0.0])).sum().backward()
    >>> logits.grad
    tensor([ 0.2222, -0.1111, -0.1111])
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # cached (lazy_property)
        return samples + (probs - probs.detach())
