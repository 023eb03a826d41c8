"""torch.nn.utils.stateless: `functional_call` (torch.func's, under this module's older
parameter name)."""

from __future__ import annotations

from typing import Any

from lazytorch import func as _func

__all__ = ["functional_call"]


def functional_call(
    module: Any,
    parameters_and_buffers: dict[str, Any],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """`lazytorch.func.functional_call`: `module` run with these tensors in place of its
    parameters and buffers."""
    return _func.functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
