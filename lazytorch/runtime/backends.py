"""Backends: what turns a canonical Program into something that runs.

A backend is a name and a ``compile(program) -> Executable``; an executable's
``run(inputs)`` takes one value per program parameter (arrays for buffers, Python numbers
for scalars) and returns one array per program output.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from typing import Any, Protocol

from lazytorch import _config
from lazytorch.ir.prims.other import IndexOutOfRangeError
from lazytorch.ir.program import Program

__all__ = [
    "Backend",
    "Executable",
    "ProgramError",
    "available_backends",
    "get_backend",
    "has_empty_value",
    "register_backend",
    "runtime_error",
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


def has_empty_value(program: Program) -> bool:
    """True if a value has no elements or a symbolic size.

    The triton backend hands such programs to the reference interpreter. The cpp backend
    compiles what is not empty (`lazytorch.runtime.empty_values`) and hands the interpreter
    only a program whose shapes hold symbolic sizes (one built by hand: the programs it
    compiles over symbolic sizes are generalized from recorded ones and reach it through
    ``compile_dynamic``) and the rare op with no rule for an empty operand.
    """

    def empty(shape: Any) -> bool:
        return any(not isinstance(d, int) or d == 0 for d in shape)

    return any(empty(p.shape) for p in program.params) or any(
        empty(ins.shape) for ins in program.instrs
    )


def runtime_error(program: Program, err: tuple[int, ...]) -> ProgramError:
    """The error a compiled program reported through its error array, as a ProgramError.

    ``err`` is ``(instruction origin + 1, kind, a, b, c)``: kind 1 is an index ``a`` out of
    bounds for dimension ``c`` of size ``b``, kind 2 an integer division by zero.
    """
    origin = err[0] - 1
    index = next((j for j, ins in enumerate(program.instrs) if ins.origin == origin), 0)
    op = program.instrs[index].op.name
    kind, a, b, c = err[1:5]
    if kind == 1:
        exc: Exception = IndexOutOfRangeError(
            f"{op}: index {a} is out of bounds for dimension {c} with size {b}"
        )
    else:
        exc = RuntimeError(f"{op}: ZeroDivisionError (integer division by zero)")
    return ProgramError(index, exc)


class Backend(Protocol):
    name: str

    def compile(self, program: Program, options: dict[str, Any] | None = None) -> Executable: ...


_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    if name in _factories:
        raise ValueError(f"backend {name!r} is already registered")
    _factories[name] = factory
    _config.register_backend_name(name)


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


def _entry_point(path: str) -> Callable[[], Backend]:
    """A factory for the backend class at ``"module:Class"``, imported the first time the
    backend is asked for. The built-in backends are named this way, as plugins name theirs
    in entry points: each backend module imports this registry, never the reverse."""

    def make() -> Backend:
        module, _, cls = path.partition(":")
        return getattr(importlib.import_module(module), cls)()  # type: ignore[no-any-return]

    return make


register_backend("interpreter", _entry_point("lazytorch.runtime.interpreter:InterpreterBackend"))
register_backend("cpp", _entry_point("lazytorch.runtime.cpp_backend:CppBackend"))
