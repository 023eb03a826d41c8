"""Grad-mode switches with torch's names: thread-local, usable as context managers and
decorators. The mode is read when a node is recorded: a result recorded with grad mode off
does not carry gradient (see `lazytorch.ir.node`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from lazytorch.ir.node import grad_mode as _state

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base for the switches: a context manager that restores the previous mode, and a
    decorator that runs the function under a fresh instance of the same switch."""

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._prev: list[tuple[bool, bool]] = []

    def _apply(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.inference))
        self._apply()

    def __exit__(self, *exc: object) -> None:
        _state.enabled, _state.inference = self._prev.pop()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)(*self._args):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_Mode):
    """Disable gradient tracking inside the block.

    >>> import lazytorch
    >>> with lazytorch.no_grad():
    ...     lazytorch.is_grad_enabled()
    False
    """

    def __init__(self) -> None:
        super().__init__()

    def _apply(self) -> None:
        _state.enabled = False


class enable_grad(_Mode):
    def __init__(self) -> None:
        super().__init__()

    def _apply(self) -> None:
        _state.enabled = True


class set_grad_enabled(_Mode):
    """Set grad mode now; used as a context manager, restore the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
        self._prev.append((_state.enabled, _state.inference))
        _state.enabled = bool(mode)

    def _apply(self) -> None:
        pass  # already applied in __init__

    def __enter__(self) -> None:
        pass


class inference_mode(_Mode):
    """Like no_grad, and marks inference mode (``inference_mode(False)`` does nothing)."""

    def __init__(self, mode: bool = True) -> None:
        super().__init__(bool(mode))

    def _apply(self) -> None:
        if self._args[0]:
            _state.enabled = False
            _state.inference = True
