"""The old ``functorch`` names: each is its ``lazytorch.func`` counterpart (torch's are
deprecated aliases of ``torch.func`` too), plus `make_functional` and
`combine_state_for_ensemble`.

>>> import lazytorch
>>> from lazytorch._functorch.deprecated import jvp
>>> jvp(lambda x: x * 3, (lazytorch.ones(2),), (lazytorch.ones(2),))[1]
tensor([3., 3.])
"""

from __future__ import annotations

from typing import Any

from lazytorch._functorch.make_functional import (
    combine_state_for_ensemble,
    make_functional,
    make_functional_with_buffers,
)
from lazytorch.func import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    vjp,
    vmap,
)

__all__ = [
    "combine_state_for_ensemble",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "make_functional",
    "make_functional_with_buffers",
    "vjp",
    "vmap",
]


def functionalize(func: Any, *, remove: str = "mutations") -> Any:
    """`func` itself: lazytorch's programs are already functional (an in-place op records
    a new value), so there are no mutations to remove."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            "functionalize(f, remove='mutations'): received invalid argument for remove="
            f"{remove}. Valid options are:\n     remove='mutations': all inplace and out= "
            "operators will be removed from the program, and replaced with their out-of-place "
            "equivalents.\n     remove='mutations_and_views': In addition to the above, all "
            "aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n"
        )
    return func
