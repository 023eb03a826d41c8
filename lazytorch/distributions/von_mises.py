"""`VonMises`: the circular normal distribution, with torch.distributions' formulas (its
polynomial approximations of the modified Bessel functions) and its rejection sampler
(Best & Fisher), drawing from lazytorch's default generator."""

from __future__ import annotations

import math
from typing import Any

from lazytorch.autograd import no_grad
from lazytorch.distributions import constraints
from lazytorch.distributions.distribution import Distribution
from lazytorch.distributions.utils import _EMPTY, broadcast_all, lazy_property
from lazytorch.ir import dtypes as dt
from lazytorch.ops.creation import zeros
from lazytorch.ops.elementwise import where
from lazytorch.ops.random import rand
from lazytorch.tensor import Size, Tensor

__all__ = ["VonMises"]


def _eval_poly(y: Tensor, coef: list[float]) -> Any:
    coef = list(coef)
    result: Any = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [
    0.39894228,
    0.01328592,
    0.00225319,
    -0.00157565,
    0.00916281,
    -0.02057706,
    0.02635537,
    -0.01647633,
    0.00392377,
]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [
    0.39894228,
    -0.03988024,
    -0.00362018,
    0.00163801,
    -0.01031555,
    0.02282967,
    -0.02895312,
    0.01787654,
    -0.00420059,
]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for order 0 or 1 (torch's approximation)."""
    if order != 0 and order != 1:
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, _COEF_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    done = zeros(tuple(x.shape), dtype=dt.bool_, device=loc.device)
    while not bool(done.all()):
        u = rand((3, *x.shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        x = where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution on the circle, with mean direction `loc` (radians) and
    `concentration`.

    >>> import lazytorch
    >>> VonMises(lazytorch.tensor([0.0]), lazytorch.tensor([1.0])).log_prob(lazytorch.tensor([0.5]))
    tensor([-1.1962])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(
        self, loc: Tensor, concentration: Tensor, validate_args: bool | None = None
    ) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(dt.float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(dt.float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        proposal_r_taylor = 1 / kappa + kappa
        return where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape: Any = _EMPTY) -> Tensor:
        """Draws by Best & Fisher's rejection method (in float64, as torch)."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = zeros(tuple(shape), dtype=self._loc.dtype, device=self.loc.device)
            out = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return out.to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        validate_args = self.__dict__.get("_validate_args")
        loc = self.loc.expand(batch_shape)
        concentration = self.concentration.expand(batch_shape)
        return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, order=1)
                - _log_modified_bessel_fn(self.concentration, order=0)
            ).exp()
        )
