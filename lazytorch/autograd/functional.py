"""``torch.autograd.functional``: `vjp`, `jvp`, `jacobian`, `hessian`, `vhp`, `hvp`.

Built on `lazytorch.autograd.grad` as torch's are on ``torch.autograd.grad``: a Jacobian is
one reverse pass per output element (``vectorize=True`` is accepted and does the same, row by
row), a `jvp` is the transpose of a vjp (the double-backward trick). Results are detached
unless ``create_graph=True``; inputs the function does not use get zero gradients (an error
with ``strict=True``).

>>> import lazytorch
>>> from lazytorch.autograd.functional import jacobian
>>> jacobian(lambda x: x * x, lazytorch.tensor([1.0, 3.0]))
tensor([[2., 0.],
        [0., 6.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazytorch.autograd.engine import grad as _grad
from lazytorch.autograd.grad_mode import enable_grad
from lazytorch.ops.shape import stack
from lazytorch.tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"element {i} of " if is_tuple else ""
            raise TypeError(
                f"The {where}{arg} given to {fn} must be either a Tensor or a tuple of "
                f"Tensors but {where or 'the value '}given has type {type(t).__name__}."
            )
    return is_tuple, items


def _back(is_tuple: bool, items: Any) -> Any:
    return tuple(items) if is_tuple else items[0]


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Inputs that require grad: a view of one that does (its graph kept, with
    create_graph), else a detached copy that does."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _finish(ts: Any, create_graph: bool) -> Any:
    if isinstance(ts, tuple):
        return tuple(_finish(t, create_graph) for t in ts)
    if ts is None or create_graph:
        return ts
    return ts.detach()


def _grads(
    outputs: tuple[Tensor, ...],
    inputs: tuple[Tensor, ...],
    grad_outputs: tuple[Tensor, ...],
    create_graph: bool,
    strict: bool,
    what: str,
) -> tuple[Tensor, ...]:
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        found: tuple[Any, ...] = (None,) * len(inputs)
    else:
        found = _grad(
            [o for o, _ in pairs],
            inputs,
            [g for _, g in pairs],
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )
    res = []
    for i, (g, x) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. "
                    f"This is not allowed in strict mode when computing {what}."
                )
            g = x.new_zeros(x.shape) if hasattr(x, "new_zeros") else x.detach() * 0
        res.append(g)
    return tuple(res)


def _check_v(v: tuple[Tensor, ...], outs: tuple[Tensor, ...], fn: str) -> None:
    if len(v) != len(outs):
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(outs)} but got {len(v)}."
        )
    for i, (a, b) in enumerate(zip(v, outs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"Entry {i} in v has invalid size: should be {tuple(b.shape)} but got "
                f"{tuple(a.shape)}."
            )


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs`."""
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element."
                )
            vs: tuple[Tensor, ...] = (outs[0].new_ones(outs[0].shape),)
        else:
            _, vs = _as_tuple(v, "v", "vjp")
            _check_v(vs, outs, "vjp")
        res = _grads(outs, xs, vs, create_graph, strict, "vjp")
    return _finish(_back(out_tuple, outs), create_graph), _finish(
        _back(in_tuple, res), create_graph
    )


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by differentiating a vjp."""
    with enable_grad():
        _, xs = _as_tuple(inputs, "inputs", "jvp")
        xs = _prepare(xs, create_graph)
        if v is None:
            if len(xs) != 1 or xs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided "
                    "function is a single Tensor with a single element."
                )
            vs: tuple[Tensor, ...] = (xs[0].new_ones(xs[0].shape),)
        else:
            _, vs = _as_tuple(v, "v", "jvp")
            _check_v(vs, xs, "jvp")
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jvp")
        us = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, us, True, strict, "jvp")
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi.requires_grad]
        if pairs:
            found = _grad(
                [gi for gi, _ in pairs],
                us,
                [vi for _, vi in pairs],
                create_graph=create_graph,
                allow_unused=True,
            )
        else:
            found = (None,) * len(us)
        res = tuple(f if f is not None else o.new_zeros(o.shape) for f, o in zip(found, outs))
    return _finish(_back(out_tuple, outs), create_graph), _finish(
        _back(out_tuple, res), create_graph
    )


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`: for one input and one output a tensor of shape
    ``output.shape + input.shape``; nested tuples (output-major) for tuples."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jacobian")

        blocks = []
        for o in outs:
            flat = o.reshape(-1)
            rows: list[list[Tensor]] = [[] for _ in xs]
            for j in range(flat.numel()):
                g = _grads((flat[j],), xs, (flat.new_ones(()),), create_graph, strict, "jacobian")
                for i, gi in enumerate(g):
                    rows[i].append(gi)
            per_input = []
            for i, x in enumerate(xs):
                if rows[i]:
                    jac = stack(rows[i]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    jac = x.new_zeros(tuple(o.shape) + tuple(x.shape))
                per_input.append(_finish(jac, create_graph))
            blocks.append(_back(in_tuple, per_input))
    return _back(out_tuple, blocks)


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar `func` at `inputs` (the Jacobian of its gradient)."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*ys: Tensor) -> Any:
        out = func(*ys)
        _, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(
                "The function given to hessian should return a single Tensor with a single element"
            )
        g = _grads((outs[0].reshape(()),), ys, (outs[0].new_ones(()),), True, strict, "hessian")
        return _back(in_tuple, g)

    return jacobian(gradient, _back(in_tuple, xs), create_graph, strict, vectorize)


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar `func`."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar `func` (H is symmetric: the same as `vhp`)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(
    func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool, fn: str
) -> tuple[Any, Any]:
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", fn)
        xs = _prepare(xs, create_graph)
        if v is None:
            if len(xs) != 1 or xs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided "
                    "function is a single Tensor with a single element."
                )
            vs: tuple[Tensor, ...] = (xs[0].new_ones(xs[0].shape),)
        else:
            _, vs = _as_tuple(v, "v", fn)
            _check_v(vs, xs, fn)
        _, outs = _as_tuple(func(*xs), "outputs of the user-provided function", fn)
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {fn} should contain a single element"
            )
        out = outs[0]
        jac = _grads((out,), xs, (out.new_ones(out.shape),), True, strict, fn)
        res = _grads(jac, xs, vs, create_graph, strict, fn)
    return _finish(out, create_graph), _finish(_back(in_tuple, res), create_graph)
