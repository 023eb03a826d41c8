"""``lazytorch.cuda``: the device module for NVIDIA GPUs.

This build has no GPU backend yet (Triton code generation and device memory are the GPU
backend's work), so ``is_available()`` is False and asking for a ``cuda`` tensor raises a
RuntimeError that says so, whatever hardware the machine has. The module registers through
the same mechanism as out-of-tree backends (`lazytorch._devices`).

>>> import lazytorch
>>> lazytorch.cuda.is_available(), lazytorch.cuda.device_count()
(False, 0)
"""

from __future__ import annotations

from typing import Any

__all__ = ["BACKEND", "device_count", "is_available", "synchronize", "unavailable_reason"]

BACKEND = None


def is_available() -> bool:
    """Whether lazytorch can put tensors on a GPU: never, in this build."""
    return False


def device_count() -> int:
    return 0


def unavailable_reason() -> str:
    return "this lazytorch build has no GPU backend; tensors stay on the cpu"


def synchronize(device: Any = None) -> None:
    """RuntimeError: there is no CUDA device to synchronize."""
    raise RuntimeError(
        f"lazytorch.cuda.synchronize(): CUDA is not available: {unavailable_reason()}"
    )
