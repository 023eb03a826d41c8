"""Public ops: what users call. Each checks and promotes its arguments, then records
primitives. Each module declares its ``torch.*`` functions and Tensor methods with
``@public`` (`lazytorch._public`); importing this package imports them all and binds the
methods (`methods.bind`), and the facade takes its functions from the same registry."""

from lazytorch.ops import (
    activation,
    composite,
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
    "activation",
    "composite",
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
