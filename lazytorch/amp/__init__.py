"""``lazytorch.amp``: automatic mixed precision, torch's names (``autocast``, ``GradScaler``).

What works today is what scripts switch on and off: ``autocast(..., enabled=False)`` is a
no-op block (and decorator), and ``GradScaler(enabled=False)`` passes the loss and the
step through unchanged, as torch's do. A ``GradScaler`` for a CUDA device on a machine
without CUDA disables itself with torch's warning. Mixed precision itself (an enabled
``autocast``, loss scaling) raises ``NotImplementedError`` where it is used, naming what to
do instead: lazytorch computes in the dtypes it is given.

>>> import lazytorch
>>> scaler = lazytorch.amp.GradScaler(enabled=False)
>>> loss = lazytorch.tensor(2.0)
>>> scaler.scale(loss) is loss, scaler.get_scale(), scaler.is_enabled()
(True, 1.0, False)
>>> with lazytorch.autocast("cpu", enabled=False):
...     (lazytorch.ones(2) @ lazytorch.ones(2)).item()
2.0
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from lazytorch._devices import find as find_device_module

__all__ = ["GradScaler", "autocast", "is_autocast_available"]

_NOT_YET = (
    "{what}: mixed precision is not supported by lazytorch yet; lazytorch computes in the "
    "dtypes it is given. Pass enabled=False (or remove the block) and train in float32"
)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` can be enabled for `device_type` (not yet, on any device)."""
    return False


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    Disabled, it is a no-op context manager and decorator; enabled, it raises
    ``NotImplementedError`` when entered.
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)

    def __enter__(self) -> autocast:
        if self._enabled:
            raise NotImplementedError(_NOT_YET.format(what=f"autocast({self.device!r})"))
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return run


class GradScaler:
    """``torch.amp.GradScaler(device="cuda", init_scale=2.0**16, ..., enabled=True)``.

    Disabled, every method is torch's pass-through: ``scale(x)`` is `x`, ``step(opt)``
    runs ``opt.step()``, ``get_scale()`` is 1.0. A CUDA scaler without CUDA disables
    itself with a warning, as torch's does. An enabled scaler raises
    ``NotImplementedError`` at its first use.
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            cuda = find_device_module("cuda")
            if cuda is None or not cuda.is_available():
                warnings.warn(
                    "lazytorch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                    "Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval

    def _pass_through(self, what: str) -> None:
        if self._enabled:
            raise NotImplementedError(_NOT_YET.format(what=f"GradScaler.{what}"))

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        self._pass_through("scale")
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        self._pass_through("unscale_")

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        self._pass_through("step")
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        self._pass_through("update")

    def get_scale(self) -> float:
        return 1.0 if not self._enabled else float(self._init_scale)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict[str, Any]:
        return {} if not self._enabled else {"scale": self._init_scale}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        self._pass_through("load_state_dict")
