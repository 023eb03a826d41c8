"""Compile backends: small strategies that set how a compiled function's cuts run."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable
from typing import Any

from lazytorch import _config
from lazytorch._compile.graph import Runner, TracedGraph
from lazytorch.runtime.backends import get_backend
from lazytorch.tensor import Tensor

# -- backends (strategies) ------------------------------------------------------------------


class CompileBackend:
    """How a compiled function runs a traced graph (a strategy).

    ``prepare(graph)`` is called once per trace and returns what runs the graph on later
    calls: a function of the flat input tensors returning the flat outputs. ``scope()`` is
    entered around every call (trace or replay).
    """

    name = "auto"

    def prepare(self, graph: TracedGraph) -> Runner:
        return graph._replay

    def scope(self) -> contextlib.AbstractContextManager[Any] | None:
        return None


class LazyBackend(CompileBackend):
    """``auto``, ``cpp``, ``interpreter``: replay the graph lazily.

    The outputs are lazy, so they are computed by whatever backend is active where they are
    materialized; a named backend applies to materializations inside the call, and to the
    outputs with ``options={"materialize_outputs": True}``. ``auto`` inherits the caller's.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        if name != "auto":
            try:
                get_backend(name)
            except Exception as e:
                raise RuntimeError(
                    f"compile(backend={name!r}): the backend is not available on this machine: {e}"
                ) from e

    def scope(self) -> contextlib.AbstractContextManager[Any] | None:
        return None if self.name == "auto" else _config.backend(self.name)


class TritonBackend(CompileBackend):
    """``backend="triton"``: not a compile strategy yet, so choosing it fails at ``compile()``.

    Triton itself is not what is missing: programs on a ``cuda`` device run as Triton
    kernels under every compile backend (the device names its runtime backend,
    `lazytorch.cuda.BACKEND`).
    """

    name = "triton"

    def __init__(self) -> None:
        raise NotImplementedError(
            "compile(backend='triton') is not a compile strategy: programs on a cuda "
            "device already run as Triton kernels under any backend (put the inputs on "
            "the device: .to('cuda')); on the CPU use backend='cpp', 'interpreter' or "
            "'auto'"
        )


class CallableBackend(CompileBackend):
    """A user strategy: ``backend(graph: TracedGraph) -> runner``, called once per trace.

    The runner is called on each later call with the flat input tensors (arguments, then
    free tensors, as ``graph.inputs`` lists them) and returns one tensor per tensor output
    (``graph.num_outputs``). ``graph.replay`` is such a runner.
    """

    def __init__(self, fn: Callable[[TracedGraph], Callable[..., Any]]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def prepare(self, graph: TracedGraph) -> Runner:
        runner = self.fn(graph)
        if not callable(runner):
            raise TypeError(
                f"compile backend {self.name!r} must return a callable that runs the graph, "
                f"got {type(runner).__name__}"
            )
        n, name = graph.num_outputs, self.name

        def run(ts: list[Tensor]) -> list[Any]:
            out = list(runner(*ts))
            if len(out) != n:
                raise RuntimeError(
                    f"compile backend {name!r}: its runner returned {len(out)} outputs, "
                    f"the graph has {n}"
                )
            return out

        return run


_BACKENDS: dict[str, Callable[[], CompileBackend]] = {
    "auto": lambda: LazyBackend("auto"),
    "cpp": lambda: LazyBackend("cpp"),
    "interpreter": lambda: LazyBackend("interpreter"),
    "triton": TritonBackend,
}


def _make_backend(backend: Any) -> CompileBackend:
    if isinstance(backend, CompileBackend):
        return backend
    if isinstance(backend, str):
        factory = _BACKENDS.get(backend.strip().lower())
        if factory is None:
            close = difflib.get_close_matches(backend, list(_BACKENDS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown compile backend {backend!r}{hint}; choose one of "
                f"{', '.join(_BACKENDS)}, or pass a callable"
            )
        return factory()
    if callable(backend):
        return CallableBackend(backend)
    raise TypeError(f"backend must be a name or a callable, got {type(backend).__name__}")
