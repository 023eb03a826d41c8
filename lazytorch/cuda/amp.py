"""``lazytorch.cuda.amp``: torch's older spelling of `lazytorch.amp` for the cuda device.

>>> import lazytorch
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     scaler = lazytorch.cuda.amp.GradScaler(enabled=False)
>>> scaler.is_enabled()
False
"""

from __future__ import annotations

from typing import Any

from lazytorch import amp as _amp
from lazytorch.ir import dtypes as _dt

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``lazytorch.amp.GradScaler("cuda", ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


class autocast(_amp.autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``."""

    def __init__(
        self, enabled: bool = True, dtype: Any = _dt.float16, cache_enabled: bool = True
    ) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
