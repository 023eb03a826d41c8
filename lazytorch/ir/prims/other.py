"""Leaves, sources (const, iota, random), gather/scatter, and matmul."""

from __future__ import annotations

from typing import Any

from lazytorch.ir import philox
from lazytorch.ir._lazynp import np
from lazytorch.ir.dtypes import DType, bool_, float32, int64
from lazytorch.ir.primitives import Primitive, define

# -- leaves: the parameters of a program. Their hash is metadata only. --------------------

BUFFER = define(
    Primitive("buffer", "leaf", nin=0, doc="a tensor whose value is known (a program input)")
)
SCALAR = define(
    Primitive(
        "scalar",
        "leaf",
        nin=0,
        doc="a Python number passed as a 0-d program input, so a changing value (a learning "
        "rate, a step count) never changes the program",
    )
)


# -- sources --------------------------------------------------------------------------------


def _const_key(attrs: tuple[Any, ...]) -> tuple[Any, ...]:
    # repr tells -0.0 from 0.0 and makes NaN equal to itself, which hash()/== do not.
    value, dtype = attrs
    return (type(value).__name__, repr(value), dtype)


define(
    Primitive(
        "const",
        "source",
        nin=0,
        attr_names=("value", "dtype", "device"),
        shape_rule=lambda inputs, value, dtype, device: (),
        dtype_rule=lambda inputs, value, dtype, device: dtype,
        ref=lambda value, dtype, device: np.asarray(value, dtype=dtype.np),
        hash_attrs=lambda attrs: (*_const_key(attrs[:2]), attrs[2]),
        doc="a 0-d literal that is part of the program (used by decompositions)",
    )
)


def _iota_ref(shape: tuple[int, ...], axis: int, dtype: DType, device: Any) -> Any:
    n = shape[axis]
    line = np.arange(n, dtype=dtype.np).reshape([n if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(line, shape)


def _iota_shape(inputs: tuple[Any, ...], shape: Any, axis: int, dtype: DType, device: Any) -> Any:
    if not 0 <= axis < len(shape):
        raise ValueError(f"iota: axis {axis} out of range for {list(shape)}")
    return tuple(shape)


define(
    Primitive(
        "iota",
        "source",
        nin=0,
        attr_names=("shape", "axis", "dtype", "device"),
        shape_rule=_iota_shape,
        dtype_rule=lambda inputs, shape, axis, dtype, device: dtype,
        ref=_iota_ref,
        doc="the index along `axis` at every position of `shape`",
    )
)


def _rand_shape(inputs: tuple[Any, ...], shape: Any, dtype: DType, dist: str) -> Any:
    seed, offset = inputs
    if (
        seed.shape != ()
        or offset.shape != ()
        or seed.dtype is not int64
        or offset.dtype is not int64
    ):
        raise TypeError("rand: seed and offset must be 0-d int64 inputs")
    if not dtype.is_floating_point or dist not in ("uniform", "normal"):
        raise ValueError(f"rand: unsupported {dist} distribution of {dtype}")
    return tuple(shape)


def _rand_ref(seed: Any, offset: Any, shape: Any, dtype: DType, dist: str) -> Any:
    n = 1
    for d in shape:
        n *= d
    fn = philox.uniform if dist == "uniform" else philox.normal
    # Counters are 64-bit and wrap; the seed is taken as its 64-bit two's complement.
    out = fn(n, int(seed) & (2**64 - 1), int(offset) & (2**64 - 1), dtype.np)
    return out.reshape(shape)


define(
    Primitive(
        "rand",
        "source",
        nin=2,
        attr_names=("shape", "dtype", "dist"),
        shape_rule=_rand_shape,
        dtype_rule=lambda inputs, shape, dtype, dist: dtype,
        ref=_rand_ref,
        doc="counter-based random numbers (Philox4x32-10) from 0-d seed and offset inputs",
        cost=8,  # ten Philox rounds (two 32-bit products each), then the float conversion
    )
)


# -- gather / scatter ---------------------------------------------------------------------


def _index_check(name: str, x: Any, idx: Any, axis: int) -> None:
    if idx.dtype is not int64:
        raise TypeError(f"{name}: index must be int64, got {idx.dtype}")
    if len(idx.shape) != len(x.shape) or not 0 <= axis < len(x.shape):
        raise RuntimeError(f"{name}: index rank {len(idx.shape)} != input rank {len(x.shape)}")
    for d, (a, b) in enumerate(zip(idx.shape, x.shape)):
        if d != axis and a != b:
            raise RuntimeError(f"{name}: index and input sizes differ at axis {d} ({a} vs {b})")


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index outside its dim, found when the gather/scatter runs.

    torch raises IndexError for ``x[idx]`` / ``index_put_`` but RuntimeError for ``gather`` /
    ``scatter``; by the time a lazy program runs, the primitive cannot tell which public op
    recorded it, so the error is both (``except IndexError`` and ``except RuntimeError``
    each catch it, as they would in torch).
    """


def _bounds(name: str, idx: Any, size: int, axis: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].flat[0]
        raise IndexOutOfRangeError(
            f"{name}: index {int(bad)} is out of bounds for dimension {axis} with size {size}"
        )


def _gather_shape(inputs: tuple[Any, ...], axis: int) -> Any:
    x, idx = inputs
    _index_check("gather", x, idx, axis)
    return idx.shape


def _gather_ref(x: Any, idx: Any, axis: int) -> Any:
    _bounds("gather", idx, x.shape[axis], axis)
    return np.take_along_axis(x, idx, axis=axis)


define(
    Primitive(
        "gather",
        "index",
        nin=2,
        attr_names=("axis",),
        shape_rule=_gather_shape,
        dtype_rule=lambda inputs, axis: inputs[0].dtype,
        ref=_gather_ref,
        doc="out[..i..] = x[.., idx[..i..], ..] along axis; idx matches x off-axis",
    )
)


def _scatter_shape(inputs: tuple[Any, ...], axis: int, reduce: str) -> Any:
    x, idx, src = inputs
    _index_check("scatter", x, idx, axis)
    if src.shape != idx.shape:
        raise RuntimeError("scatter: source and index must have the same shape")
    if reduce not in ("none", "add", "multiply"):
        raise ValueError(f"scatter: unknown reduce {reduce!r}")
    return x.shape


def _scatter_dtype(inputs: tuple[Any, ...], axis: int, reduce: str) -> DType:
    if inputs[2].dtype is not inputs[0].dtype:
        raise TypeError("scatter: source and input dtypes differ")
    return inputs[0].dtype


def _scatter_ref(x: Any, idx: Any, src: Any, axis: int, reduce: str) -> Any:
    _bounds("scatter", idx, x.shape[axis], axis)
    out = np.array(x, copy=True)
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    if reduce == "add":
        np.add.at(out, tuple(grids), src)
    elif reduce == "multiply":
        np.multiply.at(out, tuple(grids), src)
    else:
        out[tuple(grids)] = src  # duplicate indices: the last write wins
    return out


define(
    Primitive(
        "scatter",
        "index",
        nin=3,
        attr_names=("axis", "reduce"),
        shape_rule=_scatter_shape,
        dtype_rule=_scatter_dtype,
        ref=_scatter_ref,
        doc="x with x[.., idx[..i..], ..] = src[..i..] (or += / *= for reduce='add' / 'multiply')",
    )
)


# -- matmul ---------------------------------------------------------------------------------


def _matmul_shape(inputs: tuple[Any, ...], out_dtype: DType | None = None) -> Any:
    a, b = inputs
    if len(a.shape) < 2 or len(a.shape) != len(b.shape):
        raise RuntimeError(
            f"matmul: expected equal ranks >= 2, got {list(a.shape)} @ {list(b.shape)}"
        )
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"matmul: shapes {list(a.shape)} and {list(b.shape)} do not match")
    return (*a.shape[:-1], b.shape[-1])


def _matmul_dtype(inputs: tuple[Any, ...], out_dtype: DType | None = None) -> DType:
    a, b = inputs
    if a.dtype is not b.dtype or a.dtype is bool_:
        raise TypeError(f"matmul: expected matching non-bool dtypes, got {a.dtype}, {b.dtype}")
    if out_dtype is None:
        return a.dtype
    if not a.dtype.is_low_float or out_dtype is not float32:
        raise TypeError(
            f"matmul: out_dtype widens 16-bit float operands to float32 only, got "
            f"{a.dtype} -> {out_dtype}"
        )
    return out_dtype


def _matmul_ref(a: Any, b: Any, out_dtype: DType | None = None) -> Any:
    # 16-bit operands arrive widened to float32 (`reference`): float32 products and sums,
    # rounded once to the output dtype by the caller (or not at all with out_dtype float32)
    if a.dtype == np.float16:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return np.matmul(a, b)


# attrs: () for a product in the operands' dtype, or (float32,) for a product of 16-bit
# float operands left unrounded in float32, so a bias added after it rounds once, as
# torch's addmm/baddbmm/linear do (the C++ and Triton GEMMs accumulate in float32 anyway).
define(
    Primitive(
        "matmul",
        "matmul",
        nin=2,
        attr_names=("out_dtype",),
        shape_rule=_matmul_shape,
        dtype_rule=_matmul_dtype,
        ref=_matmul_ref,
        doc="batched matrix product [..., m, k] @ [..., k, n] (equal batch dims); "
        "out_dtype float32 keeps 16-bit operands' product unrounded",
    )
)
