"""Element types and torch's type-promotion rules.

A `DType` is a singleton per element type. NumPy is not imported here: the matching NumPy
dtype is resolved on first use (`DType.np`), so `import lazytorch` stays fast.

Promotion follows torch exactly (`torch.result_type`): operands fall in three tiers —
tensors with dimensions, zero-dim tensors, and Python scalars ("weak") — and a lower tier
can only raise the *category* (bool < integer < floating) of the result, never its width.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from lazytorch import _as_torch

__all__ = [
    "DType",
    "bfloat16",
    "bool_",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "promote_types",
    "result_type_of",
    "uint8",
]


class DType:
    """An element type, printed as ``lazytorch.float32``.

    >>> import lazytorch
    >>> lazytorch.float32.itemsize, lazytorch.float32.is_floating_point
    (4, True)
    """

    __slots__ = (
        "_np",
        "category",
        "compute",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "legacy_name",
        "name",
        "short",
    )

    # category: 0 bool, 1 integer, 2 floating
    def __init__(
        self, name: str, short: str, legacy: str, itemsize: int, category: int, signed: bool
    ) -> None:
        self.name = name
        self.short = short
        # torch's legacy type name ("Float", "Long"), which its error messages use.
        self.legacy_name = legacy
        self.itemsize = itemsize
        self.category = category
        self.is_floating_point = category == 2
        self.is_signed = signed
        # The dtype arithmetic runs in ("opmath"): the 16-bit floats compute in float32 and
        # round once per primitive, as torch's CPU kernels do; set below for them.
        self.compute: DType = self
        self._np: Any = None

    @property
    def np(self) -> Any:
        """The NumPy dtype with the same layout (imports NumPy on first use)."""
        if self._np is None:
            import numpy

            if self.name == "bfloat16":
                # NumPy has no bfloat16: ml_dtypes (made for exactly this, by the JAX team)
                # registers one with round-to-nearest-even casts and the ufuncs.
                import ml_dtypes

                self._np = numpy.dtype(ml_dtypes.bfloat16)
            else:
                self._np = numpy.dtype("bool" if self.name == "bool" else self.name)
        return self._np

    @property
    def is_low_float(self) -> bool:
        """float16 or bfloat16: stored in 16 bits, computed in float32 (`compute`)."""
        return self.compute is not self

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    def to_python(self, value: Any) -> Any:
        """A Python number converted to this dtype as c10 converts a Scalar, as a Python
        bool, int or float that the dtype holds exactly (so any later cast is exact).

        Floats: a double (or an int, rounded once) becomes a float32, and a float16 or
        bfloat16 is made from that float32 (two roundings, as in c10); past the range is
        inf; every bfloat16 NaN is the positive one (c10's 0x7FC0). No overflow check here:
        the ops that check do it first (`lazytorch.ops.creation.checked_scalar`).

        >>> import lazytorch
        >>> lazytorch.float16.to_python(1 + 2**-11 + 2**-40)  # one rounding would give 1.0009765625
        1.0
        >>> lazytorch.float32.to_python(2**60 + 2**36 + 1) == 2**60 + 2**37
        True
        """
        if self.category == 2:
            if self.itemsize == 8:
                return float(value)
            if isinstance(value, int):  # (a bool too)
                f = int_to_float32(int(value))
            else:
                f = double_to_float32(float(value))
            if self.itemsize == 4:
                return f
            return float32_to_float16(f) if self.name == "float16" else float32_to_bfloat16(f)
        if self.category == 1:
            # Integer scalars wrap into the dtype's range, as torch's do (uint8 + 300 is 44).
            v = int(value)
            bits = self.itemsize * 8
            v &= (1 << bits) - 1
            if self.is_signed and v >= 1 << (bits - 1):
                v -= 1 << bits
            return v
        return bool(value)

    def __repr__(self) -> str:
        return f"{_as_torch.NAME}.{self.name}"

    def __reduce__(self) -> str:
        # Pickle as the module-level singleton.
        return self.name if self.name != "bool" else "bool_"


# -- c10's scalar conversions, in Python (no NumPy: scalar_node calls these per op) --------
_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_F16 = struct.Struct("<e")


def double_to_float32(v: float) -> float:
    """C's ``(float)v``: rounded to nearest even; past float32's range, +-inf."""
    try:
        return _F32.unpack(_F32.pack(v))[0]  # type: ignore[no-any-return]
    except OverflowError:  # (struct refuses what C's cast makes inf)
        return math.copysign(math.inf, v)


def int_to_float32(v: int) -> float:
    """C's ``(float)v`` of an int64 or uint64: one rounding to 24 bits, ties to even
    (``float(v)`` first would round twice past 2**53)."""
    m = v if v >= 0 else -v
    if m <= 1 << 53:
        return double_to_float32(float(v))  # float(v) is exact here
    shift = m.bit_length() - 24
    q, r = divmod(m, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << shift), v)


def float32_to_float16(f: float) -> float:
    """c10::Half(float): a float32 value rounded to nearest even; past the range, +-inf."""
    try:
        return _F16.unpack(_F16.pack(f))[0]  # type: ignore[no-any-return]
    except OverflowError:
        return math.copysign(math.inf, f)


def float32_to_bfloat16(f: float) -> float:
    """c10::BFloat16(float): the float32 bits rounded to their top 16, nearest even (an
    overflow carries into the exponent and gives inf); every NaN becomes 0x7FC0."""
    if f != f:
        return math.nan
    bits = _U32.unpack(_F32.pack(f))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return _F32.unpack(_U32.pack(bits << 16))[0]  # type: ignore[no-any-return]


bool_ = DType("bool", "b8", "Bool", 1, 0, False)
uint8 = DType("uint8", "u8", "Byte", 1, 1, False)
int8 = DType("int8", "i8", "Char", 1, 1, True)
int16 = DType("int16", "i16", "Short", 2, 1, True)
int32 = DType("int32", "i32", "Int", 4, 1, True)
int64 = DType("int64", "i64", "Long", 8, 1, True)
float16 = DType("float16", "f16", "Half", 2, 2, True)
float32 = DType("float32", "f32", "Float", 4, 2, True)
float64 = DType("float64", "f64", "Double", 8, 2, True)
# torch.bfloat16: float32's 8-bit exponent with a 7-bit mantissa (float32 rounded to
# nearest even on conversion); NumPy values of it are ml_dtypes' bfloat16.
bfloat16 = DType("bfloat16", "bf16", "BFloat16", 2, 2, True)
float16.compute = bfloat16.compute = float32
LOW_FLOATS: tuple[DType, ...] = (float16, bfloat16)

ALL_DTYPES: tuple[DType, ...] = (
    bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64
)  # fmt: skip
BY_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}
BY_NAME.update(
    {
        "float": float32,
        "double": float64,
        "half": float16,
        "long": int64,
        "int": int32,
        "short": int16,
        "byte": uint8,
        "char": int8,
    }
)


def from_numpy_dtype(np_dtype: Any) -> DType:
    """The DType for a NumPy dtype; TypeError for dtypes lazytorch does not support."""
    d = _BY_NUMPY.get(np_dtype)  # (str() of a NumPy dtype costs microseconds)
    if d is not None:
        return d
    name = str(np_dtype)
    dt = BY_NAME.get(name)
    if dt is None or name in ("float", "int", "long"):
        raise TypeError(
            f"can't convert NumPy array of dtype {name}; supported dtypes are "
            + ", ".join(d.name for d in ALL_DTYPES)
        )
    if type(np_dtype).__module__.startswith("numpy"):  # (a dtype object: hashable)
        _BY_NUMPY[np_dtype] = dt
    return dt


# NumPy dtype -> DType, filled by from_numpy_dtype
_BY_NUMPY: dict[Any, DType] = {}


def _promote_ints(a: DType, b: DType) -> DType:
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    unsigned, signed = (a, b) if not a.is_signed else (b, a)
    # uint8 mixed with a signed int needs the next wider signed int to hold both ranges.
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32, 4: int64}.get(signed.itemsize, int64)


def _build_table() -> dict[tuple[DType, DType], DType]:
    table: dict[tuple[DType, DType], DType] = {}
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            if a is b:
                r = a
            elif a.category != b.category:
                r = a if a.category > b.category else b
            elif a.category == 1:
                r = _promote_ints(a, b)
            elif a.itemsize == b.itemsize:  # float16 with bfloat16: neither holds the other
                r = float32
            else:
                r = a if a.itemsize >= b.itemsize else b
            table[a, b] = r
    return table


_PROMOTE = _build_table()


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both `a` and `b` convert to without losing category or range.

    >>> import lazytorch
    >>> lazytorch.promote_types(lazytorch.uint8, lazytorch.int8)
    lazytorch.int16
    """
    return _PROMOTE[a, b]


def scalar_dtype(value: Any, float_default: DType) -> DType:
    """The dtype torch gives a Python scalar when it takes part in promotion."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return float_default


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    # torch's combine_categories: a lower tier only matters if it raises the category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == 2:
        return higher
    if higher is bool_ or lower.category == 2:
        return _PROMOTE[higher, lower]
    return higher


def result_type_of(
    dim_dtypes: list[DType], zero_dim_dtypes: list[DType], scalar_dtypes: list[DType]
) -> DType:
    """torch.result_type over operands already sorted into their three tiers."""

    def fold(ds: list[DType]) -> DType | None:
        r = None
        for d in ds:
            r = d if r is None else _PROMOTE[r, d]
        return r

    out = _combine(fold(dim_dtypes), _combine(fold(zero_dim_dtypes), fold(scalar_dtypes)))
    if out is None:
        raise TypeError("result_type() needs at least one operand")
    return out
