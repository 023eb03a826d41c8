"""``torch.compiler``: the switches library and model code calls around compiled regions.

lazytorch does not trace Python bytecode (its `lazytorch.compile` records ops as they run),
so code guarded by `is_compiling` takes its eager path, which lazytorch runs, and the
decorators that steer Dynamo (`disable`, `allow_in_graph`, `assume_constant_result`) return
the function unchanged. `compile` is `lazytorch.compile`.

>>> import lazytorch
>>> @lazytorch.compiler.disable
... def f(x):
...     return x + 1
>>> lazytorch.compiler.is_compiling(), f(lazytorch.ones(1))
(False, tensor([2.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazytorch._compile import compile

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "reset",
]


def is_compiling() -> bool:
    """False: no Python is traced by a bytecode compiler here (torch: True under Dynamo)."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def is_exporting() -> bool:
    return False


def disable(
    fn: Callable[..., Any] | None = None, recursive: bool = True, *, reason: Any = None
) -> Any:
    """``@torch.compiler.disable``: `fn` unchanged (with no `fn`, the decorator itself)."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn: Any) -> Any:
    return fn


def assume_constant_result(fn: Any) -> Any:
    return fn


def reset() -> None:
    """Nothing to reset: lazytorch's program cache is keyed by what the programs compute."""


def cudagraph_mark_step_begin() -> None:
    """A no-op: lazytorch captures no CUDA graphs across steps to mark."""
