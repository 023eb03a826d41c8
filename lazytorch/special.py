"""``torch.special``: special functions, torch's names and arguments.

Most are the ``lazytorch.*`` ops under scipy-style names (``expit`` is sigmoid,
``gammaln`` lgamma, ``psi`` digamma); the rest (``i0e``, ``i1``, ``i1e``, ``ndtr``,
``ndtri``, ``log_ndtr``, ``entr``, ``xlog1py``) are decompositions in
`lazytorch.ops.special_math`, compared with torch on values and gradients in
tests/ops/test_special.py.

>>> import lazytorch
>>> lazytorch.special.expit(lazytorch.tensor([0.0]))
tensor([0.5000])
>>> lazytorch.special.gammaln(lazytorch.tensor([4.0]))  # log(3!)
tensor([1.7918])

Not provided: gammainc/gammaincc, zeta, erfcx, the Bessel functions of the second kind,
Airy and the orthogonal polynomials (``torch.special.airy_ai``, ``chebyshev_polynomial_t``...).
"""

from __future__ import annotations

from typing import Any

import lazytorch as _lt
from lazytorch.ops import activation as _activation
from lazytorch.ops import methods as _methods
from lazytorch.ops import special_math as _sm
from lazytorch.tensor import Tensor

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0",
    "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
    "xlogy",
]  # fmt: skip


def erf(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.erf(input, out=out)


def erfc(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.erfc(input, out=out)


def erfinv(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.erfinv(input, out=out)


def expit(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.sigmoid(input, out=out)


def exp2(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.exp2(input, out=out)


def expm1(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.expm1(input, out=out)


def log1p(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.log1p(input, out=out)


def logit(input: Tensor, eps: float | None = None, *, out: Any = None) -> Tensor:
    result = _lt.logit(input, eps)
    return result if out is None else out.copy_(result)


def gammaln(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.lgamma(input, out=out)


def digamma(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.digamma(input, out=out)


psi = digamma


def polygamma(n: int, input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.polygamma(n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    result = _lt.mvlgamma(input, p)
    return result if out is None else out.copy_(result)


def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:
    return _lt.xlogy(input, other, out=out)


def xlog1py(input: Any, other: Any, *, out: Any = None) -> Tensor:
    return _sm.xlog1py(input, other, out=out)


def entr(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.entr(input, out=out)


def sinc(input: Tensor, *, out: Any = None) -> Tensor:
    result = _lt.sinc(input)
    return result if out is None else out.copy_(result)


def round(input: Tensor, *, decimals: int = 0, out: Any = None) -> Tensor:
    return _lt.round(input, decimals=decimals, out=out)


def i0(input: Tensor, *, out: Any = None) -> Tensor:
    return _lt.i0(input, out=out)


def i0e(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_i0e(input, out=out)  # type: ignore[no-any-return]


def i1(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_i1(input, out=out)  # type: ignore[no-any-return]


def i1e(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_i1e(input, out=out)  # type: ignore[no-any-return]


def ndtr(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_ndtr(input, out=out)  # type: ignore[no-any-return]


def ndtri(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_ndtri(input, out=out)  # type: ignore[no-any-return]


def log_ndtr(input: Tensor, *, out: Any = None) -> Tensor:
    return _sm.special_log_ndtr(input, out=out)  # type: ignore[no-any-return]


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return _activation.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return _activation.log_softmax(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:
    return _lt.logsumexp(input, dim, keepdim, out=out)


_methods.install_numpy_names(globals(), __all__)  # axis=/keepdims=, as torch's parser takes
