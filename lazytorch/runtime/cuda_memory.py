"""Device memory of the ``cuda`` device: buffers, a caching allocator, the Triton carrier.

A cuda tensor's value (`lazytorch.ir.node.Node.buffer`) is a `DeviceBuffer`: memory on one
GPU with a shape and a NumPy dtype. ``.to("cuda")`` uploads a value once; programs on the
device take DeviceBuffers as inputs and return new ones, with no copy through the host;
``.cpu()``, ``.numpy()``, ``.item()`` and printing copy a value back (`DeviceBuffer.to_host`).

**Allocation.** Each device has a `CachingAllocator`. Sizes are rounded up to a multiple of
512 bytes; when a buffer is garbage-collected (the block's ``__del__``) its block goes back to
the allocator's free list for that size, and the next allocation of the size takes it. A
training loop, which allocates the same sizes every step, calls ``cuMemAlloc`` in its first
step only. All work runs on the device's default stream, in order, so a reused block is
written only after the kernels that read its previous contents. When ``cuMemAlloc`` runs
out of memory, the cached blocks are freed and the allocation is tried once more.

**The driver** is `lazytorch.runtime.cuda_driver` unless a test put another object with the
same functions in its place (`use_driver`; ``lazytorch.cuda._use_driver``).

**Counters** in `lazytorch.metrics.counters()`:

* ``cuda_malloc_calls``, ``cuda_malloc_bytes``: ``cuMemAlloc`` calls and the bytes they got;
* ``cuda_cache_reuses``: allocations served by a freed block;
* ``cuda_h2d_copies``, ``cuda_h2d_bytes``, ``cuda_d2h_copies``, ``cuda_d2h_bytes``: copies
  between host and device and their sizes (tensor values, and the few bytes of launch
  arguments and error flag each Triton program run moves);
* ``cuda_d2d_copies``: copies between device buffers.

>>> from lazytorch.runtime.cuda_memory import CachingAllocator
>>> CachingAllocator.size_class(1), CachingAllocator.size_class(513)
(512, 1024)
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from typing import Any

from lazytorch import metrics
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import as_device
from lazytorch.runtime import cuda_driver

__all__ = [
    "CachingAllocator",
    "CudaCarrier",
    "CudaRuntime",
    "DeviceBuffer",
    "runtime",
    "use_driver",
]


class Block:
    """One allocation: a device address and its rounded size, owned by an allocator.

    The buffers using it (one, and its reshapes) are its only holders: when the last of
    them is collected, the block goes back to its allocator's cache. ``__del__`` costs a
    fraction of a ``weakref.finalize``, which is on every run's path (each output's block).
    """

    __slots__ = ("allocator", "ptr", "size")

    def __init__(self, ptr: int, size: int, allocator: CachingAllocator) -> None:
        self.ptr = ptr
        self.size = size
        self.allocator = allocator

    def __del__(self) -> None:
        try:  # noqa: SIM105 -- a plain try is cheaper than contextlib.suppress here
            self.allocator.release(self)
        except Exception:  # interpreter shutdown: the allocator may be gone already
            pass


class DeviceBuffer:
    """A value in CUDA device memory: ``shape``, ``dtype`` (a NumPy dtype), ``nbytes``,
    ``device`` (the device index) and ``data_ptr()``.

    Triton takes it as a pointer argument as is: it reads ``data_ptr()`` and types the
    pointer from ``str(dtype)`` (``"float32"``, ``"int64"``, ...). Booleans are stored one
    byte each, 0 or 1, as torch stores them, and ``dtype`` is NumPy's ``bool`` (Triton's
    ``*u1`` pointer, which loads bytes). Buffers are immutable once written, so a
    `reshape` shares memory. The memory returns to its allocator when the last buffer using
    it is garbage-collected.
    """

    __slots__ = ("__weakref__", "_base", "_block", "device", "dtype", "nbytes", "shape")

    def __init__(
        self,
        block: Block | None,
        shape: tuple[int, ...],
        dtype: Any,
        device: int,
        base: DeviceBuffer | None = None,
    ) -> None:
        self._block = block
        self._base = base  # a reshape keeps the buffer that owns the memory alive
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.device = device
        n = 1
        for d in self.shape:
            n *= d
        self.nbytes = n * self.dtype.itemsize

    def data_ptr(self) -> int:
        """The device address (0 for a buffer of no bytes)."""
        return self._block.ptr if self._block is not None else 0

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def reshape(self, shape: tuple[int, ...]) -> DeviceBuffer:
        """The same memory seen with another shape of as many elements."""
        view = DeviceBuffer(self._block, shape, self.dtype, self.device, base=self._base or self)
        if view.nbytes != self.nbytes:
            raise ValueError(f"cannot reshape {self} to {list(shape)}")
        return view

    def to_host(self) -> Any:
        """A new host NumPy array with the values (a device-to-host copy)."""
        out = np.empty(self.shape, dtype=self.dtype)
        if self.nbytes:
            assert self._block is not None
            driver = self._block.allocator.driver
            driver.set_device(self.device)
            driver.copy_dtoh(out.ctypes.data, self.data_ptr(), self.nbytes)
            metrics.increment("cuda_d2h_copies")
            metrics.increment("cuda_d2h_bytes", self.nbytes)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self.to_host()
        return arr if dtype is None else arr.astype(dtype)

    def __reduce__(self) -> Any:
        raise TypeError(
            "a DeviceBuffer cannot be pickled (its memory belongs to this process); pickle "
            "the tensor, which saves a host copy"
        )

    def __repr__(self) -> str:
        return (
            f"DeviceBuffer({self.dtype.name}{list(self.shape)} on cuda:{self.device}, "
            f"{self.nbytes} bytes at {self.data_ptr():#x})"
        )


class CachingAllocator:
    """Device memory of one device in 512-byte size classes, kept for reuse when freed."""

    GRANULE = 512

    def __init__(self, driver: Any, index: int) -> None:
        self.driver = driver
        self.index = index
        self.cached: dict[int, list[int]] = {}  # size class -> free device addresses
        self.allocated = 0  # bytes held by live buffers
        self.reserved = 0  # bytes obtained from the driver: allocated plus cached
        self.peak_allocated = 0  # the most `allocated` has been since the last reset_peak
        self.peak_reserved = 0
        self._lock = threading.Lock()  # finalizers may release from any thread

    @staticmethod
    def size_class(nbytes: int) -> int:
        g = CachingAllocator.GRANULE
        return max(g, -(-nbytes // g) * g)

    def allocate(self, nbytes: int) -> Block:
        size = self.size_class(nbytes)
        with self._lock:
            free = self.cached.get(size)
            ptr = free.pop() if free else None
            if ptr is not None:
                self.allocated += size
                self.peak_allocated = max(self.peak_allocated, self.allocated)
        if ptr is not None:
            metrics.increment("cuda_cache_reuses")
            return Block(ptr, size, self)
        self.driver.set_device(self.index)
        try:
            ptr = self.driver.alloc(size)
        except RuntimeError as e:
            if "OUT_OF_MEMORY" not in str(e) or not self.cached:
                raise
            self.empty_cache()  # give the cached blocks back and try once more
            ptr = self.driver.alloc(size)
        metrics.increment("cuda_malloc_calls")
        metrics.increment("cuda_malloc_bytes", size)
        with self._lock:
            self.reserved += size
            self.allocated += size
            self.peak_allocated = max(self.peak_allocated, self.allocated)
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        return Block(ptr, size, self)

    def reset_peak(self) -> None:
        """Start the peaks again from the current `allocated` and `reserved`."""
        with self._lock:
            self.peak_allocated = self.allocated
            self.peak_reserved = self.reserved

    def release(self, block: Block) -> None:
        """Take a dead buffer's block back into the cache (no driver call: GC-safe)."""
        with self._lock:
            self.allocated -= block.size
            self.cached.setdefault(block.size, []).append(block.ptr)

    def empty_cache(self) -> int:
        """Free every cached block (after the device's pending work); the bytes freed."""
        with self._lock:
            blocks = [(size, ptr) for size, ptrs in self.cached.items() for ptr in ptrs]
            self.cached.clear()
        if not blocks:
            return 0
        self.driver.set_device(self.index)
        self.driver.synchronize()  # a kernel may still read a block freed by GC
        for _, ptr in blocks:
            self.driver.free(ptr)
        freed = sum(size for size, _ in blocks)
        with self._lock:
            self.reserved -= freed
        return freed


class _Unprobed:
    pass


_UNPROBED = _Unprobed()


def _triton_installed() -> bool:
    return importlib.util.find_spec("triton") is not None


class CudaRuntime:
    """The cuda device's state over one driver: availability, current device, allocators."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self._reason: str | _Unprobed | None = _UNPROBED
        self._count = 0
        self._allocators: dict[int, CachingAllocator] = {}
        self._local = threading.local()  # .index: this thread's current device

    # -- availability -------------------------------------------------------------------------
    def unavailable_reason(self) -> str | None:
        """Why the device cannot be used (probed once), or None when it can."""
        if isinstance(self._reason, _Unprobed):
            self._reason = self._probe()
        return self._reason

    def _probe(self) -> str | None:
        try:
            self.driver.init()
        except ImportError:
            return "cuda-bindings is not installed: pip install 'lazytorch[cuda]'"
        except Exception as e:
            if "CUDA_ERROR_NO_DEVICE" in str(e):
                return f"no CUDA device ({e})"
            return f"no NVIDIA driver ({e})"
        try:
            count = int(self.driver.device_count())
        except Exception as e:
            return f"no CUDA device ({e})"
        if count <= 0:
            return "no CUDA device (cuDeviceGetCount: 0)"
        if not _triton_installed():
            return "triton is not installed (it compiles the cuda device's kernels): pip install triton"
        self._count = count
        return None

    def device_count(self) -> int:
        return 0 if self.unavailable_reason() is not None else self._count

    def require(self, what: str) -> None:
        """RuntimeError naming `what` unless the device can be used."""
        reason = self.unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"{what}: CUDA is not available: {reason}")

    # -- devices ------------------------------------------------------------------------------
    def current_device(self) -> int:
        return getattr(self._local, "index", 0)

    def index(self, device: Any = None) -> int:
        """A device index from None (the current one), an int, or a cuda Device or string."""
        if device is None:
            return self.current_device()
        if isinstance(device, int) and not isinstance(device, bool):
            i = device
        else:
            d = as_device(device)
            if d.type != "cuda":
                raise ValueError(f"expected a cuda device, got '{d}'")
            i = d.index if d.index is not None else self.current_device()
        if not 0 <= i < self.device_count():
            raise RuntimeError(
                f"invalid CUDA device {i}: there {'is' if self._count == 1 else 'are'} "
                f"{self._count} device{'s' if self._count != 1 else ''}"
            )
        return i

    def set_device(self, device: Any) -> None:
        self._local.index = self.index(device)

    def activate(self, device: Any = None) -> None:
        """Make `device` current, for lazytorch and as the driver's current context (a
        copy from another device's buffer may have left that one current)."""
        i = self.index(device)
        self._local.index = i
        self.driver.set_device(i)

    def allocator(self, index: int) -> CachingAllocator:
        a = self._allocators.get(index)
        if a is None:
            a = self._allocators.setdefault(index, CachingAllocator(self.driver, index))
        return a

    def allocators(self, device: Any = None) -> list[CachingAllocator]:
        """Every allocator made so far (device None), or the given device's."""
        if device is None:
            return list(self._allocators.values())
        return [self.allocator(self.index(device))]

    # -- buffers ------------------------------------------------------------------------------
    def empty(self, shape: tuple[int, ...], dtype: Any, index: int | None = None) -> DeviceBuffer:
        """A new, unwritten buffer on device `index` (None: the current device)."""
        i = self.current_device() if index is None else index
        buf = DeviceBuffer(None, shape, dtype, i)
        if buf.nbytes:
            buf._block = self.allocator(i).allocate(buf.nbytes)  # released with it
        return buf

    def upload(self, array: Any, index: int | None = None) -> DeviceBuffer:
        """A host array's copy on device `index` (None: the current device)."""
        arr = np.asarray(array)
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")
        buf = self.empty(arr.shape, arr.dtype, index)
        if buf.nbytes:
            self.driver.set_device(buf.device)
            self.driver.copy_htod(buf.data_ptr(), arr.ctypes.data, buf.nbytes)
            metrics.increment("cuda_h2d_copies")
            metrics.increment("cuda_h2d_bytes", buf.nbytes)
        return buf

    def to_device(self, value: Any, index: int) -> DeviceBuffer:
        """`value` (a host array or a DeviceBuffer) on device `index`; a buffer already
        there is returned as is (values are immutable)."""
        if isinstance(value, DeviceBuffer):
            if value.device == index:
                return value
            value = value.to_host()  # another GPU: through the host (no peer access)
        return self.upload(value, index)

    def copy(self, buf: DeviceBuffer) -> DeviceBuffer:
        """A new buffer with `buf`'s values on the same device."""
        out = self.empty(buf.shape, buf.dtype, buf.device)
        if buf.nbytes:
            self.driver.set_device(buf.device)
            self.driver.copy_dtod(out.data_ptr(), buf.data_ptr(), buf.nbytes)
            metrics.increment("cuda_d2d_copies")
        return out

    def synchronize(self, device: Any = None) -> None:
        self.require("lazytorch.cuda.synchronize()")
        self.driver.set_device(self.index(device))
        self.driver.synchronize()


class CudaCarrier:
    """The Triton backend's carrier for the cuda device: buffers stay on the device.

    ``resident = True`` tells `lazytorch.runtime.triton_backend.TritonExecutable` to take
    the DeviceBuffers it `owns` as inputs with no copy and to return its outputs on the
    device. `arg` is what a kernel launch receives for a buffer (the driver's
    ``kernel_arg``). Allocations go to the current device (`lazytorch.cuda.device`).
    """

    resident = True

    def __init__(self, get_runtime: Callable[[], CudaRuntime] | None = None) -> None:
        self._runtime = get_runtime or runtime

    def to_device(self, array: Any) -> DeviceBuffer:
        return self._runtime().upload(array)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> DeviceBuffer:
        return self._runtime().empty(shape, dtype)

    def to_host(self, buffer: DeviceBuffer) -> Any:
        return buffer.to_host()

    def owns(self, value: Any) -> bool:
        """Whether `value` is a buffer on the current device (usable without a copy)."""
        return isinstance(value, DeviceBuffer) and value.device == self._runtime().current_device()

    def arg(self, buffer: DeviceBuffer) -> Any:
        return self._runtime().driver.kernel_arg(buffer)

    def arg_function(self) -> Callable[[DeviceBuffer], Any] | None:
        """The driver's ``kernel_arg``, or None where buffers are the arguments as they are
        (the real driver: ``ARGS_ARE_BUFFERS``), which saves a pass over them per run."""
        driver = self._runtime().driver
        return None if getattr(driver, "ARGS_ARE_BUFFERS", False) else driver.kernel_arg

    def synchronize(self) -> None:
        self._runtime().synchronize()


_runtime: CudaRuntime | None = None


def runtime() -> CudaRuntime:
    """The cuda device's state (over `lazytorch.runtime.cuda_driver` unless replaced)."""
    global _runtime
    if _runtime is None:
        _runtime = CudaRuntime(cuda_driver)
    return _runtime


def use_driver(driver: Any = None) -> CudaRuntime:
    """Start over with `driver` (None: the real `lazytorch.runtime.cuda_driver`).

    Availability is probed again and new allocators are made; buffers made before keep
    their own allocator and driver until they are freed.
    """
    global _runtime
    if driver is None:
        driver = cuda_driver
    _runtime = CudaRuntime(driver)
    return _runtime
