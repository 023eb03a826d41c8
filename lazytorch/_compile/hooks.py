"""Tracing hooks: what views.assign, the runtime and the autograd engine report."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from lazytorch import runtime as _runtime
from lazytorch._errors import ImplicitMaterializationError
from lazytorch.autograd import engine as _engine
from lazytorch.ir.node import format_loc, user_loc
from lazytorch.ops import views as _views
from lazytorch.tensor import Tensor


# -- tracing hooks: what views.assign, runtime and the autograd engine report ---------------
class _Trace:
    __slots__ = ("fullgraph", "input_nodes", "input_tensors", "reason", "start", "step")

    def __init__(
        self, start: int, fullgraph: bool, tensors: list[Tensor], step: Any = None
    ) -> None:
        self.start = start
        self.fullgraph = fullgraph
        self.input_tensors = {id(t) for t in tensors}
        self.input_nodes = {t._node for t in tensors}
        self.reason: str | None = None
        # A lazytorch._compile.step.StepRecorder when the call may be captured as a whole
        # step (its programs rather than its nodes), else None.
        self.step = step

    def writes_outside(self, root: Tensor) -> bool:
        """Whether an in-place write to `root` changes a tensor that outlives the call."""
        if id(root) in self.input_tensors:
            return True
        n = root._node
        # A tensor recorded before the call — unless it is a fresh alias of an input's
        # value made inside (clone() shares the node), which the caller cannot see.
        return n.id < self.start and n not in self.input_nodes

    def fail(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason


class _Hooks(threading.local):
    """Installed as ``_compile_trace`` in runtime, views and the engine while any thread
    traces; each thread hears only of its own traces (innermost and enclosing)."""

    stack: list[_Trace]

    def __init__(self) -> None:
        self.stack = []

    def _fail(self, reason: str) -> None:
        for t in self.stack:
            t.fail(reason)

    def value_read(self, t: Tensor, cause: str) -> None:
        if not self.stack:
            return
        loc = format_loc(user_loc())
        if t._node.buffer is not None and any(tr.fullgraph for tr in self.stack):
            # Strict mode lets reads of computed values through; fullgraph does not.
            raise ImplicitMaterializationError(
                f"{cause} at {loc} reads a tensor's value inside a function compiled with "
                "fullgraph=True (the value would be baked into the traced graph)"
            )
        self._fail(f"reads a tensor's value: {cause} at {loc}")
        for tr in self.stack:
            if tr.step is not None:
                tr.step.fail(f"reads a tensor's value: {cause} at {loc}")

    def materialized(self, cause: str) -> None:
        if self.stack:
            self._fail(f"materializes ({cause}) at {format_loc(user_loc())}")

    def assigned(self, t: Tensor) -> None:
        if not self.stack:
            return
        root = t._view[0] if t._view is not None else t
        for tr in self.stack:
            if tr.writes_outside(root):
                tr.fail(
                    "writes in place to a tensor created before the call at "
                    f"{format_loc(user_loc())}"
                )

    def backward(self) -> None:
        if self.stack:
            self._fail(f"runs backward at {format_loc(user_loc())}")

    # -- whole-step capture (lazytorch._compile.step) ---------------------------------------
    def ran(self, key: Any, exe: Any, params: list[Any], roots: list[Any], device: Any) -> None:
        """The executor is about to run a program."""
        for tr in self.stack:
            if tr.step is not None:
                tr.step.ran(key, exe, params, roots, device)

    def collective(self) -> None:
        """A cut runs collectives (all_reduce...): a replay would skip them."""
        for tr in self.stack:
            if tr.step is not None:
                tr.step.fail(f"runs a collective at {format_loc(user_loc())} (not captured yet)")

    def host_provider(self, fn: Any) -> int | None:
        """Register an optimizer's host-scalar provider with the step capture listening
        (the outermost trace's); its index tags the scalars it made, or None."""
        if self.stack and self.stack[0].step is not None:
            return int(self.stack[0].step.provide(fn))
        return None


_hooks = _Hooks()
_hook_lock = threading.Lock()
_tracing_threads = 0


def _install(on: bool) -> None:
    global _tracing_threads
    with _hook_lock:
        _tracing_threads += 1 if on else -1
        h = _hooks if _tracing_threads > 0 else None
        _runtime._compile_trace = h
        _views._compile_trace = h
        _engine._compile_trace = h


@contextlib.contextmanager
def _tracing(trace: _Trace) -> Iterator[None]:
    stack = _hooks.stack
    stack.append(trace)
    if len(stack) == 1:
        _install(True)
    try:
        yield
    finally:
        stack.pop()
        if not stack:
            _install(False)
