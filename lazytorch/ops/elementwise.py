"""Elementwise math, arithmetic, comparisons, logic, where and clamp.

Each public op promotes its operands (torch's rules: Python scalars are weak), broadcasts,
and records primitives; ops that are not primitives decompose here (``sign``, ``clamp``,
``lerp``, ``isnan``...). Integer inputs to floating math (``exp(int_tensor)``) compute in
the default float dtype, as in torch.
"""

from __future__ import annotations

import builtins
import math
import sys
from typing import Any

from lazytorch import _config
from lazytorch._dtype_info import finfo
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn, stop_gradient
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node, differentiate_as
from lazytorch.ir.primitives import Primitive, make_node
from lazytorch.ir.symbolic import SymInt
from lazytorch.ops._core import (
    ComplexBase,
    Number,
    P,
    binary_node,
    broadcast_nodes,
    cast,
    check_python_int,
    const_like,
    const_node,
    device_of,
    expand_node,
    result_type,
    scalar_node,
    tensor_arg,
    to_node,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import cast_into_out, checked_scalar
from lazytorch.tensor import Tensor

# -- building blocks ------------------------------------------------------------------------


def _operand(x: Any, op: str) -> Any:
    if isinstance(x, (Tensor, Number)):
        return x

    if isinstance(x, SymInt):
        return x
    np = sys.modules.get("numpy")  # not imported: x cannot be a NumPy scalar
    if np is not None and isinstance(x, (np.bool_, np.integer, np.floating)):
        # torch takes a NumPy scalar (``np.float32(x) + t``) as the Python number it holds,
        # and an np.bool_ as a float (int64 tensor + np.True_ is float32 in torch 2.13)
        return float(x) if isinstance(x, np.bool_) else x.item()
    raise op_error(TypeError, op, f"unsupported operand type {type(x).__name__}")


def _not_implemented(op: str, kernel: str, d: dt.DType) -> Exception:
    """torch's error for a dtype its kernel has no implementation for."""
    return op_error(NotImplementedError, op, f"\"{kernel}\" not implemented for '{d.legacy_name}'")


def binary(prim: Primitive, a: Any, b: Any, op: str, out_dtype: dt.DType | None = None) -> Tensor:
    """Promote, broadcast and record `prim(a, b)`; the common path of arithmetic ops."""
    ta, tb = type(a), type(b)
    if ta is Tensor:
        na = a._node
        if tb is Tensor:
            nb = b._node
            if na.dtype is nb.dtype and na.device is nb.device:
                if na.shape == nb.shape:
                    shape = na.shape
                else:  # one dtype: only broadcasting to do, no promotion
                    shape, (na, nb) = broadcast_nodes([na, nb], op)
                return wrap(make_node(prim, (na, nb), (), shape, out_dtype or na.dtype, na.device))
        elif (tb is float and na.dtype.category == 2) or (tb is int and na.dtype.category):
            # A weak Python scalar leaves a float (or, if an int, an integer) dtype as it is.
            d = na.dtype
            nb = scalar_node(b, d, na.device)
            return wrap(make_node(prim, (na, nb), (), na.shape, out_dtype or d, na.device))
    elif tb is Tensor and (
        (ta is float and b._node.dtype.category == 2) or (ta is int and b._node.dtype.category)
    ):
        nb = b._node
        d = nb.dtype
        na = scalar_node(a, d, nb.device)
        return wrap(make_node(prim, (na, nb), (), nb.shape, out_dtype or d, nb.device))
    a, b = _operand(a, op), _operand(b, op)
    dtype = result_type(a, b)
    dev = device_of(a, b, op=op)
    na, nb = to_node(a, dtype, dev), to_node(b, dtype, dev)
    shape, (na, nb) = broadcast_nodes([na, nb], op)
    return wrap(make_node(prim, (na, nb), (), shape, out_dtype or dtype, dev))


def _low(x: Any) -> bool:
    return type(x) is Tensor and x._node.dtype.compute is not x._node.dtype


def _cpu_scalar(x: Any, beside: Any) -> bool:
    """A second operand whose own value torch's float16/bfloat16 mul and div kernels take
    in float32 (``iter.is_scalar(2)``): a Python number, or a floating 0-d tensor of any
    float dtype beside a tensor with dims. A 0-d tensor as the *first* operand goes through
    the generic kernel, rounded to the result dtype first (measured against torch 2.13)."""
    if isinstance(x, Number):
        return True
    return (
        isinstance(x, Tensor)
        and not x._node.shape
        and x._node.dtype.is_floating_point
        and isinstance(beside, Tensor)
        and beside.ndim > 0
    )


def _with_opmath_scalar(
    prim: Primitive, a: Any, b: Any, op: str, either: bool = False
) -> Tensor | None:
    """`prim(a, b)` as torch's mul, div and floor-div kernels compute a float16 or bfloat16
    result with a scalar `b` (or, with `either`, a Python number `a`, which torch's
    ``__rmul__`` passes second): the scalar's own value in float32 (not first rounded to the
    16-bit dtype), one rounding at the end. None when that is not the case. (torch's add and
    sub round the scalar first: they do not come here.)
    """
    a, b = _operand(a, op), _operand(b, op)
    d = result_type(a, b)
    scalar_a = either and isinstance(a, Number)
    scalar_b = _cpu_scalar(b, a)
    if not d.is_low_float or not (scalar_a or scalar_b):
        return None
    dev = device_of(a, b, op=op)
    f32 = d.compute
    na, nb = (
        to_node(x, f32, dev) if scalar else cast(to_node(x, d, dev), f32)
        for x, scalar in ((a, scalar_a), (b, scalar_b))
    )
    shape, (na, nb) = broadcast_nodes([na, nb], op)
    return wrap(cast(make_node(prim, (na, nb), (), shape, f32, dev), d))


def _float_dtype(d: dt.DType) -> dt.DType:
    return d if d.is_floating_point else _config.get_default_dtype()


def _float_unary(prim: Primitive, name: str) -> Any:
    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        if type(input) is not Tensor and isinstance(input, ComplexBase) and out is None:
            # torch.exp(z): the complex tensor's own method where it has one (exp does)
            method = getattr(type(input), name, None)
            if method is not None:
                return method(input)  # type: ignore[no-any-return]
        n = tensor_arg(input, name)._node
        n = cast(n, _float_dtype(n.dtype))
        return cast_into_out(wrap(unary_node(prim, n)), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {prim.doc} (integer inputs compute in the default float dtype)."
    return fn


def _into_out_same_dtype(result: Tensor, out: Any, op: str, message: str) -> Tensor:
    """`cast_into_out` for the ops whose out= must already have the result's dtype (torch casts
    nothing there); `message` is torch's, formatted with ``got`` and ``want``."""
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        got, want = out.dtype.legacy_name, result.dtype.legacy_name
        raise op_error(RuntimeError, op, message.format(got=got, want=want))
    return cast_into_out(result, out, op)


exp = public(method=True, inplace=True)(_float_unary(P.exp, "exp"))
log = public(method=True, inplace=True)(_float_unary(P.log, "log"))
sqrt = public(method=True, inplace=True)(_float_unary(P.sqrt, "sqrt"))
sin = public(method=True, inplace=True)(_float_unary(P.sin, "sin"))
cos = public(method=True, inplace=True)(_float_unary(P.cos, "cos"))
tanh = public(method=True, inplace=True)(_float_unary(P.tanh, "tanh"))
sigmoid = public(method=True, inplace=True)(_float_unary(P.sigmoid, "sigmoid"))
erf = public(method=True, inplace=True)(_float_unary(P.erf, "erf"))
atan = public(torch=("atan", "arctan"), method=True, inplace=True)(_float_unary(P.atan, "atan"))
log1p = public(method=True, inplace=True)(_float_unary(P.log1p, "log1p"))
expm1 = public(method=True, inplace=True)(_float_unary(P.expm1, "expm1"))


def _float_input(x: Any, op: str) -> Node:
    n = tensor_arg(x, op)._node
    return cast(n, _float_dtype(n.dtype))


def _in_opmath(build: Any, *nodes: Node) -> Node:
    """`build(*nodes)`, run in float32 when the inputs are float16 and rounded once at the end.

    torch's CPU kernels compute half-precision math in float ("opmath"); a decomposition
    rounded to float16 after every step would lose digits and overflow in intermediates
    (``x * x`` for ``x > 256``).
    """
    d = nodes[0].dtype
    if not d.is_low_float:
        return build(*nodes)  # type: ignore[no-any-return]
    return cast(build(*[cast(n, dt.float32) for n in nodes]), d)


def _mul(a: Node, b: Node) -> Node:
    return binary_node(P.mul, a, b)


def _add(a: Node, b: Node) -> Node:
    return binary_node(P.add, a, b)


def _sub(a: Node, b: Node) -> Node:
    return binary_node(P.sub, a, b)


def _div(a: Node, b: Node) -> Node:
    return binary_node(P.div, a, b)


def _lt(a: Node, b: Node) -> Node:
    return binary_node(P.lt, a, b, dt.bool_)


def _sign_float(n: Node) -> Node:
    pos = cast(binary_node(P.gt, n, const_like(0, n), dt.bool_), n.dtype)
    neg = cast(binary_node(P.lt, n, const_like(0, n), dt.bool_), n.dtype)
    return binary_node(P.sub, pos, neg)


# -- torch's gradients at kinks and special points --------------------------------------------
# A decomposition's derivative is not always torch's gradient: at a kink (relu at 0, clamp at
# a bound) torch picks one side, and where a formula's derivative is 0 * inf (sqrt at 0)
# torch gives 0. These helpers build values whose recorded gradient is torch's.


def _tracks_grad(*nodes: Node) -> bool:
    """Whether any of `nodes` carries gradient (only then is a gradient-exact form needed)."""
    return any(n.ag is not None for n in nodes)


def _no_grad_copy(n: Node) -> Node:
    return stop_gradient(n)


def _zero_gradient(value: Node, source: Node) -> Node:
    """`value`, recorded as a function of `source` whose gradient is zero.

    torch's piecewise-constant results (``sign(x)``, ``x ** 0``, ``vector_norm(x, 0)``)
    require grad when x does, and backward gives zeros; a value built from comparisons alone
    would carry no gradient, and ``backward()`` would raise. ``where(True, value, source)`` is
    `value`, and the gradient reaching `source` through it is zero.
    """
    if source.ag is None or not value.dtype.is_floating_point:
        return value
    true = const_node(True, dt.bool_, value.device)
    return where_node(true, value, cast(source, value.dtype))


def _safe_sqrt(n: Node) -> Node:
    """sqrt(n) whose gradient is 0 where n = 0 (torch's norm and std backward), not the
    inf * 0 = NaN that the chain rule gives through sqrt's infinite slope at 0."""
    if n.ag is None:
        return unary_node(P.sqrt, n)
    at0 = binary_node(P.eq, n, const_like(0, n), dt.bool_)
    root = unary_node(P.sqrt, where_node(at0, const_like(1, n), n))
    return where_node(at0, const_like(0, n), root)


# -- sign-preserving unary --------------------------------------------------------------------
@public(torch=("neg", "negative"), method=True, inplace=True)
def neg(input: Tensor, *, out: Any = None) -> Tensor:
    n = tensor_arg(input, "neg")._node
    if n.dtype is dt.bool_:
        raise op_error(
            RuntimeError,
            "neg",
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.",
        )
    return cast_into_out(wrap(unary_node(P.neg, n)), out, "neg")


@public(method=True)
def positive(input: Tensor) -> Tensor:
    if tensor_arg(input, "positive").dtype is dt.bool_:
        raise op_error(
            RuntimeError, "positive", "The `+` operator, on a bool tensor is not supported."
        )
    return input


@public(torch=("abs", "absolute"), method=True, inplace=True)
def abs(input: Tensor, *, out: Any = None) -> Tensor:
    if type(input) is not Tensor and isinstance(input, ComplexBase) and out is None:
        return input.abs()  # type: ignore[attr-defined, no-any-return]
    n = tensor_arg(input, "abs")._node
    if n.dtype is dt.bool_:
        raise _not_implemented("abs", "abs_cpu", n.dtype)
    return cast_into_out(wrap(unary_node(P.abs, n)), out, "abs")


def _copy(n: Node) -> Tensor:
    return wrap(n)


@public(torch=("sign", "sgn"), method=True, inplace=True)
def sign(input: Tensor, *, out: Any = None) -> Tensor:
    """-1, 0 or 1 by sign (0 for NaN, as in torch)."""
    n = tensor_arg(input, "sign")._node
    if n.dtype is dt.bool_:
        return cast_into_out(_copy(n), out, "sign")
    s = (
        _sign_float(n)
        if n.dtype.is_signed
        else cast(binary_node(P.gt, n, const_like(0, n), dt.bool_), n.dtype)
    )
    return cast_into_out(wrap(_zero_gradient(s, n)), out, "sign")


def _rounding_input(input: Any, name: str) -> Node:
    n = tensor_arg(input, name)._node
    if n.dtype is dt.bool_:
        raise _not_implemented(name, f"{name}_vml_cpu", n.dtype)
    return n


def _rounding(prim: Primitive, name: str) -> Any:
    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        n = _rounding_input(input, name)
        if not n.dtype.is_floating_point:
            return cast_into_out(_copy(n), out, name)
        return cast_into_out(wrap(unary_node(prim, n)), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {prim.doc} (integers are returned unchanged)."
    return fn


floor = public(method=True, inplace=True)(_rounding(P.floor, "floor"))
ceil = public(method=True, inplace=True)(_rounding(P.ceil, "ceil"))


@public(method=True, inplace=True)
def round(input: Tensor, *, decimals: int | None = None, out: Any = None) -> Tensor:
    """Round half to even; with `decimals`, round(x * 10**d) / 10**d like torch.

    As in torch, passing `decimals` at all (even 0) needs a floating-point input.
    """
    n = _rounding_input(input, "round")
    if not n.dtype.is_floating_point:
        if decimals is not None:
            raise _not_implemented("round", "round_vml_cpu", n.dtype)
        return cast_into_out(_copy(n), out, "round")
    if not decimals:
        return cast_into_out(wrap(unary_node(P.round, n)), out, "round")

    def build(m: Node) -> Node:
        # torch's kernel: scale by an exact power of ten (dividing for negative decimals,
        # as 10**-d is inexact), round, and undo the scaling — in float32 for float16.
        scale = const_like(10.0 ** builtins.abs(decimals), m)
        if decimals > 0:
            return binary_node(P.div, unary_node(P.round, binary_node(P.mul, m, scale)), scale)
        return binary_node(P.mul, unary_node(P.round, binary_node(P.div, m, scale)), scale)

    return cast_into_out(wrap(_in_opmath(build, n)), out, "round")


def _trunc_node(n: Node) -> Node:
    negative = binary_node(P.lt, n, const_like(0, n), dt.bool_)
    return where_node(negative, unary_node(P.ceil, n), unary_node(P.floor, n))


@public(torch=("trunc", "fix"), method=True, inplace=True)
def trunc(input: Tensor, *, out: Any = None) -> Tensor:
    n = _rounding_input(input, "trunc")
    if not n.dtype.is_floating_point:
        return cast_into_out(_copy(n), out, "trunc")
    return cast_into_out(wrap(_trunc_node(n)), out, "trunc")


@public(method=True, inplace=True)
def frac(input: Tensor, *, out: Any = None) -> Tensor:
    n = tensor_arg(input, "frac")._node
    if not n.dtype.is_floating_point:
        raise _not_implemented("frac", "frac_cpu", n.dtype)
    return _into_out_same_dtype(
        wrap(binary_node(P.sub, n, _trunc_node(n))),
        out,
        "frac",
        "Found dtype {got} but expected {want}",
    )


# -- arithmetic ---------------------------------------------------------------------------------
def _with_alpha(prim: Primitive, input: Any, other: Any, alpha: Any, op: str) -> Tensor:
    """`input prim (other * alpha)`, the product in the dtype of `input prim other` (alpha
    itself never promotes)."""
    if type(alpha) is int and alpha == 1:
        return binary(prim, input, other, op)
    d = result_type(input, other)
    if isinstance(alpha, bool) and d is not dt.bool_:
        raise op_error(RuntimeError, op, "Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not d.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            "For integral input tensors, argument alpha must not be a floating point number.",
        )
    dev = device_of(input, other, op=op)
    n = to_node(other, d, dev)
    if isinstance(alpha, Number):  # torch converts alpha to the dtype with a check
        alpha = checked_scalar(alpha, d, op)
    if d.is_low_float:
        # torch: ``input + alpha * other`` in float32 (alpha and other rounded to the dtype,
        # as measured against torch 2.13), rounded once
        f32 = d.compute
        a = cast(to_node(input, d, dev), f32)
        o, al = cast(n, f32), cast(to_node(alpha, d, dev), f32)
        _, (a, o, al) = broadcast_nodes([a, o, al], op)
        return wrap(cast(binary_node(prim, a, binary_node(P.mul, o, al)), d))
    return binary(prim, input, wrap(binary_node(P.mul, n, to_node(alpha, d, dev))), op)


def _scalar_first(op: str, scalar: Any, rest: tuple[Any, ...], given: Any, kw: str) -> Any:
    """The operands of torch's deprecated scalar-first overloads, which torch 2.13 still
    accepts (with a warning) and older scripts and hand-written optimizers use:
    ``add/sub(input, alpha, other)`` (``p.data.add_(-lr, p.grad)``) and
    ``addcmul/addcdiv(input, value, tensor1, tensor2)``. Returns `rest`, the operands;
    `scalar` is the factor."""
    if not isinstance(scalar, Number) or given != 1:
        extra = f": unrecognized keyword argument {kw}" if given != 1 else ""
        raise op_error(TypeError, op, f"received an invalid combination of arguments{extra}")
    return rest


@public(method=True, inplace=True)
def add(input: Any, other: Any, *args: Any, alpha: Any = 1, out: Any = None) -> Tensor:
    """input + alpha * other, with broadcasting and type promotion (also torch's deprecated
    ``add(input, alpha, other)``)."""
    if args:
        if len(args) != 1:
            raise op_error(
                TypeError, "add", f"takes 3 positional arguments but {2 + len(args)} were given"
            )
        (other,), alpha = _scalar_first("add", other, args, alpha, "alpha"), other
    return cast_into_out(_with_alpha(P.add, input, other, alpha, "add"), out, "add")


@public(torch=("sub", "subtract"), method=True, inplace=True)
def sub(input: Any, other: Any, *args: Any, alpha: Any = 1, out: Any = None) -> Tensor:
    """input - alpha * other (also torch's deprecated ``sub(input, alpha, other)``)."""
    if args:
        if len(args) != 1:
            raise op_error(
                TypeError, "sub", f"takes 3 positional arguments but {2 + len(args)} were given"
            )
        (other,), alpha = _scalar_first("sub", other, args, alpha, "alpha"), other
    if _is_bool(input) or _is_bool(other):
        raise op_error(
            RuntimeError,
            "sub",
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        )
    return cast_into_out(_with_alpha(P.sub, input, other, alpha, "sub"), out, "sub")


@public()
def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return sub(other, input, alpha=alpha)


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or (isinstance(x, Tensor) and x.dtype is dt.bool_)


@public(torch=("mul", "multiply"), method=True, inplace=True)
def mul(input: Any, other: Any, *, out: Any = None) -> Tensor:
    if _low(input) or _low(other):
        r = _with_opmath_scalar(P.mul, input, other, "mul", either=True)
        if r is not None:
            return cast_into_out(r, out, "mul")
    return cast_into_out(binary(P.mul, input, other, "mul"), out, "mul")


def _no_bool_result(a: Any, b: Any, op: str, kernel: str) -> None:
    d = result_type(a, b)
    if d is dt.bool_:
        raise _not_implemented(op, kernel, d)


@public(torch=("div", "divide"), method=True, inplace=True)
def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Any = None) -> Tensor:
    """input / other. rounding_mode: None (true division), 'trunc' or 'floor'."""
    if (_low(input) or _low(other)) and rounding_mode in (None, "floor"):
        r = _with_opmath_scalar(P.div if rounding_mode is None else P.floordiv, input, other, "div")
        if r is not None:
            return cast_into_out(r, out, "div")
    if rounding_mode is None:
        a, b = _operand(input, "div"), _operand(other, "div")
        d = _float_dtype(result_type(a, b))
        dev = device_of(a, b, op="div")
        return cast_into_out(
            wrap(binary_node(P.div, to_node(a, d, dev), to_node(b, d, dev))), out, "div"
        )
    if rounding_mode == "floor":
        _no_bool_result(input, other, "div", "div_floor_cpu")
        return cast_into_out(binary(P.floordiv, input, other, "div"), out, "div")
    if rounding_mode == "trunc":
        a, b = _operand(input, "div"), _operand(other, "div")
        _no_bool_result(a, b, "div", "div_trunc_cpu")
        d = result_type(a, b)
        dev = device_of(a, b, op="div")
        na, nb = to_node(a, d, dev), to_node(b, d, dev)
        if d.is_floating_point:
            return cast_into_out(wrap(_trunc_node(binary_node(P.div, na, nb))), out, "div")
        q = binary_node(P.floordiv, na, nb)
        r = binary_node(P.remainder, na, nb)
        inexact = binary_node(P.ne, r, const_like(0, r), dt.bool_)
        signs_differ = binary_node(
            P.ne,
            binary_node(P.lt, na, const_like(0, na), dt.bool_),
            binary_node(P.lt, nb, const_like(0, nb), dt.bool_),
            dt.bool_,
        )
        fix_up = binary_node(P.bitwise_and, inexact, signs_differ)
        return cast_into_out(
            wrap(where_node(fix_up, binary_node(P.add, q, const_like(1, q)), q)), out, "div"
        )
    raise op_error(
        RuntimeError,
        "div",
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'",
    )


@public(method=True, inplace=True)
def true_divide(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """`div` without rounding, under its older name.

    >>> import lazytorch
    >>> lazytorch.true_divide(lazytorch.tensor([1, 3]), 2)
    tensor([0.5000, 1.5000])
    """
    return div(input, other, out=out)


@public(method=True, inplace=True)
def floor_divide(input: Any, other: Any, *, out: Any = None) -> Tensor:
    return div(input, other, rounding_mode="floor", out=out)


@public(method=True, inplace=True)
def remainder(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Python-style modulus: the result has the sign of the divisor."""
    _no_bool_result(input, other, "remainder", "remainder_cpu")
    return cast_into_out(binary(P.remainder, input, other, "remainder"), out, "remainder")


@public(method=True, inplace=True)
def fmod(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """C-style modulus: the result has the sign of the dividend."""
    _no_bool_result(input, other, "fmod", "fmod_cpu")
    return cast_into_out(binary(P.fmod, input, other, "fmod"), out, "fmod")


@public(method=True, inplace=True)
def pow(input: Any, exponent: Any, *, out: Any = None) -> Tensor:
    """input ** exponent, with torch's special cases for a scalar exponent.

    0 gives ones and 1 a copy (for any dtype, bool included); 2 is a multiplication, and
    for float32/float64/bfloat16 3 and -1 are ``x * x * x`` and ``1 / x``; for
    float32/float64, 0.5 and -0.5 are sqrt and 1/sqrt (which differ from pow at -inf and
    -0.0), as in torch's CPU kernel. Whichever way the value is computed, the gradient is
    pow's (torch's ``grad * (exponent * x ** (exponent - 1))``: see the pow rule).

    >>> import lazytorch
    >>> x = lazytorch.tensor([2.0], requires_grad=True)
    >>> (x ** 3).backward()
    >>> x.grad
    tensor([12.])
    """
    if isinstance(input, Tensor) and isinstance(exponent, Number):
        d = result_type(input, exponent)
        check_python_int(exponent)
        if d is not dt.float32 and d is not dt.float64:
            # torch converts the exponent to an integer (or half) dtype with a check
            checked_scalar(exponent, d, "pow")
        n = cast(input._node, d)
        if exponent == 0:
            ones = _zero_gradient(expand_node(const_like(1, n), n.shape), n)  # torch: zero gradient
            return cast_into_out(wrap(_as_pow(ones, n, exponent)), out, "pow")
        if exponent == 1:
            return cast_into_out(_copy(n), out, "pow")
        if d is dt.bool_:
            raise _not_implemented("pow", "pow", d)
        if not d.is_floating_point and exponent < 0:
            raise op_error(
                RuntimeError, "pow", "Integers to negative integer powers are not allowed."
            )
        if exponent == 2:
            return cast_into_out(wrap(_as_pow(binary_node(P.mul, n, n), n, 2)), out, "pow")
        if exponent == -1 and d in (dt.float32, dt.float64, dt.bfloat16):
            y = binary_node(P.div, const_like(1, n), n)
            return cast_into_out(wrap(_as_pow(y, n, -1)), out, "pow")
        if exponent == 3 and d in (dt.float32, dt.float64, dt.bfloat16):
            # torch's CPU kernel: base * base * base, each product rounded (bitwise torch's
            # values, which C's pow misses by an ulp in a quarter of float32 cubes); float16
            # computes in float32 and rounds once, as pow does. (-2 stays pow: torch's
            # 1 / (base * base) has no -inf gradient at 0 when differentiated as written.)
            sq = binary_node(P.mul, n, n)
            return cast_into_out(wrap(_as_pow(binary_node(P.mul, sq, n), n, 3)), out, "pow")
        if d is dt.float32 or d is dt.float64:
            if exponent == 0.5:
                return cast_into_out(wrap(_as_pow(unary_node(P.sqrt, n), n, 0.5)), out, "pow")
            if exponent == -0.5:
                y = binary_node(P.div, const_like(1, n), unary_node(P.sqrt, n))
                return cast_into_out(wrap(_as_pow(y, n, -0.5)), out, "pow")
    _no_bool_result(input, exponent, "pow", "pow")
    return cast_into_out(binary(P.pow, input, exponent, "pow"), out, "pow")


def _as_pow(value: Node, base: Node, exponent: Any) -> Node:
    """`value`, torch's special case of ``base ** exponent``, differentiated as pow with a
    scalar exponent (the pow rule then arranges the gradient as torch's pow_backward, and
    grad_fn is named ``PowBackward0`` as torch's)."""
    if value.ag is not True:
        return value
    return differentiate_as(value, P.pow, (base, scalar_node(exponent, base.dtype, base.device)))


@public(method=True, inplace=True)
def square(input: Tensor, *, out: Any = None) -> Tensor:
    return cast_into_out(pow(input, 2), out, "square")


@public(method=True)
def maximum(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Elementwise max of two tensors; NaN propagates."""
    tensor_arg(input, "maximum")
    tensor_arg(other, "maximum", "other")
    return cast_into_out(binary(P.maximum, input, other, "maximum"), out, "maximum")


@public(method=True)
def minimum(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Elementwise min of two tensors; NaN propagates."""
    tensor_arg(input, "minimum")
    tensor_arg(other, "minimum", "other")
    return cast_into_out(binary(P.minimum, input, other, "minimum"), out, "minimum")


def _fextreme(input: Tensor, other: Tensor, keep_input: Any, op: str) -> Tensor:
    # input where `keep_input(input, other)` holds or other is NaN, else other: torch's value,
    # and its gradient too (all of it to input on a tie, none split).
    tensor_arg(input, op)
    tensor_arg(other, op, "other")
    d = result_type(input, other)
    dev = device_of(input, other, op=op)
    a, b = to_node(input, d, dev), to_node(other, d, dev)
    keep = binary_node(
        P.bitwise_or, binary_node(keep_input, a, b, dt.bool_), binary_node(P.ne, b, b, dt.bool_)
    )
    return wrap(where_node(keep, a, b))


@public(method=True)
def fmax(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Max that ignores NaN when the other operand is a number."""
    return cast_into_out(_fextreme(input, other, P.ge, "fmax"), out, "fmax")


@public(method=True)
def fmin(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """Min that ignores NaN when the other operand is a number."""
    return cast_into_out(_fextreme(input, other, P.le, "fmin"), out, "fmin")


@public(torch=("clamp", "clip"), method=True, inplace=True)
def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Any = None) -> Tensor:
    """Clamp into [min, max]; NaN stays NaN; when min > max every element becomes max."""
    x = tensor_arg(input, "clamp")
    if min is None and max is None:
        raise op_error(RuntimeError, "clamp", "At least one of 'min' or 'max' must not be None")
    bounds = [a for a in (min, max) if a is not None]
    if len(bounds) == 2 and isinstance(min, Tensor) != isinstance(max, Tensor):
        # torch's (Tensor, Number, Number) overload takes a 0-d tensor that needs no
        # gradient as a number (beta_vae's clamp(x, 0, c_max.data[0])); read its value
        min, max = _clamp_number(min), _clamp_number(max)
        bounds = [min, max]
    d = result_type(x, *bounds)
    if d is dt.bool_:
        kernel = "clamp" if len(bounds) == 2 else "clamp_min" if max is None else "clamp_max"
        scalar = "" if isinstance(bounds[0], Tensor) else "_scalar"
        raise _not_implemented("clamp", f"{kernel}{scalar}_cpu", d)
    dev = device_of(x, *bounds, op="clamp")

    def bound(b: Any) -> Node:
        # A number bound must fit the dtype (torch's checked conversion: uint8 takes -1 as
        # 255 but refuses 300, float16 refuses 1e10).
        return to_node(b if isinstance(b, Tensor) else checked_scalar(b, d, "clamp"), d, dev)

    n = to_node(x, d, dev)
    lo = bound(min) if min is not None else None
    hi = bound(max) if max is not None else None
    if _tracks_grad(*[b for b in (n, lo, hi) if b is not None]):
        return cast_into_out(wrap(_clamp_with_grad(n, lo, hi)), out, "clamp")
    return cast_into_out(wrap(_clamp_value(n, lo, hi)), out, "clamp")


def _clamp_number(bound: Any) -> Any:
    """A bound of clamp's mixed form as a number: a 0-d tensor without gradient gives its
    value (a materialization, as torch's conversion to Scalar syncs); others are refused."""
    if not isinstance(bound, Tensor):
        return bound
    if bound.ndim != 0 or bound.requires_grad:
        raise op_error(
            TypeError,
            "clamp",
            "min and max must both be Tensors or both be numbers, not mixed (a tensor bound"
            " beside a number must be 0-d and not require grad)",
        )
    return bound.item()


def _clamp_value(n: Node, lo: Node | None, hi: Node | None) -> Node:
    # torch's kernel: max with min, then min with max (so min > max gives max); NaN stays.
    if lo is not None:
        n = binary_node(P.maximum, n, lo)
    if hi is not None:
        n = binary_node(P.minimum, n, hi)
    return n


def _clamp_with_grad(n: Node, lo: Node | None, hi: Node | None) -> Node:
    """clamp's value with torch's gradient: x gets it where min <= x <= max (at a bound too;
    not at NaN), min where x < min < max, max where x > max or max < min."""
    value = _clamp_value(
        _no_grad_copy(n),
        None if lo is None else _no_grad_copy(lo),
        None if hi is None else _no_grad_copy(hi),
    )
    inside = [binary_node(P.ge, n, lo, dt.bool_)] if lo is not None else []
    if hi is not None:
        inside.append(binary_node(P.le, n, hi, dt.bool_))
    keep_x = inside[0] if len(inside) == 1 else binary_node(P.bitwise_and, inside[0], inside[1])
    result = where_node(keep_x, n, value)  # inside, the value is x itself
    if lo is not None and lo.ag is not None:
        take_lo = binary_node(P.lt, n, lo, dt.bool_)
        if hi is not None:
            take_lo = binary_node(P.bitwise_and, take_lo, binary_node(P.lt, lo, hi, dt.bool_))
        result = where_node(take_lo, lo, result)  # x < min < max: the value is min
    if hi is not None and hi.ag is not None:
        take_hi = binary_node(P.gt, n, hi, dt.bool_)
        if lo is not None:
            take_hi = binary_node(P.bitwise_or, take_hi, binary_node(P.lt, hi, lo, dt.bool_))
        # the value is max, or NaN (a NaN x or min) that still sends its gradient to max
        nan = binary_node(P.ne, value, value, dt.bool_)
        result = where_node(take_hi, where_node(nan, binary_node(P.add, hi, value), hi), result)
    return result


@public(method=True, inplace=True)
def clamp_min(input: Tensor, min: Any, *, out: Any = None) -> Tensor:
    return _into_out_same_dtype(
        clamp(input, min=min), out, "clamp_min", "Found dtype {got} but expected {want}"
    )


@public(method=True, inplace=True)
def clamp_max(input: Tensor, max: Any, *, out: Any = None) -> Tensor:
    return _into_out_same_dtype(
        clamp(input, max=max), out, "clamp_max", "Found dtype {got} but expected {want}"
    )


def _check_float_kernel(op: str, kernel: str, *args: Any) -> dt.DType:
    """The common dtype of ops whose torch kernels exist for floating dtypes only."""
    d = result_type(*args)
    if not d.is_floating_point:
        raise _not_implemented(op, kernel, d)
    return d


@public(method=True, inplace=True)
def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Any = None) -> Tensor:
    """input + weight * (end - input), computed from the nearer end as torch does."""
    x = tensor_arg(input, "lerp")
    e = tensor_arg(end, "lerp", "end")
    for name, t in (("end", e), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not x.dtype:
            raise op_error(
                RuntimeError,
                "lerp",
                f"expected dtype {x.dtype.name} for `{name}` but got dtype {t.dtype.name}",
            )
    kind = "tensor" if isinstance(weight, Tensor) else "scalar"
    d = _check_float_kernel("lerp", f"lerp_kernel_{kind}", x, e)
    dev = device_of(x, e, weight, op="lerp")
    # a Python weight keeps its own value in the float32 math of a 16-bit float (torch's)
    wd = d.compute if isinstance(weight, Number) else d
    _, (a, b, w) = broadcast_nodes([x._node, e._node, to_node(weight, wd, dev)], "lerp")

    # torch picks the formula by |weight| < 0.5. A Python weight is known now: record only
    # the formula it picks (the value stays a program input; at most two programs).
    side = -0.5 < weight < 0.5 if isinstance(weight, (int, float)) else None

    def build(a: Node, b: Node, w: Node) -> Node:
        diff = _sub(b, a)
        low = _add(a, _mul(w, diff)) if side is not False else None
        high = _sub(b, _mul(diff, _sub(const_like(1, w), w))) if side is not True else None
        if side is None:
            return where_node(_lt(unary_node(P.abs, w), const_like(0.5, w)), low, high)
        return low if side else high  # type: ignore[return-value]

    return cast_into_out(wrap(_in_opmath(build, a, b, w)), out, "lerp")


def _addc(name: str, input: Tensor, t1: Tensor, t2: Tensor, value: Any, prim: Primitive) -> Tensor:
    """input + value * (t1 op t2), all in the promoted dtype (value is cast to it)."""
    args = [tensor_arg(input, name), tensor_arg(t1, name, "tensor1")]
    args.append(tensor_arg(t2, name, "tensor2"))
    d = result_type(*args)
    if d is dt.bool_:
        raise _not_implemented(name, f"{name}_cpu_out", d)
    dev = device_of(*args, op=name)
    a, b, c = (to_node(t, d, dev) for t in args)
    check_python_int(value)  # no torch Scalar at all: OverflowError before the range check
    if isinstance(value, Number) and not d.is_floating_point:
        # torch converts `value` to the integer dtype with an overflow check (it truncates).
        lo = -(1 << (d.bits - 1)) if d.is_signed else 0
        hi = (1 << (d.bits - 1 if d.is_signed else d.bits)) - 1
        if not lo <= int(value) <= hi:
            raise op_error(
                RuntimeError,
                name,
                f"value cannot be converted to type {d.name} without overflow",
            )
    # torch's kernel computes ``self + value * t1 op t2`` left to right: (value * t1) op t2
    if d.is_low_float:  # ... in float32 with value's own value, rounded once
        f32 = d.compute
        v = to_node(value, f32, dev)
        a, b, c = (cast(n, f32) for n in (a, b, c))
        return wrap(cast(binary_node(P.add, a, binary_node(prim, binary_node(P.mul, v, b), c)), d))
    v = to_node(value, d, dev)  # a program input: a new value does not recompile
    return wrap(binary_node(P.add, a, binary_node(prim, binary_node(P.mul, v, b), c)))


@public(method=True, inplace=True)
def addcmul(
    input: Tensor, tensor1: Any, tensor2: Tensor, *args: Any, value: Any = 1, out: Any = None
) -> Tensor:
    """input + value * tensor1 * tensor2 (also torch's deprecated
    ``addcmul(input, value, tensor1, tensor2)``)."""
    if args:
        if len(args) != 1:
            raise op_error(
                TypeError, "addcmul", f"takes 4 positional arguments but {3 + len(args)} were given"
            )
        (tensor1, tensor2), value = (
            _scalar_first("addcmul", tensor1, (tensor2, *args), value, "value"),
            tensor1,
        )
    return cast_into_out(_addc("addcmul", input, tensor1, tensor2, value, P.mul), out, "addcmul")


@public(method=True, inplace=True)
def addcdiv(
    input: Tensor, tensor1: Any, tensor2: Tensor, *args: Any, value: Any = 1, out: Any = None
) -> Tensor:
    """input + value * tensor1 / tensor2 (also torch's deprecated
    ``addcdiv(input, value, tensor1, tensor2)``)."""
    if args:
        if len(args) != 1:
            raise op_error(
                TypeError, "addcdiv", f"takes 4 positional arguments but {3 + len(args)} were given"
            )
        (tensor1, tensor2), value = (
            _scalar_first("addcdiv", tensor1, (tensor2, *args), value, "value"),
            tensor1,
        )
    for t in (tensor1, tensor2):
        tensor_arg(t, "addcdiv")
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "addcdiv",
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. Use "
            "(input + value * tensor1 / tensor2) instead.",
        )
    return cast_into_out(_addc("addcdiv", input, tensor1, tensor2, value, P.div), out, "addcdiv")


@public(method=True, inplace=True)
def hypot(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """sqrt(a**2 + b**2) without overflow or underflow; inf wins over NaN (C's hypot)."""
    d = _check_float_kernel("hypot", "hypot_cpu", input, other)
    dev = device_of(input, other, op="hypot")
    _, (x, y) = broadcast_nodes([to_node(input, d, dev), to_node(other, d, dev)], "hypot")

    def build(x: Node, y: Node) -> Node:
        a, b = unary_node(P.abs, x), unary_node(P.abs, y)
        big, small = binary_node(P.maximum, a, b), binary_node(P.minimum, a, b)
        r = _div(small, big)
        h = _mul(big, unary_node(P.sqrt, _add(const_like(1, r), _mul(r, r))))
        h = where_node(binary_node(P.eq, big, const_like(0, big), dt.bool_), const_like(0, big), h)
        inf = const_like(math.inf, a)
        either_inf = binary_node(
            P.bitwise_or, binary_node(P.eq, a, inf, dt.bool_), binary_node(P.eq, b, inf, dt.bool_)
        )
        return where_node(either_inf, inf, h)

    return cast_into_out(wrap(_in_opmath(build, x, y)), out, "hypot")


@public(method=True)
def logaddexp(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """log(exp(a) + exp(b)) without overflow."""
    d = _check_float_kernel("logaddexp", "logaddexp_cpu", input, other)
    dev = device_of(input, other, op="logaddexp")
    _, (x, y) = broadcast_nodes([to_node(input, d, dev), to_node(other, d, dev)], "logaddexp")

    def build(x: Node, y: Node) -> Node:
        # torch's formula: max + log1p(exp(-|a - b|)), except that equal infinities stay
        # themselves (inf - inf would be NaN). max and -|a - b| take the same side at a tie
        # (a's), so the gradient is the smooth function's: 1/2 each, and its derivative too.
        first = binary_node(P.ge, x, y, dt.bool_)
        m = where_node(first, x, y)
        v = _add(
            m, unary_node(P.log1p, unary_node(P.exp, where_node(first, _sub(y, x), _sub(x, y))))
        )
        same_inf = binary_node(
            P.bitwise_and,
            binary_node(P.eq, unary_node(P.abs, x), const_like(math.inf, x), dt.bool_),
            binary_node(P.eq, x, y, dt.bool_),
        )
        return where_node(same_inf, x, v)

    return cast_into_out(wrap(_in_opmath(build, x, y)), out, "logaddexp")


@public(method=True, inplace=True)
def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:
    d = _float_dtype(result_type(input, other))
    dev = device_of(input, other, op="xlogy")
    x, y = to_node(input, d, dev), to_node(other, d, dev)
    # x = 0 gives 0; where also 0 < y < inf, x * log(y) is that 0 already and gives torch's
    # gradient log(y) for x. Elsewhere (y <= 0, y = inf) the product would be NaN, and so
    # would its gradient through the branch not taken: it sees y = 1 there.
    finite_pos = binary_node(
        P.bitwise_and,
        binary_node(P.lt, const_like(0, y), y, dt.bool_),
        binary_node(P.lt, y, const_like(math.inf, y), dt.bool_),
    )
    zero_x = binary_node(
        P.bitwise_and,
        binary_node(P.eq, x, const_like(0, x), dt.bool_),
        unary_node(P.bitwise_not, finite_pos),
    )
    prod = binary_node(P.mul, x, unary_node(P.log, where_node(zero_x, const_like(1, y), y)))
    value = where_node(zero_x, const_like(0, x), prod)
    return cast_into_out(
        wrap(where_node(binary_node(P.ne, y, y, dt.bool_), y, value)), out, "xlogy"
    )


# -- comparisons and logic ------------------------------------------------------------------
def _compare(prim: Primitive, name: str) -> Any:
    def fn(input: Any, other: Any, *, out: Any = None) -> Tensor:
        return cast_into_out(binary(prim, input, other, name, out_dtype=dt.bool_), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {prim.doc} with promotion and broadcasting."
    return fn


eq = public(method=True, inplace=True)(_compare(P.eq, "eq"))
ne = public(torch=("ne", "not_equal"), method=True, inplace=True)(_compare(P.ne, "ne"))
lt = public(torch=("lt", "less"), method=True, inplace=True)(_compare(P.lt, "lt"))
le = public(torch=("le", "less_equal"), method=True, inplace=True)(_compare(P.le, "le"))
gt = public(torch=("gt", "greater"), method=True, inplace=True)(_compare(P.gt, "gt"))
ge = public(torch=("ge", "greater_equal"), method=True, inplace=True)(_compare(P.ge, "ge"))
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _bitwise(prim: Primitive, name: str) -> Any:
    def fn(input: Any, other: Any, *, out: Any = None) -> Tensor:
        d = result_type(input, other)
        if d.is_floating_point:
            raise _not_implemented(name, f"{name}_cpu", d)
        return cast_into_out(binary(prim, input, other, name), out, name)

    fn.__name__ = fn.__qualname__ = name
    return fn


bitwise_and = public(method=True, inplace=True)(_bitwise(P.bitwise_and, "bitwise_and"))
bitwise_or = public(method=True, inplace=True)(_bitwise(P.bitwise_or, "bitwise_or"))
bitwise_xor = public(method=True, inplace=True)(_bitwise(P.bitwise_xor, "bitwise_xor"))


@public(method=True, inplace=True)
def bitwise_not(input: Tensor, *, out: Any = None) -> Tensor:
    n = tensor_arg(input, "bitwise_not")._node
    if n.dtype.is_floating_point:
        raise _not_implemented("bitwise_not", "bitwise_not_cpu", n.dtype)
    return cast_into_out(wrap(unary_node(P.bitwise_not, n)), out, "bitwise_not")


def _truth(x: Any, dev: Any) -> Node:
    if isinstance(x, Tensor):
        n = x._node
        if n.dtype is dt.bool_:
            return n
        return binary_node(P.ne, n, const_like(0, n), dt.bool_)
    return to_node(bool(x), dt.bool_, dev)


def _logical(prim: Primitive, name: str) -> Any:
    def fn(input: Any, other: Any, *, out: Any = None) -> Tensor:
        tensor_arg(input, name)
        tensor_arg(other, name, "other")  # torch takes no Python scalars here
        dev = device_of(input, other, op=name)
        return cast_into_out(
            wrap(binary_node(prim, _truth(input, dev), _truth(other, dev))), out, name
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise logical {name.split('_')[1]} of the operands' truth values (bool result)."
    )
    return fn


logical_and = public(method=True, inplace=True)(_logical(P.bitwise_and, "logical_and"))
logical_or = public(method=True, inplace=True)(_logical(P.bitwise_or, "logical_or"))
logical_xor = public(method=True, inplace=True)(_logical(P.bitwise_xor, "logical_xor"))


@public(method=True, inplace=True)
def logical_not(input: Tensor, *, out: Any = None) -> Tensor:
    x = tensor_arg(input, "logical_not")
    return cast_into_out(wrap(unary_node(P.bitwise_not, _truth(x, x.device))), out, "logical_not")


@public(method=True)
def isnan(input: Tensor) -> Tensor:
    n = tensor_arg(input, "isnan")._node
    if not n.dtype.is_floating_point:
        return _fill_bool(n, False)
    return wrap(binary_node(P.ne, n, n, dt.bool_))


@public(method=True)
def isinf(input: Tensor) -> Tensor:
    n = tensor_arg(input, "isinf")._node
    if not n.dtype.is_floating_point:
        return _fill_bool(n, False)
    return wrap(binary_node(P.eq, unary_node(P.abs, n), const_like(math.inf, n), dt.bool_))


@public(method=True)
def isposinf(input: Tensor, *, out: Any = None) -> Tensor:
    n = tensor_arg(input, "isposinf")._node
    result = (
        wrap(binary_node(P.eq, n, const_like(math.inf, n), dt.bool_))
        if n.dtype.is_floating_point
        else isinf(input)
    )
    return _into_out_same_dtype(
        result, out, "isposinf", "isposinf does not support non-boolean outputs."
    )


@public(method=True)
def isneginf(input: Tensor, *, out: Any = None) -> Tensor:
    n = tensor_arg(input, "isneginf")._node
    result = (
        wrap(binary_node(P.eq, n, const_like(-math.inf, n), dt.bool_))
        if n.dtype.is_floating_point
        else isinf(input)
    )
    return _into_out_same_dtype(
        result, out, "isneginf", "isneginf does not support non-boolean outputs."
    )


@public(method=True)
def isfinite(input: Tensor) -> Tensor:
    n = tensor_arg(input, "isfinite")._node
    if not n.dtype.is_floating_point:
        return _fill_bool(n, True)
    # |x| < inf is false for both infinities and NaN.
    return wrap(binary_node(P.lt, unary_node(P.abs, n), const_like(math.inf, n), dt.bool_))


def _fill_bool(n: Node, value: bool) -> Tensor:
    return wrap(
        make_node(
            P.expand,
            (const_node(value, dt.bool_, n.device),),
            (n.shape,),
            n.shape,
            dt.bool_,
            n.device,
        )
    )


@public(method=True)
def isreal(input: Tensor) -> Tensor:
    """All True: lazytorch has no complex dtypes."""
    return _fill_bool(tensor_arg(input, "isreal")._node, True)


_NAN_TO_NUM_OUT = "nan_to_num: dtype of out: {got} should be same as input: {want}"


@public(method=True, inplace=True)
def nan_to_num(
    input: Tensor,
    nan: float | None = None,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Any = None,
) -> Tensor:
    n = tensor_arg(input, "nan_to_num")._node
    if not n.dtype.is_floating_point:
        return _into_out_same_dtype(_copy(n), out, "nan_to_num", _NAN_TO_NUM_OUT)
    info = finfo(n.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    value = where_node(
        binary_node(P.ne, n, n, dt.bool_), const_like(0.0 if nan is None else nan, n), n
    )
    value = where_node(
        binary_node(P.eq, n, const_like(math.inf, n), dt.bool_), const_like(hi, n), value
    )
    value = where_node(
        binary_node(P.eq, n, const_like(-math.inf, n), dt.bool_), const_like(lo, n), value
    )
    return _into_out_same_dtype(wrap(value), out, "nan_to_num", _NAN_TO_NUM_OUT)


@public()
def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Elements of `input` where `condition` holds, else of `other` (scalars allowed).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.
    """
    if input is None and other is None:
        # (the method, bound from lazytorch.ops.indexing, which imports this module)
        return tensor_arg(condition, "where", "condition").nonzero(as_tuple=True)
    c = tensor_arg(condition, "where", "condition")
    if c.dtype is not dt.bool_:
        raise op_error(
            RuntimeError,
            "where",
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {c.dtype.name.capitalize()}",
        )
    a, b = _operand(input, "where"), _operand(other, "where")
    d = (
        result_type(a, b)
        if (isinstance(a, Tensor) or isinstance(b, Tensor))
        else _scalar_pair_dtype(a, b)
    )
    dev = device_of(c, a, b, op="where")
    # A number is converted to the result dtype with torch's check (int8 takes no 300;
    # torch 2.13 checks float32's range here but lets float16 round to inf).
    half = d.is_low_float
    a, b = (
        checked_scalar(v, d, "where", check_float=not half) if isinstance(v, Number) else v
        for v in (a, b)
    )
    return wrap(where_node(c._node, to_node(a, d, dev), to_node(b, d, dev)))


def _scalar_pair_dtype(a: Any, b: Any) -> dt.DType:
    default = _config.get_default_dtype()
    return dt.promote_types(dt.scalar_dtype(a, default), dt.scalar_dtype(b, default))


# -- activations that are also torch.* functions ------------------------------------------------
@public(method=True, inplace=True)
def relu(input: Tensor) -> Tensor:
    """max(x, 0); NaN stays NaN."""
    n = tensor_arg(input, "relu")._node
    if n.dtype is dt.bool_:
        raise op_error(RuntimeError, "relu", "\"clamp_min_cpu\" not implemented for 'Bool'")
    if not _tracks_grad(n):
        return wrap(binary_node(P.maximum, n, const_like(0, n)))
    # The same value as 0 where x <= 0, else x (NaN too): torch's gradient is 0 at x = 0,
    # where max(x, 0) would split it with the constant.
    out = wrap(where_node(binary_node(P.le, n, const_like(0, n), dt.bool_), const_like(0, n), n))
    return name_grad_fn(out, "ReluBackward0", input)


# -- shifts: no primitive; multiplications and floor divisions by powers of two --------------
def _shift_args(input: Any, other: Any, op: str, kernel: str) -> tuple[Node, Node, int]:
    a, b = _operand(input, op), _operand(other, op)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise op_error(TypeError, op, f"{op}() expects at least one Tensor operand")
    d = result_type(a, b)
    if d.is_floating_point or d is dt.bool_:
        raise _not_implemented(op, kernel, d)
    dev = device_of(a, b, op=op)
    _, (na, nb) = broadcast_nodes([to_node(a, d, dev), to_node(b, d, dev)], op)
    return na, nb, d.bits


def _halves(nb: Node, bits: int) -> tuple[Node, Node, Node]:
    """(in range, 2**h, 2**(b - h)) with h = b // 2: each factor fits the dtype, even for a
    shift by bits - 1 (the shift itself is masked to 0 outside [0, bits))."""
    inside = binary_node(
        P.bitwise_and,
        binary_node(P.ge, nb, const_like(0, nb), dt.bool_),
        binary_node(P.lt, nb, const_like(bits, nb), dt.bool_),
    )
    b = where_node(inside, nb, const_like(0, nb))
    h = binary_node(P.floordiv, b, const_like(2, b))
    f64 = dt.float64

    def pow2(k: Node) -> Node:
        return cast(binary_node(P.pow, const_like(2.0, cast(k, f64)), cast(k, f64)), nb.dtype)

    return inside, pow2(h), pow2(binary_node(P.sub, b, h))


@public(method=True)
def bitwise_left_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """input shifted left by `other` bits, wrapping in input's integer dtype; a shift
    outside [0, bits) gives 0 (as torch).

    >>> import lazytorch
    >>> lazytorch.tensor([1, -3, 5], dtype=lazytorch.int8) << 2
    tensor([  4, -12,  20], dtype=lazytorch.int8)
    """
    na, nb, bits = _shift_args(input, other, "bitwise_left_shift", "lshift_cpu")
    inside, p1, p2 = _halves(nb, bits)
    shifted = binary_node(P.mul, binary_node(P.mul, na, p1), p2)
    return cast_into_out(
        wrap(where_node(inside, shifted, const_like(0, na))), out, "bitwise_left_shift"
    )


@public(method=True)
def bitwise_right_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """input shifted right by `other` bits (arithmetic: the sign fills in); a shift outside
    [0, bits) gives -1 for negative values and 0 otherwise (as torch).

    >>> import lazytorch
    >>> lazytorch.tensor([-7, 9]) >> 1
    tensor([-4,  4])
    """
    na, nb, bits = _shift_args(input, other, "bitwise_right_shift", "rshift_cpu")
    inside, p1, p2 = _halves(nb, bits)
    shifted = binary_node(P.floordiv, binary_node(P.floordiv, na, p1), p2)
    sign = const_like(0, na)
    if na.dtype.is_signed:
        sign = where_node(binary_node(P.lt, na, sign, dt.bool_), const_like(-1, na), sign)
    return cast_into_out(wrap(where_node(inside, shifted, sign)), out, "bitwise_right_shift")
