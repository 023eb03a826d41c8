"""``lazytorch.backends.cuda``: TF32 for matmuls, and torch's attention-kernel switches."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lazytorch import _config, cuda
from lazytorch.nn.attention import SDPBackend, _sdp

__all__ = [
    "SDPBackend",
    "cuBLASModule",
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "sdp_kernel",
]


class cuBLASModule:
    """``backends.cuda.matmul``: ``allow_tf32`` is the float32 matmul precision setting."""

    # No effect: lazytorch's float16 products accumulate in float32.
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _config.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _config.set_float32_matmul_precision("high" if value else "highest")


matmul = cuBLASModule()


def is_built() -> bool:
    """Whether lazytorch can run on CUDA here (the cuda extra and a GPU)."""
    return cuda.is_available()


# Attention kernels: recorded for scripts that set them; lazytorch has one attention path.
# the switches live with torch.nn.attention's sdpa_kernel, which sets them too


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
) -> Iterator[Any]:
    """torch's (deprecated) context manager choosing attention kernels: recorded only."""
    saved = dict(_sdp)
    _sdp.update(
        flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn
    )
    try:
        yield
    finally:
        _sdp.update(saved)
