"""`kl_divergence` and `register_kl`: KL(p || q) by the most specific registered pair.

The pairs registered here are written as torch's, with ``where`` in place of torch's masked
assignments (the same values and gradients, and no in-place op on a graph).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from functools import total_ordering
from typing import Any

from lazytorch.distributions.bernoulli import Bernoulli
from lazytorch.distributions.categorical import Categorical
from lazytorch.distributions.discrete import Binomial, Geometric
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.exponential import Exponential
from lazytorch.distributions.independent import Independent
from lazytorch.distributions.laplace import Laplace
from lazytorch.distributions.lowrank_continuous import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from lazytorch.distributions.multivariate import Dirichlet, MultivariateNormal, _batch_mahalanobis
from lazytorch.distributions.normal import Normal
from lazytorch.distributions.one_hot_categorical import OneHotCategorical
from lazytorch.distributions.special_dists import (
    Beta,
    Cauchy,
    Gamma,
    HalfNormal,
    LogNormal,
    Poisson,
)
from lazytorch.distributions.transformed_distribution import TransformedDistribution
from lazytorch.distributions.transformed_families import Pareto
from lazytorch.distributions.uniform import Uniform
from lazytorch.distributions.utils import _sum_rightmost
from lazytorch.nn.functional import softplus
from lazytorch.ops import decomp as _linalg
from lazytorch.ops.creation import full_like
from lazytorch.ops.elementwise import where
from lazytorch.ops.shape import broadcast_shapes
from lazytorch.ops.special_math import digamma, lgamma
from lazytorch.tensor import Tensor

__all__ = ["kl_divergence", "register_kl"]

# The registered (type, type) pairs, and the lookups already resolved for concrete types.
_KL_REGISTRY: dict[tuple[type, type], Callable[..., Any]] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function computing ``KL(p || q)`` for distributions of these types.

    >>> class MyNormal(Normal): ...
    >>> @register_kl(MyNormal, MyNormal)
    ... def kl_mine(p, q):
    ...     return (p.loc - q.loc).abs()
    """
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # the lookup order may have changed
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    """The most specific registered match (single inheritance assumed)."""
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    # the left- and right-lexicographic orders must agree
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=2,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, batched over the batch shape.

    >>> import lazytorch
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and "
            f"q type {q.__class__.__name__}"
        )
    return fun(p, q)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = where((q.probs == 0).expand_as(t), math.inf, t)
    t = where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    """torch's: log-determinant ratio, trace and Mahalanobis terms via triangular solves."""
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    pl, ql = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = ql.diagonal(dim1=-2, dim2=-1).log().sum(-1) - pl.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    n = p.event_shape[0]
    shape = broadcast_shapes(tuple(ql.shape[:-2]), tuple(pl.shape[:-2]))
    q_tril = ql.expand(*shape, n, n)
    p_tril = pl.expand(*shape, n, n)
    term2 = _linalg.solve_triangular(q_tril, p_tril, upper=False).pow(2).flatten(-2).sum(-1)
    term3 = _batch_mahalanobis(ql, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_params_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = lgamma(sum_p_concentration) - lgamma(sum_q_concentration)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)  # torch: NaN at rate 0


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return where(p.support.lower_bound < q.support.lower_bound, math.inf, result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Poisson, Binomial)
def _kl_poisson_binomial(p: Poisson, q: Binomial) -> Tensor:
    return full_like(p.rate, math.inf)


# torch writes LogNormal and HalfNormal as transformed Normals: their KL is the Normals'.
@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p, q)  # type: ignore[arg-type]


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (var_ratio - 1 - var_ratio.log())


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


def _batch_trace_xxt(bmat: Tensor) -> Tensor:
    """The trace of ``X @ X.mT`` per batch entry: the sum of squares."""
    return bmat.pow(2).flatten(-2).sum(-1)


def _check_event_shapes(p: Distribution, q: Distribution, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with different event shapes cannot be computed"
        )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    qw, qd = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    term1 = _batch_lowrank_logdet(qw, qd, q._capacitance_tril) - _batch_lowrank_logdet(
        pw, pd, p._capacitance_tril
    )
    term3 = _batch_lowrank_mahalanobis(qw, qd, q.loc - p.loc, q._capacitance_tril)
    qwt_qdinv = qw.mT / qd.unsqueeze(-2)
    a = _linalg.solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)
    term21 = (pd / qd).sum(-1)
    term22 = _batch_trace_xxt(pw * qd.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(a * pd.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(a @ pw)
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    qw, qd = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    pl = p._unbroadcasted_scale_tril
    term1 = _batch_lowrank_logdet(qw, qd, q._capacitance_tril) - 2 * pl.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    term3 = _batch_lowrank_mahalanobis(qw, qd, q.loc - p.loc, q._capacitance_tril)
    qwt_qdinv = qw.mT / qd.unsqueeze(-2)
    a = _linalg.solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)
    term21 = _batch_trace_xxt(pl * qd.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(a @ pl)
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    ql = q._unbroadcasted_scale_tril
    term1 = 2 * ql.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _batch_lowrank_logdet(
        pw, pd, p._capacitance_tril
    )
    term3 = _batch_mahalanobis(ql, q.loc - p.loc)
    shape = broadcast_shapes(tuple(ql.shape[:-2]), tuple(pw.shape[:-2]))
    n = p.event_shape[0]
    q_scale_tril = ql.expand(*shape, n, n)
    p_cov_factor = pw.expand(*shape, n, p.cov_factor.size(-1))
    p_cov_diag = pd.sqrt().diag_embed().expand(*shape, n, n)
    term21 = _batch_trace_xxt(_linalg.solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_xxt(_linalg.solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
