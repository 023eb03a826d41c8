"""``lazytorch.backends.cudnn``: torch's cuDNN switches, accepted; lazytorch does not use cuDNN
(convolutions are its own kernels), so none of them has an effect."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = [
    "allow_tf32",
    "benchmark",
    "benchmark_limit",
    "deterministic",
    "enabled",
    "flags",
    "is_available",
    "version",
]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version() -> None:
    return None


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    benchmark_limit: int = 10,
    deterministic: bool = False,
    allow_tf32: bool = True,
    fp32_precision: str = "none",
    depthwise_kernel: str = "auto",
) -> Iterator[None]:
    """Set the switches for the body and restore them after (they have no effect here).

    >>> import lazytorch
    >>> with lazytorch.backends.cudnn.flags(allow_tf32=False):
    ...     lazytorch.backends.cudnn.allow_tf32
    False
    """
    mod = sys.modules[__name__]
    new = {
        "enabled": enabled,
        "benchmark": benchmark,
        "benchmark_limit": benchmark_limit,
        "deterministic": deterministic,
        "allow_tf32": allow_tf32,
    }
    old = {k: getattr(mod, k) for k in new}
    for k, v in new.items():
        setattr(mod, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(mod, k, v)
