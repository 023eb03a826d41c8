"""Device modules: one registry for the built-in devices and for out-of-tree backends.

A device type (``cpu``, ``cuda``, or a plugin's ``"npu"``) can hold tensors when a *device
module* is registered for it. The module is what users reach as ``lazytorch.<type>``
(``lazytorch.cuda.is_available()``). It provides:

* ``is_available() -> bool``;
* ``device_count() -> int``;
* ``synchronize(device=None)``;
* ``BACKEND``: the name of the runtime backend (`lazytorch.runtime.backends`) that runs
  programs on this device, or None for the process-wide backend choice (``cpu``).

Two more are optional, for a device whose values live in its own memory (``cuda``):

* ``to_device_buffer(value, device) -> buffer``: a host NumPy array (or another device's
  buffer) as this device's buffer. `place` calls it for every value that becomes a leaf on
  the device (``.to(device)``, a factory's ``device=``). A buffer must offer
  ``to_host() -> np.ndarray``, which `place` and ``Tensor.numpy()`` use to read it back.
  Without the hook, values stay host arrays and the device's backend takes and returns
  those;
* ``device(index)``: a context manager that makes device `index` (None: the current one)
  current; every program on the device runs inside it.

The built-in ``cpu`` and ``cuda`` modules register themselves through
`_register_device_module`, exactly as an external backend does, so the two paths cannot
drift apart.

**Out-of-tree backends** are found through the entry-point group ``lazytorch.backends``.
The entry point's *name* is the device type. Its value is either a module, which is
registered as is, or a callable that registers the module itself (and usually its runtime
backend):

.. code-block:: toml

    [project.entry-points."lazytorch.backends"]
    npu = "lazytorch_npu:register"

Plugins load lazily, the first time their device is used (a factory's ``device=``,
``.to(...)`` or `get_device_module`), so ``import lazytorch`` reads no package metadata.
``LAZYTORCH_DEVICE_BACKEND_AUTOLOAD=0`` turns discovery off. A plugin that fails to load
raises a RuntimeError that names it and this opt-out; the failure is counted in the
``lazytorch_device_backend_autoload_failures_total`` metric.

>>> import lazytorch
>>> lazytorch.get_device_module("cpu") is lazytorch.cpu
True
>>> available_device_types()[:2]
['cpu', 'cuda']
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from lazytorch import _config, metrics
from lazytorch._errors import op_error
from lazytorch._settings import env_value
from lazytorch.ir.device import Device, as_device

__all__ = [
    "ENTRY_POINT_GROUP",
    "_register_device_module",
    "available_device_types",
    "backend_for",
    "device_scope",
    "get_device_module",
    "host_value",
    "place",
]

ENTRY_POINT_GROUP = "lazytorch.backends"
AUTOLOAD_ENV = "LAZYTORCH_DEVICE_BACKEND_AUTOLOAD"

_modules: dict[str, Any] = {}
_failed: dict[str, RuntimeError] = {}  # device type -> the error its plugin raised
_looked_up: set[str] = set()  # device types whose entry points were searched already
# Makes a registered module reachable as ``lazytorch.<type>``, raising RuntimeError if the
# name would shadow another attribute. The facade installs it when it loads: this registry
# sits below the facade and does not import it.
publish: Callable[[str, Any], None] | None = None


def _register_device_module(device_type: str, module: Any) -> None:
    """Register `module` as the device module of `device_type` (``lazytorch.<type>``).

    RuntimeError if the type already has a module, or if the name would shadow another
    lazytorch attribute; ValueError for a name that is not an identifier.

    >>> import types, lazytorch
    >>> lazytorch._register_device_module("cpu", types.ModuleType("again"))
    Traceback (most recent call last):
      ...
    RuntimeError: the device module 'cpu' is already registered (as lazytorch.cpu)
    """
    if not isinstance(device_type, str) or not device_type.isidentifier():
        raise ValueError(f"device type must be an identifier string, got {device_type!r}")
    if device_type in _modules:
        raise RuntimeError(
            f"the device module '{device_type}' is already registered (as lazytorch.{device_type})"
        )
    if publish is not None:
        publish(device_type, module)
    _modules[device_type] = module
    if isinstance(module, ModuleType):
        sys.modules.setdefault(f"lazytorch.{device_type}", module)


def get_device_module(device: Any = None) -> Any:
    """The device module for `device` (a Device, a string such as ``"cuda:0"``, or None for
    the current default device), loading its plugin if one provides it.

    >>> import lazytorch
    >>> lazytorch.get_device_module("cuda:0").__name__
    'lazytorch.cuda'
    """
    dev = _config.get_default_device() if device is None else as_device(device)
    module = find(dev.type)
    if module is None:
        raise RuntimeError(_missing_message(dev.type))
    return module


def find(device_type: str) -> Any:
    """The module for `device_type`, autoloading its plugin once; None if there is none."""
    module = _modules.get(device_type)
    if module is not None:
        return module
    if device_type in _failed:
        raise _failed[device_type]
    if device_type in _looked_up or not autoload_enabled():
        return None
    _looked_up.add(device_type)
    for ep in _entry_points():
        if ep.name == device_type:
            _load(ep)
            return _modules[device_type]
    return None


def autoload_enabled() -> bool:
    return env_value(AUTOLOAD_ENV)


def available_device_types() -> list[str]:
    """Registered device types (plugins not yet loaded are not listed)."""
    return sorted(_modules)


def backend_for(device: Device) -> str | None:
    """The runtime backend that runs programs on `device`; None: the configured one."""
    module = find(device.type)
    return getattr(module, "BACKEND", None) if module is not None else None


def host_value(value: Any) -> Any:
    """`value` readable on the host: a device buffer copied back (``to_host()``), anything
    else (a NumPy array, a Python number) as it is."""
    to_host = getattr(value, "to_host", None)
    return to_host() if to_host is not None else value


def place(value: Any, device: Device) -> Any:
    """`value` (a host array, a device buffer, or a Python number) where `device` keeps
    values: the device module's ``to_device_buffer`` when it has one, else the host.

    Python numbers (scalar inputs) stay as they are everywhere.

    >>> import numpy as np
    >>> from lazytorch.ir.device import CPU
    >>> place(np.ones(2), CPU)
    array([1., 1.])
    """
    if device.type == "cpu" or not hasattr(value, "shape"):
        return host_value(value)
    module = find(device.type)
    hook = getattr(module, "to_device_buffer", None)
    return hook(value, device) if hook is not None else host_value(value)


def device_scope(device: Device) -> Any:
    """The context manager under which `device`'s programs run: the module's
    ``device(index)`` when it has one (the index None for ``"cuda"``), else None."""
    scope = getattr(find(device.type), "device", None)
    return scope(device.index) if scope is not None else None


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _load(ep: Any) -> None:
    """Load entry point `ep` and make sure it registered its device module."""
    dist = getattr(getattr(ep, "dist", None), "name", None) or "an unknown distribution"
    where = f"entry point '{ep.name} = {ep.value}' of {dist}"
    try:
        obj = ep.load()
        if isinstance(obj, ModuleType):
            _register_device_module(ep.name, obj)
        elif callable(obj):
            obj()
        else:
            raise TypeError(f"it is a {type(obj).__name__}, not a module or a callable")
        if ep.name not in _modules:
            raise RuntimeError(
                f"it ran but registered no device module '{ep.name}' (call "
                f"lazytorch._register_device_module({ep.name!r}, module))"
            )
    except Exception as e:
        metrics.increment("device_backend_autoload_failures")
        err = RuntimeError(
            f"failed to load the lazytorch device backend '{ep.name}' ({where}): "
            f"{type(e).__name__}: {e}. Fix or uninstall {dist}, or set "
            f"{AUTOLOAD_ENV}=0 to start without out-of-tree device backends"
        )
        err.__cause__ = e
        _failed[ep.name] = err
        raise err from e


def _missing_message(device_type: str) -> str:
    known = ", ".join(available_device_types())
    msg = f"no device module is registered for '{device_type}' (registered: {known})"
    if not autoload_enabled():
        return msg + f"; plugin discovery is off ({AUTOLOAD_ENV}=0)"
    return msg + f"; no installed package provides it (entry-point group '{ENTRY_POINT_GROUP}')"


def check_available(device: Device, op: str) -> None:
    """Raise the user-facing error unless tensors can live on `device` (cpu: no check;
    ``meta``, whose tensors have shapes and no values, is always available)."""
    if device.type == "meta":
        return
    module = find(device.type)
    if module is None:
        raise op_error(
            RuntimeError, op, f"device '{device}' is not available: {_missing_message(device.type)}"
        )
    if not module.is_available():
        raise op_error(
            RuntimeError,
            op,
            f"device '{device}' is not available: lazytorch.{device.type}.is_available() is "
            f"False{_why(module)}",
        )
    count = module.device_count()
    if device.index is not None and device.index >= count:
        raise op_error(
            RuntimeError,
            op,
            f"device '{device}' is not available: lazytorch.{device.type} has {count} "
            f"device{'s' if count != 1 else ''}",
        )


def _why(module: Any) -> str:
    why = getattr(module, "unavailable_reason", None)
    text = why() if callable(why) else None
    return f" ({text})" if text else ""
