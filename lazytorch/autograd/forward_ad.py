"""Forward-mode AD's dual tensors (``torch.autograd.forward_ad``), by the transpose trick.

lazytorch has no forward-mode rules. Inside a ``dual_level()``, ``make_dual(x, t)`` returns
a tensor with the value of `x` whose uses are recorded for reverse mode, and
``unpack_dual(y).tangent`` computes ``J @ t`` when it is asked for: ``u -> J^T u`` (a vjp)
is linear in `u`, so the vjp of that vjp with cotangent `t` is ``J @ t`` (the
double-backward trick of ``lazytorch.func.jvp``; the same values up to rounding). Tangents of
several dual inputs add up, as forward mode's do.

The contract, and where it differs from torch:

* ``make_dual`` needs an active level, a tangent of the primal's shape, and keeps the
  tangent object itself (``unpack_dual(dual).tangent is tangent``) unless its layout differs
  from the primal's (then a contiguous copy, as torch makes).
* ``unpack_dual(y)`` of a tensor computed from duals returns ``(primal, tangent)``; of a
  tensor that depends on no dual, or after the level exited, a ``None`` tangent.
* A custom ``autograd.Function`` with a ``jvp`` staticmethod and no ``backward``: its
  outputs' tangents come from ``jvp`` (``ctx.save_for_forward`` saves for it); a backward
  pass through it raises, as torch's does.
* **Differs:** a dual tensor and what is computed from it report ``requires_grad=True``
  (their uses are recorded for the trick), and ops run under ``no_grad`` record nothing,
  so their results have no tangent (torch's have one). Each ``unpack_dual`` of a computed
  tensor runs two backward passes over its graph: unpack once and keep the tangent.
  Only one level at a time (torch's rule too); the level holds its dual tensors until it
  exits.

>>> import lazytorch
>>> import lazytorch.autograd.forward_ad as fwAD
>>> x, t = lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([1.0, 0.5])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, t) ** 2
...     jvp = fwAD.unpack_dual(y).tangent
>>> jvp
tensor([2., 2.])
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from lazytorch.autograd import engine
from lazytorch.autograd import function as _function
from lazytorch.autograd.function import Function
from lazytorch.autograd.grad_mode import enable_grad
from lazytorch.tensor import Tensor

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

_level: int | None = None
# id(dual tensor) -> (it, its tangent), for the active level. Held strongly: a tensor
# computed from a dual needs the dual (the input of its vjp) after the caller dropped it.
_duals: dict[int, tuple[Tensor, Tensor]] = {}


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal value and its tangent (None if it has none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start the forward-AD level (only one may be active, as in torch); returns its index."""
    global _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level = 0
    return _level


def exit_dual_level(*, level: int | None = None) -> None:
    """End the active level: every dual tensor of it loses its tangent."""
    global _level
    if _level is None or (level is not None and level != _level):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _level = None
    _duals.clear()


@contextmanager
def dual_level() -> Iterator[int]:
    """The scope of one forward-AD level: ``with dual_level(): ...``."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def active() -> bool:
    """Whether a level is active and holds a dual tensor (autograd.Function's jvp check)."""
    return _level is not None and bool(_duals)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with `tensor`'s value whose tangent is `tangent`, for the active level."""
    if _level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: expected a Tensor primal and a Tensor tangent")
    if not tensor.dtype.is_floating_point:
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tangent.stride() != tensor.stride():  # torch copies a tangent of another layout
        tangent = tangent.contiguous() if tensor.is_contiguous() else tangent.clone()
    with enable_grad():
        # a tensor that requires grad keeps its link (reverse mode through it still works);
        # another gets a private leaf, so its uses are recorded
        base = tensor if tensor.requires_grad else tensor.detach().requires_grad_()
        dual = base.view_as(base)
    _register(dual, tangent)
    return dual


def _zeros(t: Tensor) -> Tensor:
    return t.new_zeros(t.shape)  # type: ignore[attr-defined,no-any-return]


def _register(dual: Tensor, tangent: Tensor) -> None:
    _duals[id(dual)] = (dual, tangent)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of `tensor`: the tangent a dual was made with, the product of
    the Jacobian with the duals' tangents for a tensor computed from them, else None."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    if _level is None:
        return UnpackedDualTensor(tensor, None)
    entry = _duals.get(id(tensor))
    if entry is not None and entry[0] is tensor:
        return UnpackedDualTensor(tensor.view_as(tensor), entry[1])
    return UnpackedDualTensor(tensor, _tangent_of(tensor))


def _tangent_of(y: Tensor) -> Tensor | None:
    """``J @ t`` summed over the live duals `y` depends on (None if it depends on none)."""
    if not y.requires_grad or not y.dtype.is_floating_point:
        return None
    duals = list(_duals.values())
    if not duals:
        return None
    with enable_grad():
        u = _zeros(y).requires_grad_()
        gs = engine.grad(
            [y],
            [d for d, _ in duals],
            grad_outputs=[u],
            retain_graph=True,
            create_graph=True,
            allow_unused=True,
        )
        used = [(g, t) for g, (_, t) in zip(gs, duals) if g is not None]
        if not used:
            return None
        pairs = [(g, t.to(g.dtype)) for g, t in used if g.requires_grad]
        if not pairs:
            return _zeros(y)
        (tangent,) = engine.grad(
            [g for g, _ in pairs],
            [u],
            grad_outputs=[t for _, t in pairs],
            retain_graph=True,
            allow_unused=True,
        )
    return _zeros(y) if tangent is None else tangent


def _jvp_outputs(cls: type, ctx: Any, args: tuple[Any, ...], out: Any) -> Any:
    """A custom Function's outputs as duals whose tangents its ``jvp`` computes, when a level
    is active, the class defines ``jvp`` and no ``backward`` (else the trick differentiates
    its backward), and an input has a tangent; None otherwise (`Function.apply`'s hook)."""
    if not active() or cls.jvp is None:  # type: ignore[attr-defined]
        return None
    if cls.backward is not Function.backward or cls.vjp is not Function.vjp:  # type: ignore[attr-defined]
        return None
    tangents: list[Any] = []
    for a in args:
        t = unpack_dual(a).tangent if isinstance(a, Tensor) else None
        tangents.append(t)
    if all(t is None for t in tangents):
        return None
    tangents = [
        _zeros(a) if t is None and isinstance(a, Tensor) else t for a, t in zip(args, tangents)
    ]
    got = cls.jvp(ctx, *tangents)  # type: ignore[attr-defined]
    outs = out if isinstance(out, tuple) else (out,)
    gots = got if isinstance(got, tuple) else (got,)
    if len(gots) != len(outs):
        raise RuntimeError(
            f"function {cls.__name__}.jvp returned an incorrect number of forward gradients "
            f"(expected {len(outs)}, got {len(gots)})"
        )
    result = []
    for o, t in zip(outs, gots):
        if isinstance(o, Tensor) and o.dtype.is_floating_point and isinstance(t, Tensor):
            with enable_grad():
                o = _NoBackward.apply(o.detach().requires_grad_(), cls.__name__)
            _register(o, t)
        result.append(o)
    return tuple(result) if isinstance(out, tuple) else result[0]


class _NoBackward(Function):
    """The output of a jvp-only custom Function: reverse mode through it raises, as torch's."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, name: str) -> Tensor:
        ctx.name = name
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise NotImplementedError(
            f"{ctx.name}: you must implement either the backward or vjp method for your "
            "custom autograd.Function to use it with backward mode AD (it defines only jvp)."
        )


_function.forward_ad_hook = _jvp_outputs
