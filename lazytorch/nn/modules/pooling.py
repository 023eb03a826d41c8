"""Max, average, power-average and adaptive pooling (1-d, 2-d, 3-d)."""

from __future__ import annotations

from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    """What every max pooling module holds (torch's _MaxPoolNd)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
            f", dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool2d(_MaxPoolNd):
    """Max over kH x kW windows (stride defaults to the kernel size).

    >>> import lazytorch
    >>> pool = lazytorch.nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(lazytorch.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class _AvgPoolNd(Module):
    """What the 2-d and 3-d average pooling modules hold (torch's _AvgPoolNd)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Mean over kH x kW windows (stride defaults to the kernel size).

    >>> import lazytorch
    >>> pool = lazytorch.nn.AvgPool2d(2)
    >>> pool
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    >>> pool(lazytorch.ones(1, 1, 4, 4)).shape
    lazytorch.Size([1, 1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class MaxPool1d(_MaxPoolNd):
    """Max over length-k windows of (N, C, L) or (C, L) input.

    >>> import lazytorch
    >>> pool = lazytorch.nn.MaxPool1d(3, stride=2, ceil_mode=True)
    >>> pool
    MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=True)
    >>> pool(lazytorch.arange(6.0).reshape(1, 1, 6))
    tensor([[[2., 4., 5.]]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


def _single(v: Any) -> tuple[Any, ...]:
    return tuple(v) if isinstance(v, (list, tuple)) else (v,)


class AvgPool1d(Module):
    """Mean over length-k windows of (N, C, L) or (C, L) input.

    >>> import lazytorch
    >>> pool = lazytorch.nn.AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(lazytorch.tensor([[1.0, 3.0, 5.0, 7.0]]))
    tensor([[2., 6.]])
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.output_size)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    """Average over torch's adaptive windows to a fixed output length.

    >>> import lazytorch
    >>> lazytorch.nn.AdaptiveAvgPool1d(2)(lazytorch.tensor([[1.0, 2.0, 3.0]]))
    tensor([[1.5000, 2.5000]])
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """Average over torch's adaptive windows to a fixed (H, W); None keeps that size.

    >>> import lazytorch
    >>> pool = lazytorch.nn.AdaptiveAvgPool2d((1, None))
    >>> pool
    AdaptiveAvgPool2d(output_size=(1, None))
    >>> pool(lazytorch.ones(2, 3, 5, 7)).shape
    lazytorch.Size([2, 3, 1, 7])
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    """Average over torch's adaptive windows to a fixed (D, H, W).

    >>> import lazytorch
    >>> lazytorch.nn.AdaptiveAvgPool3d(1)(lazytorch.ones(1, 2, 3, 4, 5)).shape
    lazytorch.Size([1, 2, 1, 1, 1])
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max over torch's adaptive windows to a fixed output length.

    >>> import lazytorch
    >>> lazytorch.nn.AdaptiveMaxPool1d(2)(lazytorch.tensor([[1.0, 5.0, 3.0]]))
    tensor([[5., 5.]])
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max over torch's adaptive windows to a fixed (H, W); None keeps that size.

    >>> import lazytorch
    >>> pool = lazytorch.nn.AdaptiveMaxPool2d((2, 2), return_indices=True)
    >>> pool(lazytorch.arange(9.0).reshape(1, 3, 3))[1]
    tensor([[[4, 5],
             [7, 8]]])
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> pool = lazytorch.nn.MaxPool3d(2)
    >>> pool
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(lazytorch.ones(1, 2, 4, 4, 5)).shape
    lazytorch.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class AvgPool3d(_AvgPoolNd):
    """Mean over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> pool = lazytorch.nn.AvgPool3d(2, stride=1)
    >>> pool
    AvgPool3d(kernel_size=2, stride=1, padding=0)
    >>> pool(lazytorch.ones(1, 2, 3, 3, 3)).shape
    lazytorch.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max over torch's adaptive windows to a fixed (D, H, W).

    >>> import lazytorch
    >>> lazytorch.nn.AdaptiveMaxPool3d((1, 2, 2))(lazytorch.ones(1, 2, 3, 4, 5)).shape
    lazytorch.Size([1, 2, 1, 2, 2])
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    _fn: Any = None

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(  # type: ignore[no-any-return]
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over length-k windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> pool = lazytorch.nn.LPPool1d(2, 3)
    >>> pool
    LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    >>> pool(lazytorch.ones(1, 2, 7)).shape
    lazytorch.Size([1, 2, 2])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over kH x kW windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> lazytorch.nn.LPPool2d(1, 2)(lazytorch.ones(1, 1, 4, 4))
    tensor([[[[4., 4.],
              [4., 4.]]]])
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over kT x kH x kW windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> lazytorch.nn.LPPool3d(2, 2)(lazytorch.ones(1, 1, 2, 4, 4)).shape
    lazytorch.Size([1, 1, 1, 2, 2])
    """

    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    """What every max unpooling module holds: kernel, stride and padding as n-tuples."""

    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()

        def tup(v: Any) -> tuple[int, ...]:
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * self._n

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        fn = getattr(F, f"max_unpool{self._n}d")
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d: values placed at their indices, zeros elsewhere."""

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d: values placed at their indices, zeros elsewhere.

    >>> import lazytorch
    >>> pool, unpool = lazytorch.nn.MaxPool2d(2, return_indices=True), lazytorch.nn.MaxUnpool2d(2)
    >>> unpool(*pool(lazytorch.tensor([[[[1.0, 2.0], [4.0, 3.0]]]])))
    tensor([[[[0., 0.],
              [4., 0.]]]])
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of MaxPool3d: values placed at their indices, zeros elsewhere."""

    _n = 3
