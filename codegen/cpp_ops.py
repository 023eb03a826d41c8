"""The C++ lowering table: one entry per primitive that can appear in a kernel body.

Each entry turns operand expressions (already in their compute type) into a C++ expression
for the result. Types: float16 values are computed in float and rounded to half after every
primitive (like the reference interpreter); small integer results are cast back to their
type so arithmetic wraps as in NumPy. A primitive without an entry raises
``NotImplementedError("no C++ lowering for 'x'")``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from lazytorch.ir import dtypes as dt

__all__ = ["CTYPE", "compute_type", "const_literal", "lower", "storage_type"]

CTYPE = {
    "bool": "bool",
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "float16": "lt::half",
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
    return "float" if d is dt.float16 else CTYPE[d.name]


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

        # The value as the reference rounds it (double -> float32/float16), written exactly.
        v = float(np.asarray(v, dtype=d.np))
        return f"{v.hex()}f"
    return v.hex()


def _wrap(expr: str, d: dt.DType) -> str:
    """Bring a C++ expression back to `d` (integer wraparound, float16 rounding)."""
    if d is dt.float16:
        return f"lt::round_half({expr})"
    if d in (dt.int8, dt.uint8, dt.int16, dt.int32):
        return f"({CTYPE[d.name]})({expr})"
    return f"({expr})"


def _fn(name32: str, name64: str) -> Callable[[str, dt.DType], str]:
    return lambda a, d: f"{name64 if d is dt.float64 else name32}({a})"


FLOAT_UNARY = {
    "exp": "lt::exp",
    "log": "lt::log",
    "tanh": "lt::tanh",
    "sigmoid": "lt::sigmoid",
    "erf": "lt::erf",
    "atan": "lt::atan",
    "log1p": "lt::log1p",
    "expm1": "lt::expm1",
}


def _unary(name: str, a: str, d: dt.DType) -> str:
    if name in FLOAT_UNARY:
        return f"{FLOAT_UNARY[name]}({a})"
    if name in ("sin", "cos"):
        # libm until lt::sin/cos reduce arguments beyond 2^27 exactly (Payne-Hanek): the
        # header's versions are exact below that but wrong for huge |x|.
        return (
            f"__builtin_{name}({a})"
            if d is dt.float64
            else f"(float)__builtin_{name}((double)({a}))"
        )
    if name == "sqrt":
        return _fn("__builtin_sqrtf", "__builtin_sqrt")(a, d)
    if name == "neg":
        return f"-{a}"
    if name == "abs":
        if d.is_floating_point:
            return _fn("__builtin_fabsf", "__builtin_fabs")(a, d)
        return a if not d.is_signed else f"lt::iabs({a})"
    if name in ("floor", "ceil", "round"):
        if not d.is_floating_point:
            return a
        f = {"floor": "floor", "ceil": "ceil", "round": "rint"}[name]  # rint: half to even
        return _fn(f"__builtin_{f}f", f"__builtin_{f}")(a, d)
    if name == "bitwise_not":
        return f"!{a}" if d is dt.bool_ else f"~{a}"
    raise LoweringMissing(name)


COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _binary(name: str, a: str, b: str, d: dt.DType, origin: int) -> str:
    t = compute_type(d)
    boolean = d is dt.bool_
    flt = d.is_floating_point
    if name in COMPARE:
        return f"({a} {COMPARE[name]} {b})"
    if name == "add":
        return f"({a} || {b})" if boolean else f"{a} + {b}"
    if name == "sub":
        return f"{a} - {b}"
    if name == "mul":
        return f"({a} && {b})" if boolean else f"{a} * {b}"
    if name == "div":
        return f"{a} / {b}"
    if name == "maximum":
        return f"({a} || {b})" if boolean else f"lt::maximum<{t}>({a}, {b})"
    if name == "minimum":
        return f"({a} && {b})" if boolean else f"lt::minimum<{t}>({a}, {b})"
    if name == "pow":
        return f"lt::pow({a}, {b})" if flt else f"lt::ipow<{t}>({a}, {b})"
    if name == "atan2":
        return f"lt::atan2({a}, {b})"
    if name == "floordiv":
        return (
            f"lt::ffloordiv<{t}>({a}, {b})"
            if flt
            else f"lt::ifloordiv<{t}>({a}, {b}, {origin}, err)"
        )
    if name == "remainder":
        return (
            f"lt::fremainder<{t}>({a}, {b})"
            if flt
            else f"lt::iremainder<{t}>({a}, {b}, {origin}, err)"
        )
    if name == "fmod":
        if flt:
            return _fn("__builtin_fmodf", "__builtin_fmod")(f"{a}, {b}", d)
        return f"lt::ifmod<{t}>({a}, {b}, {origin}, err)"
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        if boolean:
            return {
                "bitwise_and": f"({a} && {b})",
                "bitwise_or": f"({a} || {b})",
                "bitwise_xor": f"({a} != {b})",
            }[name]
        op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[name]
        return f"{a} {op} {b}"
    raise LoweringMissing(name)


def lower(
    name: str,
    args: list[str],
    in_dtypes: list[dt.DType],
    out: dt.DType,
    params: dict[str, object],
    origin: int,
) -> str:
    """The C++ expression computing primitive `name` (result in `out`'s compute type)."""
    if name == "cast":
        src = in_dtypes[0]
        a = args[0]
        if out is dt.bool_:
            return f"({a} != 0)"
        if out is dt.float16:
            return f"lt::round_half((float)({a}))"
        if src is dt.float16 and out is dt.float32:
            return a
        return f"({CTYPE[out.name]})({a})"
    if name == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if len(args) == 1:
        expr = _unary(name, args[0], in_dtypes[0])
    elif len(args) == 2:
        expr = _binary(name, args[0], args[1], in_dtypes[0], origin)
    else:
        raise LoweringMissing(name)
    if name in COMPARE:
        return expr
    return _wrap(expr, out)
