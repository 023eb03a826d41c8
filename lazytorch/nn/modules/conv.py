"""Conv2d."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = ["Conv2d"]


def _pair(v: Any) -> tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v, v)


class Conv2d(Module):
    """2-d convolution over (N, C, H, W) or (C, H, W) input.

    Weight is (out_channels, in_channels // groups, kH, kW); initialized as torch does
    (``kaiming_uniform_(a=sqrt(5))``, bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
    `padding` is an int, a pair, ``'valid'`` or ``'same'``; `padding_mode` one of
    ``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``.

    >>> import lazytorch
    >>> conv = lazytorch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    >>> conv
    Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
    >>> conv(lazytorch.randn(1, 3, 16, 16)).shape
    lazytorch.Size([1, 8, 8, 8])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kernel_size, stride, dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _pair(padding)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order: (left, right, top, bottom).
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0, 0, 0]
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, (1, 0)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        self.weight = Parameter(
            C.empty((out_channels, in_channels // groups, *kernel_size), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(C.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values (torch's default distributions)."""
        init._default_weight_and_bias_(self.weight, self.bias)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv2d(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)
