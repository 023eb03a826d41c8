"""Lazy modules: ``nn.LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` — the input size is inferred at the first forward.

As in torch: the weights start as `UninitializedParameter` (running statistics as
`UninitializedBuffer`), the first call reads the input's feature / channel size,
materializes them, runs the module's ``reset_parameters`` and turns the module into its
ordinary class (``LazyLinear`` becomes ``Linear``). A state dict saved from an initialized
module loads into an uninitialized one (the shapes come from the state dict).

>>> import lazytorch
>>> m = lazytorch.nn.LazyLinear(3)
>>> m.has_uninitialized_params()
True
>>> m(lazytorch.ones(2, 5)).shape, type(m).__name__, m.in_features
(lazytorch.Size([2, 3]), 'Linear', 5)
"""

from __future__ import annotations

from typing import Any

from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from lazytorch.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from lazytorch.nn.modules.linear import Linear
from lazytorch.nn.modules.normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from lazytorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from lazytorch.ops import creation as C
from lazytorch.tensor import Tensor

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyLinear",
    "LazyModuleMixin",
]


class LazyModuleMixin:
    """Shape inference at the first forward (see the module docstring).

    A subclass defines ``initialize_parameters(*args)`` (materialize from the input) and
    ``cls_to_become`` (the class the module takes once initialized).
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            _infer_parameters
        )

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        # an uninitialized parameter is saved as itself (torch's layout)
        for name, param in self._parameters.items():  # type: ignore[attr-defined]
            if param is not None:
                keep = keep_vars or is_lazy(param)
                destination[prefix + name] = param if keep else param.detach()
        for name, buf in self._buffers.items():  # type: ignore[attr-defined]
            if buf is not None and name not in self._non_persistent_buffers_set:  # type: ignore[attr-defined]
                keep = keep_vars or is_lazy(buf)
                destination[prefix + name] = buf if keep else buf.detach()

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: Any,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # an uninitialized parameter or buffer takes the shape of what is loaded into it
        for name, t in [*self._parameters.items(), *self._buffers.items()]:  # type: ignore[attr-defined]
            key = prefix + name
            if key in state_dict and t is not None and is_lazy(t):
                given = state_dict[key]
                if isinstance(given, Tensor) and not is_lazy(given):
                    with no_grad():
                        t.materialize(given.shape)
        super()._load_from_state_dict(  # type: ignore[misc]
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module still has no shape."""
        params = self._parameters.values()  # type: ignore[attr-defined]
        buffers = self._buffers.values()  # type: ignore[attr-defined]
        return any(is_lazy(t) for t in (*params, *buffers))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )


def _infer_parameters(module: Any, args: tuple[Any, ...]) -> None:
    """The forward pre-hook: materialize, then become the ordinary class."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last size of the first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        n = len(self.kernel_size)
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {tuple(input.shape)}"
            )
        return int(input.shape[1] if input.dim() == n + 2 else input.shape[0])


def _lazy_conv(base: type, transposed: bool) -> type:
    if transposed:

        def __init__(
            self: Any,
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
            base.__init__(  # type: ignore[misc]
                self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                dilation, padding_mode, device=device, dtype=dtype,
            )  # fmt: skip
            _lazy_weights(self, out_channels, bias, device, dtype)

    else:

        def __init__(  # type: ignore[misc]
            self: Any,
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
            base.__init__(  # type: ignore[misc]
                self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                padding_mode, device=device, dtype=dtype,
            )  # fmt: skip
            _lazy_weights(self, out_channels, bias, device, dtype)

    name = "Lazy" + base.__name__
    cls = type(
        name,
        (_LazyConvXdMixin, base),
        {
            "__init__": __init__,
            "cls_to_become": base,
            "__doc__": f"``{base.__name__}`` whose ``in_channels`` is the first input's "
            "channel size.",
            "__module__": __name__,
            "__qualname__": name,
        },
    )
    __init__.__qualname__ = f"{name}.__init__"
    return cls


def _lazy_weights(self: Any, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
    # LazyModuleMixin.__init__ does not run through base.__init__: hook it here
    self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)
    self.weight = UninitializedParameter(device=device, dtype=dtype)
    self.out_channels = out_channels
    if bias:
        self.bias = UninitializedParameter(device=device, dtype=dtype)


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


class _LazyNormBase(LazyModuleMixin):
    affine: bool
    track_running_stats: bool
    num_features: int
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def _lazy_init(
        self, affine: bool, track_running_stats: bool, device: Any, dtype: Any, bias: bool
    ) -> None:
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = C.tensor(0, dtype=dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = int(input.shape[1])
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_bn(base: type) -> type:
    def __init__(
        self: Any,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        base.__init__(self, 0, eps, momentum, False, False)  # type: ignore[misc]
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)
        self._lazy_init(affine, track_running_stats, device, dtype, bias)

    name = "Lazy" + base.__name__
    __init__.__qualname__ = f"{name}.__init__"
    return type(
        name,
        (_LazyNormBase, base),
        {
            "__init__": __init__,
            "cls_to_become": base,
            "__doc__": f"``{base.__name__}`` whose ``num_features`` is the first input's "
            "channel size.",
            "__module__": __name__,
            "__qualname__": name,
        },
    )


LazyBatchNorm1d = _lazy_bn(BatchNorm1d)
LazyBatchNorm2d = _lazy_bn(BatchNorm2d)
LazyBatchNorm3d = _lazy_bn(BatchNorm3d)
# torch's lazy instance norms take the lazy norms' defaults: affine and running stats on
LazyInstanceNorm1d = _lazy_bn(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_bn(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_bn(InstanceNorm3d)
