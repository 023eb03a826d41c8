"""`LowRankMultivariateNormal` (covariance ``W W^T + diag(D)``) and `ContinuousBernoulli`,
with torch.distributions' names, parameters and formulas (torch's in-place diagonal update
written as ``+ eye``: the same values)."""

from __future__ import annotations

import math
from typing import Any

from lazytorch.autograd import no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.exp_family import ExponentialFamily
from lazytorch.distributions.multivariate import _batch_mahalanobis, _batch_mv
from lazytorch.distributions.utils import (
    _EMPTY,
    _NUMBER,
    _standard_normal,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from lazytorch.nn.functional import binary_cross_entropy_with_logits
from lazytorch.ops import decomp as _linalg
from lazytorch.ops.creation import eye, ones_like, zeros_like
from lazytorch.ops.elementwise import where
from lazytorch.ops.random import rand
from lazytorch.ops.shape import broadcast_tensors
from lazytorch.tensor import Size, Tensor

__all__ = ["ContinuousBernoulli", "LowRankMultivariateNormal"]


def _plus_identity(k: Tensor) -> Tensor:
    n = k.shape[-1]
    return k + eye(n, dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^-1 W``."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    return _linalg.cholesky(_plus_identity(wt_dinv @ w))


def _batch_lowrank_logdet(w: Tensor, d: Tensor, capacitance_tril: Tensor) -> Tensor:
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _batch_lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    wt_dinv = w.mT / d.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    term1 = (x.pow(2) / d).sum(-1)
    term2 = _batch_mahalanobis(capacitance_tril, wt_dinv_x)
    return term1 - term2


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with a low-rank plus diagonal covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    >>> import lazytorch
    >>> m = LowRankMultivariateNormal(lazytorch.zeros(2), lazytorch.tensor([[1.0], [0.0]]),
    ...                               lazytorch.ones(2))
    >>> m.covariance_matrix
    tensor([[2., 0.],
            [0., 1.]])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        cov_factor: Tensor,
        cov_diag: Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc_, cov_factor, cov_diag_)
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (
            self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        ).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        k = _plus_identity(dinvsqrt_w @ dinvsqrt_w.mT)
        scale_tril = cov_diag_sqrt_unsqueeze * _linalg.cholesky(k)
        return scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        covariance_matrix = w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()
        return covariance_matrix.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = _linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision_matrix = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        return precision_matrix.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_w = _standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        log_det = _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Tensor:
        log_det = _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham), parameterized by
    `probs` or `logits`; near ``probs = 0.5`` (within `lims`) torch's Taylor expansions.

    >>> import lazytorch
    >>> d = ContinuousBernoulli(lazytorch.tensor([0.2]))
    >>> d.log_prob(lazytorch.tensor([0.5]))
    tensor([-0.0788])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self,
        probs: Any = None,
        logits: Any = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _NUMBER)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, _NUMBER)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(
            self._outside_unstable_region(), self.probs, self._lims[0] * ones_like(self.probs)
        )

    def _cont_bern_log_norm(self) -> Tensor:
        cut_probs = self._cut_probs()
        below = where(cut_probs <= 0.5, cut_probs, zeros_like(cut_probs))
        above = where(cut_probs >= 0.5, cut_probs, ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - where(
            cut_probs <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2) + 1.0 / (
            (-cut_probs).log1p() - cut_probs.log()
        ).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = _EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0
        )
        unbounded_cdfs = where(self._outside_unstable_region(), cdfs, value)
        return where(
            value <= 0.0,
            zeros_like(value),
            where(value >= 1.0, ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value: Tensor) -> Tensor:
        cut_probs = self._cut_probs()
        return where(
            self._outside_unstable_region(),
            ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p() - (-cut_probs).log1p())
            / (cut_probs.log() - (-cut_probs).log1p()),
            value,
        )

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = where(out_unst_reg, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut_nat_params.expm1().abs().log() - cut_nat_params.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(out_unst_reg, log_norm, taylor)
