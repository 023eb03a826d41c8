"""``autocast`` and torch's functions that read and set the autocast state.

The state is per thread and per device type (``cpu``, ``cuda``): enabled, and the low
dtype (bfloat16 on the CPU, float16 on cuda by default). What an enabled state does to an
op is `lazytorch.ops.autocast`'s contract; the op lists are `lazytorch.ops.autocast_policy`.

>>> import lazytorch
>>> lazytorch.is_autocast_enabled("cpu"), lazytorch.get_autocast_dtype("cpu")
(False, lazytorch.bfloat16)
>>> with lazytorch.autocast("cpu", dtype=lazytorch.float16):
...     with lazytorch.autocast("cpu", enabled=False):
...         inner = lazytorch.is_autocast_enabled("cpu")
...     lazytorch.is_autocast_enabled("cpu"), inner, lazytorch.get_autocast_dtype("cpu")
(True, False, lazytorch.float16)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from lazytorch._devices import find as find_device_module
from lazytorch.ir import dtypes as dt
from lazytorch.ops.autocast import DEVICE_TYPES, state
from lazytorch.tensor import Tensor

__all__ = [
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
]

# torch's CPU autocast takes these dtypes only (another one disables it, with a warning).
_CPU_DTYPES = (dt.bfloat16, dt.float16)


def _device_type(device_type: Any) -> str:
    """`device_type` checked: RuntimeError for a device type autocast has no state for."""
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(
            f"autocast: unsupported device type {device_type!r}; lazytorch's autocast knows "
            f"{', '.join(DEVICE_TYPES)}"
        )
    return str(device_type)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast has a policy for `device_type` (``cpu`` and ``cuda``, as torch).

    >>> import lazytorch
    >>> lazytorch.amp.is_autocast_available("cpu"), lazytorch.amp.is_autocast_available("meta")
    (True, False)
    """
    return device_type in DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is enabled for `device_type` (None: ``cuda``, torch's old default).

    >>> import lazytorch
    >>> lazytorch.is_autocast_enabled("cpu")
    False
    """
    return state.enabled[_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type: Any, enabled: bool | None = None) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or torch's old
    ``set_autocast_enabled(enabled)`` for cuda."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    state.set_enabled(_device_type(device_type), bool(enabled))


def get_autocast_dtype(device_type: str) -> dt.DType:
    """The dtype autocast casts to on `device_type`.

    >>> import lazytorch
    >>> lazytorch.get_autocast_dtype("cuda")
    lazytorch.float16
    """
    return state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: dt.DType) -> None:
    if not isinstance(dtype, dt.DType):
        raise TypeError(f"set_autocast_dtype: dtype must be a lazytorch.dtype, not {dtype!r}")
    state.dtype[_device_type(device_type)] = dtype


def is_autocast_cpu_enabled() -> bool:
    """torch's older spelling of ``is_autocast_enabled("cpu")``."""
    return state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    state.set_enabled("cpu", bool(enabled))


def get_autocast_cpu_dtype() -> dt.DType:
    return state.dtype["cpu"]


def set_autocast_cpu_dtype(dtype: dt.DType) -> None:
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> dt.DType:
    """torch's older spelling of ``get_autocast_dtype("cuda")``."""
    return state.dtype["cuda"]


def set_autocast_gpu_dtype(dtype: dt.DType) -> None:
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Accepted for torch's scripts: lazytorch has no cast cache (common-subexpression
    elimination merges a weight cast twice in one program)."""
    state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing to clear (see `set_autocast_cache_enabled`)."""


def autocast_increment_nesting() -> int:
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting() -> int:
    state.nesting -= 1
    return state.nesting


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    A context manager and decorator: inside it, the ops torch's autocast lists run in the
    low dtype (matmul, linear, conv...) or in float32 (losses...), per device type
    (`lazytorch.ops.autocast`). Blocks nest; ``enabled=False`` inside an enabled block
    turns autocast off for its body; leaving a block restores the state it found.

    >>> import lazytorch
    >>> w = lazytorch.ones(3, 2)
    >>> @lazytorch.autocast("cpu", dtype=lazytorch.float16)
    ... def forward(x):
    ...     return x @ w
    >>> forward(lazytorch.ones(1, 3)).dtype
    lazytorch.float16
    """

    def __init__(
        self,
        device_type: str,
        dtype: dt.DType | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled and device_type == "cuda":
            cuda = find_device_module("cuda")
            if cuda is None or not cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype is dt.bfloat16 and not cuda.is_bf16_supported():
                raise RuntimeError(
                    "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                )
        elif enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtypes of lazytorch.bfloat16, lazytorch.float16 "
                "currently.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc: Any) -> bool:
        autocast_decrement_nesting()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _cast(value: Any, device_type: str, dtype: dt.DType) -> Any:
    """torch.amp's ``_cast``: eligible tensors in nested containers cast to `dtype`."""
    if isinstance(value, Tensor):
        eligible = (
            value.dtype.is_floating_point
            and value.device.type == device_type
            and value.dtype is not dt.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(
    fwd: Callable[..., Any] | None = None,
    *,
    device_type: str,
    cast_inputs: dt.DType | None = None,
) -> Any:
    """torch.amp.custom_fwd: for ``forward`` of a custom autograd Function. With
    `cast_inputs`, inside an enabled autocast region the floating inputs are cast to it and
    ``forward`` runs with autocast off; without, ``forward`` runs in the current state.

    >>> import lazytorch
    >>> class Double(lazytorch.autograd.Function):
    ...     @staticmethod
    ...     @lazytorch.amp.custom_fwd(device_type="cpu", cast_inputs=lazytorch.float32)
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @lazytorch.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> with lazytorch.autocast("cpu", dtype=lazytorch.float16):
    ...     Double.apply(lazytorch.ones(2).half()).dtype
    lazytorch.float32
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """torch.amp.custom_bwd: ``backward`` runs in the autocast state ``forward`` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(
            device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd
