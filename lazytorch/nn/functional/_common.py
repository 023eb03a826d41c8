"""Helpers shared by the functional modules."""

from __future__ import annotations

from typing import Any

from lazytorch._errors import op_error
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.views import assign
from lazytorch.tensor import Tensor


def _maybe_inplace(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    if inplace:
        return assign(input, result._node)
    return result


def _float_input(input: Any, op: str, kernel: str) -> Tensor:
    """torch has these activation kernels for floating dtypes only."""
    x = tensor_arg(input, op)
    if not x.dtype.is_floating_point:
        raise op_error(
            NotImplementedError, op, f"\"{kernel}\" not implemented for '{x.dtype.legacy_name}'"
        )
    return x


def _opmath(x: Tensor) -> Tensor:
    """float16 math runs in float32 and is rounded once at the end, as in torch's kernels;
    in float16 itself exp() overflows already at 11.1 (softplus(15) would be inf)."""
    return x.float() if x.dtype.is_low_float else x  # type: ignore[attr-defined,no-any-return]
