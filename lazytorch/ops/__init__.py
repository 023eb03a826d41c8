"""Public ops: what users call. Each checks and promotes its arguments, then records
primitives. Each module declares its ``torch.*`` functions and Tensor methods with
``@public`` (`lazytorch._public`). `lazytorch.ops.methods` imports every op module and binds
the methods (`methods.bind`) when it is imported (the facade imports it), and the facade
takes its functions from the same registry.

This package's ``__init__`` imports none of its modules, so the layers below the op modules
(autograd) import `lazytorch.ops._core` without importing every op module, which import
them in turn; ``lazytorch.ops.<module>`` still finds each one.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "activation",
    "composite",
    "creation",
    "decomp",
    "elementwise",
    "extras",
    "indexing",
    "linalg",
    "methods",
    "numeric",
    "pad",
    "random",
    "reduction",
    "shape",
    "sorting",
    "special_math",
    "transcendental",
    "views",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
