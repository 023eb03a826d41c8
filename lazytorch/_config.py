"""Global switches: process-wide defaults plus thread-local scoped overrides.

Each switch has a setter (``set_sync_mode``), a getter, and a context manager
(``sync_mode()``) whose setting applies to the current thread only; the innermost scope
wins. Defaults come from the environment at import: ``LAZYTORCH_SYNC``,
``LAZYTORCH_STRICT``, ``LAZYTORCH_MAX_PENDING_NODES``, ``LAZYTORCH_BACKEND``,
``LAZYTORCH_TIERED``, ``LAZYTORCH_DETERMINISTIC``, ``LAZYTORCH_MAX_AUTOTUNE`` and
``LAZYTORCH_LOG``. Every variable, these and the ones read later, is declared once in
`lazytorch._settings` (name, kind, default, doc, when it is read) and read through its
`env_value`; a bad value of one read here makes ``import lazytorch`` fail with a
`ValueError` naming the variable.

Backends register their names here (`register_backend_name`), so checking a backend name
needs nothing from the runtime.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

# The settings table lives in a module that imports nothing of ours (the IR reads it too);
# re-exported here, beside the switches it feeds.
from lazytorch._settings import SETTINGS as SETTINGS
from lazytorch._settings import env_value as env_value
from lazytorch._settings import render_table as render_table
from lazytorch.ir import dtypes as _dt
from lazytorch.ir.device import CPU, Device, as_device

LOG_CHANNELS = ("graphs", "syncs", "recompiles", "fusion", "cache", "compile")


def _setup_logging() -> None:
    """Route the loggers named in LAZYTORCH_LOG to stderr (once, at import)."""
    raw = env_value("LAZYTORCH_LOG")
    if raw:
        enable_logs(raw)


def enable_logs(raw: str) -> list[str]:
    """Print the comma-separated log channels in `raw` to stderr; returns those enabled.

    Channels are stdlib loggers named ``lazytorch.<channel>``, so an application may also
    configure them itself. Unknown names warn with the list of known ones.

    >>> import lazytorch._config as c
    >>> c.LOG_CHANNELS
    ('graphs', 'syncs', 'recompiles', 'fusion', 'cache', 'compile')
    """
    import logging
    import sys
    import warnings

    names = [n.strip() for n in raw.split(",") if n.strip()]
    if "all" in names:
        names = list(LOG_CHANNELS)
    unknown = [n for n in names if n not in LOG_CHANNELS]
    if unknown:
        warnings.warn(
            f"LAZYTORCH_LOG: unknown channel(s) {', '.join(unknown)}; "
            f"known: {', '.join(LOG_CHANNELS)}, all",
            RuntimeWarning,
            stacklevel=3,
        )
    for name in names:
        if name not in LOG_CHANNELS:
            continue
        logger = logging.getLogger(f"lazytorch.{name}")
        logger.setLevel(logging.DEBUG)
        if not any(getattr(h, "_lazytorch", False) for h in logger.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
            handler._lazytorch = True  # type: ignore[attr-defined]
            logger.addHandler(handler)
    return [n for n in names if n in LOG_CHANNELS]


class _Defaults:
    sync: bool = env_value("LAZYTORCH_SYNC")
    strict: bool = env_value("LAZYTORCH_STRICT")
    dtype: _dt.DType = _dt.float32
    device: Device = CPU
    max_pending_nodes: int = env_value("LAZYTORCH_MAX_PENDING_NODES")
    backend: str = env_value("LAZYTORCH_BACKEND")
    deterministic: bool = env_value("LAZYTORCH_DETERMINISTIC")
    deterministic_warn_only: bool = False
    max_autotune: bool = env_value("LAZYTORCH_MAX_AUTOTUNE")
    matmul_precision: str = "highest"
    tiered: bool = env_value("LAZYTORCH_TIERED")
    warn_always: bool = False


DEFAULTS = _Defaults()
_setup_logging()


class _Local(threading.local):
    def __init__(self) -> None:
        self.sync: list[bool] = []
        self.strict: list[bool] = []
        self.dtype: list[_dt.DType] = []
        self.device: list[Device] = []
        self.deterministic: list[bool] = []
        self.backend: list[str] = []
        self.max_autotune: list[bool] = []


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


# -- flags torch has that change nothing here ---------------------------------------------
def set_flush_denormal(mode: bool) -> bool:
    """torch's switch to flush subnormal floats to zero: not supported here, so False (as
    torch answers on a CPU without the feature), and subnormals keep their IEEE values.

    >>> import lazytorch
    >>> lazytorch.set_flush_denormal(True)
    False
    """
    return False


def set_warn_always(b: bool) -> None:
    """torch's switch to repeat warnings torch gives once (``TORCH_WARN_ONCE``): remembered
    for `is_warn_always_enabled`; lazytorch's warnings go through Python's `warnings`,
    whose filters decide how often they show."""
    DEFAULTS.warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    return DEFAULTS.warn_always


# -- determinism ---------------------------------------------------------------------------
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Require results that are bitwise identical across runs and thread counts.

    lazytorch's CPU kernels reduce in a fixed order whatever the thread count, so most
    programs are deterministic anyway; this mode also serializes what is not (atomic
    scatter-add). It is part of the compiled-program cache key. `warn_only` is accepted
    for torch compatibility (every op here has a deterministic implementation).
    """
    DEFAULTS.deterministic = bool(mode)
    DEFAULTS.deterministic_warn_only = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    s = _local.deterministic
    return s[-1] if s else DEFAULTS.deterministic


def tiered_enabled() -> bool:
    """Whether first-seen programs run on the interpreter while they compile in the
    background (``LAZYTORCH_TIERED``, default on; see `lazytorch.runtime.tiered`)."""
    return DEFAULTS.tiered


def max_autotune_enabled() -> bool:
    """Whether programs compiled now may time candidate block sizes (``MAX_AUTOTUNE``:
    ``LAZYTORCH_MAX_AUTOTUNE=1``, or inside ``compile(..., mode="max-autotune")``)."""
    s = _local.max_autotune
    return s[-1] if s else DEFAULTS.max_autotune


MATMUL_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """How float32 matrix products may compute, as torch's function of the same name.

    ``"highest"`` (the default): in float32. ``"high"`` and ``"medium"``: a GPU backend may
    use TensorFloat-32 tensor cores (inputs rounded to 10 mantissa bits, float32
    accumulation), several times faster on NVIDIA GPUs since Ampere. The CPU backends
    always compute in float32. It is part of the compiled-program cache key.

    >>> import lazytorch
    >>> lazytorch.set_float32_matmul_precision("high")
    >>> lazytorch.get_float32_matmul_precision()
    'high'
    >>> lazytorch.set_float32_matmul_precision("highest")
    >>> lazytorch.set_float32_matmul_precision("fast")
    Traceback (most recent call last):
      ...
    ValueError: set_float32_matmul_precision(): precision must be one of 'highest', 'high', 'medium', got 'fast'
    """
    if precision not in MATMUL_PRECISIONS:
        valid = ", ".join(repr(p) for p in MATMUL_PRECISIONS)
        raise ValueError(
            f"set_float32_matmul_precision(): precision must be one of {valid}, got {precision!r}"
        )
    DEFAULTS.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision (`set_float32_matmul_precision`)."""
    return DEFAULTS.matmul_precision


@contextlib.contextmanager
def max_autotune(enabled: bool = True) -> Iterator[None]:
    """Compile programs in ``MAX_AUTOTUNE`` mode inside the block (this thread only)."""
    _local.max_autotune.append(bool(enabled))
    try:
        yield
    finally:
        _local.max_autotune.pop()


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return DEFAULTS.deterministic_warn_only


@contextlib.contextmanager
def deterministic_algorithms(mode: bool = True) -> Iterator[None]:
    """Deterministic mode inside the block (this thread only).

    >>> import lazytorch
    >>> with lazytorch.deterministic_algorithms():
    ...     lazytorch.are_deterministic_algorithms_enabled()
    True
    """
    _local.deterministic.append(bool(mode))
    try:
        yield
    finally:
        _local.deterministic.pop()


# -- backend -------------------------------------------------------------------------------
BACKENDS = ("auto", "cpp", "interpreter")
"""The built-in names; backends registered later (`register_backend_name`) are accepted too."""

_registered_backends: list[str] = []


def register_backend_name(name: str) -> None:
    """Accept `name` in `set_backend` and `backend` (called by the runtime's
    ``register_backend``, so a name check never imports the runtime)."""
    if name not in BACKENDS and name not in _registered_backends:
        _registered_backends.append(name)


def _check_backend(name: str) -> str:
    known = [*BACKENDS, *sorted(_registered_backends)]
    if name not in known:
        import difflib

        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown backend {name!r}{hint}; choose one of {', '.join(known)}")
    return name


def backend_name() -> str:
    s = _local.backend
    return s[-1] if s else DEFAULTS.backend


def set_backend(name: str) -> None:
    """Choose what runs programs: ``cpp``, ``interpreter`` or ``auto`` (cpp if available)."""
    DEFAULTS.backend = _check_backend(name)


# Resolves ``auto`` to the backend that runs here: `lazytorch.runtime` installs it when it
# loads (the runtime imports this module, never the reverse).
resolve_backend: Callable[[str], str] | None = None


def get_backend() -> str:
    """The backend programs run on now (``auto`` resolved)."""
    if resolve_backend is None:
        raise RuntimeError("get_backend(): lazytorch.runtime is not loaded")
    return resolve_backend(backend_name())


@contextlib.contextmanager
def backend(name: str) -> Iterator[None]:
    """Run programs on backend `name` inside the block (this thread only).

    >>> import lazytorch
    >>> with lazytorch.backend("interpreter"):
    ...     lazytorch.get_backend()
    'interpreter'
    """
    _local.backend.append(_check_backend(name))
    try:
        yield
    finally:
        _local.backend.pop()
