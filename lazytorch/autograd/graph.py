"""torch.autograd.graph: hooks on the backward graph, as far as a lazy graph can honor
them.

* `register_multi_grad_hook` works: ``"all"`` calls ``fn(grads)`` once per backward pass
  with the gradients of those of `tensors` that received one (None for the others);
  ``"any"`` calls ``fn(grad)`` with the first gradient computed in a pass.
* `save_on_cpu` is accepted and changes nothing: it only moves where torch keeps saved
  activations; lazytorch's scheduler decides what a program keeps, and the results are the
  same.
* `saved_tensors_hooks` with your own pack/unpack functions raises NotImplementedError when
  entered: lazytorch records no per-op "saved tensor" event that pack could see (a
  backward reads the forward's lazy values directly), and skipping the hooks would change
  the results wherever pack/unpack change the values (e.g. compression).
* `disable_saved_tensors_hooks` makes entering either of the above raise RuntimeError with
  its message, as torch's.
* `Node` is the abstract class of ``grad_fn`` objects (``isinstance(t.grad_fn, Node)``);
  their ``register_hook``/``register_prehook`` raise NotImplementedError.

>>> import lazytorch
>>> a = lazytorch.ones(2, requires_grad=True)
>>> b = lazytorch.ones(2, requires_grad=True)
>>> seen = []
>>> h = register_multi_grad_hook((a, b), lambda gs: seen.append([g is not None for g in gs]))
>>> (a * 2).sum().backward()
>>> seen
[[True, False]]
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal

from lazytorch.autograd import engine
from lazytorch.tensor import Tensor

__all__ = [
    "Node",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class Node(abc.ABC):
    """The abstract class of backward-graph nodes (``grad_fn`` and the ``AccumulateGrad``
    of a leaf): ``isinstance(tensor.grad_fn, Node)`` holds."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``."""
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        raise NotImplementedError

    def metadata(self) -> dict[str, Any]:
        raise NotImplementedError(
            "lazytorch: grad_fn metadata is not kept (the backward graph is the lazy IR)"
        )

    def register_hook(self, fn: Callable[..., Any]) -> Any:
        raise NotImplementedError(
            "lazytorch: hooks on grad_fn nodes are not supported (a backward op is a lazy IR "
            "node, not a callable torch-style Node); use Tensor.register_hook on its output"
        )

    def register_prehook(self, fn: Callable[..., Any]) -> Any:
        raise NotImplementedError(
            "lazytorch: prehooks on grad_fn nodes are not supported (a backward op is a lazy "
            "IR node, not a callable torch-style Node); use Tensor.register_hook instead"
        )


Node.register(engine.GradFn)
Node.register(engine.AccumulateGrad)

_disabled_message: str | None = None


class saved_tensors_hooks:
    """Pack/unpack hooks for the tensors saved for backward: not supported in lazytorch
    (entering raises NotImplementedError; see the module docstring for why)."""

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        raise NotImplementedError(
            "lazytorch.autograd.graph.saved_tensors_hooks: custom pack/unpack hooks are not "
            "supported. lazytorch's backward reads the forward's lazy values directly, so "
            "there is no saved-tensor event to call pack_hook on, and ignoring the hooks "
            "would change results wherever they change values. save_on_cpu is accepted "
            "(a memory placement only)."
        )

    def __exit__(self, *args: object) -> None:
        return None


class save_on_cpu(saved_tensors_hooks):
    """Keep saved activations on the CPU (torch). Accepted, and changes nothing in
    lazytorch: the scheduler decides what a program keeps; results are unchanged."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory
        self.device_type = device_type

    def __enter__(self) -> None:
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)


class disable_saved_tensors_hooks:
    """Within this context, entering `saved_tensors_hooks` (or `save_on_cpu`) raises
    RuntimeError with `error_message`."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        global _disabled_message
        self._prev = _disabled_message
        _disabled_message = self.error_message

    def __exit__(self, *args: object) -> None:
        global _disabled_message
        _disabled_message = self._prev


class _MultiHandle:
    """Removes every per-tensor hook of one `register_multi_grad_hook`."""

    __slots__ = ("_end", "handles")

    def __init__(self, handles: tuple[Any, ...], end: Callable[[int], None] | None) -> None:
        self.handles = handles
        self._end = end

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        if self._end is not None and self._end in engine.task_end:
            engine.task_end.remove(self._end)

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Tensor],
    fn: Callable[..., None],
    *,
    mode: Literal["all", "any"] = "all",
) -> Any:
    """Call `fn` once per backward pass that computes a gradient for any of `tensors`.

    ``mode="all"``: ``fn(grads)`` after the pass, with one entry per tensor (None where no
    gradient was computed for it). ``mode="any"``: ``fn(grad)`` with the first gradient
    computed. Returns a handle whose ``remove()`` unregisters it.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        n = len(tensors)
        buffer: dict[int, list[Tensor | None]] = {}

        def get_inner_hook(idx: int) -> Callable[[Tensor], None]:
            def inner_hook(grad: Tensor) -> None:
                task = engine.current_graph_task_id()
                if task == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                with lock:
                    buffer.setdefault(task, [None] * n)[idx] = grad

            return inner_hook

        def end(task: int) -> None:
            grads = buffer.pop(task, None)
            if grads is not None:
                fn(grads)

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
        engine.task_end.append(end)
        return _MultiHandle(handles, end)
    ran: set[int] = set()

    def wrapped_fn(grad: Tensor) -> None:
        task = engine.current_graph_task_id()
        if task == -1:
            raise AssertionError("expected this hook to be called inside a backward call")
        with lock:
            if task in ran:
                return
            ran.add(task)
        fn(grad)

    handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles, None)
