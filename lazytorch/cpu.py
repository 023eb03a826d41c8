"""``lazytorch.cpu``: the device module of the built-in CPU device.

It registers through the same `lazytorch._register_device_module` as out-of-tree backends
(see `lazytorch._devices`). Programs on the CPU run on the process-wide backend choice
(``BACKEND = None``: compiled C++ by default, or the interpreter).

>>> import lazytorch
>>> lazytorch.cpu.is_available(), lazytorch.cpu.device_count()
(True, 1)
"""

from __future__ import annotations

from typing import Any

__all__ = ["BACKEND", "current_device", "device_count", "is_available", "synchronize"]

BACKEND = None


def is_available() -> bool:
    """Always True: lazytorch always runs on the CPU."""
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU programs finish before materialization returns."""


def __getattr__(name: str) -> Any:
    if name == "amp":  # torch.cpu.amp, loaded on first use
        import importlib

        return importlib.import_module("lazytorch.amp.cpu")
    raise AttributeError(f"module 'lazytorch.cpu' has no attribute {name!r}")
