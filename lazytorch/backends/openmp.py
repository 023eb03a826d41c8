"""``lazytorch.backends.openmp``: the generated CPU kernels run under OpenMP."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return True
