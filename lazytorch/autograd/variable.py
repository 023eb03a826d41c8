"""``torch.autograd.Variable``: the pre-0.4 wrapper, which torch kept as a tensor alias.

``Variable(t)`` gives a tensor with `t`'s values that is a leaf (requiring grad if asked);
``isinstance(x, Variable)`` is true for every tensor, as in torch, where Variable and Tensor
merged in 0.4.

>>> import lazytorch
>>> from lazytorch.autograd import Variable
>>> v = Variable(lazytorch.ones(2), requires_grad=True)
>>> v.requires_grad, v.is_leaf, isinstance(lazytorch.zeros(1), Variable)
(True, True, True)
"""

from __future__ import annotations

from typing import Any

from lazytorch._config import get_default_device, get_default_dtype
from lazytorch.ops._core import const_node, expand_node, wrap
from lazytorch.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:  # type: ignore[misc]
        if data is None:  # torch.empty(0)
            data = wrap(expand_node(const_node(0, get_default_dtype(), get_default_device()), (0,)))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
