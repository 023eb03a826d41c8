"""Global switches: process-wide defaults plus thread-local scoped overrides.

Each switch has a setter (``set_sync_mode``), a getter, and a context manager
(``sync_mode()``) whose setting applies to the current thread only; the innermost scope
wins. Defaults come from the environment at import:

=============================  ===========================================================
``LAZYTORCH_SYNC=1``           sync mode: every op is executed as soon as it is recorded
``LAZYTORCH_STRICT=1``         implicit materializations raise instead of running
``LAZYTORCH_MAX_PENDING_NODES`` auto-cut threshold (nodes recorded since the last cut)
``LAZYTORCH_BACKEND``          backend that executes programs (``interpreter`` for now)
=============================  ===========================================================
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from lazytorch.ir import dtypes as _dt
from lazytorch.ir.device import CPU, Device, as_device


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


class _Defaults:
    sync: bool = _env_flag("LAZYTORCH_SYNC")
    strict: bool = _env_flag("LAZYTORCH_STRICT")
    dtype: _dt.DType = _dt.float32
    device: Device = CPU
    max_pending_nodes: int = _env_int("LAZYTORCH_MAX_PENDING_NODES", 100_000)
    backend: str = os.environ.get("LAZYTORCH_BACKEND", "").strip() or "interpreter"


DEFAULTS = _Defaults()


class _Local(threading.local):
    def __init__(self) -> None:
        self.sync: list[bool] = []
        self.strict: list[bool] = []
        self.dtype: list[_dt.DType] = []
        self.device: list[Device] = []


_local = _Local()

# True whenever sync mode may be on in some thread; lets the per-op hot path skip the
# thread-local lookup in the common (lazy) case.
sync_possible: bool = DEFAULTS.sync


# -- sync mode -----------------------------------------------------------------------------
def sync_enabled() -> bool:
    s = _local.sync
    return s[-1] if s else DEFAULTS.sync


def set_sync_mode(enabled: bool) -> None:
    """Turn sync mode on or off for the process (the default scoped modes fall back to).

    In sync mode each op is materialized as soon as it is recorded, through the same
    pipeline, so errors surface at the op's line and values can be inspected op by op.
    """
    global sync_possible
    DEFAULTS.sync = bool(enabled)
    sync_possible = sync_possible or DEFAULTS.sync


def is_sync_mode() -> bool:
    """Whether ops run immediately on this thread."""
    return sync_enabled()


@contextlib.contextmanager
def sync_mode(enabled: bool = True) -> Iterator[None]:
    """Run ops immediately inside the block (this thread only).

    >>> import lazytorch
    >>> with lazytorch.sync_mode():
    ...     y = lazytorch.ones(3) * 2   # computed here, not at the next materialization
    >>> lazytorch.is_sync_mode()
    False
    """
    global sync_possible
    _local.sync.append(bool(enabled))
    sync_possible = True
    try:
        yield
    finally:
        _local.sync.pop()


# -- strict mode ---------------------------------------------------------------------------
def strict_enabled() -> bool:
    s = _local.strict
    return s[-1] if s else DEFAULTS.strict


def set_strict_mode(enabled: bool) -> None:
    """Make every implicit materialization (``.item()``, ``print``, ``bool``...) an error."""
    DEFAULTS.strict = bool(enabled)


@contextlib.contextmanager
def strict_mode(enabled: bool = True) -> Iterator[None]:
    """Inside the block, implicit materializations raise `ImplicitMaterializationError`.

    >>> import lazytorch
    >>> x = lazytorch.ones(2) + 1
    >>> with lazytorch.strict_mode():
    ...     lazytorch.materialize(x)      # explicit cuts are always allowed
    """
    _local.strict.append(bool(enabled))
    try:
        yield
    finally:
        _local.strict.pop()


# -- default dtype -------------------------------------------------------------------------
def get_default_dtype() -> _dt.DType:
    """The float dtype for Python floats and float factories (float32 unless changed)."""
    s = _local.dtype
    return s[-1] if s else DEFAULTS.dtype


def _check_float_dtype(d: Any, who: str) -> _dt.DType:
    if not isinstance(d, _dt.DType) or not d.is_floating_point:
        raise TypeError(
            f"{who}: only floating-point types are supported as the default type, got {d}"
        )
    return d


def set_default_dtype(d: _dt.DType) -> None:
    """Set the process-wide default float dtype (float16, float32 or float64)."""
    DEFAULTS.dtype = _check_float_dtype(d, "set_default_dtype()")


@contextlib.contextmanager
def default_dtype(d: _dt.DType) -> Iterator[None]:
    """Use `d` as the default float dtype inside the block (this thread only).

    >>> import lazytorch
    >>> with lazytorch.default_dtype(lazytorch.float64):
    ...     lazytorch.ones(2).dtype
    lazytorch.float64
    """
    _local.dtype.append(_check_float_dtype(d, "default_dtype()"))
    try:
        yield
    finally:
        _local.dtype.pop()


# -- default device ------------------------------------------------------------------------
def get_default_device() -> Device:
    """The device factories use when none is given (``cpu`` unless changed)."""
    s = _local.device
    return s[-1] if s else DEFAULTS.device


def set_default_device(device: Any) -> None:
    """Set the process-wide default device; None restores ``cpu``."""
    DEFAULTS.device = CPU if device is None else as_device(device)


def push_device(device: Device) -> None:
    _local.device.append(device)


def pop_device(device: Device) -> None:
    stack = _local.device
    if not stack or stack[-1] is not device:
        raise RuntimeError("device context managers exited out of order")
    stack.pop()


Device._enter_hook = push_device
Device._exit_hook = pop_device


# -- graph size ----------------------------------------------------------------------------
def set_max_pending_nodes(n: int) -> None:
    """Cut the pending graph automatically after `n` nodes are recorded without a cut."""
    if not isinstance(n, int) or n <= 0:
        raise ValueError(f"set_max_pending_nodes(): expected a positive int, got {n!r}")
    DEFAULTS.max_pending_nodes = n


def get_max_pending_nodes() -> int:
    return DEFAULTS.max_pending_nodes
