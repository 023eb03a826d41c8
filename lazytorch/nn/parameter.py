"""`Parameter`: a Tensor that a `Module` registers as one of its learnable values.

A Parameter is an ordinary lazytorch Tensor (ops on it return plain Tensors) that is a
gradient leaf by default. Assigning one to a module attribute registers it, so it shows up
in ``parameters()``, ``state_dict()`` and the optimizers built from them.
"""

from __future__ import annotations

from typing import Any

from lazytorch.ops.creation import empty, tensor
from lazytorch.runtime import register
from lazytorch.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
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

        return (_rebuild_parameter, (np.array(self.numpy()), str(self.device), self.requires_grad))


def _rebuild_parameter(array: Any, device: str, requires_grad: bool) -> Parameter:
    return Parameter(tensor(array, device=device), requires_grad)
