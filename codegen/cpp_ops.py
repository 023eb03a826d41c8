"""The C++ lowering table: one entry per primitive that can appear in a kernel body.

Each entry turns operand expressions (already in their compute type) into a C++ expression
for the result. Types: float16 and bfloat16 values are computed in float (their
`DType.compute`) and rounded to their type after every primitive (`rounded`, like the
reference interpreter); small integer results are cast back to their type so arithmetic
wraps as in NumPy.

`LOWERINGS` maps each elementwise primitive's name to its lowering (a table, like
tinygrad's ``code_for_op``): a new elementwise primitive adds one entry here, and
``tests/codegen/test_lowering_tables.py`` fails until it does (or lists it as falling back, with a
reason). At run time a primitive without an entry raises `LoweringMissing` (a
NotImplementedError naming the op and the backend).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from lazytorch.ir import dtypes as dt
from lazytorch.ir.primitives import get

__all__ = [
    "CTYPE",
    "LOWERINGS",
    "LoweringMissing",
    "compute_type",
    "const_literal",
    "lower",
    "rounded",
    "storage_type",
]

CTYPE = {
    "bool": "bool",
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "float16": "lt::half",
    "bfloat16": "lt::bf16",
    "float32": "float",
    "float64": "double",
}


class LoweringMissing(NotImplementedError):
    """The C++ lowering table has no rule for a primitive (the message names it and the fix)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"cpp backend: no lowering rule for primitive {name!r}; run this program with "
            "LAZYTORCH_BACKEND=interpreter (or lazytorch.backend('interpreter')) meanwhile"
        )
        self.primitive = name


def storage_type(d: dt.DType) -> str:
    return CTYPE[d.name]


def compute_type(d: dt.DType) -> str:
    return CTYPE[d.compute.name]


# 16-bit float -> the header function rounding a float to it (lazytorch_runtime.h)
_ROUND = {"float16": "lt::round_half", "bfloat16": "lt::round_bf16"}


def rounded(expr: str, d: dt.DType) -> str:
    """`expr`, a float, rounded to `d` if `d` is a 16-bit float (else `expr` itself).

    >>> rounded("x + y", dt.bfloat16), rounded("x + y", dt.float32)
    ('lt::round_bf16(x + y)', 'x + y')
    """
    return f"{_ROUND[d.name]}({expr})" if d.is_low_float else expr


def const_literal(value: object, d: dt.DType) -> str:
    """An exact C++ literal of `value` in `d`'s compute type."""
    if d is dt.bool_:
        return "true" if value else "false"
    if not d.is_floating_point:
        return f"(({CTYPE[d.name]}){int(value)}LL)"  # type: ignore[call-overload]
    v = float(value)  # type: ignore[arg-type]
    single = d is not dt.float64
    if math.isnan(v):
        return '__builtin_nanf("")' if single else '__builtin_nan("")'
    if math.isinf(v):
        inf = "__builtin_inff()" if single else "__builtin_inf()"
        return inf if v > 0 else f"(-{inf})"
    if single:
        import numpy as np

        # The value as the reference rounds it (double -> float32/16-bit), written exactly.
        v = float(np.asarray(v, dtype=d.np))
        return f"{v.hex()}f"
    return v.hex()


def _wrap(expr: str, d: dt.DType) -> str:
    """Bring a C++ expression back to `d` (integer wraparound, 16-bit float rounding)."""
    if d.is_low_float:
        return rounded(expr, d)
    if d in (dt.int8, dt.uint8, dt.int16, dt.int32):
        return f"({CTYPE[d.name]})({expr})"
    return f"({expr})"


def _fn(name32: str, name64: str) -> Callable[[str, dt.DType], str]:
    return lambda a, d: f"{name64 if d is dt.float64 else name32}({a})"


# A lowering: (operand expressions, the operands' dtype, the result's dtype, the node's
# origin for error reports) -> the C++ expression of the result in its compute type.
Lowering = Callable[[list[str], dt.DType, dt.DType, int], str]
# The rule of an arithmetic primitive: (operands, their dtype, origin) -> an expression in
# the operands' compute type, which `_arith` brings back to the result's dtype.
Rule = Callable[[list[str], dt.DType, int], str]


def _arith(rule: Rule) -> Lowering:
    """A lowering computing in the operands' compute type, rounded or wrapped to `out`."""
    return lambda a, d, out, origin: _wrap(rule(a, d, origin), out)


def _call(fn: str) -> Lowering:
    """One header function of every float type (``lt::exp``...)."""
    return _arith(lambda a, d, origin: f"{fn}({a[0]})")


def _libm_trig(name: str) -> Lowering:
    # libm: the header has no sin/cos. A vectorized Cody-Waite version, 1 ulp only for
    # |x| <= 2^27, was removed unused in commit 5c2b0d9 (restore it from its parent, with
    # its tests, if a Payne-Hanek reduction for huge |x| ever makes it usable).
    return _arith(
        lambda a, d, origin: (
            f"__builtin_{name}({a[0]})"
            if d is dt.float64
            else f"(float)__builtin_{name}((double)({a[0]}))"
        )
    )


def _rounding(fn: str) -> Lowering:
    """floor/ceil/rint of a float; integers are their own rounding."""
    return _arith(
        lambda a, d, origin: (
            _fn(f"__builtin_{fn}f", f"__builtin_{fn}")(a[0], d) if d.is_floating_point else a[0]
        )
    )


def _compare(name: str) -> Lowering:
    symbol = get(name).compare
    return lambda a, d, out, origin: f"({a[0]} {symbol} {a[1]})"


def _logical(op: str, on_bool: str) -> Lowering:
    """A bitwise operator; on bool its logical form (bool values are 0/1)."""
    return _arith(
        lambda a, d, origin: (
            f"({a[0]} {on_bool} {a[1]})" if d is dt.bool_ else f"{a[0]} {op} {a[1]}"
        )
    )


def _checked(fn: str, float_rule: Rule) -> Lowering:
    """Integer division-like helpers report a zero divisor (origin, err); floats do not."""
    return _arith(
        lambda a, d, origin: (
            float_rule(a, d, origin)
            if d.is_floating_point
            else f"lt::{fn}<{compute_type(d)}>({a[0]}, {a[1]}, {origin}, err)"
        )
    )


def _cast(a: list[str], src: dt.DType, out: dt.DType, origin: int) -> str:
    if out is dt.bool_:
        return f"({a[0]} != 0)"
    if out.is_low_float:  # from float64 or int64 via float32, as torch and ml_dtypes round
        return rounded(f"(float)({a[0]})", out)
    if src.is_low_float and out is src.compute:
        return a[0]
    return f"({CTYPE[out.name]})({a[0]})"


_UBITS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}


def _bitcast(a: list[str], src: dt.DType, out: dt.DType, origin: int) -> str:
    """The bits of `a[0]` as stored in `src` (a 16-bit float is computed as a float that
    holds its value exactly), read as `out`, in `out`'s compute type."""
    u = _UBITS[out.itemsize]
    if src is dt.bfloat16:
        bits = f"lt::bf16_bits({a[0]})"
    elif src is dt.float16:
        bits = f"lt::bit_as<uint16_t>((lt::half)({a[0]}))"
    else:  # (an integer expression may have been promoted to int: narrow it first)
        bits = f"lt::bit_as<{u}>(({CTYPE[src.name]})({a[0]}))"
    if out is dt.bfloat16:
        return f"lt::float_of_bits((uint32_t){bits} << 16)"
    if out is dt.float16:
        return f"(float)lt::bit_as<lt::half>({bits})"
    if out is dt.bool_:
        return f"({bits} != 0)"
    return f"lt::bit_as<{CTYPE[out.name]}>({bits})"


def _abs(a: list[str], d: dt.DType, origin: int) -> str:
    if d.is_floating_point:
        return _fn("__builtin_fabsf", "__builtin_fabs")(a[0], d)
    return a[0] if not d.is_signed else f"lt::iabs({a[0]})"


# primitive name -> lowering; tests/codegen/test_lowering_tables.py checks it covers every
# elementwise primitive (the others are loops and extern calls of codegen/cpp.py).
LOWERINGS: dict[str, Lowering] = {
    "cast": _cast,
    "bitcast": _bitcast,
    "where": lambda a, d, out, origin: f"({a[0]} ? {a[1]} : {a[2]})",
    **{name: _compare(name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    # unary
    "exp": _call("lt::exp"),
    "log": _call("lt::log"),
    "tanh": _call("lt::tanh"),
    "sigmoid": _call("lt::sigmoid"),
    "erf": _call("lt::erf"),
    "atan": _call("lt::atan"),
    "log1p": _call("lt::log1p"),
    "expm1": _call("lt::expm1"),
    "sin": _libm_trig("sin"),
    "cos": _libm_trig("cos"),
    "sqrt": _arith(lambda a, d, origin: _fn("__builtin_sqrtf", "__builtin_sqrt")(a[0], d)),
    "neg": _arith(lambda a, d, origin: f"-{a[0]}"),
    "abs": _arith(_abs),
    "floor": _rounding("floor"),
    "ceil": _rounding("ceil"),
    "round": _rounding("rint"),  # rint: half to even
    "bitwise_not": _arith(lambda a, d, origin: f"!{a[0]}" if d is dt.bool_ else f"~{a[0]}"),
    # binary
    "add": _logical("+", "||"),
    "sub": _arith(lambda a, d, origin: f"{a[0]} - {a[1]}"),
    "mul": _logical("*", "&&"),
    "div": _arith(lambda a, d, origin: f"{a[0]} / {a[1]}"),
    "maximum": _arith(
        lambda a, d, origin: (
            f"({a[0]} || {a[1]})"
            if d is dt.bool_
            else f"lt::maximum<{compute_type(d)}>({a[0]}, {a[1]})"
        )
    ),
    "minimum": _arith(
        lambda a, d, origin: (
            f"({a[0]} && {a[1]})"
            if d is dt.bool_
            else f"lt::minimum<{compute_type(d)}>({a[0]}, {a[1]})"
        )
    ),
    "pow": _arith(
        lambda a, d, origin: (
            f"lt::pow({a[0]}, {a[1]})"
            if d.is_floating_point
            else f"lt::ipow<{compute_type(d)}>({a[0]}, {a[1]})"
        )
    ),
    "atan2": _arith(lambda a, d, origin: f"lt::atan2({a[0]}, {a[1]})"),
    "floordiv": _checked(
        "ifloordiv", lambda a, d, origin: f"lt::ffloordiv<{compute_type(d)}>({a[0]}, {a[1]})"
    ),
    "remainder": _checked(
        "iremainder", lambda a, d, origin: f"lt::fremainder<{compute_type(d)}>({a[0]}, {a[1]})"
    ),
    "fmod": _checked(
        "ifmod",
        lambda a, d, origin: _fn("__builtin_fmodf", "__builtin_fmod")(f"{a[0]}, {a[1]}", d),
    ),
    "bitwise_and": _logical("&", "&&"),
    "bitwise_or": _logical("|", "||"),
    "bitwise_xor": _logical("^", "!="),
}


def lower(
    name: str,
    args: list[str],
    in_dtypes: list[dt.DType],
    out: dt.DType,
    params: dict[str, object],
    origin: int,
) -> str:
    """The C++ expression computing primitive `name` (result in `out`'s compute type).

    >>> from lazytorch.ir import dtypes as dt
    >>> lower("add", ["x", "y"], [dt.int8, dt.int8], dt.int8, {}, 0)
    '(int8_t)(x + y)'
    >>> lower("lt", ["x", "y"], [dt.float16, dt.float16], dt.bool_, {}, 0)
    '(x < y)'
    """
    rule = LOWERINGS.get(name)
    if rule is None:
        raise LoweringMissing(name)
    return rule(args, in_dtypes[0], out, origin)
