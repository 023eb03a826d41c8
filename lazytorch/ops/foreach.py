"""torch's ``_foreach_*`` functions: one op over a list of tensors.

torch's multi-tensor kernels (what its ``foreach`` optimizers call, and libraries such as
lion-pytorch call directly) launch one kernel per op for a whole list. Here every element
is the ordinary op, recorded lazily: the program built at the next cut fuses them the same
way whether they came from a loop or from a foreach call, so the list form is only torch's
API. The second operand of a binary op is a number, a list of numbers or tensors (one per
tensor), or one tensor; the in-place forms (``_foreach_add_``) update each tensor and
return the list, as torch's.

>>> import lazytorch
>>> xs = [lazytorch.ones(2), lazytorch.zeros(3)]
>>> lazytorch._foreach_add(xs, [1.0, 2.0])
[tensor([2., 2.]), tensor([2., 2., 2.])]
>>> _ = lazytorch._foreach_mul_(xs, 3.0)
>>> xs[0]
tensor([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ops._core import tensor_arg
from lazytorch.tensor import Tensor

__all__: list[str] = []

_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
    "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc"
).split()
_BINARY = "add sub mul div maximum minimum pow clamp_max clamp_min".split()


def _tensors(tensors: Any, op: str) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise op_error(
            TypeError,
            op,
            f"{op}(): argument 'self' must be a list of tensors, not {type(tensors).__name__}",
        )
    return [tensor_arg(t, op) for t in tensors]


def _per_tensor(other: Any, n: int, op: str) -> list[Any]:
    """The second operand for each of `n` tensors: a list pairs up, anything else repeats."""
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            raise op_error(
                RuntimeError,
                op,
                f"Tensor lists must have the same number of tensors, got {n} and {len(other)}",
            )
        return list(other)
    return [other] * n


def _make_unary(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    op = f"_foreach_{name}"

    def fn(self: Sequence[Tensor]) -> list[Tensor]:
        return [getattr(t, name)() for t in _tensors(self, op)]

    def fn_(self: Sequence[Tensor]) -> list[Tensor]:
        ts = _tensors(self, op + "_")
        for t in ts:
            getattr(t, name + "_")()
        return ts

    fn.__name__, fn_.__name__ = op, op + "_"
    fn.__doc__ = f"``[x.{name}() for x in self]``."
    fn_.__doc__ = f"``x.{name}_()`` for each x of `self`; returns `self`."
    return fn, fn_


def _apply(t: Tensor, name: str, o: Any, alpha: Any) -> Tensor:
    if name in ("maximum", "minimum") and not isinstance(o, Tensor):  # torch: a number too
        name = "clamp_min" if name == "maximum" else "clamp_max"
    if alpha is not None:
        return getattr(t, name)(o, alpha=alpha)  # type: ignore[no-any-return]
    return getattr(t, name)(o)  # type: ignore[no-any-return]


def _binary(name: str, self: Any, other: Any, alpha: Any) -> list[Tensor]:
    op = f"_foreach_{name}"
    if name == "pow" and not isinstance(self, (list, tuple)):
        # _foreach_pow(base, exponents): a number raised to each tensor
        return [t.__rpow__(self) for t in _tensors(other, op)]
    ts = _tensors(self, op)
    return [_apply(t, name, o, alpha) for t, o in zip(ts, _per_tensor(other, len(ts), op))]


def _binary_(name: str, self: Any, other: Any, alpha: Any) -> list[Tensor]:
    op = f"_foreach_{name}_"
    ts = _tensors(self, op)
    for t, o in zip(ts, _per_tensor(other, len(ts), op)):
        method = getattr(t, name + "_", None)
        if method is None or (name in ("maximum", "minimum")):
            t.copy_(_apply(t, name, o, alpha))
        elif alpha is not None:
            method(o, alpha=alpha)
        else:
            method(o)
    return ts


def _make_binary(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    # torch's signatures: add and sub take alpha, pow names its operand `exponent`
    if name in ("add", "sub"):

        def fn(self: Any, other: Any, *, alpha: Any = 1) -> list[Tensor]:
            return _binary(name, self, other, alpha)

        def fn_(self: Any, other: Any, *, alpha: Any = 1) -> list[Tensor]:
            return _binary_(name, self, other, alpha)

    elif name == "pow":

        def fn(self: Any, exponent: Any) -> list[Tensor]:  # type: ignore[misc]
            return _binary(name, self, exponent, None)

        def fn_(self: Any, exponent: Any) -> list[Tensor]:  # type: ignore[misc]
            return _binary_(name, self, exponent, None)

    else:

        def fn(self: Any, other: Any) -> list[Tensor]:  # type: ignore[misc]
            return _binary(name, self, other, None)

        def fn_(self: Any, other: Any) -> list[Tensor]:  # type: ignore[misc]
            return _binary_(name, self, other, None)

    op = f"_foreach_{name}"
    fn.__name__, fn_.__name__ = op, op + "_"
    fn.__doc__ = f"``x.{name}(other)`` for each x, `other` a number, one per x, or a tensor."
    fn_.__doc__ = f"In-place ``_foreach_{name}``; returns `self`."
    return fn, fn_


def _make_pointwise(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """addcmul / addcdiv: ``x + value * t1 * t2`` (or ``/ t2``), value one number, or one
    per tensor (a list or a 1-d tensor)."""
    op = f"_foreach_{name}"

    def values(value: Any, n: int) -> list[Any]:
        if isinstance(value, Tensor) and value.ndim == 1:
            value = value.tolist()
        return _per_tensor(value, n, op)

    def fn(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> list[Tensor]:
        ts = _tensors(self, op)
        a, b = _per_tensor(tensor1, len(ts), op), _per_tensor(tensor2, len(ts), op)
        return [
            getattr(t, name)(x, y, value=v) for t, x, y, v in zip(ts, a, b, values(value, len(ts)))
        ]

    def fn_(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> list[Tensor]:
        ts = _tensors(self, op + "_")
        a, b = _per_tensor(tensor1, len(ts), op), _per_tensor(tensor2, len(ts), op)
        for t, x, y, v in zip(ts, a, b, values(value, len(ts))):
            getattr(t, name + "_")(x, y, value=v)
        return ts

    fn.__name__, fn_.__name__ = op, op + "_"
    fn.__doc__ = f"``x.{name}(t1, t2, value=v)`` for each x."
    fn_.__doc__ = f"In-place ``_foreach_{name}``; returns `self`."
    return fn, fn_


for _name in _UNARY:
    for _f in _make_unary(_name):
        public(torch=_f.__name__)(_f)
for _name in _BINARY:
    for _f in _make_binary(_name):
        public(torch=_f.__name__)(_f)
for _name in ("addcmul", "addcdiv"):
    for _f in _make_pointwise(_name):
        public(torch=_f.__name__)(_f)


@public(torch="_foreach_lerp")
def _foreach_lerp(self: Any, tensors1: Any, weight: Any) -> list[Tensor]:
    """``x.lerp(end, weight)`` for each x: `weight` a number, one per x, or a tensor."""
    ts = _tensors(self, "_foreach_lerp")
    ends = _per_tensor(tensors1, len(ts), "_foreach_lerp")
    ws = _per_tensor(weight, len(ts), "_foreach_lerp")
    return [t.lerp(e, w) for t, e, w in zip(ts, ends, ws)]


@public(torch="_foreach_lerp_")
def _foreach_lerp_(self: Any, tensors1: Any, weight: Any) -> list[Tensor]:
    """In-place ``_foreach_lerp``; returns `self`."""
    ts = _tensors(self, "_foreach_lerp_")
    ends = _per_tensor(tensors1, len(ts), "_foreach_lerp_")
    for t, e, w in zip(ts, ends, _per_tensor(weight, len(ts), "_foreach_lerp_")):
        t.lerp_(e, w)
    return ts


@public(torch="_foreach_norm")
def _foreach_norm(self: Any, ord: Any = 2, dtype: Any = None) -> list[Tensor]:
    """The vector norm of each tensor (0-d results)."""
    return [t.norm(ord, dtype=dtype) for t in _tensors(self, "_foreach_norm")]


@public(torch="_foreach_max")
def _foreach_max(self: Any) -> list[Tensor]:
    """The largest element of each tensor."""
    return [t.max() for t in _tensors(self, "_foreach_max")]


@public(torch="_foreach_clone")
def _foreach_clone(self: Any, *, memory_format: Any = None) -> list[Tensor]:
    return [t.clone() for t in _tensors(self, "_foreach_clone")]


@public(torch="_foreach_zero_")
def _foreach_zero_(self: Any) -> list[Tensor]:
    ts = _tensors(self, "_foreach_zero_")
    for t in ts:
        t.zero_()
    return ts


@public(torch="_foreach_copy_")
def _foreach_copy_(self: Any, src: Any, non_blocking: bool = False) -> list[Tensor]:
    ts = _tensors(self, "_foreach_copy_")
    for t, s in zip(ts, _per_tensor(src, len(ts), "_foreach_copy_")):
        t.copy_(s)
    return ts
