"""The Tensor's autograd API: ``requires_grad``, ``.grad``, ``grad_fn``, ``backward`` and hooks.

Declared into the public registry (`lazytorch._public`) and bound onto `Tensor` by
`lazytorch.ops.methods.bind` with every other method, so `lazytorch.tensor` keeps only the
tensor's state and imports nothing above it.

>>> import lazytorch
>>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> w.grad, w.is_leaf, w.grad_fn
(tensor([2., 4.]), True, None)
"""

from __future__ import annotations

from typing import Any

from lazytorch._public import public
from lazytorch.autograd.engine import (
    GradFn,
    RemovableHandle,
    TensorMeta,
    meta_of,
    register_interior,
    set_requires_grad,
)
from lazytorch.autograd.engine import backward as _backward
from lazytorch.tensor import Tensor

__all__ = [
    "backward",
    "grad",
    "grad_fn",
    "is_leaf",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "requires_grad",
    "requires_grad_",
    "retain_grad",
    "retains_grad",
]


def _get_requires_grad(self: Tensor) -> bool:
    """Whether gradient flows into this tensor's value (a leaf asked for it, or a
    computation from one recorded in grad mode)."""
    return self._node.ag is not None


def _set_requires_grad(self: Tensor, flag: bool) -> None:
    set_requires_grad(self, bool(flag))


requires_grad = public(torch=False, method="requires_grad")(
    property(_get_requires_grad, _set_requires_grad, doc=_get_requires_grad.__doc__)
)


@public(torch=False, method=True)
def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    """Make this leaf tensor track gradients (in place); returns self.

    >>> import lazytorch
    >>> w = lazytorch.ones(2).requires_grad_()
    >>> w.requires_grad, w.is_leaf
    (True, True)
    """
    set_requires_grad(self, bool(requires_grad))
    return self


@public(torch=False, method=True)
@property
def is_leaf(self: Tensor) -> bool:
    """True unless this tensor was computed, in grad mode, from one requiring grad."""
    a = self._node.ag
    return a is None or isinstance(a, TensorMeta)


def _get_grad(self: Tensor) -> Tensor | None:
    """The gradient accumulated by ``backward()`` (a lazy tensor), or None."""
    m = getattr(self, "_meta", None)
    if m is None:
        return None
    return m.grad  # type: ignore[no-any-return]


def _set_grad(self: Tensor, value: Tensor | None) -> None:
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
    m = meta_of(self, create=True)
    m.grad = value
    m.sparse_rows = None  # an assigned gradient is dense (None: no gradient)


def _del_grad(self: Tensor) -> None:
    _set_grad(self, None)


grad = public(torch=False, method="grad")(
    property(_get_grad, _set_grad, _del_grad, _get_grad.__doc__)
)


@public(torch=False, method=True)
@property
def grad_fn(self: Tensor) -> Any:
    """The recorded op gradient flows back through (None for leaves and non-grad values)."""
    return GradFn.of(self._node)


@public(torch=False, method=True)
@property
def retains_grad(self: Tensor) -> bool:
    m = getattr(self, "_meta", None)
    return bool(m is not None and m.retains_grad and not self.is_leaf)  # type: ignore[attr-defined]


@public(torch=False, method=True)
def retain_grad(self: Tensor) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
    if self._node.ag is None:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.is_leaf:  # type: ignore[attr-defined]
        return
    register_interior(self).retains_grad = True


@public(torch=False, method=True)
def register_hook(self: Tensor, hook: Any) -> Any:
    """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
    replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

    >>> import lazytorch
    >>> x = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 10)
    >>> x.sum().backward()
    >>> x.grad
    tensor([10., 10.])
    """
    if self._node.ag is None:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    leaf = self.is_leaf  # type: ignore[attr-defined]
    m = meta_of(self, create=True) if leaf else register_interior(self)
    return RemovableHandle(m.hooks, hook)


@public(torch=False, method=True)
def register_post_accumulate_grad_hook(self: Tensor, hook: Any) -> Any:
    """Call ``hook(tensor)`` after this leaf's ``.grad`` has accumulated its gradient in
    ``backward()``; the hook returns None. Returns a handle whose ``remove()``
    unregisters it. Not called by ``autograd.grad``, which accumulates nothing.

    The "optimizer step in backward" pattern works: a hook that runs ``opt.step()`` and
    ``opt.zero_grad()`` for its parameter updates it during the backward pass.

    >>> import lazytorch
    >>> w = lazytorch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = lazytorch.optim.SGD([w], lr=0.5)
    >>> def step(p):
    ...     opt.step()
    ...     opt.zero_grad()
    >>> h = w.register_post_accumulate_grad_hook(step)
    >>> (w * w).sum().backward()
    >>> w.detach(), w.grad
    (tensor([0., 0.]), None)
    """
    if self._node.ag is None:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not self.is_leaf:  # type: ignore[attr-defined]
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    m = meta_of(self, create=True)
    return RemovableHandle(m.post_accumulate_hooks, hook)


@public(torch=False, method=True)
def backward(
    self: Tensor,
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
    _backward(
        self,
        None if gradient is None else (gradient,),
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=inputs,
    )
