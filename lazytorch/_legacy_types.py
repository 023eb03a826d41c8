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

from typing import Any

from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.tensor import Size, Tensor

__all__ = ["LEGACY_TYPES", "legacy_type"]


class _LegacyMeta(type):
    dtype: dt.DType
    device_type: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return (
            isinstance(obj, Tensor)
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
