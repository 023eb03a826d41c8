"""lazytorch.linalg: torch.linalg's names for the norms and products lazytorch provides."""

from lazytorch.ops import autocast as _autocast
from lazytorch.ops.linalg import linalg_norm as norm
from lazytorch.ops.linalg import matmul, matrix_norm, vector_norm

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]

_autocast.install("linalg", globals())  # the names torch's autocast lists (lazytorch.ops.autocast)


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
