"""The Triton lowering table: one entry per primitive that can appear in a kernel body.

Each entry turns operand expressions (already in their compute type) into a Triton
expression for the result, as `codegen/cpp_ops.py` does for C++ (the semantics are the
same; see `lazytorch.codegen.triton`'s module docstring). Types: float16 values are
computed in float32 and rounded back after every primitive; small integer results are cast
back to their type so arithmetic wraps as in NumPy.

`LOWERINGS` maps each elementwise primitive's name to its lowering; a new elementwise
primitive adds one entry, and ``tests/codegen/test_lowering_tables.py`` fails until it does (or
lists it as falling back, with a reason). A lowering may call helper functions: it names
them through its `use` argument, which records them for the module being written.

The helpers themselves are real ``@triton.jit`` functions in `codegen/triton_helpers.py`.
That module imports Triton, which the library must not need, so `helpers` reads the file as
text and parses it (no import): each top-level function's source, decorator to last line,
and the ``_lt_`` helpers it calls. A generated module copies the ones it uses, so it stays
self-contained.

>>> from lazytorch.ir import dtypes as dt
>>> used = set()
>>> lower("tanh", ["x"], [dt.float16], dt.float16, used.add)
'(_lt_tanh(x)).to(tl.float16).to(tl.float32)'
>>> used, helpers()["_lt_tanh"][1]
({'_lt_tanh'}, ('_lt_expm1', '_lt_div'))
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

from lazytorch.ir import dtypes as dt
from lazytorch.ir.primitives import get

__all__ = [
    "CHECKS_DIVISOR",
    "LOWERINGS",
    "NARROW_INTS",
    "TL",
    "TritonLoweringMissing",
    "compute_tl",
    "helpers",
    "lower",
    "storage_tl",
]

# Storage types; compute types are the same except the 16-bit floats, computed in float32.
TL = {
    "bool": "tl.int1",
    "uint8": "tl.uint8",
    "int8": "tl.int8",
    "int16": "tl.int16",
    "int32": "tl.int32",
    "int64": "tl.int64",
    "float16": "tl.float16",
    "bfloat16": "tl.bfloat16",
    "float32": "tl.float32",
    "float64": "tl.float64",
}
NARROW_INTS = (dt.int8, dt.uint8, dt.int16, dt.int32)
# Integer forms of these report a zero divisor (the kernel writer emits the check; their
# lowerings yield 0 there).
CHECKS_DIVISOR = frozenset(["floordiv", "remainder", "fmod"])


class TritonLoweringMissing(NotImplementedError):
    """Something in the schedule the Triton lowering does not handle yet (names it)."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"triton backend: {what} is not supported yet; run this program with "
            "lazytorch.backend('cpp') or lazytorch.backend('interpreter') meanwhile"
        )
        self.what = what


def compute_tl(d: dt.DType) -> str:
    return "tl.float32" if d.is_low_float else TL[d.name]


def storage_tl(d: dt.DType) -> str:
    return TL[d.name]


def round_low(expr: str, d: dt.DType, use: Use) -> str:
    """`expr` rounded to the 16-bit float `d`, in float32 again (its compute type).

    bfloat16 rounds by a helper in integer ops (`_lt_round_bf16`): Triton's interpreter
    truncates in ``.to(tl.bfloat16)``. A float64 goes through float32 first, as torch and
    NumPy (ml_dtypes) convert a float64 to bfloat16.
    """
    if d is dt.bfloat16:
        use("_lt_round_bf16")
        return f"_lt_round_bf16(({expr}).to(tl.float32))"
    return f"({expr}).to({TL[d.name]}).to(tl.float32)"


# A lowering: (operand expressions, the operands' dtype, the result's dtype, `use`: records
# a helper the expression calls and returns its name) -> the Triton expression of the
# result in its compute type.
Use = Callable[[str], object]
Lowering = Callable[[list[str], dt.DType, dt.DType, Use], str]
# The rule of an arithmetic primitive: (operands, their dtype, use) -> an expression in the
# operands' compute type, which `_arith` brings back to the result's dtype.
Rule = Callable[[list[str], dt.DType, Use], str]


def _arith(rule: Rule) -> Lowering:
    """A lowering computing in the operands' compute type, rounded or wrapped to `out`."""

    def lowering(a: list[str], d: dt.DType, out: dt.DType, use: Use) -> str:
        expr = rule(a, d, use)
        if out.is_low_float:  # round after every primitive
            return round_low(expr, out, use)
        if out in NARROW_INTS:
            return f"({expr}).to({TL[out.name]})"  # wrap around like NumPy
        return expr

    return lowering


def _helper(name: str) -> Lowering:
    """A call of helper `name` of triton_helpers.py on every operand."""

    def rule(a: list[str], d: dt.DType, use: Use) -> str:
        use(name)
        return f"{name}({', '.join(a)})"

    return _arith(rule)


def _by_kind(floating: str, integral: str) -> Lowering:
    """A binary helper with a float and an integer form."""

    def rule(a: list[str], d: dt.DType, use: Use) -> str:
        fn = floating if d.is_floating_point else integral
        use(fn)
        return f"{fn}({a[0]}, {a[1]})"

    return _arith(rule)


def _tl(fn: str) -> Lowering:
    """A ``tl`` builtin of every float type."""
    return _arith(lambda a, d, use: f"tl.{fn}({a[0]})")


def _rounded(fn32: str, fn64: str) -> Lowering:
    """A ``tl`` function of two forms: correctly rounded for float32 (the plain one is
    approximate on NVIDIA), the plain one for float64."""
    return _arith(lambda a, d, use: f"tl.{fn64 if d is dt.float64 else fn32}({', '.join(a)})")


def _compare(name: str) -> Lowering:
    symbol = get(name).compare
    return lambda a, d, out, use: f"{a[0]} {symbol} {a[1]}"


def _float_only(fn: str) -> Lowering:
    """``tl.<fn>`` of a float; integers are their own floor/ceil."""
    return _arith(lambda a, d, use: f"tl.{fn}({a[0]})" if d.is_floating_point else a[0])


def _infix(op: str, on_bool: str | None = None) -> Lowering:
    """An infix operator; on bool `on_bool` instead (bool values are 0/1)."""
    return _arith(lambda a, d, use: f"{a[0]} {on_bool if on_bool and d is dt.bool_ else op} {a[1]}")


def _cast(a: list[str], src: dt.DType, out: dt.DType, use: Use) -> str:
    if out is dt.bool_:
        return f"{a[0]} != 0"
    if out.is_low_float:
        return round_low(a[0], out, use)
    if src.is_low_float and out is dt.float32:
        return a[0]
    return f"{a[0]}.to({TL[out.name]})"


_UBITS = {1: "tl.uint8", 2: "tl.uint16", 4: "tl.uint32", 8: "tl.uint64"}


def _bitcast(a: list[str], src: dt.DType, out: dt.DType, use: Use) -> str:
    """The bits of `a[0]` as stored in `src` (a 16-bit float is computed as a float32 that
    holds its value exactly), read as `out`, in `out`'s compute type. bfloat16 is float32's
    upper half, moved by shifts: Triton's conversions may flush its subnormals."""
    u = _UBITS[out.itemsize]
    x = a[0]
    if src is dt.bfloat16:
        bits = f"({x}.to(tl.uint32, bitcast=True) >> 16).to(tl.uint16)"
    elif src is dt.float16:  # exact: the value is a float16's already
        bits = f"{x}.to(tl.float16).to(tl.uint16, bitcast=True)"
    elif src is dt.bool_:
        bits = f"{x}.to(tl.uint8)"
    else:
        bits = f"{x}.to({u}, bitcast=True)"
    if out is dt.bool_:
        return f"{bits} != 0"
    if out is dt.bfloat16:
        return f"({bits}.to(tl.uint32) << 16).to(tl.float32, bitcast=True)"
    if out is dt.float16:
        return f"{bits}.to(tl.float16, bitcast=True).to(tl.float32)"
    return f"{bits}.to({TL[out.name]}, bitcast=True)"


def _extremum(name: str, on_bool: str) -> Lowering:
    """NaN-propagating max/min of floats (a helper), tl's of integers, | / & of bools."""

    def rule(a: list[str], d: dt.DType, use: Use) -> str:
        if d is dt.bool_:
            return f"{a[0]} {on_bool} {a[1]}"
        if d.is_floating_point:
            use(f"_lt_{name}")
            return f"_lt_{name}({a[0]}, {a[1]})"
        return f"tl.{name}({a[0]}, {a[1]})"

    return _arith(rule)


def _round(a: list[str], d: dt.DType, use: Use) -> str:
    if not d.is_floating_point:
        return a[0]
    use("_lt_rint")
    return f"_lt_rint({a[0]})"


def _fmod(a: list[str], d: dt.DType, use: Use) -> str:
    if d.is_floating_point:
        return f"{a[0]} % {a[1]}"  # Triton's float % is C's fmod
    use("_lt_ifmod")
    return f"_lt_ifmod({a[0]}, {a[1]})"


# primitive name -> lowering; tests/codegen/test_lowering_tables.py checks it covers every
# elementwise primitive (the others are loops, stores and extern kernels of triton.py).
LOWERINGS: dict[str, Lowering] = {
    "cast": _cast,
    "bitcast": _bitcast,
    "where": lambda a, d, out, use: f"tl.where({a[0]}, {a[1]}, {a[2]})",
    **{name: _compare(name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    # unary
    "exp": _tl("exp"),
    "log": _tl("log"),
    "sin": _tl("sin"),
    "cos": _tl("cos"),
    "erf": _tl("erf"),
    "sqrt": _rounded("sqrt_rn", "sqrt"),
    "tanh": _helper("_lt_tanh"),
    "sigmoid": _helper("_lt_sigmoid"),
    "atan": _helper("_lt_atan"),
    "log1p": _helper("_lt_log1p"),
    "expm1": _helper("_lt_expm1"),
    "neg": _arith(lambda a, d, use: f"-{a[0]}"),
    "abs": _arith(
        lambda a, d, use: f"tl.abs({a[0]})" if d.is_floating_point or d.is_signed else a[0]
    ),
    "floor": _float_only("floor"),
    "ceil": _float_only("ceil"),
    "round": _arith(_round),
    "bitwise_not": _arith(lambda a, d, use: f"{a[0]} == 0" if d is dt.bool_ else f"~{a[0]}"),
    # binary
    "add": _infix("+", "|"),
    "sub": _infix("-"),
    "mul": _infix("*", "&"),
    "div": _arith(
        lambda a, d, use: f"{a[0]} / {a[1]}" if d is dt.float64 else f"tl.div_rn({a[0]}, {a[1]})"
    ),
    "maximum": _extremum("maximum", "|"),
    "minimum": _extremum("minimum", "&"),
    "pow": _by_kind("_lt_pow", "_lt_ipow"),
    "atan2": _helper("_lt_atan2"),
    "floordiv": _by_kind("_lt_ffloordiv", "_lt_ifloordiv"),
    "remainder": _by_kind("_lt_fremainder", "_lt_iremainder"),
    "fmod": _arith(_fmod),
    "bitwise_and": _infix("&"),
    "bitwise_or": _infix("|"),
    "bitwise_xor": _infix("^"),
}


def lower(name: str, args: list[str], in_dtypes: list[dt.DType], out: dt.DType, use: Use) -> str:
    """The Triton expression computing primitive `name` (result in `out`'s compute type)."""
    rule = LOWERINGS.get(name)
    if rule is None:
        raise TritonLoweringMissing(f"primitive {name!r}")
    return rule(args, in_dtypes[0], out, use)


HELPERS_FILE = Path(__file__).with_name("triton_helpers.py")


@functools.cache
def helpers() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (source, the helpers it calls in order of first call), of every function of
    `codegen/triton_helpers.py`, read as text (importing it would need Triton)."""
    text = HELPERS_FILE.read_text(encoding="utf-8")
    lines = text.splitlines()
    functions = [f for f in ast.parse(text).body if isinstance(f, ast.FunctionDef)]
    names = {f.name for f in functions}
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for f in functions:
        first = min([f.lineno, *(d.lineno for d in f.decorator_list)])
        assert f.end_lineno is not None
        calls = sorted(
            (n.lineno, n.col_offset, n.id)
            for n in ast.walk(f)
            if isinstance(n, ast.Name) and n.id in names and n.id != f.name
        )
        deps = tuple(dict.fromkeys(name for _, _, name in calls))
        out[f.name] = ("\n".join(lines[first - 1 : f.end_lineno]), deps)
    return out
