"""Tensors that share memory with NumPy arrays, as torch's do.

``torch.from_numpy(a)`` (and ``as_tensor(a)``) returns a tensor over `a`'s memory, and
``t.numpy()`` an array over `t`'s: a write through either side is seen by the other. The
NumPy-bridge sections of the PyTorch tutorials print exactly that. lazytorch's values are
otherwise immutable buffers, and an in-place update computes a new one, so a tensor that
shares an array with NumPy code (an *exported* tensor) keeps the array like this (each rule
a test in tests/ops/test_numpy_bridge.py holds):

* **Reads see the array.** The tensor's value is a buffer leaf over the array itself (no
  copy), and a program reads its inputs when it runs.
* **Writes are eager.** An in-place write to an exported tensor (``t.add_(1)``,
  ``t[1, 1] = 17``, an optimizer step) is computed at once and copied into the array, which
  becomes the tensor's buffer again: NumPy code may read the array on the next line, with
  no cut in between (``print(n)`` is not a materialization point).
* **What was read before a write keeps the old value.** Before the array is overwritten,
  the value it held moves to a copy for whatever still refers to it (a pending ``y = t * 2``,
  a ``clone()``), as torch computed those before the write.
* **Copies are copies.** ``clone()`` of an exported tensor copies the array (lazytorch's
  clone otherwise shares the immutable value), and a tensor assigned from an exported one
  (``u.copy_(t)``) gets its own copy.
* **An array nobody holds is let go.** At a write, an array that only lazytorch still
  refers to (the caller dropped the result of ``.numpy()``) stops being kept in step, and
  the tensor's updates are lazy again. Memory another object owns (``frombuffer``'s
  ``bytearray``, an ``mmap``) is kept in step while the tensor lives.

What is not kept: a write to the array by NumPy code is seen by every op computed after it,
including ops recorded *before* it that are still pending (torch computed those already).
Read a result (``.item()``, ``print``) or call ``lazytorch.materialize()`` before writing
into an array a pending computation reads. Arrays that are not C-contiguous, aligned,
native-endian and writable are copied by ``from_numpy`` (torch shares those too), and a
``.numpy()`` of a view that NumPy cannot express as a view of the root's array (an
expanded dim) is a read-only copy.

>>> import numpy as np, lazytorch
>>> a = np.ones(3, dtype=np.float32)
>>> t = lazytorch.from_numpy(a)
>>> a[0] = 5
>>> t.tolist()
[5.0, 1.0, 1.0]
>>> n = t.numpy()
>>> t.add_(1)
tensor([6., 2., 2.])
>>> n.tolist(), a is n
([6.0, 2.0, 2.0], True)
"""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

from lazytorch import runtime as _runtime
from lazytorch import tensor as _tensor
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ops import creation as _creation
from lazytorch.ops import views as V
from lazytorch.ops._core import leaf_node, wrap
from lazytorch.runtime.host_views import chain_value

if TYPE_CHECKING:
    from lazytorch.tensor import Tensor

__all__ = ["export", "is_exported_buffer", "share", "unaliased"]

# id(tensor) -> (weak reference, the array it shares); V.assign calls `_written` for these
_tensors: dict[int, tuple[weakref.ref[Any], Any]] = {}
# id(array) -> id(tensor): V.assign copies these before assigning them to another tensor
_arrays = V._numpy_arrays


def share(a: Any) -> Tensor:
    """A CPU tensor over `a`'s memory (``from_numpy``, ``as_tensor``): `a` must be
    C-contiguous, aligned, native-endian and writable (programs read their inputs as dense
    arrays)."""
    t = wrap(leaf_node(a, CPU))
    _track(t, a)
    return t


def export(t: Tensor) -> Any:
    """The NumPy array over `t`'s memory, writable and shared (``Tensor.numpy()``).

    The first export of a value shares the node's array if nothing else refers to it (a
    program's output), else copies it into one only the node holds (the buffer may be
    shared: a view of another value, an input a program passed through); later exports
    return the same array.
    The node stays (its autograd history and views with it): a clone made before the export
    shares it and sees NumPy's writes, as it would not in torch (clones made after copy).
    """
    if t._view is not None:
        return _export_view(t)
    entry = _tensors.get(id(t))
    if entry is not None and entry[0]() is t and t._node.buffer is entry[1]:
        return entry[1]
    _untrack(id(t))
    n = t._materialized("numpy()")  # type: ignore[attr-defined]
    old = n.buffer
    if type(old) is not np.ndarray:  # a Python number (a scalar input): a copy, unshared
        return np.array(t._values())  # type: ignore[attr-defined]
    # The node's own array (a program's output nothing else refers to: n.buffer, `old`
    # and getrefcount's argument) is shared as it is; any other is copied first.
    own = sys.getrefcount(old) <= 3 and old.flags.c_contiguous and old.flags.writeable
    a = old if own else np.array(old, copy=True, order="C")
    n.buffer = a
    # views of t read on the host hold NumPy views of the old buffer: move them onto `a`
    for r in t._views or ():
        v = r()
        b = None if v is None else v._node.buffer
        if type(b) is np.ndarray and np.may_share_memory(b, old):
            moved = chain_value(V.replay(leaf_node(a, CPU), v._view[1]))  # type: ignore[union-attr]
            if moved is not None and moved.shape == b.shape and moved.dtype == b.dtype:
                v._node.buffer = moved  # type: ignore[union-attr]
    _track(t, a)
    return a


def _export_view(t: Tensor) -> Any:
    root, steps = t._view  # type: ignore[misc]
    n = t._materialized("numpy()")  # type: ignore[attr-defined]
    # A root only the view refers to (``model(x)[:b].numpy()``; references: t._view,
    # `root`, getrefcount's argument) that was not computed with the view: computing it
    # for the sake of sharing would be another program. The view's values, read-only (a
    # write raises rather than being lost).
    if root._node.buffer is None and sys.getrefcount(root) <= 3:
        return _read_only(np.asarray(n.buffer))
    a = export(root)
    # (over a plain leaf of the array: a Detach step of the root's node would alias, which
    # copies memory NumPy writes)
    value = chain_value(V.replay(leaf_node(a, CPU), steps))
    if value is not None and value.flags.writeable and np.shares_memory(value, a):
        return value
    return _read_only(np.array(t._materialized("numpy()").buffer))  # type: ignore[attr-defined]


def _read_only(a: Any) -> Any:
    view = a.view()
    view.flags.writeable = False
    return view


def is_exported_buffer(value: Any) -> bool:
    """Whether `value` (a node's buffer) is an array NumPy code shares with a tensor."""
    return id(value) in _arrays and type(value) is np.ndarray


def unaliased(n: Node) -> Node:
    """`n`, or a leaf holding a copy of its value if that value is an exported array (a
    ``clone`` or an assigned copy must not see later writes to the array)."""
    return V._unaliased(n) if _arrays else n


def _track(t: Tensor, a: Any) -> None:
    key = id(t)
    _untrack(key)
    _tensors[key] = (weakref.ref(t, lambda _r: _untrack(key)), a)
    _arrays[id(a)] = key
    if a.base is not None:  # a view of a larger array: its other views may alias `a`
        _arrays[id(a.base)] = key
    V.shared_with_numpy[key] = _written


def _untrack(key: int) -> None:
    entry = _tensors.pop(key, None)
    V.shared_with_numpy.pop(key, None)
    if entry is not None:
        a = entry[1]
        for k in (id(a), id(a.base)) if a.base is not None else (id(a),):
            if _arrays.get(k) == key:
                del _arrays[k]


def rebound(t: Tensor, heir: Tensor | None) -> None:
    """``t.data = other``: `t` no longer shares its array (torch rebinds the storage); the
    hidden tensor `heir` that keeps t's old views does, if there is one."""
    entry = _tensors.get(id(t))
    if entry is None or entry[0]() is not t:
        return
    _untrack(id(t))
    if heir is not None:
        _track(heir, entry[1])


def _written(t: Tensor, before: list[Node], foreign: bool) -> None:
    """After an in-place write to exported `t`, whose value and views' values were `before`
    (the value first): compute the new value now and copy it into the array (module
    docstring). `foreign`: t's new node is another tensor's computed one."""
    old = before[0]
    key = id(t)
    entry = _tensors.get(key)
    if entry is None or entry[0]() is not t:
        _untrack(key)
        return
    a = entry[1]
    # The array's references: `entry`, `a`, getrefcount's argument, `old`'s buffer. None
    # other means the NumPy side dropped it: nothing to keep in step any more (unless the
    # memory is another object's, as ``frombuffer``'s: its owner reads it without the array).
    if sys.getrefcount(a) <= 3 + (old.buffer is a) and not _foreign_memory(a):
        _untrack(key)
        return
    if _runtime._compile_trace is not None:
        return  # a lazytorch.compile trace records the write; its replay runs it
    n = t._node
    if n.buffer is None:
        _runtime.materialize_nodes([n], cause="in-place write to a tensor sharing NumPy memory")
    value = n.buffer
    if value is a:
        return
    if type(value) is not np.ndarray or value.shape != a.shape or value.dtype != a.dtype:
        _untrack(key)  # its storage was replaced (another shape or dtype)
        return
    for b in before:  # readers of the values before the write keep them
        v = b.buffer
        if type(v) is np.ndarray and (v is a or np.may_share_memory(v, a)):
            b.buffer = v.copy()
    np.copyto(a, value)
    if foreign:  # (copy_ of a value with autograd history, under no_grad): not ours to
        _untrack(key)  # rebuffer, so the array holds this value and follows no later write
        return
    n.buffer = a


def _foreign_memory(a: Any) -> bool:
    """Whether `a`'s memory belongs to an object other than a NumPy array (a ``bytearray``,
    ``mmap`` or ``memoryview`` under ``np.frombuffer``)."""
    base = a.base
    while type(base) is np.ndarray:
        base = base.base
    return base is not None


_creation._share = share
_tensor._export = export
