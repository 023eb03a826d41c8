"""``lazytorch.accelerator``: torch's device-agnostic accelerator API, over `lazytorch.cuda`.

>>> import lazytorch
>>> lazytorch.accelerator.is_available() == lazytorch.cuda.is_available()
True
>>> acc = lazytorch.accelerator.current_accelerator()
>>> acc is None or acc.type == "cuda"
True
"""

from __future__ import annotations

from typing import Any

from lazytorch import cuda
from lazytorch.ir.device import Device

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "is_available",
    "set_device_index",
    "synchronize",
]


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU lazytorch can use) is present."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Any:
    """The accelerator's device type as a ``device("cuda")``, or None without one."""
    if not cuda.is_available():
        return None
    return Device("cuda")


def device_count() -> int:
    return cuda.device_count() if cuda.is_available() else 0


def current_device_index() -> int:
    return cuda.current_device()


def set_device_index(device: Any) -> None:
    cuda.set_device(device)


set_device_idx = set_device_index
current_device_idx = current_device_index


def synchronize(device: Any = None) -> None:
    cuda.synchronize(device)
