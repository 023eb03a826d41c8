"""``torch.jit`` for scripts that use it: scripting and tracing hand back what they are given.

lazytorch already records every op into a graph and compiles it, so TorchScript has nothing
to add: ``script`` and ``trace`` return their argument, which runs as it would have (each
call records and compiles as ordinary lazytorch code). Decorators that only steer the
TorchScript compiler (``ignore``, ``unused``, ``export``, ``interface``) return the function.
What TorchScript produces *outside* Python — ``jit.save``/``jit.load`` archives, ``.code``,
``.graph`` — does not exist here: those raise at the call, naming what to use instead.

>>> import lazytorch
>>> f = lazytorch.jit.script(lambda x: x * 2)
>>> f(lazytorch.ones(2))
tensor([2., 2.])
>>> lazytorch.jit.is_scripting()
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "Attribute",
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "fork",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

T = TypeVar("T")
Final = Any  # `x: torch.jit.Final[int]` annotations are read by TorchScript only


def script(
    obj: T, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None
) -> T:
    """``torch.jit.script``: returns `obj` (a function or module) unchanged; lazytorch
    compiles the graphs it records."""
    return obj


def trace(func: T, example_inputs: Any = None, *args: Any, **kwargs: Any) -> T:
    """``torch.jit.trace``: returns `func` unchanged (see the module docstring)."""
    return func


def trace_module(mod: T, inputs: Any = None, *args: Any, **kwargs: Any) -> T:
    return mod


def _identity_decorator(fn: Any = None, **kwargs: Any) -> Any:
    if fn is None:  # used as @ignore(drop=True)
        return lambda f: f
    return fn


ignore = unused = export = interface = _identity_decorator


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type: Any, the_value: T) -> T:
    return the_value


class Attribute:
    """``torch.jit.Attribute(value, type)``: outside TorchScript, the value itself."""

    def __new__(cls, value: Any, type: Any = None) -> Any:
        return value


def fork(func: Callable[..., T], *args: Any, **kwargs: Any) -> Any:
    """``torch.jit.fork``: runs `func` at once; `wait` returns its result."""
    return _Future(func(*args, **kwargs))


def wait(future: Any) -> Any:
    return future.result


class _Future:
    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _no_archives(api: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.jit.{api}: lazytorch has no TorchScript archives; save the weights with "
        "lazytorch.save(model.state_dict(), path) and rebuild the model in Python "
        "(lazytorch.save/load read and write torch's checkpoint format)"
    )


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    raise _no_archives("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    raise _no_archives("load")


class ScriptModule:
    """Stands for ``torch.jit.ScriptModule`` in ``isinstance`` checks; nothing is one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_archives("ScriptModule")


class ScriptFunction(ScriptModule):
    """Stands for ``torch.jit.ScriptFunction`` in ``isinstance`` checks; nothing is one."""
