"""Public ops: what users call. Each checks and promotes its arguments, then records
primitives; the Tensor methods and operators are bound from these functions."""

from lazytorch.ops import (
    creation,
    elementwise,
    indexing,
    linalg,
    methods,
    pad,
    random,
    reduction,
    shape,
    sorting,
    transcendental,
    views,
)

methods.bind()

__all__ = [
    "creation",
    "elementwise",
    "indexing",
    "linalg",
    "methods",
    "pad",
    "random",
    "reduction",
    "shape",
    "sorting",
    "transcendental",
    "views",
]
