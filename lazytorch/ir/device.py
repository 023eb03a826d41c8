"""Devices: where a tensor's buffer lives and which backend family computes it."""

from __future__ import annotations

from typing import Any

__all__ = ["Device", "as_device"]


class Device:
    """A device such as ``cpu`` or ``cuda:0``, comparable and hashable like torch.device.

    >>> import lazytorch
    >>> lazytorch.device("cpu"), lazytorch.device("cuda", 1)
    (device(type='cpu'), device(type='cuda', index=1))

    Used as a context manager it sets the default device for tensors created inside
    (thread-local, innermost wins):

    >>> with lazytorch.device("cpu"):
    ...     lazytorch.zeros(2).device
    device(type='cpu')
    """

    __slots__ = ("index", "type")

    _cache: dict[tuple[str, int | None], Device] = {}
    # Set by lazytorch._config: the IR does not know where the scoped default lives.
    _enter_hook: Any = None
    _exit_hook: Any = None

    def __new__(cls, type: Any, index: int | None = None) -> Device:
        if isinstance(type, Device):
            if index is not None:
                raise ValueError("device(): an index cannot be given with a device object")
            return type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or device, got {type.__class__.__name__}")
        name = type.strip()
        if ":" in name:
            if index is not None:
                raise ValueError(f"device(): index given twice in {name!r}")
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise ValueError(f"device(): invalid device string {type!r}")
            index = int(idx)
        if not name.isidentifier():
            raise ValueError(f"device(): invalid device string {type!r}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError(f"device(): index must be a non-negative int, got {index!r}")
        key = (name, index)
        dev = cls._cache.get(key)
        if dev is None:
            dev = object.__new__(cls)
            dev.type = name
            dev.index = index
            cls._cache[key] = dev
        return dev

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    # Devices are interned (one object per type and index), so identity is equality and
    # the default identity hash applies: both stay C-speed on the per-node hashing path.
    # As in torch, a device never equals a string.

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (self.type, self.index))

    def __enter__(self) -> Device:
        if Device._enter_hook is None:
            raise RuntimeError("device context manager needs lazytorch to be imported")
        Device._enter_hook(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Device._exit_hook(self)


def as_device(d: Any) -> Device:
    """Coerce a string, int (cuda index) or Device to a Device."""
    if isinstance(d, Device):
        return d
    if isinstance(d, int) and not isinstance(d, bool):
        return Device("cuda", d)
    return Device(d)


CPU = Device("cpu")
