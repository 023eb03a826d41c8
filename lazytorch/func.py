"""Functional transforms with torch.func's (and JAX's) conventions: ``grad``,
``value_and_grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and ``vmap``, with
``functional_call`` and ``stack_module_state`` to use them on modules.

They are thin layers over the graph transformation in `lazytorch.autograd.engine`: the
function runs once, recording its graph; its gradient is recorded as more lazy nodes and
nothing is computed until the result is read. The gradients they return carry gradient
themselves when their inputs did, so transforms nest (``grad(grad(f))``).

How they differ from torch's, with the same results:

* ``vmap`` runs the function once per index of the mapped dimension and stacks the results
  (a lazy graph, computed as one program when read), where torch batches each operation.
  The function sees unbatched tensors as under torch; it may also do what torch's vmap
  refuses (``.item()``, data-dependent control flow), and its side effects (prints) happen
  once per sample. ``randomness='error'`` raises on a random draw as torch does,
  ``'different'`` draws per sample, ``'same'`` replays the first sample's draws.
* ``jvp`` is the transpose of a vjp (the double-backward trick) and ``jacfwd`` builds the
  Jacobian row by row from vjps like ``jacrev`` (one reverse pass per output element):
  forward mode is reverse mode transposed here (`lazytorch.autograd.forward_ad` too); the
  values are the same up to rounding.

>>> import lazytorch
>>> from lazytorch.func import grad
>>> f = lambda x: (x ** 3).sum()
>>> grad(f)(lazytorch.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> grad(grad(lambda x: x ** 3))(lazytorch.tensor(2.0))
tensor(12.)
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lazytorch.autograd import engine
from lazytorch.autograd.grad_mode import enable_grad
from lazytorch.ops import random as _random
from lazytorch.ops.creation import eye, zeros, zeros_like
from lazytorch.ops.shape import stack
from lazytorch.tensor import Tensor

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stack_module_state",
    "value_and_grad",
    "vjp",
    "vmap",
]

# How many transforms are running (an inner one keeps its gradient differentiable).
_depth = 0


@contextlib.contextmanager
def _nested() -> Iterator[None]:
    """Run a transformed function: transforms it calls know an outer one needs their graph."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def _reaches_outer_leaf(trees: Sequence[Any], own: set[int]) -> bool:
    """Whether the autograd graph of the tensors in `trees` reaches a leaf that requires grad
    other than the nodes `own` (a transform's prepared inputs): the function closed over a
    tensor an enclosing autograd differentiates, so the transform's results must keep their
    graph (torch tracks such tensors at the outer level)."""
    stack = [x._node for t in trees for x in _flatten(t)[0] if isinstance(x, Tensor)]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen or n.ag is None or n.ag is engine.FREED:
            continue
        seen.add(id(n))
        h = engine.history(n)
        if h is None:
            if id(n) not in own:
                return True
            continue
        stack.extend(h[1])
    return False


def _top_level(tree: Any, outer: bool) -> Any:
    """A transform's primal outputs (or aux) as torch returns them: detached at the top level
    (no transform or autograd around it needs their graph), as they are otherwise."""
    if outer:
        return tree
    leaves, un = _flatten(tree)
    return un([x.detach() if isinstance(x, Tensor) else x for x in leaves])


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
            own = {id(x._node) for x in leaves}
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
            outer = outer or _reaches_outer_leaf([result], own)
            if result.requires_grad:
                gs = engine.grad(
                    result, leaves, create_graph=outer, retain_graph=outer, allow_unused=True
                )
            else:
                gs = tuple(None for _ in leaves)
        full = [g if g is not None else _zeros_like(x) for g, x in zip(gs, leaves)]
        grads = tuple(un(full[i : i + n]) for i, n, un in structs)
        g = grads if multi else grads[0]
        result = _top_level(result, outer)
        return ((result, _top_level(aux, outer)), g) if has_aux else (result, g)

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


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """torch.func's name and order: ``(gradient, f(*args))`` (``(gradient, (f(*args), aux))``
    with ``has_aux=True``).

    >>> import lazytorch
    >>> from lazytorch.func import grad_and_value
    >>> grad_and_value(lambda x: (x * x).sum())(lazytorch.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """
    vg = value_and_grad(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return g, value

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
    result, aux, vjp_fn, outer, _, _ = _vjp(func, primals, has_aux, "vjp")
    result = _top_level(result, outer)
    if has_aux:
        return result, vjp_fn, _top_level(aux, outer)
    return result, vjp_fn


def _vjp(
    func: Callable[..., Any], primals: Sequence[Any], has_aux: bool, name: str
) -> tuple[Any, Any, Callable[[Any], tuple[Any, ...]], bool, list[Tensor], list[Any]]:
    """`vjp` without detaching: (output, aux, vjp_fn, outer, leaves, structs): `outer` when
    an enclosing transform or autograd needs the graph of the results; `leaves` the primals'
    tensors the graph starts from, `structs` (start, count, unflatten) per primal."""
    flat_p: list[Tensor] = []
    structs = []
    outer = _depth > 0 or any(
        isinstance(x, Tensor) and x.requires_grad for p in primals for x in _flatten(p)[0]
    )
    with enable_grad(), _nested():
        prepared = []
        for p in primals:
            ls, un = _flatten(p)
            ls = [_prepare(x, name) for x in ls]
            structs.append((len(flat_p), len(ls), un))
            flat_p.extend(ls)
            prepared.append(un(ls))
        own = {id(x._node) for x in flat_p}
        result = func(*prepared)
    aux = None
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(
                f"{name}(f, *primals): output of function f should be a tuple: (output, aux) "
                "if has_aux is True"
            )
        result, aux = result
    outs, _ = _flatten(result)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{name}(f, ...): Expected f to return only tensors (or tuples, lists and "
                f"dicts of them), got unsupported type {type(o).__name__}"
            )
    outer = outer or _reaches_outer_leaf([result, aux], own)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cts, _ = _flatten(cotangents)
        if len(cts) != len(outs):
            raise RuntimeError(
                f"vjp: expected {len(outs)} cotangents (the structure of the output), got "
                f"{len(cts)}"
            )
        pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
        # differentiable when the vjp's graph is needed, or the cotangents' (a vjp_fn
        # called inside another transform, or with cotangents that require grad)
        keep = outer or _depth > 0 or any(isinstance(c, Tensor) and c.requires_grad for c in cts)
        with enable_grad():
            if pairs:
                gs = engine.grad(
                    [o for o, _ in pairs],
                    flat_p,
                    grad_outputs=[c for _, c in pairs],
                    retain_graph=True,
                    create_graph=keep,
                    allow_unused=True,
                )
            else:
                gs = tuple(None for _ in flat_p)
        full = [g if g is not None else _zeros_like(x) for g, x in zip(gs, flat_p)]
        return tuple(un(full[i : i + n]) for i, n, un in structs)

    return result, aux, vjp_fn, outer, flat_p, structs


# -- Jacobians -----------------------------------------------------------------------------------


def _argnums(argnums: Any, name: str) -> tuple[int, ...]:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(
                f"{name}: argnums must be int or Tuple[int, ...] but got {argnums!r}"
            )
    return nums


def _select(args: tuple[Any, ...], nums: tuple[int, ...], name: str) -> list[int]:
    where = []
    for a in nums:
        if not -len(args) <= a < len(args):
            raise RuntimeError(f"{name}: Got argnums={a} but only {len(args)} positional inputs")
        where.append(a % len(args))
    if len(set(where)) != len(where):
        raise RuntimeError(f"{name}: argnums must be unique, got {nums}")
    return where


def _jacobian_rows(o: Tensor, leaves: list[Tensor], create_graph: bool) -> list[Tensor]:
    """d o / d leaf for each leaf, of shape ``o.shape + leaf.shape``: one vjp per element."""
    shape = tuple(o.shape)
    n = o.numel()
    if n == 0 or not o.requires_grad:
        return [zeros(shape + tuple(p.shape), dtype=p.dtype, device=p.device) for p in leaves]
    basis = eye(n, dtype=o.dtype, device=o.device)
    rows: list[list[Tensor]] = [[] for _ in leaves]
    with enable_grad():
        for i in range(n):
            gs = engine.grad(
                o,
                leaves,
                grad_outputs=basis[i].reshape(shape),
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
            for k, (g, p) in enumerate(zip(gs, leaves)):
                rows[k].append(g if g is not None else _zeros_like(p))
    return [stack(r).reshape(shape + tuple(p.shape)) for r, p in zip(rows, leaves)]


def _jacobian(
    func: Callable[..., Any], argnums: Any, has_aux: bool, name: str, randomness: str | None
) -> Callable[..., Any]:
    nums = _argnums(argnums, name)
    multi = isinstance(argnums, tuple)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        where = _select(args, nums, name)

        def of_primals(*ps: Any) -> Any:
            full = list(args)
            for i, p in zip(where, ps):
                full[i] = p
            with _randomness(randomness, name):
                return func(*full, **kwargs)

        primals = [args[i] for i in where]
        result, aux, _, outer, leaves, structs = _vjp(of_primals, primals, has_aux, name)
        outs, out_un = _flatten(result)
        per_out = []
        for o in outs:
            jac = _jacobian_rows(o, leaves, outer)
            trees = tuple(un(jac[i : i + n]) for i, n, un in structs)
            per_out.append(trees if multi else trees[0])
        jacobian = out_un(per_out)
        return (jacobian, _top_level(aux, outer)) if has_aux else jacobian

    return wrapper


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of `func` with respect to ``args[argnums]``, by reverse-mode AD (one
    vjp per output element). For an output of shape ``O`` and an input of shape ``I`` it
    has shape ``O + I``; outputs and inputs may be tuples, lists or dicts of tensors (the
    result nests the inputs' structure inside the output's, a tuple of them for a tuple
    `argnums`). `chunk_size` is accepted (rows are computed one by one).

    >>> import lazytorch
    >>> from lazytorch.func import jacrev
    >>> jacrev(lambda x: x ** 2)(lazytorch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev", None)


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """The Jacobian of `func` with respect to ``args[argnums]``, as `jacrev` gives it.

    torch computes it column by column with forward-mode AD; lazytorch's forward mode is
    reverse mode transposed, so it builds it row by row from vjps, as `jacrev`: the same
    Jacobian up to rounding.
    `randomness` is vmap's: with ``'error'`` a random draw inside `func` raises, as in torch.

    >>> import lazytorch
    >>> from lazytorch.func import jacfwd
    >>> jacfwd(lambda x: x.sin().sum())(lazytorch.tensor([0.0, 0.0]))
    tensor([1., 1.])
    """
    _check_randomness(randomness)
    return _jacobian(func, argnums, has_aux, "jacfwd", randomness)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar `func` with respect to ``args[argnums]``: ``jacfwd(jacrev(f))``.

    >>> import lazytorch
    >>> from lazytorch.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(lazytorch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product.

    Forward mode is reverse mode transposed here: the product is the transpose of a vjp (the
    double-backward trick, as ``torch.autograd.functional.jvp``), the same values up to
    rounding. Outputs that do not depend on the primals get zero tangents. `strict` is
    accepted for torch's signature (torch does not implement it either).

    >>> import lazytorch
    >>> from lazytorch.func import jvp
    >>> jvp(lambda x: x ** 2, (lazytorch.tensor([1.0, 2.0]),), (lazytorch.tensor([1.0, 1.0]),))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict=True is not implemented")
    for what, x in (("primals", primals), ("tangents", tangents)):
        if not isinstance(x, tuple):
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected {what} to be a tuple. E.g. it should be "
                "valid to call f(*primals)."
            )
    flat_p, _ = _flatten(primals)
    flat_t, _ = _flatten(tangents)
    if len(flat_p) != len(flat_t):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure, got {len(flat_p)} primal tensors and {len(flat_t)} tangents"
        )
    for p, t in zip(flat_p, flat_t):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to be tuples of "
                "Tensors (or of tuples, lists and dicts of them)"
            )
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have same shape. "
                f"Got {p.shape} and {t.shape}"
            )
    result, aux, _, outer, leaves, _ = _vjp(func, primals, has_aux, "jvp")
    outer = outer or any(t.requires_grad for t in flat_t)
    outs, out_un = _flatten(result)
    live = [i for i, o in enumerate(outs) if o.requires_grad]
    tangents_out: list[Tensor] = [_zeros_like(o) for o in outs]
    if live:
        with enable_grad():
            # u -> J^T u is linear in u; its vjp with the tangents is J @ tangents
            us = [zeros_like(outs[i]).requires_grad_() for i in live]
            gs = engine.grad(
                [outs[i] for i in live],
                leaves,
                grad_outputs=us,
                retain_graph=True,
                create_graph=True,
                allow_unused=True,
            )
            pairs = [(g, t) for g, t in zip(gs, flat_t) if g is not None and g.requires_grad]
            if pairs:
                ts = engine.grad(
                    [g for g, _ in pairs],
                    us,
                    grad_outputs=[t for _, t in pairs],
                    retain_graph=True,
                    create_graph=outer,
                    allow_unused=True,
                )
                for i, t in zip(live, ts):
                    if t is not None:
                        tangents_out[i] = t
    primal_out = _top_level(result, outer)
    tangent_out = out_un(tangents_out)
    if has_aux:
        return primal_out, tangent_out, _top_level(aux, outer)
    return primal_out, tangent_out


# -- vmap ----------------------------------------------------------------------------------------

_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness: Any) -> None:
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )


@contextlib.contextmanager
def _randomness(randomness: str | None, name: str) -> Iterator[None]:
    """While the body runs, a random draw raises (``'error'``); otherwise nothing changes."""
    if randomness != "error":
        yield
        return

    def refuse(generator: Any, op: str) -> None:
        raise RuntimeError(
            f"{name}: called random operation ({op}) while in randomness error mode. Please "
            "either use the 'same' or 'different' randomness flags on vmap or perform the "
            "randomness operation out of vmap"
        )

    _random.draw_hooks.append(refuse)
    try:
        yield
    finally:
        _random.draw_hooks.remove(refuse)


def _dims_per_leaf(dims: Any, tree: Any, what: str) -> list[Any]:
    """`dims` (an int, None, or a prefix of `tree`'s structure) for each leaf of `tree`."""
    if dims is None or (isinstance(dims, int) and not isinstance(dims, bool)):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(dims) == len(tree):
            return [
                d for sub_d, sub_t in zip(dims, tree) for d in _dims_per_leaf(sub_d, sub_t, what)
            ]
    elif isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        return [d for k in tree for d in _dims_per_leaf(dims[k], tree[k], what)]
    raise ValueError(
        f"vmap: {what}={dims!r} is not compatible with the structure of the "
        f"{'inputs' if what == 'in_dims' else 'outputs'}: it must be an int, None, or a "
        "(possibly nested) tuple, list or dict matching them"
    )


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`func` mapped over a dimension of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    `in_dims` says which dimension of each positional argument is mapped (an int, ``None``
    for an argument passed whole to every call, or a tuple/list/dict nesting those like the
    arguments); keyword arguments are passed whole. `out_dims` says where the mapped
    dimension goes in each output. lazytorch runs `func` once per index and stacks the
    results (one lazy graph, computed when read): the values torch's batched operations
    give, up to rounding. See the module docstring for what this permits that torch does
    not. `chunk_size` is accepted (every index runs on its own anyway).

    >>> import lazytorch
    >>> from lazytorch.func import vmap
    >>> vmap(lambda row: row.sum())(lazytorch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([3., 7.])
    >>> vmap(lambda a, b: a * b, in_dims=(0, None))(lazytorch.ones(2, 2), lazytorch.tensor(3.0))
    tensor([[3., 3.],
            [3., 3.]])
    """
    _check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not (in_dims is None or isinstance(in_dims, (int, tuple))) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap(in_dims={in_dims!r}): expected `in_dims` to be int or a (potentially "
            f"nested) tuple matching the structure of inputs, got: {type(in_dims).__name__}."
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap(in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                f"structure of `inputs`. in_dims has structure of length {len(in_dims)} but "
                f"inputs has {len(args)} positional arguments."
            )
        leaves, un = _flatten(list(args))
        dims = _dims_per_leaf(
            list(in_dims) if isinstance(in_dims, tuple) else in_dims, list(args), "in_dims"
        )
        size = None
        mapped = []
        for x, d in zip(leaves, dims):
            if d is None:
                mapped.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"vmap(in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for an input but "
                    f"the input is of type {type(x).__name__}. We cannot vmap over non-Tensor "
                    "arguments, please use None as the respective in_dim"
                )
            if not -x.dim() <= d < x.dim():
                raise ValueError(
                    f"vmap(in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for some input, "
                    f"but that input is a Tensor of dimensionality {x.dim()} so expected "
                    f"in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}."
                )
            d %= x.dim()
            n = x.shape[d]
            if size is not None and n != size:
                raise ValueError(
                    f"vmap: Expected all tensors to have the same size in the mapped dimension, "
                    f"got sizes {size} and {n} for the mapped dimension"
                )
            size = n
            mapped.append(d)
        if size is None:
            raise ValueError(
                f"vmap(in_dims={in_dims!r}, ...)(<inputs>): at least one input must be mapped "
                "over (got no Tensor with a non-None in_dim)"
            )
        if size == 0:
            raise NotImplementedError(
                "vmap: lazytorch maps by calling the function once per index, so a mapped "
                "dimension of size 0 gives no call to learn the output's shape from; handle "
                "the empty batch outside vmap"
            )
        results = []
        with _vmap_randomness(randomness):
            for i in range(size):
                if randomness == "same":
                    _begin_sample(i)
                sample = [x if d is None else x.select(d, i) for x, d in zip(leaves, mapped)]
                results.append(func(*un(sample), **kwargs))
        return _stack_outputs(results, out_dims)

    return wrapper


_same_starts: list[dict[int, tuple[Any, int]]] = []


def _begin_sample(i: int) -> None:
    """Before sample `i` of a ``randomness='same'`` vmap: rewind the generators it drew from."""
    if i and _same_starts:
        for g, offset in _same_starts[-1].values():
            g._offset = offset


@contextlib.contextmanager
def _vmap_randomness(randomness: str) -> Iterator[None]:
    if randomness == "error":
        with _randomness("error", "vmap"):
            yield
        return
    if randomness == "different":
        yield
        return
    starts: dict[int, tuple[Any, int]] = {}

    def remember(generator: Any, op: str) -> None:
        starts.setdefault(id(generator), (generator, generator._offset))

    _random.draw_hooks.append(remember)
    _same_starts.append(starts)
    try:
        yield
    finally:
        _same_starts.pop()
        _random.draw_hooks.remove(remember)


def _stack_outputs(results: list[Any], out_dims: Any) -> Any:
    first, un = _flatten(results[0])
    flat = [_flatten(r)[0] for r in results]
    for r in flat:
        if len(r) != len(first):
            raise RuntimeError(
                "vmap: the function returned outputs of different structures for different "
                "indices of the mapped dimension"
            )
    dims = _dims_per_leaf(
        list(out_dims) if isinstance(out_dims, tuple) else out_dims, results[0], "out_dims"
    )
    stacked = []
    for k, d in enumerate(dims):
        column = [r[k] for r in flat]
        for o in column:
            if not isinstance(o, Tensor):
                raise ValueError(
                    "vmap: `f` must only return Tensors (or tuples, lists and dicts of them), "
                    f"got type {type(o).__name__} as a return"
                )
        if d is None:
            if any(o is not column[0] for o in column):
                raise NotImplementedError(
                    "vmap: out_dims=None for an output that is computed anew for each index: "
                    "lazytorch maps by calling the function once per index and cannot tell "
                    "whether it is batched; use an int out_dim"
                )
            stacked.append(column[0])
            continue
        nd = column[0].dim() + 1
        if not -nd <= d < nd:
            raise ValueError(
                f"vmap: Got out_dim={d} for an output of dimensionality {nd - 1}, expected "
                f"out_dim to satisfy -{nd} <= out_dim < {nd}."
            )
        stacked.append(stack(column, d))
    return un(stacked)


# -- modules as functions ------------------------------------------------------------------------

_MISSING = object()


def _swap_tensor(module: Any, name: str, value: Any) -> Any:
    """Put `value` (a tensor, or _MISSING to remove it) at dotted `name`; return the old one."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    if attr in owner._parameters:
        old = owner._parameters[attr]
        if value is _MISSING:
            del owner._parameters[attr]
        else:
            owner._parameters[attr] = value
        return old
    if attr in owner._buffers:
        old = owner._buffers[attr]
        if value is _MISSING:
            del owner._buffers[attr]
        else:
            owner._buffers[attr] = value
        return old
    old = getattr(owner, attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(owner, attr, value)
    elif hasattr(owner, attr):
        delattr(owner, attr)
    return old


def _untie(module: Any, given: dict[str, Any]) -> dict[str, Any]:
    """torch's tie_weights: a value given for one name of tied tensors goes to all of them."""
    named: dict[str, Any] = {}
    named.update(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor: dict[int, set[str]] = {}
    for n, t in named.items():
        by_tensor.setdefault(id(t), set()).add(n)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    out = dict(given)
    for n in given:
        if n not in tied:
            continue
        names = tied[n]
        values = {id(given[m]) for m in names if m in given}
        if len(values) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are "
                "tied. Consider using tie_weights=False"
            )
        for m in names:
            out[m] = given[n]
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
    """Call `module` with its parameters and buffers replaced by the given tensors (by
    dotted name, as in ``named_parameters()``), restoring them afterwards.

    `parameter_and_buffer_dicts` is a dict or a sequence of dicts with distinct keys; names
    not given keep the module's tensors (an error with ``strict=True``, as are unknown
    names). With `tie_weights`, a value given for one of tied tensors replaces all of them.
    `args` is one argument or a tuple of them.

    >>> import lazytorch
    >>> from lazytorch.func import functional_call
    >>> m = lazytorch.nn.Linear(2, 1)
    >>> functional_call(m, {"weight": lazytorch.ones(1, 2), "bias": lazytorch.zeros(1)},
    ...                 (lazytorch.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence) and not isinstance(
        parameter_and_buffer_dicts, str
    ):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if not hasattr(module, "_parameters") or not callable(module):
        raise TypeError(f"functional_call: expected an nn.Module, got {type(module).__name__}")
    values = _untie(module, given) if tie_weights else dict(given)
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        known |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        msgs = []
        unexpected = [k for k in values if k not in known]
        missing = [k for k in sorted(known) if k not in values]
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    for k, v in values.items():
        if v is not None and not isinstance(v, Tensor):
            raise TypeError(f"functional_call: the value for {k!r} is not a Tensor: {v!r}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals: dict[str, Any] = {}
    try:
        for k, v in values.items():
            originals[k] = _swap_tensor(module, k, v)
        return module(*args, **kwargs)
    finally:
        current = {k: _swap_tensor(module, k, originals[k]) for k in reversed(list(originals))}
        # a module that replaced its own tensors in place (self.x = self.x + 1) leaves the
        # new ones in the caller's dict, as torch does
        for k in given:
            if k in current and current[k] is not _MISSING:
                given[k] = current[k]


def stack_module_state(models: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters and buffers of same-class `models` stacked along a new first dimension,
    by name: ``(params, buffers)`` for `functional_call` under `vmap` (model ensembling).
    Stacked parameters are new leaves that require grad when the models' do.

    >>> import lazytorch
    >>> from lazytorch.func import stack_module_state
    >>> params, buffers = stack_module_state([lazytorch.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].requires_grad
    (lazytorch.Size([4, 2, 3]), True)
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors: list[Tensor], name: str) -> Tensor:
        grads = {t.requires_grad for t in tensors}
        if len(grads) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        result = stack(tensors)
        if grads == {True}:
            result = result.detach().requires_grad_()
        return result

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
