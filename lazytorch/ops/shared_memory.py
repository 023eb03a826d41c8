"""Tensors in shared memory, for processes that train one model together (Hogwild).

``t.share_memory_()`` moves a CPU tensor's value into a named shared-memory segment
(`multiprocessing.shared_memory`); a tensor pickled to another process by
`lazytorch.multiprocessing` (a `Process` argument, a `Queue` item) arrives as a tensor over
the same segment. A write by any process is seen by the others, as with torch's shared
storages.

lazytorch's values are otherwise immutable buffers, and an in-place update computes a new
one. So a shared tensor keeps its segment like this (each rule a test holds):

* **Reads see the segment.** The tensor's value is a buffer leaf over the segment itself
  (no copy), and a program reads its inputs when it runs: an update made by another process
  is read by the next program that uses the tensor.
* **Writes are written back.** An in-place update (``p.add_(...)``, an optimizer step)
  leaves the tensor pending like any other; every cut computes the pending values of the
  live shared tensors along with its own roots (they are updates another process is
  waiting for), and after the cut each new value is copied into the segment, which
  becomes the tensor's buffer again. Pending updates are computed when a process exits
  (a `multiprocessing` finalizer), so a child's last step is not lost.
* **Only changed elements are written.** The write-back writes the elements whose value
  differs from what the segment held when the cut started, so processes that each fill
  their own part of one shared tensor keep each other's parts.
* **Updates race, as in torch's Hogwild.** An element two processes both update between
  one's read and its write-back keeps the later write; torch's in-place kernels race the
  same way (neither is atomic).
* **Replacing the storage unshares.** ``t.data = other`` with another shape or dtype makes
  ``t`` an ordinary tensor again (``is_shared()`` is then false), as in torch.
* **Only CPU values.** ``share_memory_()`` of a cuda tensor is a no-op, as torch's is (its
  memory is shared through the driver there); lazytorch does not send cuda values between
  processes.

The creating process unlinks its segments at exit, except a child process's segments that
it sent: the main process adopts those when it attaches them (a child's result may be read
after the child exits). The others only unmap theirs. A segment whose owner is killed
before its exit handlers run stays in ``/dev/shm``, as with torch's ``file_system``
strategy.

>>> import lazytorch
>>> t = lazytorch.zeros(3).share_memory_()
>>> t.is_shared(), t.add_(1).tolist(), t.is_shared()
(True, [1.0, 1.0, 1.0], True)
"""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any

from lazytorch import runtime as _runtime
from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ops import views as V
from lazytorch.ops._core import leaf_node, wrap

if TYPE_CHECKING:
    from lazytorch.tensor import Tensor

__all__ = ["is_shared", "rebuild", "segment_of", "sent", "share", "track"]

# id(tensor) -> (weak reference, the array over the segment, the segment's name)
_shared: dict[int, tuple[weakref.ref[Any], Any, str]] = {}
# name -> SharedMemory, for every segment this process created or attached (kept mapped
# until exit: a tensor may be rebuilt from the same name more than once).
_segments: dict[str, Any] = {}
_created: set[str] = set()
_hooked = False


def share(t: Tensor) -> Tensor:
    """Move `t`'s value into a new shared-memory segment (a no-op if it is already there,
    or not on the CPU); returns `t`."""
    if t.device is not CPU or is_shared(t):
        return t
    if t._view is not None:  # a view shares its base's storage, as in torch
        share(t._view[0])
        return t
    from multiprocessing import shared_memory  # lazy: import time (stdlib, first share only)

    value = np.ascontiguousarray(t._values())  # type: ignore[attr-defined]
    segment = shared_memory.SharedMemory(create=True, size=max(value.nbytes, 1))
    _untrack(segment)  # this process unlinks it (`_unlink`), not the resource tracker
    _segments[segment.name] = segment
    _created.add(segment.name)
    array = np.ndarray(value.shape, value.dtype, buffer=segment.buf)
    array[...] = value
    with no_grad():
        V.assign(t, leaf_node(array, CPU))
    track(t, array, segment.name)
    return t


def is_shared(t: Tensor) -> bool:
    """Whether `t`'s value lives in a shared-memory segment (`share`)."""
    if t._view is not None:
        return is_shared(t._view[0])
    entry = _shared.get(id(t))
    if entry is None or entry[0]() is not t:
        return False
    n = t._node
    return n.buffer is None or n.buffer is entry[1] or _write_back(t, n, entry[1])


def segment_of(t: Tensor) -> tuple[str, Any] | None:
    """``(segment name, array over it)`` for a shared tensor (its pending value written
    back first), else None."""
    if not is_shared(t):
        return None
    if t._node.buffer is None:
        _runtime.materialize_nodes([t._node], cause="share_memory")
    _, array, name = _shared[id(t)]
    return name, array


def sent(name: str) -> None:
    """Segment `name` is being sent to another process. A child process leaves its
    unlinking to the receiver (the main process adopts what it attaches, `rebuild`): the
    child may exit before the receiver attaches it."""
    if _in_child():
        _created.discard(name)


def _in_child() -> bool:
    """Whether this process was started by multiprocessing (also while a spawn child is
    still unpickling its arguments, before its parent process is recorded)."""
    import multiprocessing  # lazy: import time (stdlib)

    me = multiprocessing.current_process()
    return getattr(me, "_inheriting", False) or multiprocessing.parent_process() is not None


def rebuild(name: str, shape: tuple[int, ...], dtype: Any, requires_grad: bool) -> Tensor:
    """The tensor over segment `name` (in a process the tensor was sent to)."""
    from multiprocessing import shared_memory  # lazy: import time (stdlib)

    for ref, array, seg_name in list(_shared.values()):
        t = ref()  # sent within one process: the same tensor, one storage and one value
        if seg_name == name and t is not None and t._view is None and array.shape == shape:
            return t
    segment = _segments.get(name)
    if segment is None:
        segment = shared_memory.SharedMemory(name=name)
        # Python < 3.13 registers an attached segment with the resource tracker, which would
        # unlink it when this process exits, under the process that created it.
        _untrack(segment)
        _segments[name] = segment
        if not _in_child():  # the main process unlinks what its children sent
            _created.add(name)
    array = np.ndarray(shape, dtype, buffer=segment.buf)
    t = wrap(leaf_node(array, CPU))
    if requires_grad:
        t.requires_grad_(True)  # type: ignore[attr-defined]
    track(t, array, name)
    return t


def track(t: Tensor, array: Any, name: str) -> None:
    """Make `t` (whose value is `array`, over segment `name`) a shared tensor."""
    global _hooked
    _shared[id(t)] = (weakref.ref(t), array, name)
    V._numpy_arrays[id(array)] = id(t)  # a clone of t copies: other processes write it
    _holder[id(t)] = t._node
    if not _hooked:
        _hooked = True
        _runtime.before_cut.append(_pending_shared)
        _runtime.after_cut.append(_write_back_all)
        from multiprocessing import util  # lazy: import time (stdlib)

        util.Finalize(None, _flush, exitpriority=100)  # runs in children at exit too
        util.Finalize(None, _unlink, exitpriority=-100)


def _live() -> list[tuple[Tensor, Any]]:
    out = []
    for key, (ref, array, _name) in list(_shared.items()):
        t = ref()
        if t is None:
            del _shared[key]
            V._numpy_arrays.pop(id(array), None)
            _holder.pop(key, None)
        else:
            out.append((t, array))
    return out


def _pending_shared(roots: list[Node]) -> list[Node]:
    """Every cut computes the pending updates of shared tensors (`before_cut` hook), and
    notes what their segments hold as it starts (`_write_back` writes only what changed)."""
    if _runtime._compile_trace is not None:
        return []
    have = {id(n) for n in roots}
    more = []
    for t, array in _live():
        n = t._node
        if n.buffer is None:
            _before[id(t)] = array.copy()
            if id(n) not in have:
                more.append(n)
    return more


# id(tensor) -> the segment's content when the cut computing its new value started
_before: dict[int, Any] = {}
# id(tensor) -> the node whose buffer the segment is (the tensor's value at the last write)
_holder: dict[int, Node] = {}


def _write_back_all() -> None:
    for t, array in _live():
        n = t._node
        if n.buffer is not None and n.buffer is not array:
            _write_back(t, n, array)
    _before.clear()


def _write_back(t: Tensor, n: Node, array: Any) -> bool:
    """Write `n`'s new value into the segment and make the segment its buffer; a value of
    another shape or dtype unshares `t` (its storage was replaced). Returns whether `t` is
    still shared.

    Only the elements this process changed are written (those that differ from what the
    segment held when the cut started), so processes that write different elements of one
    tensor (each its own row of a result) do not undo each other's writes."""
    value = n.buffer
    if (
        not isinstance(value, np.ndarray)
        or value.shape != array.shape
        or value.dtype != array.dtype
    ):
        _shared.pop(id(t), None)
        V._numpy_arrays.pop(id(array), None)
        return False
    before = _before.pop(id(t), None)
    old = _holder.get(id(t))
    if old is not None and old is not n and old.buffer is array:
        # what read the value before this update (a pending y = t * 2, a clone) keeps it
        old.buffer = array.copy() if before is None else before
    if before is None:
        np.copyto(array, value)
    else:
        changed = value != before
        if before.dtype.kind == "f":  # a NaN written over a NaN is no change
            changed &= ~(np.isnan(value) & np.isnan(before))
        np.copyto(array, value, where=changed)
    n.buffer = array
    _holder[id(t)] = n
    return True


def _flush() -> None:
    pending = [t._node for t, _ in _live() if t._node.buffer is None]
    if pending:
        _runtime.materialize_nodes(pending, cause="process exit (shared tensors)")


def _unlink() -> None:
    for name, segment in list(_segments.items()):
        with contextlib.suppress(BufferError):  # an array over it is alive: unmapped at exit
            segment.close()
        if name in _created:
            try:
                import _posixshmem  # lazy: optional dependency (POSIX only)

                _posixshmem.shm_unlink(segment._name)
            except (ImportError, FileNotFoundError):  # Windows frees it with the last handle
                pass


def _untrack(segment: Any) -> None:
    try:
        from multiprocessing import resource_tracker  # lazy: import time (stdlib)

        resource_tracker.unregister(segment._name, "shared_memory")
    except Exception:  # no tracker (Windows), or a Python that does not track attachments
        pass
