"""Activation modules: thin wrappers that hold the settings and call `nn.functional`."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "SELU",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "Tanh",
]


class _Inplace(Module):
    """An elementwise activation with an ``inplace`` flag (printed only when set)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """max(x, 0).

    >>> import lazytorch
    >>> lazytorch.nn.ReLU()(lazytorch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


class ReLU6(_Inplace):
    """min(max(x, 0), 6).

    >>> import lazytorch
    >>> lazytorch.nn.ReLU6()(lazytorch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input, inplace=self.inplace)


class SiLU(_Inplace):
    """x * sigmoid(x).

    >>> import lazytorch
    >>> lazytorch.nn.SiLU()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x)).

    >>> import lazytorch
    >>> lazytorch.nn.Mish()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6.

    >>> import lazytorch
    >>> lazytorch.nn.Hardswish()(lazytorch.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    >>> import lazytorch
    >>> lazytorch.nn.Hardsigmoid()(lazytorch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, inplace=self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with the self-normalizing constants.

    >>> import lazytorch
    >>> lazytorch.nn.SELU()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, inplace=self.inplace)


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or ``'tanh'``.

    >>> import lazytorch
    >>> lazytorch.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class _Stateless(Module):
    """An activation with no settings: ``forward`` is one functional call."""

    _fn: Any = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input)  # type: ignore[no-any-return]


class Tanh(_Stateless):
    """tanh(x).

    >>> import lazytorch
    >>> lazytorch.nn.Tanh()(lazytorch.tensor([0.0]))
    tensor([0.])
    """

    _fn = staticmethod(F.tanh)


class Sigmoid(_Stateless):
    """1 / (1 + exp(-x)).

    >>> import lazytorch
    >>> lazytorch.nn.Sigmoid()(lazytorch.tensor([0.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.sigmoid)


class LogSigmoid(_Stateless):
    """log(sigmoid(x)), computed stably.

    >>> import lazytorch
    >>> lazytorch.nn.LogSigmoid()(lazytorch.tensor([0.0]))
    tensor([-0.6931])
    """

    _fn = staticmethod(F.logsigmoid)


class Softsign(_Stateless):
    """x / (1 + |x|).

    >>> import lazytorch
    >>> lazytorch.nn.Softsign()(lazytorch.tensor([1.0]))
    tensor([0.5000])
    """

    _fn = staticmethod(F.softsign)


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x.

    >>> import lazytorch
    >>> lazytorch.nn.LeakyReLU(0.1)(lazytorch.tensor([-1.0, 2.0]))
    tensor([-0.1000,  2.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import lazytorch
    >>> lazytorch.nn.ELU()
    ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import lazytorch
    >>> lazytorch.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class Hardtanh(Module):
    """clamp(x, min_val, max_val).

    >>> import lazytorch
    >>> lazytorch.nn.Hardtanh(-2.0, 2.0)(lazytorch.tensor([-3.0, 3.0]))
    tensor([-2.,  2.])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`.

    >>> import lazytorch
    >>> lazytorch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _SoftmaxBase(Module):
    """Softmax, Softmin and LogSoftmax: a `dim` (None picks torch's legacy default)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.Softmax(dim=1)(lazytorch.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)


class Softmin(_SoftmaxBase):
    """softmax(-x) along `dim`.

    >>> import lazytorch
    >>> lazytorch.nn.Softmin(dim=0)(lazytorch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along `dim`, computed stably.

    >>> import lazytorch
    >>> lazytorch.nn.LogSoftmax(dim=0)(lazytorch.zeros(2))
    tensor([-0.6931, -0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)
