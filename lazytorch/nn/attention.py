"""``torch.nn.attention``: `SDPBackend` and the `sdpa_kernel` context manager.

lazytorch has one scaled-dot-product-attention implementation (its kernels, on every device),
so the choice is recorded (``torch.backends.cuda.flash_sdp_enabled()`` and the others read
it) and has no effect on the result, which is the math of torch's reference formula.

>>> from lazytorch.nn.attention import SDPBackend, sdpa_kernel
>>> import lazytorch.backends.cuda as bc
>>> with sdpa_kernel(SDPBackend.MATH):
...     bc.math_sdp_enabled(), bc.flash_sdp_enabled()
(True, False)
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """torch's attention backends (the values torch gives them)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# Which backends are enabled (torch.backends.cuda's switches read and write this).
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
_KEYS = {
    SDPBackend.MATH: "math",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.OVERRIDEABLE: "overrideable",
}


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """Enable only `backends` (one `SDPBackend` or a list) inside the block; recorded only
    (see the module docstring). `set_priority` is accepted."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise AssertionError(
                f"Backend must be an instance of SDPBackend, got {type(b).__name__}"
            )
    saved = dict(_sdp)
    for b, key in _KEYS.items():
        _sdp[key] = b in chosen
    try:
        yield {}
    finally:
        _sdp.update(saved)
