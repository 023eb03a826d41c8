"""``lazytorch.backends.cudnn``: torch's cuDNN switches, accepted; lazytorch does not use cuDNN
(convolutions are its own kernels), so none of them has an effect."""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    return None
