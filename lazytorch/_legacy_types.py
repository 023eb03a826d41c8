"""torch's legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``...

Old scripts construct with them (``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``),
test with them (``isinstance(x, torch.cuda.FloatTensor)``) and convert with them
(``x.type(torch.FloatTensor)``). Here each is a class that is never instantiated: calling
it makes an ordinary `Tensor` of its dtype (zero-filled for a size, as `empty` is here), and
``isinstance`` asks whether a tensor has that dtype and device.

>>> import lazytorch
>>> x = lazytorch.FloatTensor([1, 2])
>>> x.dtype, isinstance(x, lazytorch.FloatTensor), isinstance(x, lazytorch.LongTensor)
(lazytorch.float32, True, False)
>>> lazytorch.LongTensor(2, 3).shape
lazytorch.Size([2, 3])
>>> lazytorch.arange(3).type(lazytorch.DoubleTensor).dtype
lazytorch.float64
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch import _config, cuda
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops.sparse import SparseCOOTensor, sparse_coo_tensor
from lazytorch.tensor import Size, Tensor

__all__ = ["LEGACY_TYPES", "SPARSE_LEGACY_TYPES", "legacy_type", "set_default_tensor_type"]


class _LegacyMeta(type):
    dtype: dt.DType
    device_type: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return (
            isinstance(obj, Tensor)
            and not isinstance(obj, SparseCOOTensor)  # (torch.sparse.FloatTensor's)
            and obj.dtype is cls.dtype
            and obj.device.type == cls.device_type
        )

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        dev = device if device is not None else cls.device_type
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Size):  # a Size is a shape; a list is data, as torch
                return C.zeros(*data, dtype=cls.dtype, device=dev)
            if isinstance(data, Tensor):
                return data.to(cls.dtype)
            return C.tensor(data, dtype=cls.dtype, device=dev)
        return C.zeros(*args, dtype=cls.dtype, device=dev)

    def __repr__(cls) -> str:
        prefix = "torch.cuda." if cls.device_type == "cuda" else "torch."
        return f"<class '{prefix}{cls.__name__}'>"


def legacy_type(dtype: dt.DType, device_type: str = "cpu") -> type:
    name = f"{dtype.legacy_name}Tensor"
    return _LegacyMeta(
        name, (), {"dtype": dtype, "device_type": device_type, "is_cuda": device_type == "cuda"}
    )


LEGACY_TYPES = {f"{d.legacy_name}Tensor": legacy_type(d) for d in dt.ALL_DTYPES}
CUDA_LEGACY_TYPES = {f"{d.legacy_name}Tensor": legacy_type(d, "cuda") for d in dt.ALL_DTYPES}


class _SparseLegacyMeta(type):
    """torch.sparse.FloatTensor & co: ``(indices, values[, size])`` makes a sparse COO tensor
    (pygcn's ``torch.sparse.FloatTensor(indices, values, shape)``), sizes an empty one of
    the type's dtype; ``isinstance`` asks for a sparse tensor of that dtype.

    >>> import lazytorch
    >>> i, v = lazytorch.tensor([[0, 1], [1, 0]]), lazytorch.tensor([2.0, 3.0])
    >>> s = lazytorch.sparse.FloatTensor(i, v, lazytorch.Size([2, 2]))
    >>> s.to_dense().tolist(), isinstance(s, lazytorch.sparse.FloatTensor)
    ([[0.0, 2.0], [3.0, 0.0]], True)
    """

    dtype: dt.DType

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, SparseCOOTensor) and obj.dtype is cls.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        op = f"torch.sparse.{cls.__name__}"
        if args and isinstance(args[0], Tensor):
            if len(args) not in (2, 3) or not isinstance(args[1], Tensor):
                raise op_error(
                    TypeError, op, "expected (indices, values) or (indices, values, size)"
                )
            indices, values = args[0], args[1]
            if indices.dtype is not dt.int64:
                # (torch's legacy constructor checks, where sparse_coo_tensor converts)
                raise op_error(
                    RuntimeError,
                    op,
                    f"expected scalar type Long but found {indices.dtype.legacy_name}",
                )
            # the values keep their own dtype, as torch's legacy constructor keeps them
            size = args[2] if len(args) == 3 else None
            return sparse_coo_tensor(indices, values, size, device=device)
        if len(args) == 1 and isinstance(args[0], (tuple, list)) and not isinstance(args[0], Size):
            raise op_error(
                TypeError,
                op,
                "torch.sparse.SparseTensor(sequence) only accepts sizes. Please use "
                "torch.sparse_coo_tensor() or construct a strided tensor and convert it to sparse",
            )
        size = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
        if not all(isinstance(n, int) for n in size):
            raise op_error(TypeError, op, f"expected a size (ints) or tensors, got {args!r}")
        size = tuple(size) if size else (0,)  # (no argument: torch's empty 1-d tensor)
        empty = C.zeros(len(size), 0, dtype=dt.int64)
        return sparse_coo_tensor(empty, C.zeros(0, dtype=cls.dtype), size, device=device)

    def __repr__(cls) -> str:
        return f"<class 'torch.sparse.{cls.__name__}'>"


# the types torch.sparse has (no bool or complex ones)
SPARSE_LEGACY_TYPES = {
    f"{d.legacy_name}Tensor": _SparseLegacyMeta(
        f"{d.legacy_name}Tensor", (), {"dtype": d, "is_sparse": True}
    )
    for d in (
        dt.bfloat16,
        dt.uint8,
        dt.int8,
        dt.float64,
        dt.float32,
        dt.float16,
        dt.int32,
        dt.int64,
        dt.int16,
    )
}


# the device set_default_tensor_type(torch.cuda.<T>Tensor) chose, so that a later CPU type
# puts the CPU back (as torch's default tensor type carries its device)
_set_cuda_default = False


def set_default_tensor_type(t: Any) -> None:
    """torch's deprecated ``set_default_tensor_type``: `t` (a legacy type such as
    ``lazytorch.DoubleTensor``, or its name ``'torch.DoubleTensor'``) sets the default float
    dtype, and a ``torch.cuda.*`` type the default device too.

    >>> import lazytorch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lazytorch.set_default_tensor_type("torch.DoubleTensor")
    ...     d = lazytorch.zeros(1).dtype
    ...     lazytorch.set_default_tensor_type(lazytorch.FloatTensor)
    >>> d, lazytorch.zeros(1).dtype
    (lazytorch.float64, lazytorch.float32)
    """
    global _set_cuda_default
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    op = "set_default_tensor_type"
    if isinstance(t, str):
        prefix, _, name = t.rpartition(".")
        table = {"torch": LEGACY_TYPES, "torch.cuda": CUDA_LEGACY_TYPES}.get(prefix)
        if table is None or name not in table:
            raise op_error(TypeError, op, f"invalid type: '{t}'")
        t = table[name]
    if not isinstance(t, _LegacyMeta):
        raise op_error(
            TypeError,
            op,
            "invalid type object: only floating-point types are supported as the default type",
        )
    if not t.dtype.is_floating_point:
        raise op_error(TypeError, op, "only floating-point types are supported as the default type")
    if t.device_type == "cuda":
        if not cuda.is_available():
            raise op_error(
                TypeError,
                op,
                f"type torch.cuda.{t.__name__} not available: no CUDA device is available",
            )
        _config.set_default_device("cuda")
        _set_cuda_default = True
    elif _set_cuda_default:
        _config.set_default_device(None)
        _set_cuda_default = False
    _config.set_default_dtype(t.dtype)
