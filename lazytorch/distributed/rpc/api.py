"""``torch.distributed.rpc.api``: the `RRef` type, for ``isinstance`` checks only."""

from __future__ import annotations

from typing import Any

__all__ = ["RRef"]


def unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.distributed.rpc.{what}: lazytorch does not support RPC "
        "(torch.distributed.rpc.is_available() is False here)"
    )


class RRef:
    """torch's remote reference type. No lazytorch value is one; making one raises."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise unsupported("RRef")
