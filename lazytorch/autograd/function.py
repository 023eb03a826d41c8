"""Custom autograd functions: ``class F(lazytorch.autograd.Function)`` with torch's API.

A subclass defines a static ``forward`` (``forward(ctx, *args)``, or ``forward(*args)`` plus
``setup_context(ctx, inputs, output)``) and a static ``backward(ctx, *grad_outputs)``;
``F.apply(*args)`` runs forward with grad disabled and attaches its floating outputs to the
graph when an input requires grad.

There is no tape to push a Python callback onto, so the attachment rides on the nodes'
``ag`` slot (see `lazytorch.ir.node`): a node's ``ag`` may be a history tuple ``(op,
inputs, attrs)`` whose ``op`` has a vjp rule. One application records

* an *anchor* node (an unread 0-d constant) whose history is the function itself over the
  tensor arguments' nodes — its rule calls the user's ``backward``;
* per differentiable output, an alias of the forward value whose history reads the anchor
  — its rule only parks the incoming gradient on the application's state.

Node ids are a topological order and the engine visits newest first, so every output's
gradient is parked before the anchor's rule runs and hands all of them to ``backward`` at
once (torch's multiple-output contract). The gradients are lazy tensors: ``backward`` records
ordinary ops that fuse with the rest of the backward pass, and under
``create_graph=True`` they carry gradient themselves when ``backward`` is made of
differentiable ops.

>>> import lazytorch
>>> class Cube(lazytorch.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x**3
...
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return g * 3 * x**2
>>> x = lazytorch.tensor([1.0, 2.0], requires_grad=True)
>>> Cube.apply(x).sum().backward()
>>> x.grad
tensor([ 3., 12.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from lazytorch.autograd.engine import _alias, is_grad_leaf
from lazytorch.autograd.grad_mode import no_grad
from lazytorch.autograd.rules import VJP
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node, grad_mode
from lazytorch.ir.primitives import PRIMITIVES, Primitive, make_node
from lazytorch.ops._core import const_node, expand_node, wrap
from lazytorch.tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

F = TypeVar("F", bound=Callable[..., Any])


class FunctionCtx:
    """The ``ctx`` a custom Function's ``forward``/``setup_context`` and ``backward`` share.

    Any attribute may be stored on it (``ctx.alpha = 3``).

    >>> from lazytorch.autograd.function import FunctionCtx
    >>> import lazytorch
    >>> ctx = FunctionCtx()
    >>> ctx.save_for_backward(lazytorch.ones(2), None)
    >>> len(ctx.saved_tensors)
    2
    """

    needs_input_grad: tuple[bool, ...]

    def __init__(self) -> None:
        self.needs_input_grad = ()
        self._saved: tuple[Tensor | None, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for ``backward`` to read as ``ctx.saved_tensors``."""
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {k} is of type "
                    f"{type(t).__name__}"
                )
        self._saved = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``jvp`` (forward-mode AD) to read as ``ctx.saved_tensors``."""
        self.save_for_backward(*tensors)

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """What ``save_for_backward`` kept, in order."""
        return self._saved

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say that ``forward`` modified these inputs in place (they are returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say that these outputs carry no gradient (their gradient in backward is zeros)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` receives None (not zeros) for outputs with no gradient."""
        self._materialize_grads = bool(value)


class _Application:
    """One ``apply``: the class, its ctx, the forward outputs, and the parked gradients."""

    __slots__ = ("cls", "ctx", "grads", "outputs")

    def __init__(self, cls: type, ctx: FunctionCtx, outputs: tuple[Any, ...]) -> None:
        self.cls = cls
        self.ctx = ctx
        # (shape, dtype, device) of each tensor output, None for a non-tensor output
        self.outputs = outputs
        self.grads: list[Node | None] = [None] * len(outputs)


def _park_rule(
    ct: Node, out: Node, inputs: tuple[Node, ...], attrs: tuple[Any, ...], needs: Any
) -> tuple[Node]:
    app, k = attrs
    g = app.grads[k]
    app.grads[k] = ct if g is None else make_node(_ADD, (g, ct), (), g.shape, g.dtype, g.device)
    return (inputs[0],)  # a placeholder: the anchor's rule reads the parked gradients


def _backward_rule(
    ct: Node, out: Node, inputs: tuple[Node, ...], attrs: tuple[Any, ...], needs: Any
) -> tuple[Node | None, ...]:

    app, positions = attrs
    ctx = app.ctx
    parked, app.grads = app.grads, [None] * len(app.outputs)
    grad_outputs: list[Tensor | None] = []
    for g, meta in zip(parked, app.outputs):
        if g is not None:
            grad_outputs.append(wrap(g))
        elif meta is not None and ctx._materialize_grads:
            shape, dtype, device = meta
            grad_outputs.append(wrap(expand_node(const_node(0, dtype, device), shape)))
        else:
            grad_outputs.append(None)
    name = app.cls.__name__
    result = app.cls.backward(ctx, *grad_outputs)
    if not isinstance(result, tuple):
        result = (result,)
    nargs = len(ctx.needs_input_grad)
    if len(result) != nargs:
        if len(result) > nargs and all(r is None for r in result[nargs:]):
            result = result[:nargs]
        else:
            raise RuntimeError(
                f"function {name}Backward returned an incorrect number of gradients "
                f"(expected {nargs}, got {len(result)})"
            )
    for k, r in enumerate(result):
        if r is not None and k not in positions:
            raise RuntimeError(
                f"function {name}Backward returned a gradient different than None at "
                f"position {k + 1}, but the corresponding forward input was not a Variable"
            )
    cts: list[Node | None] = []
    for node, k, need in zip(inputs, positions, needs):
        r = result[k]
        if r is None or not need:
            cts.append(None)
            continue
        if not isinstance(r, Tensor):
            raise TypeError(
                f"function {name}Backward returned a {type(r).__name__} as the gradient at "
                f"position {k + 1}; expected a Tensor or None"
            )
        cts.append(_fit_gradient(r, node, name, k)._node)
    return tuple(cts)


def _fit_gradient(g: Tensor, like: Node, name: str, k: int) -> Tensor:
    """`g` summed to the input's shape (when the input broadcasts to it) and cast to its dtype."""
    shape = tuple(like.shape)
    if tuple(g.shape) != shape:
        gs = tuple(g.shape)
        lead = len(gs) - len(shape)
        if lead < 0 or any(s != 1 and s != gs[lead + i] for i, s in enumerate(shape)):
            raise RuntimeError(
                f"Function {name}Backward returned an invalid gradient at index {k} - got "
                f"{list(gs)} but expected shape compatible with {list(shape)}"
            )
        if lead:
            g = g.sum(dim=tuple(range(lead)))
        ones = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
        if ones:
            g = g.sum(dim=ones, keepdim=True)
    if g.dtype is not like.dtype:
        g = g.to(like.dtype)
    return g


class _FunctionOp(Primitive):
    """The op of a Function's history tuples. Held only there (never a node's op), so it is
    not registered in the primitive table; ``grad_fn`` names it after the class."""

    def __init__(self, cls: type, rule: Callable[..., Any]) -> None:
        super().__init__(cls.__name__, "elementwise", nin=None)
        self.vjp = VJP(rule, ())
        self.function_class = cls


_ADD = PRIMITIVES["add"]
_CONST = PRIMITIVES["const"]


class _FunctionMeta(type):
    """Gives each Function subclass its ops: the anchor's (calls ``backward``) and the
    outputs' (park their gradients)."""

    def __init__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> None:
        super().__init__(name, bases, ns)
        cls._op = _FunctionOp(cls, _backward_rule)
        cls._park = _FunctionOp(cls, _park_rule)


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations (see the module docstring).

    >>> import lazytorch
    >>> class Scale(lazytorch.autograd.Function):
    ...     @staticmethod
    ...     def forward(x, alpha):
    ...         return x * alpha
    ...
    ...     @staticmethod
    ...     def setup_context(ctx, inputs, output):
    ...         ctx.alpha = inputs[1]
    ...
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * ctx.alpha, None
    >>> x = lazytorch.ones(3, requires_grad=True)
    >>> Scale.apply(x, 2.5).sum().backward()
    >>> x.grad
    tensor([2.5000, 2.5000, 2.5000])
    """

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    # A Function's own ``jvp(ctx, *input_tangents)``, for forward-mode AD.
    jvp: Any = None

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` with grad disabled; attach the outputs to the graph when an
        input requires grad, so that backward calls this class's ``backward``."""
        ctx = FunctionCtx()
        grad_on = grad_mode.enabled
        ctx.needs_input_grad = tuple(
            grad_on and isinstance(a, Tensor) and a._node.ag is not None for a in args
        )
        new_style = cls.setup_context is not Function.setup_context
        # before forward: an input that forward modifies in place (mark_dirty) is rebound
        inputs = tuple(a._node if isinstance(a, Tensor) else None for a in args)
        with no_grad():
            if new_style:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if forward_ad_hook is not None:
            duals = forward_ad_hook(cls, ctx, args, out)
            if duals is not None:
                return duals
        if not any(ctx.needs_input_grad):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        return _attach(cls, ctx, args, inputs, outs, out)


# Set by lazytorch.autograd.forward_ad: (cls, ctx, args, out) -> the outputs as dual tensors
# whose tangents the class's ``jvp`` computed, or None when forward mode has nothing to do.
forward_ad_hook: Callable[[type, Any, tuple[Any, ...], Any], Any] | None = None


def _attach(
    cls: type,
    ctx: FunctionCtx,
    args: tuple[Any, ...],
    arg_nodes: tuple[Node | None, ...],
    outs: tuple[Any, ...],
    out: Any,
) -> Any:

    positions = tuple(k for k, a in enumerate(args) if isinstance(a, Tensor))
    inputs = tuple(arg_nodes[k] for k in positions)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    for t in ctx._dirty:
        if is_grad_leaf(t):
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
    app = _Application(
        cls,
        ctx,
        tuple((o.shape, o.dtype, o._node.device) if isinstance(o, Tensor) else None for o in outs),
    )
    device = inputs[0].device
    anchor = make_node(_CONST, (), (0.0, dt.float32, device), (), dt.float32, device)
    anchor.ag = (cls._op, inputs, (app, positions))  # type: ignore[attr-defined]
    anchor.loc = inputs[0].loc
    is_input = {id(a) for a in args if isinstance(a, Tensor)}
    result = []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor) or id(o) in non_diff or not o.dtype.is_floating_point:
            result.append(o)
            continue
        a = _alias(o._node)
        a.ag = (cls._park, (anchor,), (app, k))  # type: ignore[attr-defined]
        if id(o) in is_input and id(o) not in dirty:
            o = wrap(a)  # an input returned unchanged: a new tensor, as torch's view of it
        else:
            o._node = a
        result.append(o)
    return tuple(result) if isinstance(out, tuple) else result[0]


def once_differentiable(fn: F) -> F:
    """Decorate a ``backward`` that is not itself differentiable: it runs with grad disabled,
    so its gradients carry no history even under ``create_graph=True``.

    >>> import lazytorch
    >>> from lazytorch.autograd.function import once_differentiable
    >>> class Double(lazytorch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> x = lazytorch.ones(2, requires_grad=True)
    >>> (g,) = lazytorch.autograd.grad(Double.apply(x).sum(), x, create_graph=True)
    >>> g.requires_grad
    False
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper  # type: ignore[return-value]
