"""``torch.xpu``: Intel GPUs, which lazytorch does not drive. Device-selection code asks
``torch.xpu.is_available()`` beside ``torch.cuda.is_available()``: it is False here.

>>> import lazytorch
>>> lazytorch.xpu.is_available(), lazytorch.xpu.device_count()
(False, 0)
"""

from __future__ import annotations

__all__ = ["device_count", "is_available", "is_initialized"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False
