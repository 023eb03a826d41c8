"""The Tensor: a handle on a lazy IR node.

A Tensor holds the node that computes its value. Ops record new nodes and return new
Tensors; in-place ops (``add_``, ``x[i] = v``) rebind the tensor to a new node, and a
tensor that is a *view* of another (``x[0]``, ``x.T``, ``x.view(...)``) writes through to
its base, which refreshes its other live views — torch's aliasing semantics, expressed
functionally. Reading a value (``item``, ``tolist``, ``numpy``, ``repr``, ``bool``, ...)
is an implicit materialization point.

This module holds the tensor's state, its metadata and the reading of values. Every other
method (``add``, ``sum``, ``reshape``, ``size``, ``to``, the operators, and the autograd API
of `lazytorch.autograd.tensor_methods`) is declared in the public registry
(`lazytorch._public`) and bound onto the class by `lazytorch.ops.methods.bind`, so this
module imports nothing above it.
"""

from __future__ import annotations

import copy
from typing import Any

from lazytorch import _as_torch, _config
from lazytorch import runtime as _runtime
from lazytorch._dtype_info import strided as _strided
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np as _np
from lazytorch.ir.device import Device
from lazytorch.ir.node import Node, grad_mode
from lazytorch.ir.symbolic import SymInt
from lazytorch.runtime import implicit_point

__all__ = ["Size", "Tensor"]


class Size(tuple):  # type: ignore[type-arg]
    """A tensor's shape: a tuple of ints (or SymInts for dynamic dims) with ``numel()``.

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3).shape
    lazytorch.Size([2, 3])
    """

    __slots__ = ()

    def numel(self) -> Any:
        n: Any = 1
        for d in self:
            n = n * d
        return n

    def __repr__(self) -> str:
        return f"{_as_torch.NAME}.Size([{', '.join(str(d) for d in self)}])"

    def __getitem__(self, i: Any) -> Any:  # type: ignore[override]
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: Any) -> Size:  # type: ignore[override]
        return Size(tuple(self) + tuple(other))


# lazytorch.ops.numpy_bridge.export (it sits above this module): Tensor.numpy() on the CPU
_export: Any = None


def _host_value(n: Node) -> Any:
    """The node's value as a NumPy array: a device buffer (a cuda tensor's) is copied to the
    host (its ``to_host()``); scalar inputs hold Python numbers."""
    import numpy as np

    b = n.buffer
    if isinstance(b, np.ndarray):
        return b
    to_host = getattr(b, "to_host", None)
    if to_host is not None:
        return to_host()
    return np.asarray(b, dtype=n.dtype.np)


def _meta_read(cause: str) -> Exception:
    """torch's error for reading the values of a ``meta`` tensor (it has none) by `cause`."""
    if cause in ("item()", "bool()", "int()", "float()", "__index__"):
        return RuntimeError("Tensor.item() cannot be called on meta tensors")
    if cause.startswith(("numpy()", "__array__")):
        return TypeError(
            "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first."
        )
    return NotImplementedError("Cannot copy out of meta tensor; no data!")


def _check_numpy_grad(t: Tensor) -> None:
    """torch's refusal of ``numpy()`` / ``__array__`` on a tensor that requires grad while
    grad mode is on (under ``no_grad`` torch allows it); ``item()``/``tolist()`` are free.
    A meta tensor is refused for its device first, as torch checks the device before."""
    n = t._node
    if n.ag is not None and grad_mode.enabled and n.device.type != "meta":
        raise op_error(
            RuntimeError,
            "numpy",
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
        )


class Tensor:
    """A lazily computed n-dimensional array with torch's API.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> y = x @ x.T + 1          # recorded, not computed
    >>> y.sum().item()           # computed here
    56.0
    """

    # __dict__: a script may set its own attributes on a tensor or parameter, as on torch's
    # (mamba's ``A_log._no_weight_decay = True`` tags parameters for the optimizer groups);
    # the dict is allocated only when one is set
    __slots__ = ("__dict__", "__weakref__", "_meta", "_node", "_vc", "_view", "_views")

    _node: Node
    # (root tensor, view steps from the root) for a view, else None.
    _view: tuple[Tensor, tuple[Any, ...]] | None
    # weakrefs to live views of this tensor (roots only), created on first view.
    _views: list[Any] | None
    # autograd state (.grad, hooks), set only on tensors that have some; read with getattr.
    _meta: Any
    # the version counter ([writes]) of a tensor that has its own (see _version); unset on
    # views, which count with their root. Read with getattr.
    _vc: list[int]

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._node.shape)

    @property
    def dtype(self) -> dt.DType:
        return self._node.dtype

    @property
    def device(self) -> Device:
        return self._node.device

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    def dim(self) -> int:
        return len(self._node.shape)

    ndimension = dim

    def numel(self) -> Any:
        n: Any = 1
        for d in self._node.shape:
            n = n * d
        return n

    nelement = numel

    def element_size(self) -> int:
        return self._node.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._node.dtype.itemsize

    @property
    def nbytes(self) -> Any:
        return self.numel() * self._node.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._node.dtype.is_floating_point

    def is_complex(self) -> bool:
        return False

    @property
    def is_cuda(self) -> bool:
        return self._node.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._node.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self._node.device.type == "meta"

    # Devices and layouts lazytorch has no tensor on: always False (scripts test them).
    is_xpu = is_mps = is_hpu = is_ipu = is_xla = is_vulkan = is_mkldnn = property(
        lambda self: False
    )
    is_sparse = is_sparse_csr = is_quantized = is_nested = property(lambda self: False)

    @property
    def layout(self) -> Any:
        return _strided

    @property
    def _version(self) -> int:
        """How many in-place writes the tensor's memory has had, as torch's version counter:
        shared by a tensor, its views and ``detach()`` (they are one memory), its own for a
        ``.data`` alias, 0 for a new tensor (a clone included).

        >>> import lazytorch
        >>> x = lazytorch.zeros(3)
        >>> v = x[:2]
        >>> _ = v.add_(1)
        >>> _ = x.mul_(2)
        >>> x._version, v._version, x.clone()._version
        (2, 2, 0)
        """
        return version_counter(self)[0]

    @property
    def is_materialized(self) -> bool:
        """Whether this tensor's value is computed (no pending graph behind it)."""
        return self._node.buffer is not None

    # -- reading values (implicit materialization points) -----------------------------------
    def _materialized(self, cause: str) -> Node:
        if self._node.device.type == "meta":
            raise _meta_read(cause)
        implicit_point(self, cause)
        return self._node

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number (materializes)."""
        n = self._node
        b = n.buffer
        # A computed host value, outside a compile trace: the read in a loop. (What
        # implicit_point would do for it: nothing.)
        if b.__class__ is _np.ndarray and b.size == 1 and _runtime._compile_trace is None:
            return b.item()
        if self.numel() != 1:
            raise op_error(
                RuntimeError,
                "item",
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar",
            )
        n = self._materialized("item()")
        return _host_value(n).item()

    def tolist(self) -> Any:
        """Nested Python lists of the values (materializes)."""
        return _host_value(self._materialized("tolist()")).tolist()

    def numpy(self, *, force: bool = False) -> Any:
        """The values as a NumPy array sharing the tensor's memory, as torch's: a write to
        either is seen by the other (materializes; `lazytorch.ops.numpy_bridge`). A cuda
        tensor's values are copied from the device (read-only).

        >>> import lazytorch
        >>> t = lazytorch.ones(2)
        >>> n = t.numpy()
        >>> n[0] = 3
        >>> t
        tensor([3., 1.])

        As torch's, it refuses a tensor that requires grad while grad mode is on (the array
        would escape autograd silently); ``force=True`` or ``t.detach().numpy()`` take it.
        """
        if not force:
            _check_numpy_grad(self)
        if self._node.device.type == "cpu":
            return _export(self)
        return self._values("numpy()")

    def _values(self, cause: str = "numpy()") -> Any:
        """The values as a read-only NumPy array, without sharing (library code that only
        reads: pickling, saving, ``tensor(t)``); materializes."""
        view = _host_value(self._materialized(cause)).view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        _check_numpy_grad(self)  # torch's __array__ goes through numpy(): the same refusal
        arr = _host_value(self._materialized("__array__ (NumPy conversion)"))
        if dtype is not None:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        view = arr.view()  # lazytorch's value may be shared: NumPy may read it, not write it
        view.flags.writeable = False
        return view

    __array_priority__ = 1000  # NumPy binary ops defer to Tensor's reflected operators

    def __repr__(self) -> str:
        from lazytorch._format import format_meta, format_tensor  # lazy: import time

        n = self._node
        extra: tuple[str, ...] = ()
        if n.ag is not None:  # as torch prints it: the leaf flag, or the op gradient goes to
            g = self.grad_fn  # type: ignore[attr-defined]
            extra = (f"grad_fn=<{g.name()}>",) if g is not None else ("requires_grad=True",)
        if n.device.type == "meta":  # no values: torch prints the size instead
            return format_meta(tuple(self.shape), n.dtype, _config.get_default_dtype(), extra)
        n = self._materialized("repr()")
        device = None if n.device.type == "cpu" else str(n.device)
        return format_tensor(_host_value(n), n.dtype, _config.get_default_dtype(), extra, device)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def _scalar_value(self, cause: str) -> Any:
        b = self._node.buffer
        if b.__class__ is _np.ndarray and b.size == 1 and _runtime._compile_trace is None:
            return b.item()  # as in item()
        if self.numel() != 1:
            what = (
                "Boolean value"
                if cause == "bool()"
                else "only one element tensors can be converted to Python scalars"
            )
            if cause == "bool()":
                raise op_error(
                    RuntimeError, "bool", f"{what} of Tensor with more than one value is ambiguous"
                )
            raise op_error(RuntimeError, cause.rstrip("()"), what)
        return _host_value(self._materialized(cause)).item()

    def __bool__(self) -> bool:
        return bool(self._scalar_value("bool()"))

    def __int__(self) -> int:
        return int(self._scalar_value("int()"))

    def __float__(self) -> float:
        return float(self._scalar_value("float()"))

    def __index__(self) -> int:
        if self._node.dtype.is_floating_point:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._scalar_value("__index__"))

    def __len__(self) -> int:
        shape = self._node.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        d = shape[0]
        return d.hint if isinstance(d, SymInt) else d

    def __iter__(self) -> Any:
        if not self._node.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # type: ignore[attr-defined]

    def __contains__(self, element: Any) -> bool:
        return bool((self == element).any())  # type: ignore[attr-defined]

    __hash__ = object.__hash__

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        result: Tensor = self.clone()  # type: ignore[attr-defined]
        memo[id(self)] = result
        if self.__dict__:  # the script's own attributes, copied as torch copies them
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result


def _rebuild(array: Any, device: str) -> Tensor:
    """Unpickle a tensor pickled before Tensor's methods moved to `lazytorch.ops.methods`
    (those pickles name this function): what that module's ``_rebuild`` does, which it
    registers here (`_rebuild_with`; the ops layer sits above this module)."""
    return _rebuild_with(array, device)  # type: ignore[no-any-return]


_rebuild_with: Any = None  # lazytorch.ops.methods._rebuild, set when the methods are bound


def version_counter(t: Tensor) -> list[int]:
    """The counter `t`'s in-place writes advance (Tensor._version): its own if it has one
    (a root, a ``.data`` alias), else its root's, made on first use."""
    vc = getattr(t, "_vc", None)
    if vc is not None:
        return vc
    root = t if t._view is None else t._view[0]
    vc = getattr(root, "_vc", None)
    if vc is None:
        vc = root._vc = [0]
    return vc
