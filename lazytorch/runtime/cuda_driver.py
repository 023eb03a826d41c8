"""The CUDA driver layer: the few driver calls the ``cuda`` device needs, over cuda-bindings.

lazytorch talks to the GPU through NVIDIA's ``cuda-bindings`` package (``from cuda.bindings
import driver``), an optional dependency: ``pip install 'lazytorch[cuda]'``. torch is never
imported. Nothing here runs at import; the bindings are imported on the first call, so the
library imports and works without them (`lazytorch.cuda.is_available()` is then False).

Every binding returns a tuple whose first element is a ``CUresult``. `check` turns a result
other than ``CUDA_SUCCESS`` into a RuntimeError that names the call and the error
(``cuMemAlloc(1024): CUDA_ERROR_OUT_OF_MEMORY``, the name from ``cuGetErrorName``) and
returns the rest of the tuple.

**The driver interface.** This module *is* the driver the device memory layer
(`lazytorch.runtime.cuda_memory`) calls. Any object with the same functions can stand in for
it (`lazytorch.cuda._use_driver`); the tests run the whole cuda path on the CPU with a fake
backed by host memory. The functions:

* ``init()``: load the bindings and call ``cuInit``. ImportError when cuda-bindings is not
  installed; RuntimeError when there is no usable driver;
* ``device_count() -> int``;
* ``set_device(index)``: retain the device's primary context (once) and make it current on
  this thread (the context Triton's launcher uses too);
* ``alloc(nbytes) -> int`` and ``free(ptr)``: device memory (``cuMemAlloc``/``cuMemFree``);
* ``copy_htod(dst_ptr, src_addr, nbytes)``, ``copy_dtoh(dst_addr, src_ptr, nbytes)``,
  ``copy_dtod(dst_ptr, src_ptr, nbytes)``: synchronous copies; a host side is an address
  (``array.ctypes.data`` of a NumPy array);
* ``synchronize()``: wait for the current context's work (``cuCtxSynchronize``);
* ``memset_async(ptr, byte, nbytes)``: fill device memory with a byte, in order on the
  default stream (``cuMemsetD8Async``), where every kernel and copy of the device runs;
* ``device_uuid(index) -> bytes``: the device's 16-byte UUID (a MIG instance's own), the
  same in every process that sees the device, whatever its index there (the NCCL engine
  refuses two ranks on one GPU by it);
* ``kernel_arg(buffer)``: what a kernel launch takes for a `DeviceBuffer` (here the buffer
  itself: Triton reads its ``data_ptr()`` and ``dtype``).

>>> from lazytorch.runtime import cuda_driver
>>> cuda_driver.kernel_arg("a buffer")
'a buffer'
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = [
    "alloc",
    "check",
    "copy_dtod",
    "copy_dtoh",
    "copy_htod",
    "device_count",
    "device_uuid",
    "free",
    "init",
    "kernel_arg",
    "memset_async",
    "set_device",
    "synchronize",
]

# The ``cuda.bindings.driver`` module once imported (tests put a stub here).
_bindings: Any = None
_contexts: dict[int, Any] = {}  # device index -> its retained primary context
_lock = threading.Lock()


def _cu() -> Any:
    """``cuda.bindings.driver``, imported on first use (ImportError without cuda-bindings)."""
    global _bindings
    if _bindings is None:
        from cuda.bindings import driver

        _bindings = driver
    return _bindings


def error_name(err: Any) -> str:
    """``CUDA_ERROR_...`` for a CUresult (``cuGetErrorName``; the enum's name as a fallback)."""
    cu = _cu()
    try:
        res = cu.cuGetErrorName(err)
        if int(res[0]) == 0 and res[1]:
            name = res[1]
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # the name is for a message: never hide the original error
        pass
    return str(getattr(err, "name", None) or f"CUresult {int(err)}")


def check(call: str, result: Any) -> Any:
    """The values of a binding's `result` tuple; RuntimeError naming `call` on an error.

    ``(CUDA_SUCCESS,)`` gives None, ``(CUDA_SUCCESS, x)`` gives x, longer tuples the rest.
    """
    if not isinstance(result, tuple):
        result = (result,)
    err = result[0]
    if int(err) != 0:  # CUDA_SUCCESS
        raise RuntimeError(f"{call}: {error_name(err)}")
    rest = result[1:]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def init() -> None:
    """Load the driver and call ``cuInit(0)`` (see the module docstring for the errors)."""
    cu = _cu()  # ImportError: cuda-bindings is not installed
    try:
        result = cu.cuInit(0)
    except Exception as e:  # libcuda.so itself could not be found or loaded
        raise RuntimeError(f"libcuda could not be loaded: {e}") from e
    check("cuInit", result)


def device_count() -> int:
    return int(check("cuDeviceGetCount", _cu().cuDeviceGetCount()))


def set_device(index: int) -> None:
    """Make device `index`'s primary context current on this thread (retained once)."""
    cu = _cu()
    ctx = _contexts.get(index)
    if ctx is None:
        with _lock:
            ctx = _contexts.get(index)
            if ctx is None:
                dev = check(f"cuDeviceGet({index})", cu.cuDeviceGet(index))
                ctx = check(f"cuDevicePrimaryCtxRetain({index})", cu.cuDevicePrimaryCtxRetain(dev))
                _contexts[index] = ctx
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))


def alloc(nbytes: int) -> int:
    """`nbytes` (> 0) of device memory on the current device; the device address."""
    return int(check(f"cuMemAlloc({nbytes})", _cu().cuMemAlloc(nbytes)))


def free(ptr: int) -> None:
    cu = _cu()
    check("cuMemFree", cu.cuMemFree(cu.CUdeviceptr(ptr)))


def copy_htod(dst_ptr: int, src_addr: int, nbytes: int) -> None:
    cu = _cu()
    check(f"cuMemcpyHtoD({nbytes})", cu.cuMemcpyHtoD(cu.CUdeviceptr(dst_ptr), src_addr, nbytes))


def copy_dtoh(dst_addr: int, src_ptr: int, nbytes: int) -> None:
    cu = _cu()
    check(f"cuMemcpyDtoH({nbytes})", cu.cuMemcpyDtoH(dst_addr, cu.CUdeviceptr(src_ptr), nbytes))


def copy_dtod(dst_ptr: int, src_ptr: int, nbytes: int) -> None:
    cu = _cu()
    check(
        f"cuMemcpyDtoD({nbytes})",
        cu.cuMemcpyDtoD(cu.CUdeviceptr(dst_ptr), cu.CUdeviceptr(src_ptr), nbytes),
    )


def synchronize() -> None:
    check("cuCtxSynchronize", _cu().cuCtxSynchronize())


# The stream every kernel and copy of the device runs on: the context's default (legacy)
# stream. Triton launches there when torch is not loaded (its torch-free driver's
# ``get_current_stream`` is the default stream), and the synchronous copies above order
# with it.
DEFAULT_STREAM = 0


def memset_async(ptr: int, byte: int, nbytes: int) -> None:
    """Fill `nbytes` at `ptr` with `byte`, after the work already queued on the stream."""
    cu = _cu()
    check(
        f"cuMemsetD8Async({nbytes})",
        cu.cuMemsetD8Async(cu.CUdeviceptr(ptr), byte, nbytes, DEFAULT_STREAM),
    )


def device_uuid(index: int) -> bytes:
    """Device `index`'s 16-byte UUID (a MIG instance's own where the driver has ``_v2``)."""
    cu = _cu()
    dev = check(f"cuDeviceGet({index})", cu.cuDeviceGet(index))
    # CUDA 12 names the MIG-aware call _v2; CUDA 13's cuDeviceGetUuid is that call
    get = getattr(cu, "cuDeviceGetUuid_v2", None) or cu.cuDeviceGetUuid
    return bytes(check("cuDeviceGetUuid", get(dev)).bytes)


# kernel_arg is the identity: callers may pass buffers to kernels without calling it
ARGS_ARE_BUFFERS = True


def kernel_arg(buffer: Any) -> Any:
    """A `DeviceBuffer` as a kernel argument: itself (Triton reads data_ptr() and dtype)."""
    return buffer
