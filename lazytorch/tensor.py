"""The Tensor: a handle on a lazy IR node.

A Tensor holds the node that computes its value. Ops record new nodes and return new
Tensors; in-place ops (``add_``, ``x[i] = v``) rebind the tensor to a new node, and a
tensor that is a *view* of another (``x[0]``, ``x.T``, ``x.view(...)``) writes through to
its base, which refreshes its other live views — torch's aliasing semantics, expressed
functionally. Reading a value (``item``, ``tolist``, ``numpy``, ``repr``, ``bool``, ...)
is an implicit materialization point.

The op methods (``add``, ``sum``, ``reshape``, ...) are bound onto the class by
`lazytorch.ops`; this module holds the state, the properties, and the conversions.
"""

from __future__ import annotations

from typing import Any

from lazytorch import _config
from lazytorch import _dtype_info as _formats
from lazytorch import runtime as _runtime
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np as _np
from lazytorch.ir.device import Device
from lazytorch.ir.node import Node
from lazytorch.ir.symbolic import SymInt

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
        return f"lazytorch.Size([{', '.join(str(d) for d in self)}])"

    def __getitem__(self, i: Any) -> Any:  # type: ignore[override]
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: Any) -> Size:  # type: ignore[override]
        return Size(tuple(self) + tuple(other))


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


_implicit_point: Any = None  # lazytorch.runtime.implicit_point, once imported


class Tensor:
    """A lazily computed n-dimensional array with torch's API.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> y = x @ x.T + 1          # recorded, not computed
    >>> y.sum().item()           # computed here
    56.0
    """

    __slots__ = ("__weakref__", "_meta", "_node", "_view", "_views")

    _node: Node
    # (root tensor, view steps from the root) for a view, else None.
    _view: tuple[Tensor, tuple[Any, ...]] | None
    # weakrefs to live views of this tensor (roots only), created on first view.
    _views: list[Any] | None
    # autograd state (.grad, hooks), set only on tensors that have some; read with getattr.
    _meta: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        # lazytorch.Tensor(data) / lazytorch.Tensor(2, 3), like torch.Tensor: float tensors.
        from lazytorch.ops import creation

        return creation.legacy_tensor_new(*args, **kwargs)

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._node.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._node.shape)
        from lazytorch.ops._core import normalize_dim

        return self._node.shape[normalize_dim(dim, len(self._node.shape), "size")]

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

    # Devices and layouts lazytorch has no tensor on: always False (scripts test them).
    is_xpu = is_mps = is_meta = is_hpu = is_ipu = is_xla = is_vulkan = is_mkldnn = property(
        lambda self: False
    )
    is_sparse = is_sparse_csr = is_quantized = is_nested = property(lambda self: False)

    @property
    def layout(self) -> str:
        return "strided"

    # -- autograd (the engine is lazytorch.autograd.engine) -----------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradient flows into this tensor's value (a leaf asked for it, or a
        computation from one recorded in grad mode)."""
        return self._node.ag is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        from lazytorch.autograd.engine import set_requires_grad

        set_requires_grad(self, bool(flag))

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this leaf tensor track gradients (in place); returns self.

        >>> import lazytorch
        >>> w = lazytorch.ones(2).requires_grad_()
        >>> w.requires_grad, w.is_leaf
        (True, True)
        """
        from lazytorch.autograd.engine import set_requires_grad

        set_requires_grad(self, bool(requires_grad))
        return self

    @property
    def is_leaf(self) -> bool:
        """True unless this tensor was computed, in grad mode, from one requiring grad."""
        from lazytorch.autograd.engine import TensorMeta

        a = self._node.ag
        return a is None or isinstance(a, TensorMeta)

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward()`` (a lazy tensor), or None."""
        m = getattr(self, "_meta", None)
        if m is None:
            return None
        return m.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        from lazytorch.autograd.engine import meta_of

        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"assigned grad has data of a different size: {list(value.shape)} vs "
                    f"{list(self.shape)}"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: {value.dtype} vs {self.dtype}"
                )
        if value is None and getattr(self, "_meta", None) is None:
            return
        meta_of(self, create=True).grad = value

    @grad.deleter
    def grad(self) -> None:
        self.grad = None

    @property
    def grad_fn(self) -> Any:
        """The recorded op gradient flows back through (None for leaves and non-grad values)."""
        from lazytorch.autograd.engine import GradFn

        return GradFn.of(self._node)

    @property
    def retains_grad(self) -> bool:
        m = getattr(self, "_meta", None)
        return bool(m is not None and m.retains_grad and not self.is_leaf)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        from lazytorch.autograd.engine import register_interior

        if self._node.ag is None:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.is_leaf:
            return
        register_interior(self).retains_grad = True

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

        >>> import lazytorch
        >>> x = lazytorch.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 10)
        >>> x.sum().backward()
        >>> x.grad
        tensor([10., 10.])
        """
        from lazytorch.autograd.engine import RemovableHandle, meta_of, register_interior

        if self._node.ag is None:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        m = meta_of(self, create=True) if self.is_leaf else register_interior(self)
        return RemovableHandle(m.hooks, hook)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate this tensor's gradient into the ``.grad`` of the leaves it uses.

        Gradients are recorded lazily and computed with the next materialization, so
        forward, backward and the optimizer update of a training step run as one program.

        >>> import lazytorch
        >>> w = lazytorch.tensor([1.0, -1.0], requires_grad=True)
        >>> (w * 3).sum().backward()
        >>> w.grad
        tensor([3., 3.])
        """
        from lazytorch.autograd.engine import backward

        backward(
            self,
            None if gradient is None else (gradient,),
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=inputs,
        )

    @property
    def is_materialized(self) -> bool:
        """Whether this tensor's value is computed (no pending graph behind it)."""
        return self._node.buffer is not None

    def is_contiguous(self, memory_format: Any = _formats.contiguous_format) -> bool:
        """Whether the elements are in row-major order (torch's rule, from the view's strides)."""
        if self._view is None:
            return True
        from lazytorch.ops.views import is_contiguous

        return is_contiguous(self)

    # -- reading values (implicit materialization points) -----------------------------------
    def _materialized(self, cause: str) -> Node:
        global _implicit_point
        if _implicit_point is None:  # (the runtime imports this module: bound on first use)
            from lazytorch.runtime import implicit_point as _implicit_point
        _implicit_point(self, cause)
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
        """The values as a read-only NumPy array (materializes; no copy is made of a value
        on the host, a cuda tensor's is copied from the device).

        Read-only because lazytorch buffers are immutable; ``.copy()`` it to write.
        """
        arr = _host_value(self._materialized("numpy()"))
        view = arr.view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = _host_value(self._materialized("__array__ (NumPy conversion)"))
        if dtype is not None:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    __array_priority__ = 1000  # NumPy binary ops defer to Tensor's reflected operators

    def __repr__(self) -> str:
        from lazytorch._format import format_tensor

        n = self._materialized("repr()")
        extra: tuple[str, ...] = ()
        if n.ag is not None:  # as torch prints it: the leaf flag, or the op gradient goes to
            g = self.grad_fn
            extra = (f"grad_fn=<{g.name()}>",) if g is not None else ("requires_grad=True",)
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

    def __reduce_ex__(self, protocol: Any) -> Any:
        import numpy as np

        return (_rebuild, (np.array(self.numpy()), str(self.device)))

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        return self.clone()  # type: ignore[attr-defined,no-any-return]


def _rebuild(array: Any, device: str) -> Tensor:
    from lazytorch.ops.creation import tensor

    return tensor(array, device=device)
