"""Utilities with torch.utils' layout: ``lazytorch.utils.data`` holds datasets and loaders.

``data`` loads on first use, so ``lazytorch.utils.data.DataLoader`` works after a plain
``import lazytorch`` just as ``torch.utils.data.DataLoader`` does after ``import torch``.

>>> import lazytorch
>>> lazytorch.utils.data.TensorDataset(lazytorch.zeros(3, 2)).__len__()
3
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY_SUBMODULES = ("benchmark", "checkpoint", "data")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        mod = importlib.import_module(f"lazytorch.utils.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'lazytorch.utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))


__all__ = ["benchmark", "checkpoint", "data"]
