"""``make_fx``: FX tracing, which lazytorch does not have (it raises when called)."""

from __future__ import annotations

from typing import Any

__all__ = ["make_fx"]


def make_fx(f: Any, *args: Any, **kwargs: Any) -> Any:
    """Raises: lazytorch records its own IR (``lazytorch.debug.schedule`` and the
    ``lazytorch`` command show a program), not FX graphs."""
    raise NotImplementedError(
        "make_fx: lazytorch has no FX tracing; its programs are lazy IR graphs "
        "(see lazytorch.debug and the `lazytorch dump` command)"
    )
