"""lazytorch.linalg: torch.linalg's names for the norms, products, decompositions and solvers
lazytorch provides.

The decompositions and solvers (inv, solve, det, cholesky, qr, svd, eigh, pinv, lstsq...) are
host operations (`lazytorch.ops.decomp`): they materialize their input, run NumPy's LAPACK and
record lazy gradients.
"""

from lazytorch.ops import autocast as _autocast
from lazytorch.ops import methods as _methods
from lazytorch.ops.decomp import (
    LinAlgError,
    cholesky_ex,
    cond,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    matrix_power,
    matrix_rank,
    multi_dot,
    pinv,
    solve,
    solve_triangular,
    svdvals,
    vander,
    vecdot,
)
from lazytorch.ops.decomp import linalg_cholesky as cholesky
from lazytorch.ops.decomp import linalg_cross as cross
from lazytorch.ops.decomp import linalg_det as det
from lazytorch.ops.decomp import linalg_diagonal as diagonal
from lazytorch.ops.decomp import linalg_matrix_exp as matrix_exp
from lazytorch.ops.decomp import linalg_qr as qr
from lazytorch.ops.decomp import linalg_slogdet as slogdet
from lazytorch.ops.decomp import linalg_svd as svd
from lazytorch.ops.linalg import linalg_norm as norm
from lazytorch.ops.linalg import matmul, matrix_norm, vector_norm
from lazytorch.ops.lu import (
    householder_product,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    solve_ex,
    tensorinv,
    tensorsolve,
)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

_methods.install_numpy_names(globals(), __all__)  # axis=/keepdims=, as torch's parser takes
_autocast.install("linalg", globals())  # the names torch's autocast lists (lazytorch.ops.autocast)


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
