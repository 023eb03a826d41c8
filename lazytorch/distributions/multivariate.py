"""`MultivariateNormal` and `Dirichlet`: torch.distributions' names, parameters and
formulas, over lazytorch's linear algebra and the gamma sampler of `special_dists`.

>>> import lazytorch
>>> m = MultivariateNormal(lazytorch.zeros(2), lazytorch.eye(2))
>>> m.log_prob(lazytorch.zeros(2))
tensor(-1.8379)
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch.autograd import no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.exp_family import ExponentialFamily
from lazytorch.distributions.special_dists import _no_concentration_grad, standard_gamma
from lazytorch.distributions.utils import _EMPTY, _standard_normal, lazy_property
from lazytorch.ops import decomp as _linalg
from lazytorch.ops.elementwise import xlogy
from lazytorch.ops.shape import broadcast_shapes
from lazytorch.ops.special_math import digamma, lgamma
from lazytorch.tensor import Size, Tensor

__all__ = ["Dirichlet", "MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` for lower-triangular L, broadcasting the batch dims."""
    shape = broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(*shape, *bL.shape[-2:])
    x = bx.expand(*shape, bx.shape[-1])
    sol = _linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean `loc` and a covariance given by exactly one of
    `covariance_matrix`, `precision_matrix` or its lower Cholesky factor `scale_tril`.
    ``rsample`` is ``loc + L @ eps``: gradients reach `loc` and the covariance.
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
            precision_matrix is not None
        ) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if given.dim() < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else "covariance_matrix"
                if covariance_matrix is not None
                else "precision_matrix"
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        event = tuple(given.shape[-2:])
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch_shape, *event)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, *event)
        else:
            self.precision_matrix = precision_matrix.expand(*batch_shape, *event)  # type: ignore[union-attr]
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(Size(batch_shape), Size(self.loc.shape[-1:]), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _linalg.cholesky(_linalg.inv(precision_matrix))  # type: ignore[arg-type]

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = (*batch_shape, *self.event_shape)
        cov_shape = (*batch_shape, *self.event_shape, *self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full_tril(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return L.expand(*self._batch_shape, *L.shape[-2:])

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full_tril()

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return _linalg.inv(self.covariance_matrix)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(*self._batch_shape, *self._event_shape)
        )

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dim of `concentration`.
    Samples are normalized gamma variates (`standard_gamma`); ``rsample`` has no gradient
    to the concentration (NotImplementedError when it requires one)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(*batch_shape, *self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        _no_concentration_grad("Dirichlet", self.concentration)
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        return cm1 / cm1.sum(-1, True)

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            lgamma(self.concentration).sum(-1)
            - lgamma(a0)
            - (k - a0) * digamma(a0)
            - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
