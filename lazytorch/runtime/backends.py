"""Backends: what turns a canonical Program into something that runs.

A backend is a name and a ``compile(program) -> Executable``; an executable's
``run(inputs)`` takes one value per program parameter (arrays for buffers, Python numbers
for scalars) and returns one array per program output.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, Protocol

from lazytorch.ir.program import Program

__all__ = [
    "Backend",
    "Executable",
    "ProgramError",
    "available_backends",
    "get_backend",
    "register_backend",
]


class Executable(Protocol):
    program: Program

    def run(self, inputs: list[Any]) -> list[Any]: ...


class ProgramError(Exception):
    """Raised by an executable when instruction `index` of its program fails.

    The runtime turns it back into the original exception type, naming the op and the
    line that recorded the failing node *in the current capture* (a cached program may
    have been compiled from a capture recorded elsewhere).
    """

    def __init__(self, index: int, error: BaseException) -> None:
        super().__init__(index, error)
        self.index = index
        self.error = error


class Backend(Protocol):
    name: str

    def compile(self, program: Program, options: dict[str, Any] | None = None) -> Executable: ...


_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    if name in _factories:
        raise ValueError(f"backend {name!r} is already registered")
    _factories[name] = factory


def available_backends() -> list[str]:
    return sorted(_factories)


_resolved_auto: str | None = None


def resolve(name: str) -> str:
    """``auto`` -> ``cpp`` when the toolchain works, else (with one warning) ``interpreter``."""
    global _resolved_auto
    if name != "auto":
        return name
    if _resolved_auto is None:
        try:
            get_backend("cpp")
            _resolved_auto = "cpp"
        except Exception as e:
            import warnings

            warnings.warn(
                f"lazytorch: compiled execution is unavailable ({e}); using the NumPy "
                "interpreter (correct but slower). Set LAZYTORCH_BACKEND=interpreter to "
                "silence this warning.",
                RuntimeWarning,
                stacklevel=4,
            )
            _resolved_auto = "interpreter"
    return _resolved_auto


def get_backend(name: str) -> Backend:
    name = resolve(name)
    b = _instances.get(name)
    if b is not None:
        return b
    factory = _factories.get(name)
    if factory is None:
        close = difflib.get_close_matches(name, _factories, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown backend {name!r}{hint}; available: {', '.join(available_backends())}"
        )
    b = _instances[name] = factory()
    return b


def _interpreter() -> Backend:
    from lazytorch.runtime.interpreter import InterpreterBackend

    return InterpreterBackend()


def _cpp() -> Backend:
    from lazytorch.runtime.cpp_backend import CppBackend

    return CppBackend()


register_backend("interpreter", _interpreter)
register_backend("cpp", _cpp)
