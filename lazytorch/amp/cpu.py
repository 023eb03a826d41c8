"""``lazytorch.cpu.amp``: torch's older spelling of `lazytorch.amp` for the CPU.

>>> import lazytorch
>>> with lazytorch.cpu.amp.autocast(dtype=lazytorch.float16):
...     lazytorch.is_autocast_enabled("cpu")
True
"""

from __future__ import annotations

from typing import Any

from lazytorch import amp as _amp
from lazytorch.ir import dtypes as _dt

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=bfloat16, cache_enabled=True)``."""

    def __init__(
        self, enabled: bool = True, dtype: Any = _dt.bfloat16, cache_enabled: bool = True
    ) -> None:
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cpu.amp.GradScaler(...)``: ``lazytorch.amp.GradScaler("cpu", ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
