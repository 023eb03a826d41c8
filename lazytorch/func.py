"""Functional transforms with torch.func's (and JAX's) conventions: ``grad``,
``value_and_grad`` and ``vjp``; and ``functional_call`` (a module run with other tensors
in place of its parameters and buffers).

They are thin layers over the graph transformation in `lazytorch.autograd.engine`: the
function runs once, recording its graph; its gradient is recorded as more lazy nodes and
nothing is computed until the result is read. The gradients they return carry gradient
themselves when their inputs did, so transforms nest (``grad(grad(f))``).

>>> import lazytorch
>>> from lazytorch.func import grad
>>> f = lambda x: (x ** 3).sum()
>>> grad(f)(lazytorch.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> grad(grad(lambda x: x ** 3))(lazytorch.tensor(2.0))
tensor(12.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lazytorch.autograd import engine
from lazytorch.autograd.grad_mode import enable_grad
from lazytorch.ops.creation import zeros_like
from lazytorch.tensor import Tensor

__all__ = ["functional_call", "grad", "value_and_grad", "vjp"]

# How many transforms are running (an inner one keeps its gradient differentiable).
_depth = 0


# -- pytrees: tuples, lists and dicts of tensors ------------------------------------------------


def _flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def unflatten(xs: list[Any]) -> Any:
            out, i = [], 0
            for ls, un in parts:
                out.append(un(xs[i : i + len(ls)]))
                i += len(ls)
            return type(tree)(out) if isinstance(tree, list) else tuple(out)

        return leaves, unflatten
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        leaves = [leaf for p in parts for leaf in p[0]]

        def unflatten_d(xs: list[Any]) -> Any:
            out, i = {}, 0
            for k, (ls, un) in zip(keys, parts):
                out[k] = un(xs[i : i + len(ls)])
                i += len(ls)
            return out

        return leaves, unflatten_d
    return [tree], lambda xs: xs[0]


def _prepare(x: Any, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: expected a Tensor to differentiate, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{what}: only floating-point tensors can be differentiated, got {x.dtype}")
    if x.requires_grad:
        return x  # already tracked (an outer transform, or a parameter): keep the link
    return x.detach().requires_grad_()


def _zeros_like(t: Tensor) -> Tensor:
    return zeros_like(t)  # type: ignore[no-any-return]


def value_and_grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``f(*args)`` and its gradient with respect to ``args[argnums]``.

    `func` must return a one-element floating-point tensor (or ``(output, aux)`` with
    ``has_aux=True``). The gradient has the structure of the differentiated argument(s):
    a tensor, or a tuple/list/dict of tensors; a tuple of those for a tuple `argnums`.

    >>> import lazytorch
    >>> from lazytorch.func import value_and_grad
    >>> v, g = value_and_grad(lambda w, x: (w * x).sum(), argnums=1)(
    ...     lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([3.0, 4.0]))
    >>> v.item(), g
    (11.0, tensor([1., 2.]))
    """
    multi = isinstance(argnums, tuple)
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _depth
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(
                    f"argnums {a} is out of range for a function called with {len(args)} "
                    "positional arguments"
                )
        args_l = list(args)
        structs = []
        leaves: list[Tensor] = []
        outer = _depth > 0  # inside another transform: its gradient must flow through ours
        _depth += 1
        try:
            return _run(args_l, kwargs, structs, leaves, outer)
        finally:
            _depth -= 1

    def _run(
        args_l: list[Any], kwargs: Any, structs: Any, leaves: list[Tensor], outer: bool
    ) -> Any:
        with enable_grad():
            for a in nums:
                ls, un = _flatten(args_l[a])
                outer = outer or any(isinstance(x, Tensor) and x.requires_grad for x in ls)
                ls = [_prepare(x, "value_and_grad") for x in ls]
                args_l[a] = un(ls)
                structs.append((len(leaves), len(ls), un))
                leaves.extend(ls)
            result = func(*args_l, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        "value_and_grad(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                result, aux = result
            if not isinstance(result, Tensor) or result.numel() != 1:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got {type(result).__name__}"
                    + (f" of shape {list(result.shape)}" if isinstance(result, Tensor) else "")
                )
            if result.requires_grad:
                gs = engine.grad(
                    result, leaves, create_graph=outer, retain_graph=outer, allow_unused=True
                )
            else:
                gs = tuple(None for _ in leaves)
        full = [g if g is not None else _zeros_like(x) for g, x in zip(gs, leaves)]
        grads = tuple(un(full[i : i + n]) for i, n, un in structs)
        g = grads if multi else grads[0]
        return ((result, aux), g) if has_aux else (result, g)

    return wrapper


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to ``args[argnums]``.

    >>> import lazytorch
    >>> from lazytorch.func import grad
    >>> grad(lambda x: (x.sin() * 2).sum())(lazytorch.tensor([0.0]))
    tensor([2.])
    """
    vg = value_and_grad(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns the cotangents of the
    primals (a tuple, one per primal).

    >>> import lazytorch
    >>> from lazytorch.func import vjp
    >>> out, fn = vjp(lambda x: x * 3, lazytorch.tensor([1.0, 2.0]))
    >>> fn(lazytorch.ones(2))
    (tensor([3., 3.]),)
    """
    flat_p: list[Tensor] = []
    structs = []
    outer = _depth > 0 or any(
        isinstance(x, Tensor) and x.requires_grad for p in primals for x in _flatten(p)[0]
    )
    with enable_grad():
        prepared = []
        for p in primals:
            ls, un = _flatten(p)
            ls = [_prepare(x, "vjp") for x in ls]
            structs.append((len(flat_p), len(ls), un))
            flat_p.extend(ls)
            prepared.append(un(ls))
        result = func(*prepared)
    aux = None
    if has_aux:
        result, aux = result
    outs, _ = _flatten(result)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cts, _ = _flatten(cotangents)
        if len(cts) != len(outs):
            raise RuntimeError(
                f"vjp: expected {len(outs)} cotangents (the structure of the output), got "
                f"{len(cts)}"
            )
        pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
        with enable_grad():
            if pairs:
                gs = engine.grad(
                    [o for o, _ in pairs],
                    flat_p,
                    grad_outputs=[c for _, c in pairs],
                    retain_graph=True,
                    create_graph=outer,
                    allow_unused=True,
                )
            else:
                gs = tuple(None for _ in flat_p)
        full = [g if g is not None else _zeros_like(x) for g, x in zip(gs, flat_p)]
        return tuple(un(full[i : i + n]) for i, n, un in structs)

    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


# -- functional_call ----------------------------------------------------------------------------
_ABSENT = object()


def _all_tensor_names(module: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every (qualified name, tensor) of the module's parameters and buffers, shared
    tensors under each of their names."""
    out = [(prefix + n, t) for n, t in module._parameters.items() if t is not None]
    out += [(prefix + n, t) for n, t in module._buffers.items() if t is not None]
    for name, child in module._modules.items():
        if child is not None:
            out += _all_tensor_names(child, f"{prefix}{name}.")
    return out


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call `module` with the tensors of `parameter_and_buffer_dicts` (a dict, or a sequence
    of dicts, of qualified names such as ``"0.weight"``) in place of its parameters and
    buffers, restored afterwards. ``tie_weights``: a tensor the module shares under several
    names is replaced under all of them; ``strict``: the names must be exactly the
    module's.

    >>> import lazytorch
    >>> m = lazytorch.nn.Linear(2, 1)
    >>> w = {"weight": lazytorch.ones(1, 2), "bias": lazytorch.zeros(1)}
    >>> functional_call(m, w, (lazytorch.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = dict(parameter_and_buffer_dicts)
    else:
        given = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                if k in given:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior of functional call is "
                        "ambiguous"
                    )
            given.update(d)
    existing = _all_tensor_names(module)
    if strict:
        names = {n for n, _ in existing}
        missing = sorted(names - set(given))
        unexpected = sorted(set(given) - names)
        if missing or unexpected:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}: missing keys "
                f"{missing}, unexpected keys {unexpected}"
            )
    if tie_weights:
        by_tensor: dict[int, list[str]] = {}
        for n, t in existing:
            by_tensor.setdefault(id(t), []).append(n)
        for n, t in existing:
            if n in given:
                for alias in by_tensor[id(t)]:
                    given.setdefault(alias, given[n])
    saved: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for name, value in given.items():
            prefix, _, leaf = name.rpartition(".")
            owner = module.get_submodule(prefix) if prefix else module
            if leaf in owner._parameters:
                store = owner._parameters
            elif leaf in owner._buffers:
                store = owner._buffers
            else:
                store = owner.__dict__
            saved.append((store, leaf, store.get(leaf, _ABSENT)))
            store[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old in reversed(saved):
            if old is _ABSENT:
                del store[leaf]
            else:
                store[leaf] = old
