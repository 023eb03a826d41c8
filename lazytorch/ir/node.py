"""IR nodes: one immutable record per primitive application, with provenance.

A node is ``(op, inputs, attrs, shape, dtype, device)`` plus

* ``struct_hash`` — computed once at creation from the node's own op, attrs, dtype, shape
  pattern and device; a capture key pairs it with the wiring (which values each node
  reads), so the key describes the whole graph. (Lazy Tensor Core folds the inputs' hashes
  in; here that went stale when an input was computed after its reader was recorded.)
  Leaves hash their metadata, never their data, so the same computation over new data
  hashes alike.
* ``id`` — a process-wide creation counter. Inputs always exist before their users, so
  sorting by id is a topological order.
* ``loc`` — the user's ``(file, line)`` that recorded it.
* ``buffer`` — the value, once known.

The one transition a node makes is :meth:`Node.realize`: when a materialization computes
it, it *becomes* a buffer leaf (its inputs are released and its hash becomes the leaf's
metadata hash). Later graphs built on it then hash exactly like graphs built on fresh
data, so a training loop hits the same cached program every step instead of one whose key
grows with the history.

Autograd rides on the same nodes. ``ag`` says whether a node's value carries gradient:

* ``None`` — it does not (integer values, values recorded under ``no_grad``, data);
* ``True`` — it does, and its history (what backward differentiates) is the node itself;
* a tuple ``(op, inputs, attrs)`` — it does, and backward differentiates that history
  instead of the node's own op: the node was realized (:meth:`Node.realize` moved the
  history here, so backward still works after the forward value was computed:
  ``loss.item()`` before ``loss.backward()``), or an op computed its value one way and
  asked to be differentiated as another primitive (`differentiate_as`);
* any other object — a gradient *leaf*: autograd's record of the tensor whose ``.grad``
  the gradient reaching this node accumulates into (see `lazytorch.autograd.engine`).

A node's ``ag`` is decided once, when it is recorded (`grad_mode` is read then), exactly
as torch decides ``requires_grad`` of an op's result.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lazytorch.ir.device import Device
    from lazytorch.ir.dtypes import DType
    from lazytorch.ir.primitives import Primitive

__all__ = [
    "GradMode",
    "Node",
    "differentiate_as",
    "format_loc",
    "grad_mode",
    "internal_dirs",
    "stamp",
    "user_loc",
]


class GradMode(threading.local):
    """Per-thread grad mode, read when a node is recorded (`lazytorch.no_grad` sets it)."""

    enabled = True
    inference = False


grad_mode = GradMode()

_next_id = itertools.count().__next__

# Frames from files under these directories are lazytorch's own; provenance skips them.
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
internal_dirs: list[str] = [_PKG_DIR + os.sep]
# Verdicts per file name. Keyed by the name string, whose hash is cached on the object; a
# code object's hash is recomputed from its contents on every lookup (expensive for big
# functions), so keying by code costs more than the walk it saves.
_internal_files: dict[str, bool] = {}


def _is_internal(filename: str) -> bool:
    r = filename.startswith(tuple(internal_dirs)) or filename.startswith("<frozen ")
    _internal_files[filename] = r
    return r


def user_loc(skip: int = 1) -> tuple[str, int] | None:
    """The (file, line) of the innermost frame outside lazytorch, cheaply.

    `skip` frames above the caller are known to be lazytorch's own and are not looked at.
    """
    try:
        f = sys._getframe(skip)
    except ValueError:  # a shallower stack than the caller assumed
        f = sys._getframe(1)
    internal = _internal_files
    while f is not None:
        fn = f.f_code.co_filename
        r = internal.get(fn)
        if r is None:
            r = _is_internal(fn)
        if not r:
            return (fn, f.f_lineno)
        f = f.f_back
    return None


def stamp(node: Node, loc: tuple[str, int] | None) -> None:
    """Give `loc` to `node` and to every input chain of it not yet located.

    Public ops record their nodes without provenance and stamp the user's line once, when
    the result is handed to the user (one stack walk per op, not one per node). The walk
    stops at located nodes, so it only visits what the op just recorded.
    """
    node.loc = loc
    pending = [node]
    while pending:
        for i in pending.pop().inputs:
            if i.loc is None:
                i.loc = loc
                pending.append(i)


def differentiate_as(
    n: Node, op: Primitive, inputs: tuple[Node, ...], attrs: tuple[Any, ...] = ()
) -> Node:
    """`n`, a node just recorded, whose backward is `op`'s rule applied to `inputs` (the
    history backward reads; see the module doc). For an op whose value is computed
    otherwise than its gradient formula reads: torch computes ``x ** 3`` as ``x * x * x``
    but differentiates it as pow, ``grad * (3 * x ** 2)``, and its rounding is torch's only
    when backward follows pow's rule too. Returns `n`; a node carrying no gradient, or one
    of `inputs` itself, is left as it is."""
    if n.ag is True and all(n is not i for i in inputs):
        n.ag = (op, inputs, attrs)
    return n


def format_loc(loc: tuple[str, int] | None) -> str:
    """``file.py:12``, the path shown relative to the working directory when inside it."""
    if loc is None:
        return "<unknown>"
    fn, line = loc
    if os.path.isabs(fn):
        try:
            rel = os.path.relpath(fn)
            if not rel.startswith(".."):
                fn = rel
        except ValueError:  # pragma: no cover - other drive on Windows
            pass
    return f"{fn}:{line}"


class Node:
    """One primitive application in the lazy graph (see module docstring)."""

    __slots__ = (
        "__weakref__",
        "ag",
        "attrs",
        "buffer",
        "device",
        "dtype",
        "id",
        "inputs",
        "loc",
        "op",
        "shape",
        "struct_hash",
    )

    op: Primitive
    inputs: tuple[Node, ...]
    attrs: tuple[Any, ...]
    shape: tuple[Any, ...]
    dtype: DType
    device: Device
    struct_hash: int
    id: int
    loc: tuple[str, int] | None
    buffer: Any
    ag: Any

    def __init__(
        self,
        op: Primitive,
        inputs: tuple[Node, ...],
        attrs: tuple[Any, ...],
        shape: tuple[Any, ...],
        dtype: DType,
        device: Device,
        struct_hash: int,
        loc: tuple[str, int] | None,
        buffer: Any = None,
    ) -> None:
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.struct_hash = struct_hash
        self.id = _next_id()
        self.loc = loc
        self.buffer = buffer
        self.ag = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_leaf(self) -> bool:
        return self.op.category == "leaf"

    @property
    def realized(self) -> bool:
        return self.buffer is not None

    def attr(self, name: str) -> Any:
        return self.attrs[self.op.attr_names.index(name)]

    @property
    def params(self) -> dict[str, Any]:
        """The attrs by name, e.g. ``{'axes': (1,)}``."""
        return dict(zip(self.op.attr_names, self.attrs))

    def realize(self, buffer: Any, leaf_op: Primitive) -> None:
        """Attach a computed value and turn this node into a buffer leaf (see module doc)."""
        self.buffer = buffer
        if self.op.category != "leaf":
            if self.ag is True:  # keep what backward differentiates (see module doc)
                self.ag = (self.op, self.inputs, self.attrs)
            self.op = leaf_op
            self.inputs = ()
            self.attrs = ()
            self.struct_hash = hash((leaf_op, self.dtype, self.shape, self.device))

    def __repr__(self) -> str:
        ins = ", ".join(f"%{i.id}" for i in self.inputs)
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return (
            f"<Node %{self.id} = {self.op.name}"
            f"{'[' + attrs + ']' if attrs else ''}({ins}) "
            f": {self.dtype.short}{list(self.shape)} at {format_loc(self.loc)}>"
        )
