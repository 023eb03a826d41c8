"""Probability distributions with torch.distributions' names, parameters and formulas.

``log_prob``, ``entropy``, ``rsample`` and ``kl_divergence`` are ordinary lazytorch ops:
they record lazily, fuse with the model around them and differentiate through autograd
(``Normal.rsample`` is ``loc + eps * scale``: gradients reach both). Draws come from the
default generator, so ``lazytorch.manual_seed`` makes them reproducible (the numbers are
not torch's). Validation (``validate_args``, on by default as in torch) reads parameter
values, an implicit materialization; ``validate_args=False`` keeps the graph whole.

>>> import lazytorch
>>> from lazytorch.distributions import Categorical, Normal, kl_divergence
>>> _ = lazytorch.manual_seed(0)
>>> logits = lazytorch.tensor([0.5, -1.0, 2.0], requires_grad=True)
>>> pi = Categorical(logits=logits)
>>> action = pi.sample()
>>> (-pi.log_prob(action) * 2.0).backward()       # REINFORCE with a reward of 2
>>> logits.grad.shape
lazytorch.Size([3])
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 2.0))
tensor(0.3181)
"""

from lazytorch._as_torch import module_getattr as _module_getattr
from lazytorch.distributions import constraint_registry, constraints, transforms  # noqa: F401
from lazytorch.distributions.bernoulli import Bernoulli
from lazytorch.distributions.categorical import Categorical
from lazytorch.distributions.constraint_registry import biject_to, transform_to
from lazytorch.distributions.discrete import Binomial, Geometric, Multinomial, NegativeBinomial
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.exp_family import ExponentialFamily
from lazytorch.distributions.exponential import Exponential
from lazytorch.distributions.independent import Independent
from lazytorch.distributions.kl import kl_divergence, register_kl
from lazytorch.distributions.laplace import Laplace
from lazytorch.distributions.lowrank_continuous import (
    ContinuousBernoulli,
    LowRankMultivariateNormal,
)
from lazytorch.distributions.mixture_same_family import MixtureSameFamily
from lazytorch.distributions.multivariate import Dirichlet, MultivariateNormal
from lazytorch.distributions.normal import Normal
from lazytorch.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from lazytorch.distributions.relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from lazytorch.distributions.special_dists import (
    Beta,
    Cauchy,
    Chi2,
    Gamma,
    Gumbel,
    HalfNormal,
    LogNormal,
    Poisson,
)
from lazytorch.distributions.student_t import FisherSnedecor, StudentT
from lazytorch.distributions.transformed_distribution import TransformedDistribution
from lazytorch.distributions.transformed_families import (
    HalfCauchy,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    Pareto,
    Weibull,
)
from lazytorch.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from lazytorch.distributions.uniform import Uniform
from lazytorch.distributions.von_mises import VonMises

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
]

# torch.distributions.<missing> names itself as torch's under install_as_torch
# torch's per-distribution modules (``torch.distributions.binomial.Binomial``, the path S4's
# dropout and many scripts import by), each naming the class defined above; imported here,
# as torch's package imports its own, so that attribute access finds them too.
from lazytorch.distributions import (  # noqa: F401
    beta,
    binomial,
    cauchy,
    chi2,
    continuous_bernoulli,
    dirichlet,
    fishersnedecor,
    gamma,
    geometric,
    gumbel,
    half_cauchy,
    half_normal,
    inverse_gamma,
    kumaraswamy,
    log_normal,
    logistic_normal,
    lowrank_multivariate_normal,
    multinomial,
    multivariate_normal,
    negative_binomial,
    pareto,
    poisson,
    relaxed_bernoulli,
    relaxed_categorical,
    studentT,
    weibull,
)

__getattr__ = _module_getattr(__name__)
