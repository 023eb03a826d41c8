"""The padding modules: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad,
each in 1, 2 and 3 dims, as torch.nn lays them out.

Each is a thin wrapper over `lazytorch.nn.functional.pad`: the module holds the padding as a
tuple ``(left, right[, top, bottom[, front, back]])`` (an int pads every side alike) and
calls ``F.pad`` with its mode, so values, gradients and errors are those of ``F.pad``. Like
torch, only the circular modules check the input's rank themselves; the others leave it to
``F.pad``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazytorch.nn import functional as F
from lazytorch.nn.modules.module import Module
from lazytorch.tensor import Tensor

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _sides(padding: Any, n: int) -> tuple[int, ...]:
    """torch's _ntuple: a sequence as given, an int repeated for the 2n sides."""
    if isinstance(padding, Sequence):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    """A padding of `_dims` trailing dims in `_mode`."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sides(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with `value`; negative amounts crop.

    >>> import lazytorch
    >>> lazytorch.nn.ConstantPad1d((1, 2), 3.5)(lazytorch.ones(1, 2))
    tensor([[3.5000, 1.0000, 1.0000, 3.5000, 3.5000]])
    """

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with `value`: ``(left, right, top, bottom)``.

    >>> import lazytorch
    >>> lazytorch.nn.ConstantPad2d(1, -1.0)(lazytorch.zeros(1, 1, 1)).shape
    lazytorch.Size([1, 3, 3])
    """

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with `value`: ``(left, right, top, bottom, front, back)``.

    >>> import lazytorch
    >>> lazytorch.nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5)(lazytorch.zeros(1, 1, 1, 1)).shape
    lazytorch.Size([1, 3, 2, 2])
    """

    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros.

    >>> import lazytorch
    >>> lazytorch.nn.ZeroPad1d(1)(lazytorch.ones(1, 2))
    tensor([[0., 1., 1., 0.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros.

    >>> import lazytorch
    >>> lazytorch.nn.ZeroPad2d((1, 1, 0, 1))
    ZeroPad2d((1, 1, 0, 1))
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros.

    >>> import lazytorch
    >>> lazytorch.nn.ZeroPad3d(1)(lazytorch.ones(1, 1, 1, 1)).sum()
    tensor(1.)
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated); each amount must be
    less than the dim's size.

    >>> import lazytorch
    >>> lazytorch.nn.ReflectionPad1d(2)(lazytorch.arange(4.0).reshape(1, 4))
    tensor([[2., 1., 0., 1., 2., 3., 2., 1.]])
    """

    _dims = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with their reflection.

    >>> import lazytorch
    >>> lazytorch.nn.ReflectionPad2d(1)(lazytorch.zeros(1, 3, 3)).shape
    lazytorch.Size([1, 5, 5])
    """

    _dims = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with their reflection.

    >>> import lazytorch
    >>> lazytorch.nn.ReflectionPad3d(1)(lazytorch.zeros(1, 1, 2, 2, 2)).shape
    lazytorch.Size([1, 1, 4, 4, 4])
    """

    _dims = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values.

    >>> import lazytorch
    >>> lazytorch.nn.ReplicationPad1d((2, 1))(lazytorch.tensor([[1.0, 2.0]]))
    tensor([[1., 1., 1., 2., 2.]])
    """

    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating their edge values.

    >>> import lazytorch
    >>> lazytorch.nn.ReplicationPad2d(1)(lazytorch.ones(1, 1, 2, 2)).sum()
    tensor(16.)
    """

    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating their edge values.

    >>> import lazytorch
    >>> lazytorch.nn.ReplicationPad3d(1)(lazytorch.ones(1, 1, 1, 1)).shape
    lazytorch.Size([1, 3, 3, 3])
    """

    _dims = 3
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        lo, hi = self._dims + 1, self._dims + 2  # unbatched or batched
        if input.dim() not in (lo, hi):
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (the right end comes first); at most once.

    >>> import lazytorch
    >>> lazytorch.nn.CircularPad1d((1, 2))(lazytorch.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 1., 2., 3., 1., 2.]])
    """

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping around.

    >>> import lazytorch
    >>> lazytorch.nn.CircularPad2d(1)(lazytorch.zeros(1, 1, 2, 2)).shape
    lazytorch.Size([1, 1, 4, 4])
    """

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping around.

    >>> import lazytorch
    >>> lazytorch.nn.CircularPad3d(1)(lazytorch.zeros(1, 2, 2, 2)).shape
    lazytorch.Size([1, 4, 4, 4])
    """

    _dims = 3
