"""Elementwise primitives: unary math, binary arithmetic and comparisons, where, cast.

Inputs of an elementwise primitive have the output's shape or are 0-d (a scalar that
broadcasts without an explicit expand — the common ``x * 2`` stays two nodes). Any other
broadcasting is an explicit ``expand`` recorded by the public op. Operands already share
one dtype; promotion is the public op's job.

Reference numerics: float16 is computed in float32 and rounded once, as torch does on CPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lazytorch.ir._lazynp import np
from lazytorch.ir.dtypes import DType, bool_
from lazytorch.ir.primitives import Primitive, define


def elementwise_shape(inputs: tuple[Any, ...], *attrs: Any) -> tuple[Any, ...]:
    out: tuple[Any, ...] = ()
    for x in inputs:
        if x.shape:
            if not out:
                out = x.shape
            elif x.shape != out:
                raise RuntimeError(
                    f"elementwise inputs must share a shape or be 0-d, got "
                    f"{[list(i.shape) for i in inputs]}"
                )
    return out


def _same_dtype(inputs: tuple[Any, ...], *attrs: Any) -> DType:
    d = inputs[0].dtype
    for x in inputs[1:]:
        if x.dtype is not d:
            raise TypeError(
                f"elementwise inputs must share a dtype, got {[i.dtype for i in inputs]}"
            )
    return d


def _floating_only(name: str) -> Callable[..., DType]:
    def rule(inputs: tuple[Any, ...], *attrs: Any) -> DType:
        d = _same_dtype(inputs)
        if not d.is_floating_point:
            raise TypeError(f"{name}: expected a floating-point input, got {d}")
        return d

    return rule


def _integral_only(name: str) -> Callable[..., DType]:
    def rule(inputs: tuple[Any, ...], *attrs: Any) -> DType:
        d = _same_dtype(inputs)
        if d.is_floating_point:
            raise TypeError(f"{name}: expected an integer or bool input, got {d}")
        return d

    return rule


def _numeric_only(name: str) -> Callable[..., DType]:
    def rule(inputs: tuple[Any, ...], *attrs: Any) -> DType:
        d = _same_dtype(inputs)
        if d is bool_:
            raise TypeError(f"{name}: expected a numeric input, got {d}")
        return d

    return rule


def _compare_dtype(inputs: tuple[Any, ...], *attrs: Any) -> DType:
    _same_dtype(inputs)
    return bool_


def _via_f32(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run `fn` in float32 when the inputs are float16, rounding the result once."""

    def ref(*xs: Any) -> Any:
        if xs[0].dtype == np.float16:
            return fn(*[x.astype(np.float32) for x in xs]).astype(np.float16)
        return fn(*xs)

    return ref


def _no_int_zero_division(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def ref(a: Any, b: Any) -> Any:
        if a.dtype.kind in "iu" and np.any(b == 0):
            raise RuntimeError(f"{name}: ZeroDivisionError (integer division by zero)")
        return _via_f32(fn)(a, b)

    return ref


def _c_pow(a: Any, b: Any) -> Any:
    # C's pow, elementwise. NumPy 2 swaps in sqrt for a broadcast exponent of 0.5, which
    # differs at -inf and -0.0 (sqrt(-inf) is NaN, pow(-inf, 0.5) is inf): give it full arrays.
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.power(np.array(np.broadcast_to(a, shape)), np.array(np.broadcast_to(b, shape)))


def _pow_ref(a: Any, b: Any) -> Any:
    if a.dtype.kind in "iu" and np.any(b < 0):
        # torch's integer pow: a negative exponent gives the integer part of 1 / a**|b|,
        # which is 1 for a = 1, +-1 by parity for a = -1, and 0 otherwise (0 included).
        # NumPy refuses negative integer powers, so they are computed apart.
        negative = b < 0
        out = np.power(a, np.where(negative, 0, b).astype(b.dtype))
        odd = (b & 1) == 1
        special = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        return np.where(negative, special, out).astype(a.dtype)
    return _via_f32(_c_pow)(a, b)


# libm's erf over a whole float64 array from the native extension (``native/special.cpp``),
# looked up at the first erf through `native_erf_loader`, which the runtime sets (the IR
# does not import the layers that load the extension): it returns the function or None.
native_erf_loader: Callable[[], Any] | None = None
_NATIVE_ERF: Any = ...


def _erf(x: Any) -> Any:
    # NumPy has no erf; libm's is the accurate reference (the reference favors exactness).
    # math.erf is that function too, at ~70 ns a call: the native loop where it is built.
    global _NATIVE_ERF
    if _NATIVE_ERF is ...:
        _NATIVE_ERF = native_erf_loader() if native_erf_loader is not None else None
    x64 = x.astype(np.float64)
    if _NATIVE_ERF is not None:
        return _NATIVE_ERF(x64).reshape(x.shape).astype(x.dtype)
    out = np.frompyfunc(math.erf, 1, 1)(x64)
    return np.asarray(out, dtype=np.float64).astype(x.dtype)


def _sigmoid(x: Any) -> Any:
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _integer_identity(fn: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any) -> Any:
        return x if x.dtype.kind in "iub" else _via_f32(fn)(x)

    return ref


def _unary(
    name: str,
    ref: Callable[..., Any],
    *,
    floating: bool,
    doc: str,
    cost: int = 1,
    transcendental: bool = False,
) -> None:
    define(
        Primitive(
            name,
            "elementwise",
            nin=1,
            shape_rule=elementwise_shape,
            dtype_rule=_floating_only(name) if floating else _same_dtype,
            ref=ref,
            doc=doc,
            cost=cost,
            transcendental=transcendental,
        )
    )


# (name, NumPy function, doc, inline cost, transcendental)
for _name, _fn, _doc, _cost, _tr in [
    ("exp", "exp", "e**x", 4, True),
    ("log", "log", "natural logarithm", 4, True),
    ("sqrt", "sqrt", "square root", 2, False),
    ("sin", "sin", "sine", 4, True),
    ("cos", "cos", "cosine", 4, True),
    ("tanh", "tanh", "hyperbolic tangent", 4, True),
    ("atan", "arctan", "inverse tangent", 4, True),
    ("log1p", "log1p", "log(1 + x), accurate near 0", 4, True),
    ("expm1", "expm1", "exp(x) - 1, accurate near 0", 4, True),
]:
    _unary(
        _name,
        _via_f32(lambda x, _f=_fn: getattr(np, _f)(x)),
        floating=True,
        doc=_doc,
        cost=_cost,
        transcendental=_tr,
    )

_unary(
    "sigmoid",
    _via_f32(_sigmoid),
    floating=True,
    doc="1 / (1 + exp(-x))",
    cost=4,
    transcendental=True,
)
_unary("erf", _via_f32(_erf), floating=True, doc="the error function", cost=4, transcendental=True)
_unary("neg", lambda x: np.negative(x), floating=False, doc="-x (wraps for unsigned)")
_unary("abs", lambda x: np.abs(x), floating=False, doc="|x|")
_unary("floor", _integer_identity(lambda x: np.floor(x)), floating=False, doc="round toward -inf")
_unary("ceil", _integer_identity(lambda x: np.ceil(x)), floating=False, doc="round toward +inf")
_unary("round", _integer_identity(lambda x: np.round(x)), floating=False, doc="round half to even")
define(
    Primitive(
        "bitwise_not",
        "elementwise",
        nin=1,
        shape_rule=elementwise_shape,
        dtype_rule=_integral_only("bitwise_not"),
        ref=lambda x: np.invert(x),
        doc="~x; logical not for bool",
    )
)


def _binary(
    name: str,
    ref: Callable[..., Any],
    dtype_rule: Callable[..., DType],
    doc: str,
    *,
    cost: int = 1,
    transcendental: bool = False,
    compare: str | None = None,
) -> None:
    define(
        Primitive(
            name,
            "elementwise",
            nin=2,
            shape_rule=elementwise_shape,
            dtype_rule=dtype_rule,
            ref=ref,
            doc=doc,
            cost=cost,
            transcendental=transcendental,
            compare=compare,
        )
    )


_binary("add", _via_f32(lambda a, b: np.add(a, b)), _same_dtype, "a + b")
_binary("sub", _via_f32(lambda a, b: np.subtract(a, b)), _same_dtype, "a - b")
_binary("mul", _via_f32(lambda a, b: np.multiply(a, b)), _same_dtype, "a * b")
_binary("div", _via_f32(lambda a, b: np.true_divide(a, b)), _floating_only("div"), "a / b", cost=2)
_binary(
    "floordiv",
    _no_int_zero_division("floordiv", lambda a, b: np.floor_divide(a, b)),
    _numeric_only("floordiv"),
    "floor(a / b)",
)
_binary(
    "remainder",
    _no_int_zero_division("remainder", lambda a, b: np.remainder(a, b)),
    _numeric_only("remainder"),
    "a mod b with the sign of b (Python's %)",
)
_binary(
    "fmod",
    _no_int_zero_division("fmod", lambda a, b: np.fmod(a, b)),
    _numeric_only("fmod"),
    "a mod b with the sign of a (C's fmod)",
)
_binary("pow", _pow_ref, _numeric_only("pow"), "a ** b", cost=6, transcendental=True)
_binary("maximum", lambda a, b: np.maximum(a, b), _same_dtype, "max(a, b), NaN-propagating")
_binary("minimum", lambda a, b: np.minimum(a, b), _same_dtype, "min(a, b), NaN-propagating")
_binary(
    "atan2",
    _via_f32(lambda a, b: np.arctan2(a, b)),
    _floating_only("atan2"),
    "atan(a / b) by quadrant",
    transcendental=True,
)
for _name, _fn, _symbol in [
    ("eq", "equal", "=="),
    ("ne", "not_equal", "!="),
    ("lt", "less", "<"),
    ("le", "less_equal", "<="),
    ("gt", "greater", ">"),
    ("ge", "greater_equal", ">="),
]:
    _binary(
        _name,
        lambda a, b, _f=_fn: getattr(np, _f)(a, b),
        _compare_dtype,
        f"a {_name} b -> bool",
        compare=_symbol,
    )
for _name, _fn in [
    ("bitwise_and", "bitwise_and"),
    ("bitwise_or", "bitwise_or"),
    ("bitwise_xor", "bitwise_xor"),
]:
    _binary(
        _name,
        lambda a, b, _f=_fn: getattr(np, _f)(a, b),
        _integral_only(_name),
        f"{_name}; logical for bool",
    )


def _where_dtype(inputs: tuple[Any, ...], *attrs: Any) -> DType:
    if inputs[0].dtype is not bool_:
        raise TypeError(f"where: condition must be bool, got {inputs[0].dtype}")
    return _same_dtype(inputs[1:])


define(
    Primitive(
        "where",
        "elementwise",
        nin=3,
        shape_rule=elementwise_shape,
        dtype_rule=_where_dtype,
        ref=lambda c, a, b: np.where(c, a, b),
        doc="a where cond else b",
    )
)


def _cast_ref(x: Any, dtype: DType) -> Any:
    return x.astype(dtype.np)


define(
    Primitive(
        "cast",
        "elementwise",
        nin=1,
        attr_names=("dtype",),
        shape_rule=elementwise_shape,
        dtype_rule=lambda inputs, dtype: dtype,
        ref=_cast_ref,
        doc="convert to another dtype (float -> int truncates toward zero)",
    )
)


def _bitcast_dtype(inputs: tuple[Any, ...], dtype: DType) -> DType:
    if inputs[0].dtype.itemsize != dtype.itemsize:
        raise TypeError(
            f"bitcast: {inputs[0].dtype} and {dtype} differ in size "
            f"({inputs[0].dtype.itemsize} and {dtype.itemsize} bytes)"
        )
    return dtype


def _bitcast_ref(x: Any, dtype: DType) -> Any:
    a = np.asarray(x)
    if dtype is bool_:  # any nonzero byte is true (a bool array holds only 0 and 1)
        return a.view(np.uint8) != 0
    return a.view(dtype.np)


define(
    Primitive(
        "bitcast",
        "elementwise",
        nin=1,
        attr_names=("dtype",),
        shape_rule=elementwise_shape,
        dtype_rule=_bitcast_dtype,
        ref=_bitcast_ref,
        doc="the same bits read as another dtype of the same size (``x.view(torch.int32)``)",
    )
)
