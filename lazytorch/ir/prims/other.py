"""Leaves, sources (const, iota, random), gather/scatter, matmul and conv2d."""

from __future__ import annotations

from typing import Any

from lazytorch.ir import philox
from lazytorch.ir._lazynp import np
from lazytorch.ir.dtypes import DType, bool_, float32, float64, int64
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


# -- conv2d ---------------------------------------------------------------------------------


def conv_out_size(size: int, k: int, stride: int, lo: int, hi: int, dilation: int) -> int:
    """Output positions of one spatial dim: torch's formula (floor division).

    >>> conv_out_size(32, 3, 2, 1, 1, 1)
    16
    """
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def _conv2d_shape(
    inputs: tuple[Any, ...],
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
) -> Any:
    x, w = inputs
    if len(x.shape) != 4 or len(w.shape) != 4 or x.shape[1] != w.shape[1]:
        raise RuntimeError(
            f"conv2d: expected (N, C, H, W) input and (O, C, kH, kW) weight, got "
            f"{list(x.shape)} and {list(w.shape)}"
        )
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0:
        raise RuntimeError(
            f"conv2d: stride {stride} and dilation {dilation} must be positive, padding "
            f"{padding} non-negative"
        )
    ho = conv_out_size(x.shape[2], w.shape[2], stride[0], padding[0], padding[1], dilation[0])
    wo = conv_out_size(x.shape[3], w.shape[3], stride[1], padding[2], padding[3], dilation[1])
    if ho < 1 or wo < 1:
        raise RuntimeError(
            f"conv2d: a {list(w.shape[2:])} kernel (dilation {dilation}) does not fit the "
            f"padded input {list(x.shape[2:])} + {padding}"
        )
    return (x.shape[0], w.shape[0], ho, wo)


def _conv2d_dtype(inputs: tuple[Any, ...], *attrs: Any) -> DType:
    x, w = inputs
    if x.dtype is not w.dtype or x.dtype not in (float32, float64):
        raise TypeError(
            f"conv2d: expected float32 or float64 operands of one dtype, got {x.dtype}, "
            f"{w.dtype} (16-bit floats are widened by the caller)"
        )
    return x.dtype


def _conv2d_ref(
    x: Any,
    w: Any,
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
) -> Any:
    # im2col and one product per image: sums over (c, kh, kw), the order of the kernels
    n, o = x.shape[0], w.shape[0]
    cols, ho, wo = _columns(x, tuple(w.shape[2:]), stride, padding, dilation)
    out = np.matmul(w.reshape(1, o, -1), cols)
    return out.reshape(n, o, ho, wo)


def _columns(
    x: Any,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
) -> tuple[Any, int, int]:
    """im2col: (N, C*kH*kW, Ho*Wo) windows of the zero-padded x, and (Ho, Wo)."""
    n, c, h, wd = x.shape
    kh, kw = kernel
    (sh, sw), (dh, dw) = stride, dilation
    ho = conv_out_size(h, kh, sh, padding[0], padding[1], dh)
    wo = conv_out_size(wd, kw, sw, padding[2], padding[3], dw)
    xp = np.pad(x, ((0, 0), (0, 0), padding[:2], padding[2:]))
    cols = np.empty((n, c, kh * kw, ho, wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
            cols[:, :, i * kw + j] = xp[:, :, rows, j * dw : j * dw + sw * (wo - 1) + 1 : sw]
    return cols.reshape(n, c * kh * kw, ho * wo), ho, wo


# attrs: stride (sH, sW), padding (top, bottom, left, right), dilation (dH, dW). One group,
# no bias: the facade adds the bias and widens 16-bit floats (conv2d in nn/functional).
define(
    Primitive(
        "conv2d",
        "conv",
        nin=2,
        attr_names=("stride", "padding", "dilation"),
        shape_rule=_conv2d_shape,
        dtype_rule=_conv2d_dtype,
        ref=_conv2d_ref,
        doc="2-d cross-correlation of (N, C, H, W) with an (O, C, kH, kW) weight, zero "
        "padding, one group",
    )
)


def _conv2d_wgrad_shape(
    inputs: tuple[Any, ...],
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
    kernel: tuple[int, int],
) -> Any:
    x, dy = inputs
    if len(x.shape) != 4 or len(dy.shape) != 4 or x.shape[0] != dy.shape[0]:
        raise RuntimeError(
            f"conv2d_wgrad: expected (N, C, H, W) input and (N, O, Ho, Wo) output gradient, "
            f"got {list(x.shape)} and {list(dy.shape)}"
        )
    o, c = dy.shape[1], x.shape[1]
    want = _conv2d_shape((x, _Shaped((o, c, *kernel))), stride, padding, dilation)
    if tuple(dy.shape) != tuple(want):
        raise RuntimeError(
            f"conv2d_wgrad: output gradient {list(dy.shape)} is not the convolution's output "
            f"{list(want)}"
        )
    return (o, c, *kernel)


class _Shaped:
    __slots__ = ("shape",)

    def __init__(self, shape: tuple[Any, ...]) -> None:
        self.shape = shape


def _conv2d_wgrad_ref(
    x: Any,
    dy: Any,
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
    kernel: tuple[int, int],
) -> Any:
    n, c = x.shape[:2]
    o = dy.shape[1]
    cols, _, _ = _columns(x, kernel, stride, padding, dilation)
    per_image = np.matmul(dy.reshape(n, o, -1), cols.transpose(0, 2, 1))
    return per_image.sum(0).reshape(o, c, *kernel)


# The weight's gradient of conv2d(x, w) given the output's gradient dy: attrs as conv2d's,
# and the kernel size (kH, kW), which the inputs do not determine.
define(
    Primitive(
        "conv2d_wgrad",
        "conv",
        nin=2,
        attr_names=("stride", "padding", "dilation", "kernel"),
        shape_rule=_conv2d_wgrad_shape,
        dtype_rule=_conv2d_dtype,
        ref=_conv2d_wgrad_ref,
        doc="the weight gradient (O, C, kH, kW) of conv2d from its input (N, C, H, W) and "
        "output gradient (N, O, Ho, Wo)",
    )
)
