"""``torch.distributed.rpc``: not supported by lazytorch; present so that code which only
checks for it runs.

Training helpers test results with ``isinstance(x, torch.distributed.rpc.api.RRef)`` on
every batch (rasbt's deeplearning-models); that is False for every lazytorch value.
`is_available` says False, and what would start or use RPC raises at the call.

>>> import lazytorch
>>> import lazytorch.distributed.rpc as rpc
>>> rpc.is_available(), isinstance(lazytorch.ones(2), rpc.RRef)
(False, False)
"""

from __future__ import annotations

from typing import Any

from lazytorch.distributed.rpc import api
from lazytorch.distributed.rpc.api import RRef, unsupported

__all__ = ["RRef", "api", "init_rpc", "is_available", "remote", "rpc_async", "rpc_sync", "shutdown"]


def is_available() -> bool:
    """False: lazytorch has no RPC framework (torch.distributed.rpc.is_available)."""
    return False


def init_rpc(*args: Any, **kwargs: Any) -> None:
    raise unsupported("init_rpc")


def rpc_sync(*args: Any, **kwargs: Any) -> Any:
    raise unsupported("rpc_sync")


def rpc_async(*args: Any, **kwargs: Any) -> Any:
    raise unsupported("rpc_async")


def remote(*args: Any, **kwargs: Any) -> Any:
    raise unsupported("remote")


def shutdown(*args: Any, **kwargs: Any) -> None:
    raise unsupported("shutdown")
