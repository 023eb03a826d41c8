"""``lazytorch.cuda``: the device module for NVIDIA GPUs.

Programs on a ``cuda`` device are compiled to Triton kernels (`BACKEND`, the ``triton-cuda``
runtime backend: `lazytorch.runtime.triton_backend` over a `CudaCarrier`) and their values
stay in device memory: a cuda tensor's value is a
`lazytorch.runtime.cuda_memory.DeviceBuffer`. ``.to("cuda")`` uploads once; ``.cpu()``,
``.numpy()``, ``.item()`` and printing copy back. lazytorch talks to the driver through
NVIDIA's ``cuda-bindings`` (``pip install 'lazytorch[cuda]'``), never through torch.

The device is available when cuda-bindings is installed, the driver initializes, there is
at least one GPU, and Triton is installed; otherwise `unavailable_reason` says which is
missing, and asking for a ``cuda`` tensor raises a RuntimeError that quotes it. The module
registers through the same mechanism as out-of-tree backends (`lazytorch._devices`).

>>> import lazytorch
>>> lazytorch.cuda.is_available() == (lazytorch.cuda.unavailable_reason() is None)
True
>>> where = "cuda" if lazytorch.cuda.is_available() else "cpu"
>>> (lazytorch.arange(3.0, device=where) * 2).cpu().tolist()
[0.0, 2.0, 4.0]

Tests run the whole path on the CPU through a fake driver (``_use_driver``; see
tests/gpu/test_cuda_memory.py).
"""

from __future__ import annotations

from typing import Any

from lazytorch.ops import random as _random

__all__ = [
    "BACKEND",
    "current_device",
    "device",
    "device_count",
    "empty_cache",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
    "unavailable_reason",
]

BACKEND = "triton-cuda"


def _memory() -> Any:
    """`lazytorch.runtime.cuda_memory`, loaded on first use (not by ``import lazytorch``)."""
    from lazytorch.runtime import cuda_memory  # lazy: import time (import lazytorch)

    return cuda_memory


def _runtime() -> Any:
    return _memory().runtime()


def is_available() -> bool:
    """Whether lazytorch can put tensors on a GPU (see `unavailable_reason` when not)."""
    if _runtime().unavailable_reason() is not None:
        return False
    _register_backend()
    return True


def unavailable_reason() -> str | None:
    """Why `is_available()` is False (``"no CUDA device (...)"``, ...); None when it is True."""
    return _runtime().unavailable_reason()  # type: ignore[no-any-return]


def device_count() -> int:
    """The number of GPUs lazytorch can use (0 when CUDA is not available)."""
    return int(_runtime().device_count())


def current_device() -> int:
    """The index of the device ``"cuda"`` means on this thread (0 unless set)."""
    return int(_runtime().current_device())


def set_device(device: Any) -> None:
    """Make `device` (an index, ``"cuda:1"`` or a device) the current one on this thread."""
    rt = _runtime()
    rt.require("lazytorch.cuda.set_device()")
    rt.set_device(device)


class device:  # lower case: torch.cuda.device's name
    """Context manager: `device` is the current CUDA device inside (None: the current one
    stays), and its context is the driver's current context, where kernels launch.

    Programs on ``cuda:i`` run inside ``device(i)`` (those on ``"cuda"`` inside
    ``device(None)``), so their memory is allocated and their kernels run there. A negative
    index is a no-op, as in torch (scripts write ``device(-1)`` for the CPU).
    """

    def __init__(self, device: Any) -> None:
        self.device = device
        self._prev: int | None = None

    def __enter__(self) -> device:
        if isinstance(self.device, int) and self.device < 0:
            return self  # torch: a negative index selects nothing (CUDA is not touched)
        rt = _runtime()
        self._prev = rt.current_device()
        rt.activate(self.device)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._prev is not None:
            _runtime().set_device(self._prev)
            self._prev = None


def synchronize(device: Any = None) -> None:
    """Wait until every kernel and copy issued to `device` (None: the current one) finished.

    RuntimeError when CUDA is not available.
    """
    _runtime().synchronize(device)


def memory_allocated(device: Any = None) -> int:
    """Bytes of device memory held by live tensors (None: all devices), in 512-byte blocks."""
    rt = _runtime()
    if rt.unavailable_reason() is not None:
        return 0
    return sum(a.allocated for a in rt.allocators(device))


def memory_reserved(device: Any = None) -> int:
    """Bytes obtained from the driver: `memory_allocated` plus freed blocks kept for reuse."""
    rt = _runtime()
    if rt.unavailable_reason() is not None:
        return 0
    return sum(a.reserved for a in rt.allocators(device))


def max_memory_allocated(device: Any = None) -> int:
    """The most bytes `memory_allocated` has reached since the start or the last
    `reset_peak_memory_stats` (None: all devices); 0 without CUDA, as in torch."""
    rt = _runtime()
    if rt.unavailable_reason() is not None:
        return 0
    return sum(a.peak_allocated for a in rt.allocators(device))


def max_memory_reserved(device: Any = None) -> int:
    """The most bytes `memory_reserved` has reached since the start or the last
    `reset_peak_memory_stats` (None: all devices); 0 without CUDA, as in torch."""
    rt = _runtime()
    if rt.unavailable_reason() is not None:
        return 0
    return sum(a.peak_reserved for a in rt.allocators(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start `max_memory_allocated` and `max_memory_reserved` again from the current values.

    RuntimeError when CUDA is not available (torch fails there too).
    """
    rt = _runtime()
    rt.require("lazytorch.cuda.reset_peak_memory_stats()")
    for a in rt.allocators(device):
        a.reset_peak()


def empty_cache() -> None:
    """Give the freed blocks kept for reuse back to the driver (as torch.cuda.empty_cache)."""
    rt = _runtime()
    if rt.unavailable_reason() is None:
        for a in rt.allocators():
            a.empty_cache()


# -- random numbers ----------------------------------------------------------------------------
# lazytorch draws every device's random numbers from one counter-based generator, so a cuda
# tensor gets the same numbers as a cpu one; seeding "the cuda generators" seeds that one.
# Without CUDA these are no-ops, as torch's are ("silently ignored").


def manual_seed(seed: int) -> None:
    """Seed the generator cuda draws use (a no-op without CUDA, as in torch). lazytorch has
    one generator for every device (Philox draws are device-independent), so with CUDA this
    reseeds the CPU's draws too, where torch keeps a generator per device."""
    if is_available():
        _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Seed the generator cuda draws use from OS entropy (a no-op without CUDA)."""
    if is_available():
        _random.seed()


seed_all = seed


def initial_seed() -> int:
    """The seed of the generator cuda draws use."""
    return _random.initial_seed()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether cuda tensors can be bfloat16: wherever the cuda device works (the Triton
    backend lowers bfloat16 loads, math and ``tl.dot``; its targets are Ampere and later).

    >>> import lazytorch
    >>> lazytorch.cuda.is_bf16_supported() == lazytorch.cuda.is_available()
    True
    """
    return is_available()


def __getattr__(name: str) -> Any:
    if name == "amp":  # torch.cuda.amp, loaded on first use
        import importlib

        return importlib.import_module("lazytorch.cuda.amp")
    if name.endswith("Tensor"):  # torch.cuda.FloatTensor & co (lazytorch._legacy_types)
        from lazytorch._legacy_types import CUDA_LEGACY_TYPES  # lazy: import time (on first use)

        if name in CUDA_LEGACY_TYPES:
            return CUDA_LEGACY_TYPES[name]
    raise AttributeError(f"module 'lazytorch.cuda' has no attribute {name!r}")


def to_device_buffer(value: Any, device: Any) -> Any:
    """The device-module hook `lazytorch._devices.place` calls: `value` (a host array or a
    DeviceBuffer) as a DeviceBuffer on `device` (uploaded, or returned if already there)."""
    rt = _runtime()
    return rt.to_device(value, rt.index(device))


def _register_backend() -> None:
    """Make `BACKEND` a runtime backend name (once): Triton over a `CudaCarrier`."""
    # lazy: import time (import lazytorch)
    from lazytorch.runtime.backends import available_backends, register_backend

    if BACKEND in available_backends():
        return

    def make() -> Any:
        from lazytorch.runtime.triton_backend import TritonBackend  # lazy: import time (cuda only)

        return TritonBackend(_memory().CudaCarrier(), name=BACKEND)

    register_backend(BACKEND, make)


def _use_driver(driver: Any = None) -> None:
    """Run the cuda device over `driver`, an object with `lazytorch.runtime.cuda_driver`'s
    functions (None: the real driver again). For tests: a fake backed by host memory runs
    the whole cuda path without a GPU. Availability is probed again on the next call."""
    _memory().use_driver(driver)
