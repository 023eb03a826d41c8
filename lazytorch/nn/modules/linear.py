"""Identity, Linear, Bilinear."""

from __future__ import annotations

import math
from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = ["Bilinear", "Identity", "Linear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input unchanged (its constructor ignores any arguments).

    >>> import lazytorch
    >>> lazytorch.nn.Identity(54, unused="x")(lazytorch.ones(2)).shape
    lazytorch.Size([2])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``; weight is (out_features, in_features).

    Initialized as torch does: ``kaiming_uniform_(weight, a=sqrt(5))``, i.e.
    U(-1/sqrt(in), 1/sqrt(in)), and the bias from the same bound.

    >>> import lazytorch
    >>> fc = lazytorch.nn.Linear(20, 30)
    >>> fc
    Linear(in_features=20, out_features=30, bias=True)
    >>> fc(lazytorch.randn(128, 20)).shape
    lazytorch.Size([128, 30])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(C.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values (torch's default distributions)."""
        init._default_weight_and_bias_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: nn.MultiheadAttention's ``out_proj`` (torch keeps the
    class so its quantization passes can skip it; here it only keeps torch's repr).

    >>> import lazytorch
    >>> lazytorch.nn.modules.linear.NonDynamicallyQuantizableLinear(4, 4)
    NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """


class Bilinear(Module):
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``; weight is (out, in1, in2).

    >>> import lazytorch
    >>> m = lazytorch.nn.Bilinear(20, 30, 40)
    >>> m(lazytorch.randn(128, 20), lazytorch.randn(128, 30)).shape
    lazytorch.Size([128, 40])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            C.empty((out_features, in1_features, in2_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(C.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values: U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
