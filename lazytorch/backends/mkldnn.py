"""``lazytorch.backends.mkldnn``: oneDNN is not used (the CPU kernels are generated C++)."""

from __future__ import annotations

__all__ = ["enabled", "is_available"]

enabled = True


def is_available() -> bool:
    return False
