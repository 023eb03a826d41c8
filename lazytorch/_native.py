"""Loading the native runtime (``lazytorch._C``), with one clear message if it is missing.

``import lazytorch`` never fails because of the extension: the interpreter backend needs
only NumPy. Code that wants the native runtime calls `load()`.
"""

from __future__ import annotations

import warnings
from types import ModuleType

from lazytorch._settings import env_value

_module: ModuleType | None = None
_error: str | None = None
_warned = False


def load(warn: bool = True) -> ModuleType | None:
    """The extension module, or None (warning once, with the fix) if it cannot be loaded."""
    global _module, _error, _warned
    if _module is not None or _error is not None:
        if _module is None and warn and not _warned:
            _warn()
        return _module
    try:
        # lazy: optional dependency (the extension may not be built)
        from lazytorch import _C  # type: ignore[attr-defined]

        # the C++ runtime reads LAZYTORCH_POOL_MB itself (strtoull: a bad value would mean
        # 0, silently); the settings parser checks it first and names a bad value
        env_value("LAZYTORCH_POOL_MB")
        _module = _C
    except ImportError as e:
        _error = str(e)
        if warn:
            _warn()
    return _module


def _warn() -> None:
    global _warned
    _warned = True
    warnings.warn(
        f"lazytorch's native extension lazytorch._C could not be loaded ({_error}). "
        "Reinstall with a C++ compiler available: pip install -e . (or pip install "
        "--force-reinstall lazytorch). Falling back to the pure-Python interpreter backend.",
        RuntimeWarning,
        stacklevel=3,
    )


def available() -> bool:
    return load(warn=False) is not None
