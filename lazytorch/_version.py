"""lazytorch's version, in a module of its own so any layer can read it without importing
the package's facade (``pyproject.toml`` repeats it; a test keeps the two equal).

Under ``install_as_torch`` (``lazytorch run --as-torch``) a script's ``torch.__version__``
is `as_torch_version()`: the torch release whose API lazytorch follows and is tested
against (`TORCH_API`), with lazytorch's own version as its local part. Scripts test
``torch.__version__`` to pick a code path; lazytorch's "0.1.0" would send them down the
paths written for torch 0.x.

>>> from lazytorch._version import __version__, as_torch_version
>>> __version__.count(".")
2
>>> v = as_torch_version()
>>> v.startswith(TORCH_API + "+lazytorch."), v >= "2.0", v >= (1, 13), v < (3,)
(True, True, True, True)
"""

from __future__ import annotations

import re
from typing import Any

__version__ = "0.1.0"
# The torch release the API follows: the oracle the tests compare with (pyproject's pin).
TORCH_API = "2.13.0"

_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def _release(v: Any) -> tuple[int, ...] | None:
    """The release numbers of a version string or tuple (``"2.1.0a0+cpu"`` -> (2, 1, 0))."""
    if isinstance(v, tuple):
        return tuple(int(x) for x in v)
    m = _RELEASE.match(v) if isinstance(v, str) else None
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


class TorchVersion(str):
    """A version string that orders as a version against strings and tuples, as torch's
    ``torch.torch_version.TorchVersion`` does (``"2.13.0" > "2.9"``; ``v >= (2, 0)``).
    Equality with a string stays a string's."""

    __slots__ = ()

    def _cmp(self, other: Any) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        a, b = _release(str(self)), _release(other)
        return None if a is None or b is None else _padded(a, b)

    def __lt__(self, other: Any) -> bool:
        p = self._cmp(other)
        return str.__lt__(self, other) if p is None else p[0] < p[1]

    def __le__(self, other: Any) -> bool:
        p = self._cmp(other)
        return str.__le__(self, other) if p is None else p[0] <= p[1]

    def __gt__(self, other: Any) -> bool:
        p = self._cmp(other)
        return str.__gt__(self, other) if p is None else p[0] > p[1]

    def __ge__(self, other: Any) -> bool:
        p = self._cmp(other)
        return str.__ge__(self, other) if p is None else p[0] >= p[1]

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, tuple):
            p = self._cmp(other)
            return p is not None and p[0] == p[1]
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = str.__hash__


def as_torch_version() -> TorchVersion:
    """``torch.__version__`` as a script run on lazytorch sees it."""
    return TorchVersion(f"{TORCH_API}+lazytorch.{__version__}")
