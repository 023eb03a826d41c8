"""`Parameter`: a Tensor that a `Module` registers as one of its learnable values.

A Parameter is an ordinary lazytorch Tensor (ops on it return plain Tensors) that is a
gradient leaf by default. Assigning one to a module attribute registers it, so it shows up
in ``parameters()``, ``state_dict()`` and the optimizers built from them.
"""

from __future__ import annotations

from typing import Any

from lazytorch.ops.complex import ComplexTensor
from lazytorch.ops.creation import empty, tensor
from lazytorch.runtime import register
from lazytorch.tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


class _ParameterType(type):
    """Parameter's metaclass: a complex parameter (a `ComplexTensor` whose pair of parts is
    a `_ComplexPair`, made by ``Parameter(complex_data)``) is a Parameter too, as torch's
    complex parameters are (a Fourier layer's weights)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if type(obj) is ComplexTensor:
            return cls is Parameter and type(obj._ri) is _ComplexPair
        return type.__instancecheck__(cls, obj)  # (module setattr asks this for every value)


class Parameter(Tensor, metaclass=_ParameterType):
    """A Tensor registered as a module parameter; requires grad unless told otherwise.

    The Parameter takes `data`'s current value (a detached alias: it never carries
    `data`'s autograd history).

    >>> import lazytorch
    >>> p = lazytorch.nn.Parameter(lazytorch.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> p.requires_grad, p.is_leaf, isinstance(p, lazytorch.Tensor)
    (True, True, True)
    >>> type(p * 2).__name__      # ops return plain Tensors
    'Tensor'
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if type(data) is ComplexTensor and cls is Parameter:
            # complex data: a complex tensor over a parameter of its (real, imaginary) pairs;
            # the optimizers update that pair (torch's view the same way: view_as_real)
            return ComplexTensor(_ComplexPair(data._ri, requires_grad))  # type: ignore[return-value]
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a lazytorch.Tensor, not {type(data).__name__}")
        obj = object.__new__(cls)
        obj._node = data.detach()._node  # type: ignore[attr-defined]
        obj._view = None
        obj._views = None
        register(obj)  # so that materialize() with no arguments computes it
        if requires_grad:
            obj.requires_grad_(True)
        return obj

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        result = type(self)(self.detach().clone(), self.requires_grad)  # type: ignore[attr-defined]
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        import numpy as np

        rebuild = (
            _rebuild_parameter,
            (np.array(self._values()), str(self.device), self.requires_grad),
        )
        # the script's own attributes (``_no_weight_decay``) travel as the pickle's state,
        # as torch's do
        return (*rebuild, self.__dict__) if self.__dict__ else rebuild


def _rebuild_parameter(array: Any, device: str, requires_grad: bool) -> Parameter:
    return Parameter(tensor(array, device=device), requires_grad)


class _ComplexPair(Parameter):
    """The (real, imaginary) pairs of a complex parameter: what the optimizers update."""

    __slots__ = ()


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy module's, before its first forward).

    `materialize` gives it a shape (uninitialized values) and turns it into a `Parameter`,
    as torch's does; a lazy module then runs its ``reset_parameters``.
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        obj = super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)
        return obj  # type: ignore[return-value]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this parameter `shape` (and `device`/`dtype`); it becomes a `Parameter`."""
        _materialize(self, shape, device, dtype)

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running statistics)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None
    ) -> UninitializedBuffer:
        obj = object.__new__(cls)
        obj._node = empty(0, device=device, dtype=dtype)._node  # type: ignore[attr-defined]
        obj._view = None
        obj._views = None
        register(obj)
        if requires_grad:
            obj.requires_grad_(True)
        return obj

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this buffer `shape` (uninitialized values); it becomes a plain Tensor."""
        _materialize(self, shape, device, dtype)

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    __str__ = __repr__


def _materialize(t: Tensor, shape: Any, device: Any, dtype: Any) -> None:
    if isinstance(shape, int):
        shape = (shape,)
    data = empty(
        tuple(shape),
        device=device if device is not None else t.device,
        dtype=dtype if dtype is not None else t.dtype,
    )
    t.data = data
    t.__class__ = type(t).cls_to_become  # type: ignore[attr-defined]


def is_lazy(param: Any) -> bool:
    """Whether `param` is an uninitialized parameter or buffer."""
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))


class Buffer(Tensor):
    """``nn.Buffer(data, persistent=True)``: assigned to a module attribute, it registers a
    buffer (persistent unless told otherwise), as ``register_buffer`` does.

    The module keeps this object (a Tensor; ops on it return plain Tensors), where torch
    keeps a plain tensor marked as a buffer.

    >>> import lazytorch
    >>> m = lazytorch.nn.Module()
    >>> m.steps = lazytorch.nn.Buffer(lazytorch.zeros(()), persistent=False)
    >>> [n for n, _ in m.named_buffers()], list(m.state_dict())
    (['steps'], [])
    """

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer data must be a lazytorch.Tensor, not {type(data).__name__}")
        obj = object.__new__(cls)
        obj._node = data.detach()._node  # type: ignore[attr-defined]
        obj._view = None
        obj._views = None
        obj.persistent = persistent
        register(obj)
        if data.requires_grad:
            obj.requires_grad_(True)
        return obj
