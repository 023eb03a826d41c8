"""Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch's _ConvNd family)."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(v: Any, n: int) -> tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What every convolution module holds: geometry, weight, bias and torch's init."""

    _n = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        n = self._n
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
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
            padding = _ntuple(padding, n)
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
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order: the last dim first, (lo, hi) each.
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (
            (in_channels, out_channels // groups, *kernel_size)
            if transposed
            else (out_channels, in_channels // groups, *kernel_size)
        )
        self.weight = Parameter(C.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values (torch's default distributions)."""
        init._default_weight_and_bias_(self.weight, self.bias)

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


class _Conv(_ConvNd):
    """A forward convolution: `padding_mode` other than 'zeros' pads first, then convolves."""

    _fn: Any = None

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
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = type(self)._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)  # type: ignore[no-any-return]
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)  # type: ignore[no-any-return]

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C, L) or (C, L) input; weight (out, in // groups, k).

    >>> import lazytorch
    >>> conv = lazytorch.nn.Conv1d(4, 6, 3, padding="same", padding_mode="circular")
    >>> conv
    Conv1d(4, 6, kernel_size=(3,), stride=(1,), padding=same, padding_mode=circular)
    >>> conv(lazytorch.randn(2, 4, 10)).shape
    lazytorch.Size([2, 6, 10])
    """

    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
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

    _n = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> conv = lazytorch.nn.Conv3d(2, 4, (1, 3, 3), padding=(0, 1, 1))
    >>> conv(lazytorch.randn(1, 2, 3, 5, 5)).shape
    lazytorch.Size([1, 4, 3, 5, 5])
    """

    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    """A transposed convolution; forward's `output_size` picks the output_padding that
    reaches it, as torch's."""

    _fn: Any = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(
        self,
        input: Tensor,
        output_size: Any,
        stride: Any,
        padding: Any,
        kernel_size: Any,
        num_spatial_dims: int,
        dilation: Any = None,
    ) -> tuple[int, ...]:
        """The output_padding that makes the output `output_size` (torch's signature:
        subclasses call it)."""
        if output_size is None:
            return self.output_padding  # type: ignore[no-any-return]
        n = num_spatial_dims
        non_spatial = 2 if input.ndim == n + 2 else 1
        sizes = list(output_size)
        if len(sizes) == non_spatial + n:
            sizes = sizes[non_spatial:]
        if len(sizes) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} "
                f"or {non_spatial + n} elements (got {len(sizes)})"
            )
        result = []
        for d in range(n):
            size = input.shape[d + non_spatial]
            smallest = (
                (size - 1) * stride[d]
                - 2 * padding[d]
                + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                + 1
            )
            largest = smallest + stride[d] - 1
            if not smallest <= sizes[d] <= largest:
                raise ValueError(
                    f"requested an output size of {sizes}, but valid sizes range from "
                    f"{smallest} to {largest} (for an input of {list(input.shape[non_spatial:])})"
                )
            result.append(int(sizes[d]) - smallest)
        return tuple(result)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(
            input,
            output_size,
            self.stride,
            self.padding,
            self.kernel_size,
            self._n,
            self.dilation,
        )
        return type(self)._fn(  # type: ignore[no-any-return]
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTranspose):
    """1-d transposed convolution; weight (in, out // groups, k).

    >>> import lazytorch
    >>> up = lazytorch.nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1)
    >>> up
    ConvTranspose1d(4, 2, kernel_size=(4,), stride=(2,), padding=(1,))
    >>> up(lazytorch.randn(1, 4, 5)).shape
    lazytorch.Size([1, 2, 10])
    """

    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-d transposed convolution; weight (in, out // groups, kH, kW).

    >>> import lazytorch
    >>> up = lazytorch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    >>> x = lazytorch.randn(1, 4, 5, 5)
    >>> up(x).shape, up(x, output_size=(10, 10)).shape
    (lazytorch.Size([1, 2, 9, 9]), lazytorch.Size([1, 2, 10, 10]))
    """

    _n = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-d transposed convolution; weight (in, out // groups, kD, kH, kW).

    >>> import lazytorch
    >>> up = lazytorch.nn.ConvTranspose3d(2, 3, 2, stride=2)
    >>> up(lazytorch.randn(1, 2, 2, 2, 2)).shape
    lazytorch.Size([1, 3, 4, 4, 4])
    """

    _n = 3
    _fn = staticmethod(F.conv_transpose3d)
