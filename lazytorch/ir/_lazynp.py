"""A stand-in for the numpy module that imports NumPy on first attribute access.

The primitive table's reference implementations are written against ``np``; binding that
name to this object keeps ``import lazytorch`` free of NumPy's import cost until the first
time a value is actually computed.
"""

from __future__ import annotations

from typing import Any


class _LazyNumPy:
    def __getattr__(self, name: str) -> Any:
        import numpy

        value = getattr(numpy, name)
        # Cache on the instance: later lookups are ordinary attribute hits.
        object.__setattr__(self, name, value)
        return value


np: Any = _LazyNumPy()
