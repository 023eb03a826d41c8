"""``finfo`` / ``iinfo`` (a dtype's numeric limits) and the memory-format constants, as torch
names them. Values come from NumPy's, read on first use.

>>> import lazytorch
>>> lazytorch.finfo(lazytorch.float16).max, lazytorch.iinfo(lazytorch.int8).min
(65504.0, -128)
"""

from __future__ import annotations

from typing import Any

from lazytorch import _config
from lazytorch.ir import dtypes as dt

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "finfo",
    "iinfo",
    "layout",
    "memory_format",
    "preserve_format",
    "sparse_coo",
    "strided",
]


class finfo:
    """Limits of a floating dtype (the default dtype when none is given): ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype``."""

    def __init__(self, type: Any = None) -> None:
        import numpy as np

        d = type if type is not None else _config.get_default_dtype()
        if not isinstance(d, dt.DType) or not d.is_floating_point:
            raise TypeError(f"finfo: {d} is not a floating point dtype")
        if d is dt.bfloat16:
            import ml_dtypes  # NumPy's finfo knows only its own floats

            info: Any = ml_dtypes.finfo(d.np)
        else:
            info = np.finfo(d.np)
        self.dtype = d.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer (or bool) dtype: ``bits``, ``min``, ``max``, ``dtype``."""

    def __init__(self, type: Any) -> None:
        import numpy as np

        if not isinstance(type, dt.DType) or type.is_floating_point:
            raise TypeError(f"iinfo: {type} is not an integer dtype")
        info = np.iinfo(type.np) if type is not dt.bool_ else None
        self.dtype = type.name
        self.bits = type.bits
        self.min = int(info.min) if info is not None else 0
        self.max = int(info.max) if info is not None else 1

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


class memory_format:
    """A memory-format constant. Lazy values have no strides, so every format is accepted
    where torch takes one and changes nothing."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


class layout:
    """A tensor layout constant, as torch.layout: every tensor is ``strided`` except the
    sparse COO tensors of `lazytorch.ops.sparse` (``sparse_coo``); the other sparse layouts
    exist so scripts can name them, and an op asked for one refuses it.

    >>> import lazytorch
    >>> lazytorch.ones(2).layout, lazytorch.ones(2).layout == lazytorch.strided
    (torch.strided, True)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled by reference: the module attribute of that name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
