"""Matrix decompositions and solvers (inv, solve, det, cholesky, qr, svd, eigh, pinv, lstsq...)
as **host operations**.

There is no IR primitive or kernel for a factorization. Each op here materializes its input
(an implicit materialization, counted and logged like ``.item()``: a graph cut, refused in
strict mode), runs NumPy's LAPACK on the host (float32 in float32, float64 in float64,
batched over the leading dims as torch is), and returns new tensors on the input's device
(a cuda value is copied to the host and the results uploaded back).

Their gradients are lazy: when an input requires grad, the results are attached to the graph
through `lazytorch.autograd.Function`, and the backward records ordinary ops (matmul,
transpose, tril...) with torch's formulas. What a formula needs besides the outputs (an
inverse, a triangular factor's inverse) is computed in the forward by another host op that
carries gradient itself, so ``create_graph=True`` differentiates the backward too.

Ops made of the host ops and ordinary ops (``matrix_power``, ``multi_dot``, ``lstsq``,
``cholesky_solve``, ``pinverse``, ``vander``, ``vecdot``) are differentiated through those.
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

from lazytorch._public import public
from lazytorch.autograd.function import Function
from lazytorch.autograd.grad_mode import no_grad as grad_mode_off
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ir.node import format_loc, grad_mode, user_loc
from lazytorch.ops import composite as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import shape as S
from lazytorch.ops._core import broadcast_shapes, tensor_arg
from lazytorch.ops.creation import eye, tensor, zeros
from lazytorch.ops.linalg import DECOMP, matmul, matrix_norm
from lazytorch.ops.reduction import _into_out
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Tensor, _host_value

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot handle (singular, not positive-definite): torch's
    ``torch.linalg.LinAlgError``, a RuntimeError."""


slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
qr_result = namedtuple("qr", ["Q", "R"])
linalg_qr_result = namedtuple("linalg_qr", ["Q", "R"])
svd_result = namedtuple("svd", ["U", "S", "V"])
linalg_svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])


def _error(exc: type[Exception], msg: str) -> Exception:
    return exc(f"{msg} (at {format_loc(user_loc())})")


def _no_tuple_out(out: Any, op: str) -> None:
    """out= of the ops that return several tensors is not taken yet: refused, not ignored."""
    if out is not None:
        raise _error(NotImplementedError, f"{op}: out= is not supported yet by lazytorch")


# -- the host side ----------------------------------------------------------------------------------
def _host(x: Tensor, op: str) -> Any:
    """`x`'s value as a NumPy array (an implicit materialization when it is not computed)."""
    implicit_point(x, f"{op}() (a host linear-algebra operation)")
    return np.asarray(_host_value(x._node))


def _out(arr: Any, like: Tensor, dtype: Any = None) -> Tensor:
    """A new tensor of `arr` on `like`'s device, in `like`'s dtype (or `dtype`)."""
    dtype = like.dtype if dtype is None else dtype
    return tensor(np.array(arr, dtype=dtype.np, order="C"), device=like.device)


def _check_matrix(
    x: Tensor,
    op: str,
    *,
    square: bool = True,
    name: str = "A",
    low: str | None = None,
    integer: str | None = None,
) -> None:
    """torch's checks of a (batch of) matrix input: at least 2 dims, a float32/float64 dtype
    (`low`/`integer`: the kernel name torch's NotImplementedError names for that dtype kind;
    None: torch's RuntimeError of linalg's own check), square when `square`."""
    if x.ndim < 2:
        raise _error(
            RuntimeError, f"{op}: The input tensor {name} must have at least 2 dimensions."
        )
    d = x.dtype
    if not d.is_floating_point:
        if integer is not None:
            raise _error(
                NotImplementedError, f"\"{integer}\" not implemented for '{d.legacy_name}'"
            )
        raise _error(
            RuntimeError,
            f"{op}: Expected a floating point or complex tensor as input. Got {d.legacy_name}",
        )
    if d not in (dt.float32, dt.float64):
        if low is not None:
            raise _error(NotImplementedError, f"\"{low}\" not implemented for '{d.legacy_name}'")
        raise _error(RuntimeError, f"{op}: Low precision dtypes not supported. Got {d.legacy_name}")
    if square and x.shape[-1] != x.shape[-2]:
        raise _error(
            RuntimeError,
            f"{op}: A must be batches of square matrices, but they are {x.shape[-2]} by "
            f"{x.shape[-1]} matrices",
        )


def _batch_prefix(x: Tensor, k: int) -> str:
    return f"(Batch element {k}): " if x.ndim > 2 else ""


def _zero_pivot(m: Any) -> int:
    """The (1-based) first zero diagonal element of U in the partial-pivoting LU of the
    square matrix `m` (LAPACK getrf's ``info``), 0 if none."""
    a = np.array(m, copy=True)
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        if p != k:
            a[[k, p]] = a[[p, k]]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return 0


def _singular_info(a: Any) -> Any:
    """getrf's ``info`` of each matrix of the batch `a` (shape ``(*batch, n, n)``)."""
    flat = a.reshape(-1, *a.shape[-2:])
    return np.array([_zero_pivot(m) for m in flat], dtype=np.int32).reshape(a.shape[:-2])


def _inv_host(a: Any) -> tuple[Any, Any]:
    """(inverse, info): singular matrices get info > 0 and an inverse of NaNs."""
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        pass
    info = _singular_info(a)
    out = np.full(a.shape, np.nan, dtype=a.dtype)
    flat_a, flat_o = a.reshape(-1, *a.shape[-2:]), out.reshape(-1, *a.shape[-2:])
    for k, i in enumerate(info.reshape(-1)):
        if i == 0:
            try:
                flat_o[k] = np.linalg.inv(flat_a[k])
            except np.linalg.LinAlgError:  # singular in LAPACK's rounding only
                info.reshape(-1)[k] = a.shape[-1]
    return out, info


def _first_failure(info: Any) -> tuple[int, int]:
    """(batch index, info) of the first nonzero info, (-1, 0) if none."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    return (int(bad[0]), int(flat[bad[0]])) if bad.size else (-1, 0)


def _raise_singular_inv(x: Tensor, info: Any, op: str = "linalg.inv") -> None:
    k, i = _first_failure(info)
    if k >= 0:
        raise _error(
            LinAlgError,
            f"{op}: {_batch_prefix(x, k)}The diagonal element {i} is zero, the inversion could "
            "not be completed because the input matrix is singular.",
        )


def _cholesky_host(a: Any, upper: bool) -> tuple[Any, Any]:
    """(factor, info): info > 0 is the order of the first leading minor that is not
    positive-definite (LAPACK potrf's); such an element's factor is NaN."""
    try:
        low = np.linalg.cholesky(a)
        info = np.zeros(a.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        low = np.full(a.shape, np.nan, dtype=a.dtype)
        info = np.zeros(a.shape[:-2], dtype=np.int32)
        flat_a, flat_l, flat_i = (
            a.reshape(-1, *a.shape[-2:]),
            low.reshape(-1, *a.shape[-2:]),
            info.reshape(-1),
        )
        for k in range(flat_a.shape[0]):
            try:
                flat_l[k] = np.linalg.cholesky(flat_a[k])
            except np.linalg.LinAlgError:
                flat_i[k] = _failing_minor(flat_a[k])
    if upper:
        low = np.swapaxes(low, -1, -2)
    return low, info


def _failing_minor(m: Any) -> int:
    """The order of the first leading minor of `m` (its lower triangle) that is not
    positive-definite (they fail from there on: a bisection)."""
    lo, hi = 1, m.shape[-1]  # the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            np.linalg.cholesky(m[:mid, :mid])
            lo = mid + 1
        except np.linalg.LinAlgError:
            hi = mid
    return lo


# -- attaching gradients ----------------------------------------------------------------------------
class _HostOp(Function):
    """A host op's outputs attached to the graph: ``forward`` hands back the outputs computed
    already, ``backward`` calls the op's rule (a closure over what it saved)."""

    @staticmethod
    def forward(ctx: Any, rule: Any, outs: Any, nondiff: Any, *inputs: Any) -> Any:
        # `outs` is a one-element list for a single output: a Tensor argument would count
        # as an input of the Function
        ctx.rule = rule
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*(outs[k] for k in nondiff))
        return outs[0] if isinstance(outs, list) else outs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, None, None, *ctx.rule(ctx.needs_input_grad[3:], *grads))


_CLASSES: dict[str, type] = {}


def _needs_grad(*xs: Any) -> bool:
    return grad_mode.enabled and any(isinstance(x, Tensor) and x.requires_grad for x in xs)


def _attach(
    name: str,
    inputs: tuple[Tensor, ...],
    outs: Any,
    rule: Callable[..., tuple[Tensor | None, ...]],
    nondiff: tuple[int, ...] = (),
) -> Any:
    """`outs` (a tensor or a tuple) with a history over `inputs` whose backward is `rule`
    (``rule(needs, *grads)``: one gradient or None per input; an output's grad is None when
    no gradient reached it). Named after torch's backward node (``LinalgInvEx`` ->
    ``grad_fn`` ``LinalgInvExBackward``)."""
    if not _needs_grad(*inputs):
        return outs
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (_HostOp,), {"__module__": __name__})
    return cls.apply(rule, outs if isinstance(outs, tuple) else [outs], nondiff, *inputs)


def _mT(x: Tensor) -> Tensor:
    return S.transpose(x, -2, -1)


def _col(v: Tensor) -> Tensor:
    """(..., n) -> (..., n, 1)."""
    return S.unsqueeze(v, -1)


def _row(v: Tensor) -> Tensor:
    return S.unsqueeze(v, -2)


def _add(a: Tensor | None, b: Tensor | None) -> Tensor | None:
    if a is None:
        return b
    return a if b is None else a + b


# -- inverse, solve ------------------------------------------------------------------------------------
def _inv_attached(x: Tensor, check: bool, op: str = "linalg.inv") -> tuple[Tensor, Any]:
    a = _host(x, op)
    inv, info = _inv_host(a)
    if check:
        _raise_singular_inv(x, info, op)
    y = _out(inv, x)

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None]:
        if g is None:
            return (None,)
        yt = _mT(y)
        return (-matmul(matmul(yt, g), yt),)

    y = _attach("LinalgInvEx", (x,), y, rule)
    return y, info


@public(torch="inverse", method="inverse")
def inverse(input: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix (a host operation: materializes `input`)."""
    x = tensor_arg(input, "inverse")
    _check_matrix(x, "linalg.inv")
    return _into_out(_inv_attached(x, True)[0], out, "inverse")


def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """torch.linalg.inv (a host operation: materializes `A`)."""
    x = tensor_arg(A, "linalg.inv", "A")
    _check_matrix(x, "linalg.inv")
    return _into_out(_inv_attached(x, True)[0], out, "linalg.inv")


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """torch.linalg.inv_ex: (inverse, info); info > 0 marks a singular matrix (whose inverse
    holds NaNs here, where LAPACK's getri leaves infinities and NaNs)."""
    _no_tuple_out(out, "linalg.inv_ex")
    x = tensor_arg(A, "linalg.inv_ex", "A")
    _check_matrix(x, "linalg.inv_ex")
    y, info = _inv_attached(x, check_errors, "linalg.inv_ex")
    return inv_ex_result(y, _out(info, x, dt.int32))


def _solve_square(a: Tensor, b: Tensor, op: str) -> Tensor:
    """X with A X = B, for same-batch A (..., n, n) and B (..., n, k)."""
    ah, bh = _host(a, op), _host(b, op)
    try:
        xh = np.linalg.solve(ah, bh)
    except np.linalg.LinAlgError:
        k, _ = _first_failure(_singular_info(ah))
        raise _error(
            LinAlgError,
            f"{op}: {_batch_prefix(a, builtins.max(k, 0))}The solver failed because the input "
            "matrix is singular.",
        ) from None
    x = _out(xh, a)
    if not _needs_grad(a, b):
        return x
    ainv = _inv_attached(a, False)[0]

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
        if g is None:
            return (None, None)
        gb = matmul(_mT(ainv), g)
        ga = -matmul(gb, _mT(x)) if needs[0] else None
        return (ga, gb if needs[1] else None)

    return _attach("LinalgSolveEx", (a, b), x, rule)


def _broadcast_batch(a: Tensor, b: Tensor, op: str) -> tuple[Tensor, Tensor]:
    batch = tuple(broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]), op))
    if tuple(a.shape[:-2]) != batch:
        a = a.expand(*batch, *a.shape[-2:])
    if tuple(b.shape[:-2]) != batch:
        b = b.expand(*batch, *b.shape[-2:])
    return a, b


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:
    """torch.linalg.solve: X with A X = B (``left=False``: X A = B). A host operation."""
    op = "linalg.solve"
    a, b = tensor_arg(A, op, "A"), tensor_arg(B, op, "B")
    _check_matrix(a, op)
    if b.ndim < 1:
        raise _error(RuntimeError, f"{op}: The input tensor B must have at least 1 dimensions.")
    if a.dtype is not b.dtype:
        raise _error(
            RuntimeError,
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{a.dtype.legacy_name} and B of type {b.dtype.legacy_name} instead",
        )
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    if vector:
        b = _col(b)
    if not left:
        a, b = _mT(a), _mT(b)
    n = a.shape[-1]
    if b.shape[-2] != n:
        m, k = (b.shape[-1], b.shape[-2]) if not left else (b.shape[-2], b.shape[-1])
        eq = "AX = B" if left else "XA = B"
        raise _error(
            RuntimeError,
            f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {m}x{k})",
        )
    a, b = _broadcast_batch(a, b, op)
    x = _solve_square(a, b, "torch.linalg.solve")
    if not left:
        x = _mT(x)
    if vector:
        x = S.squeeze(x, -1)
    return _into_out(x, out, op)


# -- determinants ---------------------------------------------------------------------------------------
def _det_attached(x: Tensor, op: str) -> Tensor:
    a = _host(x, op)
    d = np.linalg.det(a) if a.size or a.shape[-1] == 0 else np.ones(a.shape[:-2], a.dtype)
    det = _out(d, x)
    if not _needs_grad(x):
        return det
    singular = d == 0
    if singular.any():
        # torch's gradient at an exactly singular matrix is zero (not the cofactor matrix):
        # those elements' inverse is replaced by zeros (their det is 0 anyway)
        keep = _out(np.where(singular, 0, 1)[..., None, None], x)
        ident = eye(a.shape[-1], dtype=x.dtype, device=x.device)
        ainv = _inv_attached(x * keep + ident * (1 - keep), False)[0] * keep
    else:
        ainv = _inv_attached(x, False)[0]

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None]:
        if g is None:
            return (None,)
        return (_col(_col(g * det)) * _mT(ainv),)

    return _attach("LinalgDet", (x,), det, rule)


@public(torch="det", method="det")
def det(input: Tensor) -> Tensor:
    """torch.det / linalg.det (a host operation)."""
    x = tensor_arg(input, "det")
    _check_matrix(x, "linalg.det", low="lu_cpu")
    return _det_attached(x, "linalg.det")


def linalg_det(A: Tensor, *, out: Any = None) -> Tensor:
    x = tensor_arg(A, "linalg.det", "A")
    _check_matrix(x, "linalg.det", low="lu_cpu")
    return _into_out(_det_attached(x, "linalg.det"), out, "linalg.det")


def _slogdet(x: Tensor, op: str) -> tuple[Tensor, Tensor]:
    a = _host(x, op)
    sign_h, logabs_h = np.linalg.slogdet(a)
    sign, logabs = _out(sign_h, x), _out(logabs_h, x)
    if not _needs_grad(x):
        return sign, logabs
    ainv = _inv_attached(x, False)[0]

    def rule(needs: Any, gs: Tensor | None, gl: Tensor | None) -> tuple[Tensor | None]:
        if gl is None:
            return (None,)
        return (_col(_col(gl)) * _mT(ainv),)

    sign, logabs = _attach("LinalgSlogdet", (x,), (sign, logabs), rule, nondiff=(0,))
    return sign, logabs


@public(torch="slogdet", method="slogdet")
def slogdet(input: Tensor, *, out: Any = None) -> Any:
    """(sign, log|det|) of each square matrix (a host operation)."""
    _no_tuple_out(out, "slogdet")
    x = tensor_arg(input, "slogdet")
    _check_matrix(x, "linalg.slogdet")
    return slogdet_result(*_slogdet(x, "linalg.slogdet"))


def linalg_slogdet(A: Tensor, *, out: Any = None) -> Any:
    _no_tuple_out(out, "linalg.slogdet")
    x = tensor_arg(A, "linalg.slogdet", "A")
    _check_matrix(x, "linalg.slogdet")
    return linalg_slogdet_result(*_slogdet(x, "linalg.slogdet"))


@public(torch="logdet", method="logdet")
def logdet(input: Tensor) -> Tensor:
    """log(det): NaN for a negative determinant, -inf for a zero one (a host operation)."""
    x = tensor_arg(input, "logdet")
    _check_matrix(x, "logdet")
    sign, logabs = _slogdet(x, "logdet")
    return logabs + sign.log()


# -- cholesky --------------------------------------------------------------------------------------------
def _cholesky_attached(x: Tensor, upper: bool, op: str, check: bool) -> tuple[Tensor, Any]:
    a = _host(x, op)
    f, info = _cholesky_host(a, upper)
    if check:
        k, i = _first_failure(info)
        if k >= 0:
            raise _error(
                LinAlgError,
                f"{op}: {_batch_prefix(x, k)}The factorization could not be completed because "
                f"the input is not positive-definite (the leading minor of order {i} is not "
                "positive-definite).",
            )
    factor = _out(f, x)
    if not _needs_grad(x):
        return factor, info

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None]:
        if g is None:
            return (None,)
        gl = _mT(g) if upper else g
        ga = S.tril(matmul(_mT(low_out), gl))
        ga = (ga + _mT(S.tril(ga, -1))) * 0.5
        return (matmul(matmul(_mT(low_inv), ga), low_inv),)

    factor = _attach("LinalgCholeskyEx", (x,), factor, rule)
    # after attaching: the backward's L^-1 carries gradient through L (double backward)
    low_out = _mT(factor) if upper else factor
    low_inv = _inv_attached(low_out, False)[0]
    return factor, info


def linalg_cholesky(input: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    """torch.linalg.cholesky: L with A = L L^T (``upper``: U with A = U^T U). Reads the
    lower triangle only (upper=True: the upper one). A host operation."""
    x = tensor_arg(input, "linalg.cholesky")
    _check_matrix(x, "linalg.cholesky", low="cholesky_cpu")
    if upper:
        x = _mT(x)
        f = _mT(_cholesky_attached(x, False, "linalg.cholesky", True)[0])
    else:
        f = _cholesky_attached(x, False, "linalg.cholesky", True)[0]
    return _into_out(f, out, "linalg.cholesky")


def cholesky_ex(
    input: Tensor, *, upper: bool = False, check_errors: bool = False, out: Any = None
) -> Any:
    """torch.linalg.cholesky_ex: (L, info); info > 0 is the order of the leading minor that
    is not positive-definite (that element's L holds NaNs here, where LAPACK leaves a
    partial factorization)."""
    _no_tuple_out(out, "linalg.cholesky_ex")
    x = tensor_arg(input, "linalg.cholesky_ex")
    _check_matrix(x, "linalg.cholesky", low="cholesky_cpu")
    xs = _mT(x) if upper else x
    f, info = _cholesky_attached(xs, False, "linalg.cholesky", check_errors)
    return cholesky_ex_result(_mT(f) if upper else f, _out(info, x, dt.int32))


@public(torch="cholesky", method="cholesky")
def cholesky(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """torch.cholesky (deprecated in torch for linalg.cholesky; the same factor)."""
    x = tensor_arg(input, "cholesky")
    _check_matrix(x, "cholesky", low="cholesky_cpu", integer="cholesky_cpu")
    xs = _mT(x) if upper else x
    f = _cholesky_attached(xs, False, "linalg.cholesky", True)[0]
    return _into_out(_mT(f) if upper else f, out, "cholesky")


# -- triangular solves -----------------------------------------------------------------------------------
def _triangle(a: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    t = S.triu(a, 1 if unitriangular else 0) if upper else S.tril(a, -1 if unitriangular else 0)
    if unitriangular:
        n = a.shape[-1]
        t = t + eye(n, dtype=a.dtype, device=a.device)
    return t


def solve_triangular(
    input: Tensor,
    B: Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
    out: Any = None,
) -> Tensor:
    """torch.linalg.solve_triangular: X with A X = B (left=False: X A = B), A read as its
    upper or lower triangle (with a unit diagonal when `unitriangular`). A host operation;
    its gradient reaches only that triangle, as torch's."""
    op = "linalg.solve_triangular"
    a, b = tensor_arg(input, op), tensor_arg(B, op, "B")
    _check_matrix(a, op)
    if b.ndim < 2:
        raise _error(RuntimeError, f"{op}: The input tensor B must have at least 2 dimensions.")
    if a.dtype is not b.dtype:
        raise _error(
            RuntimeError,
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{a.dtype.legacy_name} and B of type {b.dtype.legacy_name} instead",
        )
    t = _triangle(a, upper, unitriangular)
    if not left:
        t, b = _mT(t), _mT(b)
    n = t.shape[-1]
    if b.shape[-2] != n:
        m, k = (b.shape[-2], b.shape[-1]) if left else (b.shape[-1], b.shape[-2])
        raise _error(
            RuntimeError,
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {m}x{k})",
        )
    t, b = _broadcast_batch(t, b, op)
    x = _solve_square(t, b, op)
    return _into_out(x if left else _mT(x), out, op)


@public(method=True)
def triangular_solve(
    input: Tensor,
    A: Tensor,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
    *,
    out: Any = None,
) -> Any:
    """torch's deprecated ``triangular_solve(b, A)``: X with A X = b (``transpose``:
    A^T X = b), A read as its upper (or lower) triangle; returns (solution,
    cloned_coefficient), the latter a copy of A, as torch's.

    >>> import lazytorch
    >>> A = lazytorch.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> lazytorch.triangular_solve(lazytorch.tensor([[4.0], [8.0]]), A).solution
    tensor([[1.],
            [2.]])
    """
    op = "triangular_solve"
    b, a = tensor_arg(input, op), tensor_arg(A, op, "A")
    t, up = (_mT(a), not upper) if transpose else (a, upper)
    x = solve_triangular(t, b, upper=up, unitriangular=unitriangular)
    result = triangular_solve_result(x, a.clone())
    if out is not None:
        for o, r in zip(out, result):
            _into_out(r, o, op)
        return triangular_solve_result(*out)
    return result


@public(method=True)
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out: Any = None) -> Any:
    """X with A X = `input` where A = L L^T, L = `input2` read as its lower triangle
    (``upper``: A = U^T U). The gradient is torch's: it reaches the whole of `input2`
    (``-(C + C^T) L``, C = gB X^T), not only its triangle."""
    op = "cholesky_solve"
    b, f = tensor_arg(input, op), tensor_arg(input2, op, "input2")
    _check_matrix(f, op, name="input2")
    if b.ndim < 2:
        raise _error(RuntimeError, f"{op}: The input tensor B must have at least 2 dimensions.")
    if b.dtype is not f.dtype:
        raise _error(
            RuntimeError,
            f"{op}: Expected b and A to have the same dtype, but found b of type "
            f"{b.dtype.legacy_name} and A of type {f.dtype.legacy_name} instead",
        )
    b, f = _broadcast_batch(b, f, op)
    with_grad = _needs_grad(b, f)
    with grad_mode_off():
        low = _mT(S.triu(f)) if upper else S.tril(f)
        x = solve_triangular(_mT(low), solve_triangular(low, b, upper=False), upper=True)
    if not with_grad:
        return _into_out(x, out, op)
    tri = _mT(S.triu(f)) if upper else S.tril(f)
    a_inv = _inv_attached(matmul(tri, _mT(tri)), False)[0]

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
        if g is None:
            return (None, None)
        gb = matmul(a_inv, g)
        gf = None
        if needs[1]:
            c = matmul(gb, _mT(xo))
            c = c + _mT(c)
            gf = -matmul(f, c) if upper else -matmul(c, f)
        return (gb if needs[0] else None, gf)

    xo = _attach("CholeskySolve", (b, f), x, rule)
    return _into_out(xo, out, op)


# -- QR ---------------------------------------------------------------------------------------------------
def _qr(x: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    if mode not in ("reduced", "complete", "r"):
        raise _error(
            RuntimeError,
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'",
        )
    _check_matrix(x, "linalg.qr", square=False, low="geqrf_cpu")
    a = _host(x, "linalg.qr")
    m, n = a.shape[-2:]
    if a.size == 0:
        k = builtins.min(m, n)
        qs = (*a.shape[:-2], m, m if mode == "complete" else k)
        rs = (*a.shape[:-2], m if mode == "complete" else k, n)
        qh = np.zeros(qs, a.dtype)
        if qs[-1] and mode != "r":
            qh[...] = np.eye(m, qs[-1], dtype=a.dtype)
        rh = np.zeros(rs, a.dtype)
    else:
        qh, rh = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return _out(np.zeros((0,), a.dtype), x), _attach_r_only(x, _out(rh, x))
    q, r = _out(qh, x), _out(rh, x)
    if not _needs_grad(x):
        return q, r
    if mode == "complete" and m > n:

        def refuse(needs: Any, gq: Tensor | None, gr: Tensor | None) -> tuple[Tensor | None]:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )

        q, r = _attach("LinalgQrBackward", (x,), (q, r), refuse)
        return q, r
    # A = Q R; for m < n, R = [U | V] with U square: only U's triangle is inverted
    k = builtins.min(m, n)

    def rule(needs: Any, gq: Tensor | None, gr: Tensor | None) -> tuple[Tensor | None]:
        if gq is None and gr is None:
            return (None,)
        qo, ro = outs
        if m >= n:
            return (_qr_tall_grad(qo, ro, r_inv, gq, gr),)
        # A = [X | Y], X = Q U: Y = Q V contributes Q gV and gQ += Y gV^T
        u, v = ro[..., :, :m], ro[..., :, m:]
        gu = None if gr is None else gr[..., :, :m]
        gv = None if gr is None else gr[..., :, m:]
        y = matmul(qo, v)
        gq2 = gq if gv is None else _add(gq, matmul(y, _mT(gv)))
        gx = _qr_tall_grad(qo, u, r_inv, gq2, gu)
        if gv is not None:
            gy = matmul(qo, gv)
        else:
            gy = zeros(*y.shape, dtype=y.dtype, device=y.device)
        return (S.cat([gx, gy], -1),)

    outs = _attach("LinalgQr", (x,), (q, r), rule)
    r_inv = _inv_attached(outs[1][..., :, :k], False)[0]  # (after attaching: double backward)
    return outs


def _qr_tall_grad(
    q: Tensor, r: Tensor, r_inv: Tensor, gq: Tensor | None, gr: Tensor | None
) -> Tensor:
    """torch's linalg_qr_backward for a square-or-tall factorization:
    gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q."""
    m_ = None
    if gr is not None:
        m_ = matmul(r, _mT(gr))
    if gq is not None:
        m_ = _add(m_, -matmul(_mT(gq), q))
    low = S.tril(m_, -1)
    copyltu = low + _mT(low) + C.diag_embed(S.diagonal(m_, 0, -2, -1))
    b = matmul(q, copyltu)
    if gq is not None:
        b = b + gq
    return matmul(b, _mT(r_inv))


def _attach_r_only(x: Tensor, r: Tensor) -> Tensor:
    def refuse(needs: Any, gr: Tensor | None) -> tuple[Tensor | None]:
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr."
        )

    return _attach("LinalgQr", (x,), r, refuse)


def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """torch.linalg.qr: (Q, R) with A = Q R (mode 'reduced', 'complete' or 'r'). A host
    operation (NumPy's LAPACK geqrf, as torch's)."""
    _no_tuple_out(out, "linalg.qr")
    x = tensor_arg(A, "linalg.qr", "A")
    return linalg_qr_result(*_qr(x, mode))


@public(torch="qr", method="qr")
def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """torch.qr (deprecated in torch for linalg.qr)."""
    _no_tuple_out(out, "qr")
    x = tensor_arg(input, "qr")
    return qr_result(*_qr(x, "reduced" if some else "complete"))


# -- SVD ---------------------------------------------------------------------------------------------------
def _svd_host(x: Tensor, full_matrices: bool, compute_uv: bool) -> Any:
    a = _host(x, "linalg.svd")
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if a.size == 0:
        s = np.zeros((*a.shape[:-2], k), a.dtype)
        if not compute_uv:
            return s
        um = m if full_matrices else k
        vn = n if full_matrices else k
        u = np.zeros((*a.shape[:-2], m, um), a.dtype)
        vh = np.zeros((*a.shape[:-2], vn, n), a.dtype)
        u[...] = np.eye(m, um, dtype=a.dtype)
        vh[...] = np.eye(vn, n, dtype=a.dtype)
        return u, s, vh
    if not compute_uv:
        return np.linalg.svd(a, compute_uv=False)
    return np.linalg.svd(a, full_matrices=full_matrices)


def _svd_backward(
    u: Tensor, s: Tensor, vh: Tensor, gu: Tensor | None, gs: Tensor | None, gvh: Tensor | None
) -> Tensor | None:
    """torch's linalg_svd_backward (reduced U, S, Vh; real)."""
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if gu is None and gvh is None:
        if gs is None:
            return None
        return matmul(u * _row(gs), vh)
    v = _mT(vh)
    gv = None if gvh is None else _mT(gvh)
    s2 = s * s
    e = _row(s2) - _col(s2)
    e = e + eye(k, dtype=s.dtype, device=s.device)  # the diagonal (not read) set to 1
    ga = None
    if gu is not None:
        uhgu = matmul(_mT(u), gu)
        ga = (uhgu - _mT(uhgu)) * _row(s)
    if gv is not None:
        vhgv = matmul(_mT(v), gv)
        ga = _add(ga, _col(s) * (vhgv - _mT(vhgv)))
    ga = ga / e
    if gs is not None:
        ga = ga + C.diag_embed(gs)
    if m > k and gu is not None:
        ga = matmul(u, ga)
        gus = gu / _row(s)
        ga = ga + gus - matmul(u, matmul(_mT(u), gus))
        ga = matmul(ga, vh)
    elif n > k and gv is not None:
        ga = matmul(ga, vh)
        gvs = gv / _row(s)
        ga = ga + _mT(gvs) - matmul(matmul(_mT(gvs), v), vh)
        ga = matmul(u, ga)
    else:
        ga = matmul(matmul(u, ga), vh)
    return ga


def _svd(x: Tensor, full_matrices: bool, op: str = "linalg.svd") -> tuple[Tensor, Tensor, Tensor]:
    _check_matrix(x, op, square=False, low="linalg_svd_cpu")
    uh, sh, vhh = _svd_host(x, full_matrices, True)
    u, s, vh = _out(uh, x), _out(sh, x), _out(vhh, x)
    if not _needs_grad(x):
        return u, s, vh
    m, n = x.shape[-2:]
    k = builtins.min(m, n)

    def rule(
        needs: Any, gu: Tensor | None, gs: Tensor | None, gvh: Tensor | None
    ) -> tuple[Tensor | None]:
        uo, so, vho = outs
        if full_matrices:
            uo, vho = uo[..., :, :k], vho[..., :k, :]
            gu = None if gu is None else gu[..., :, :k]
            gvh = None if gvh is None else gvh[..., :k, :]
        return (_svd_backward(uo, so, vho, gu, gs, gvh),)

    outs = _attach("LinalgSvd", (x,), (u, s, vh), rule)
    return outs


def linalg_svd(
    A: Tensor, full_matrices: bool = True, *, driver: Any = None, out: Any = None
) -> Any:
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh. A host operation. Singular vectors
    are unique up to sign (up to a rotation for repeated singular values): NumPy's LAPACK may
    choose other signs than torch's."""
    _no_tuple_out(out, "linalg.svd")
    x = tensor_arg(A, "linalg.svd", "A")
    return linalg_svd_result(*_svd(x, full_matrices))


def svdvals(A: Tensor, *, driver: Any = None, out: Any = None) -> Tensor:
    """torch.linalg.svdvals: the singular values, descending (a host operation)."""
    x = tensor_arg(A, "linalg.svdvals", "A")
    _check_matrix(x, "linalg.svd", square=False, low="linalg_svd_cpu")
    if not _needs_grad(x):
        return _into_out(_out(_svd_host(x, False, False), x), out, "linalg.svdvals")
    return _into_out(_svd(x, False)[1], out, "linalg.svdvals")


DECOMP.update(svdvals=svdvals)


def cond(input: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    """torch.linalg.cond: the condition number of (a batch of) matrices in norm `p`.

    None, 2 and -2 are ratios of singular values (any shape; a singular matrix gives inf,
    an all-zero one NaN); 'fro', 'nuc', inf, -inf, 1 and -1 are ``norm(A) * norm(A^-1)``
    of square matrices, inf where A is singular.

    >>> import lazytorch
    >>> lazytorch.linalg.cond(lazytorch.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(4.)
    """
    # (torch's parser names the matrix `input`, not `A` as its other linalg functions do)
    x = tensor_arg(input, "linalg.cond")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        _check_matrix(x, "linalg.cond", square=False)
        s = svdvals(x)
        big, small = S.select(s, -1, 0), S.select(s, -1, -1)
        result = big / small if p != -2 else small / big
    else:
        _check_matrix(x, f"linalg.cond(ord={p})")
        inverse, info = inv_ex(x)
        result = matrix_norm(x, p) * matrix_norm(inverse, p)
        result = E.where(info > 0, float("inf"), result)
    return _into_out(result, out, "linalg.cond")


@public(torch="svd", method="svd")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """torch.svd: (U, S, V) with input = U diag(S) V^T (V, not Vh; ``some=False``: full U, V).
    ``compute_uv=False``: U and V are zeros of shapes (m, m) and (n, n)."""
    _no_tuple_out(out, "svd")
    x = tensor_arg(input, "svd")
    if x.ndim < 2:
        raise _error(
            RuntimeError,
            f"linalg.svd: input should have at least 2 dimensions, but has {x.ndim} "
            "dimensions instead",
        )
    if not compute_uv:
        s = svdvals(x)
        m, n = x.shape[-2:]
        batch = tuple(x.shape[:-2])
        u = zeros(*batch, m, m, dtype=x.dtype, device=x.device)
        v = zeros(*batch, n, n, dtype=x.dtype, device=x.device)
        return svd_result(u, s, v)
    u, s, vh = _svd(x, not some)
    return svd_result(u, s, _mT(vh))


# -- symmetric eigendecomposition --------------------------------------------------------------------
def _eigh(x: Tensor, uplo: str, vectors: bool) -> Any:
    op = "linalg.eigh" if vectors else "linalg.eigvalsh"
    if uplo not in ("L", "U", "l", "u"):
        raise _error(RuntimeError, f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    _check_matrix(x, "linalg.eigh", low="linalg_eigh_cpu", integer="linalg_eigh_cpu")
    a = _host(x, op)
    if a.size == 0:
        n = a.shape[-1]
        wh = np.zeros((*a.shape[:-2], n), a.dtype)
        vh = np.zeros(a.shape, a.dtype)
    elif vectors or _needs_grad(x):
        wh, vh = np.linalg.eigh(a, UPLO=uplo.upper())
    else:
        return _out(np.linalg.eigvalsh(a, UPLO=uplo.upper()), x)
    w, v = _out(wh, x), _out(vh, x)
    if not _needs_grad(x):
        return w, v

    def rule(needs: Any, gw: Tensor | None, gv: Tensor | None) -> tuple[Tensor | None]:
        wo, vo = outs
        if gv is None:
            if gw is None:
                return (None,)
            return (matmul(vo * _row(gw), _mT(vo)),)
        n = wo.shape[-1]
        e = _row(wo) - _col(wo) + eye(n, dtype=wo.dtype, device=wo.device)
        vhgv = matmul(_mT(vo), gv)
        ga = (vhgv - _mT(vhgv)) * 0.5 / e
        if gw is not None:
            ga = ga + C.diag_embed(gw)
        return (matmul(matmul(vo, ga), _mT(vo)),)

    outs = _attach("LinalgEigh", (x,), (w, v), rule)
    return outs


def eigh(input: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """torch.linalg.eigh: (eigenvalues ascending, eigenvectors) of symmetric matrices, read
    from the lower (UPLO='L') or upper triangle. A host operation; eigenvectors are unique
    up to sign (NumPy's may differ from torch's)."""
    _no_tuple_out(out, "linalg.eigh")
    x = tensor_arg(input, "linalg.eigh")
    return eigh_result(*_eigh(x, UPLO, True))


def eigvalsh(input: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """torch.linalg.eigvalsh: the eigenvalues of symmetric matrices, ascending."""
    x = tensor_arg(input, "linalg.eigvalsh")
    r = _eigh(x, UPLO, False)
    return _into_out(r[0] if isinstance(r, tuple) else r, out, "linalg.eigvalsh")


# -- pseudo-inverse, least squares, rank -------------------------------------------------------------
def _tolerance(s: Any, shape: tuple[int, ...], atol: Any, rtol: Any, dtype: Any) -> Any:
    """torch's cut-off: max(atol, rtol * largest singular value); with neither given,
    rtol = eps * max(m, n) (with only atol given, rtol = 0)."""
    if isinstance(atol, Tensor):
        atol = np.asarray(_host(atol, "linalg.pinv"))
    if isinstance(rtol, Tensor):
        rtol = np.asarray(_host(rtol, "linalg.pinv"))
    if rtol is None:
        rtol = np.finfo(dtype.np).eps * builtins.max(shape[-2:]) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    smax = s.max(axis=-1) if s.shape[-1] else np.zeros(s.shape[:-1], s.dtype)
    return np.maximum(np.asarray(atol, dtype=s.dtype), np.asarray(rtol, dtype=s.dtype) * smax)


def _pinv(x: Tensor, atol: Any, rtol: Any, hermitian: bool) -> Tensor:
    op = "linalg.pinv"
    if x.ndim < 2 or x.dtype not in (dt.float32, dt.float64):
        raise _error(
            RuntimeError,
            f"{op}({x.dtype.legacy_name}{{{list(x.shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types",
        )
    a = _host(x, op)
    m, n = a.shape[-2:]
    if a.size == 0:
        p = np.zeros((*a.shape[:-2], n, m), a.dtype)
    elif hermitian:
        w, v = np.linalg.eigh(a)
        tol = _tolerance(np.abs(w), a.shape, atol, rtol, x.dtype)
        keep = np.abs(w) > tol[..., None]
        winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
        p = (v * winv[..., None, :]) @ np.swapaxes(v, -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        tol = _tolerance(s, a.shape, atol, rtol, x.dtype)
        keep = s > tol[..., None]
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        p = (np.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(u, -1, -2)
    pinv_ = _out(p, x)

    def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None]:
        if g is None:
            return (None,)
        return (_pinv_backward(g, p_out, x),)

    p_out = _attach("LinalgPinv", (x,), pinv_, rule)
    return p_out


def _pinv_backward(g: Tensor, p: Tensor, a: Tensor) -> Tensor:
    """torch's pinv_backward (real)."""
    m, n = a.shape[-2:]
    ph, gh = _mT(p), _mT(g)
    if m <= n:
        k = matmul(gh, p)
        kph = matmul(k, ph)
        return (
            -_mT(matmul(p, k))
            + kph
            - matmul(matmul(a, p), kph)
            + matmul(matmul(ph, p), gh - matmul(k, a))
        )
    k = matmul(p, gh)
    phk = matmul(ph, k)
    return (
        -_mT(matmul(k, p))
        + matmul(matmul(gh - matmul(a, k), p), ph)
        + phk
        - matmul(matmul(phk, p), a)
    )


def pinv(
    input: Tensor,
    rcond: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
    out: Any = None,
) -> Tensor:
    """torch.linalg.pinv: the Moore-Penrose pseudo-inverse, through the SVD (``hermitian``:
    the symmetric eigendecomposition); singular values at most max(atol, rtol * largest)
    are dropped (`rcond` is torch's older name of rtol). A host operation."""
    x = tensor_arg(input, "linalg.pinv")
    if rcond is not None:
        if rtol is not None:
            raise _error(RuntimeError, "linalg.pinv: cannot pass both rcond and rtol")
        rtol = rcond
    return _into_out(_pinv(x, atol, rtol, hermitian), out, "linalg.pinv")


@public(torch="pinverse", method="pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with rtol=`rcond`."""
    return _pinv(tensor_arg(input, "pinverse"), None, rcond, False)


def lstsq(input: Tensor, b: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:
    """torch.linalg.lstsq: the least-squares (minimum-norm) solution of A X = B as
    pinv(A) @ B, whose gradient is torch's (torch differentiates lstsq through pinv).
    `driver` names torch's LAPACK routine ('gelsy', the CPU default, 'gels', 'gelsd',
    'gelss'); the solution does not depend on it here, the other fields do as in torch:
    `rank` for every driver but 'gels', `singular_values` for 'gelsd'/'gelss', `residuals`
    (squared residual norms) when m > n, every matrix has full rank and the driver is not
    'gelsy'."""
    op = "linalg.lstsq"
    a, bb = tensor_arg(input, op), tensor_arg(b, op, "b")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise _error(
            RuntimeError,
            f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
            f"gelss), but got {driver}",
        )
    _check_matrix(a, op, square=False, name="A")
    if a.dtype is not bb.dtype:
        raise _error(
            RuntimeError,
            f"{op}: Expected input and b to have the same dtype, but got input with dtype "
            f"{a.dtype.legacy_name} and b with dtype {bb.dtype.legacy_name}",
        )
    vector = bb.ndim == 1 or (bb.ndim == a.ndim - 1 and tuple(bb.shape) == tuple(a.shape[:-1]))
    bm = _col(bb) if vector else bb
    if bm.shape[-2] != a.shape[-2]:
        raise _error(
            RuntimeError,
            f"torch.linalg.lstsq: input.size(-2) should match other.size(-2) "
            f"({a.shape[-2]} != {bm.shape[-2]})",
        )
    p = _pinv(a, None, rcond, False)
    sol = matmul(p, bm)
    sol = S.squeeze(sol, -1) if vector else sol
    ah = _host(a, op)
    m, n = ah.shape[-2:]
    batch = ah.shape[:-2]
    s = (
        np.linalg.svd(ah, compute_uv=False)
        if ah.size
        else np.zeros((*batch, builtins.min(m, n)), ah.dtype)
    )
    tol = _tolerance(s, ah.shape, None, rcond, a.dtype)
    rank_h = (s > tol[..., None]).sum(-1).astype(np.int64)
    empty = _out(np.zeros((0,), ah.dtype), a)
    rank = _out(rank_h, a, dt.int64) if driver != "gels" else _out(np.zeros(0), a, dt.int64)
    sv = _out(s, a) if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if m > n and driver != "gelsy" and bool(np.all(rank_h == n)):
        r = matmul(a, sol if not vector else _col(sol)) - bm
        residuals = (r * r).sum(-2)
        if vector:
            residuals = S.squeeze(residuals, -1)
    return lstsq_result(sol, residuals, rank, sv)


def matrix_rank(
    input: Tensor,
    tol: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
    out: Any = None,
) -> Tensor:
    """torch.linalg.matrix_rank: the number of singular values above max(atol, rtol *
    largest) (`tol`: torch's older name of atol), int64. A host operation."""
    x = tensor_arg(input, "linalg.matrix_rank")
    if x.ndim < 2:
        raise _error(
            RuntimeError,
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.",
        )
    if x.dtype not in (dt.float32, dt.float64):
        raise _error(RuntimeError, "This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0 if rtol is None else rtol
    a = _host(x, "linalg.matrix_rank")
    m, n = a.shape[-2:]
    if a.size == 0:
        s = np.zeros((*a.shape[:-2], builtins.min(m, n)), a.dtype)
    elif hermitian:
        s = np.abs(np.linalg.eigvalsh(a))
    else:
        s = np.linalg.svd(a, compute_uv=False)
    cut = _tolerance(s, a.shape, atol, rtol, x.dtype)
    rank = (s > cut[..., None]).sum(-1).astype(np.int64)
    return _into_out(_out(rank, x, dt.int64), out, "linalg.matrix_rank")


# -- composites: powers, chains, vectors -----------------------------------------------------------------
def _matrix_power(x: Tensor, n: int, op: str) -> Tensor:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise _error(
            RuntimeError,
            f"{op}: A must be batches of square matrices, but they are "
            + (
                f"{x.shape[-2]} by {x.shape[-1]} matrices"
                if x.ndim >= 2
                else "1-dimensional tensors"
            ),
        )
    if n == 0:
        k = x.shape[-1]
        # torch: a copy of the identity into a clone of A (a zero gradient reaches A)
        return x.clone().copy_(eye(k, dtype=x.dtype, device=x.device).expand(*x.shape))
    if n < 0:
        _check_matrix(x, "linalg.inv")
        x = _inv_attached(x, True)[0]
        n = -n
    if n == 1:
        return x.clone()
    if n == 2:
        return matmul(x, x)
    if n == 3:
        return matmul(matmul(x, x), x)
    z = result = None
    while n > 0:  # torch's binary decomposition, in its order
        bit, n = n % 2, n // 2
        z = x if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result  # type: ignore[return-value]


@public(torch="matrix_power", method="matrix_power")
def matrix_power(input: Tensor, n: int, *, out: Any = None) -> Tensor:
    """The `n`-th power of square matrices (n < 0: of their inverse, a host operation)."""
    x = tensor_arg(input, "matrix_power")
    return _into_out(_matrix_power(x, n, "linalg.matrix_power"), out, "matrix_power")


def _matrix_exp(x: Tensor, op: str) -> Tensor:
    """exp of square matrices: scaling and squaring around a degree-18 Taylor polynomial.

    The scaling (a power of two taking the largest 1-norm of the batch to at most 1) is read
    on the host (a materialization of `x`); the rest is ordinary ops, so the gradient (and
    higher ones) is that of the computation: the polynomial's truncation error is below
    1/19! (relative) in every entry, under float64's rounding.
    """
    if not x.dtype.is_floating_point:
        raise _error(
            RuntimeError,
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{x.dtype.legacy_name}",
        )
    if x.ndim < 2:
        raise _error(RuntimeError, f"{op}: The input tensor A must have at least 2 dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise _error(
            RuntimeError,
            f"{op}: A must be batches of square matrices, but they are "
            f"{x.shape[-2]} by {x.shape[-1]} matrices",
        )
    if x.numel() == 0:
        return x.clone()
    if x.dtype not in (dt.float32, dt.float64):  # float16/bfloat16: in float32
        return _matrix_exp(x.float(), op).to(x.dtype)
    a = _host(x, op)
    norm = float(np.abs(a).sum(-2).max())  # the largest 1-norm (column sum) in the batch
    s = 0
    if np.isfinite(norm) and norm > 1.0:
        s = int(np.ceil(np.log2(norm)))
    y = x / (2.0**s) if s else x
    ident = eye(x.shape[-1], dtype=x.dtype, device=x.device)
    r = ident + y / 18.0
    for k in range(17, 0, -1):  # Horner: I + y (I + y/2 (... (I + y/18)))
        r = ident + matmul(y, r) / float(k)
    for _ in range(s):
        r = matmul(r, r)
    return r


@public(torch="matrix_exp", method="matrix_exp")
def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential of square matrices (batched over leading dims)."""
    return _matrix_exp(tensor_arg(input, "matrix_exp"), "linalg.matrix_exp")


def linalg_matrix_exp(input: Tensor) -> Tensor:
    """``torch.linalg.matrix_exp``."""
    return _matrix_exp(tensor_arg(input, "linalg.matrix_exp"), "linalg.matrix_exp")


def _chain_order(dims: list[int]) -> Any:
    """The matrix-chain order of least multiplications (torch's multi_dot dynamic program):
    split[i][j] is where the product of matrices i..j splits."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] == -1 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _multi_dot(ts: list[Tensor], op: str) -> Tensor:
    n = len(ts)
    if n < 2:
        raise _error(RuntimeError, f"{op}(): expected at least 2 tensors but got {n}")
    first, last = ts[0].ndim, ts[-1].ndim
    if first not in (1, 2):
        raise _error(RuntimeError, f"{op}(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise _error(RuntimeError, f"{op}(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if ts[i].ndim != 2:
            raise _error(RuntimeError, f"{op}(): tensor {i} must be 2D but got {ts[i].ndim}D")
    dtype = ts[0].dtype
    for i, t in enumerate(ts[1:], 1):
        if t.dtype is not dtype:
            raise _error(
                RuntimeError,
                f"{op}(): all tensors must have be the same dtype but tensor 0 is "
                f"{dtype.legacy_name} and tensor {i} {t.dtype.legacy_name}",
            )
    mats = list(ts)
    if first == 1:
        mats[0] = S.unsqueeze(mats[0], 0)
    if last == 1:
        mats[-1] = S.unsqueeze(mats[-1], -1)
    for i in range(1, n):
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise _error(
                RuntimeError,
                f"{op}(): tensors {i - 1} and {i} with shapes {list(ts[i - 1].shape)} and "
                f"{list(ts[i].shape)} cannot be multiplied",
            )
    if n == 2:
        r = matmul(mats[0], mats[1])
    else:
        dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
        split = _chain_order(dims)

        def prod(i: int, j: int) -> Tensor:
            if i == j:
                return mats[i]
            s = split[i][j]
            return matmul(prod(i, s), prod(s + 1, j))

        r = prod(0, n - 1)
    if first == 1 and last == 1:
        return r.reshape(())
    if first == 1:
        return S.squeeze(r, 0)
    if last == 1:
        return S.squeeze(r, -1)
    return r


def multi_dot(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """torch.linalg.multi_dot: the product of a chain of matrices in the cheapest order (the
    first and last may be vectors)."""
    ts = [tensor_arg(t, "multi_dot") for t in tensors]
    return _into_out(_multi_dot(ts, "multi_dot"), out, "linalg.multi_dot")


@public()
def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """torch.chain_matmul (deprecated in torch for linalg.multi_dot): 2-d matrices only."""
    ts = [tensor_arg(t, "chain_matmul") for t in matrices]
    if len(ts) == 1:
        return _into_out(ts[0].clone(), out, "chain_matmul")
    for t in ts:
        if t.ndim != 2:
            raise _error(RuntimeError, f"Tensor dimension is {t.ndim}, expected 2 instead.")
    return _into_out(_multi_dot(ts, "multi_dot"), out, "chain_matmul")


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """torch.linalg.vecdot: sum(x * y) along `dim` (real tensors: no conjugation)."""
    a, b = tensor_arg(x, "linalg.vecdot", "x"), tensor_arg(y, "linalg.vecdot", "y")
    if a.dtype is not b.dtype:
        raise _error(
            RuntimeError,
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{a.dtype.legacy_name} and y of type {b.dtype.legacy_name} instead",
        )
    return _into_out((a * b).sum(dim), out, "linalg.vecdot")


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """torch.linalg.cross: the cross product of 3-vectors along `dim` (default the last)."""
    a, b = tensor_arg(input, "linalg.cross"), tensor_arg(other, "linalg.cross", "other")
    if a.ndim != b.ndim:
        raise _error(
            RuntimeError,
            f"linalg.cross: inputs must have the same number of dimensions. Got {a.ndim} and "
            f"{b.ndim}",
        )
    d = dim if dim >= 0 else dim + a.ndim
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise _error(
            RuntimeError,
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
            f"{b.shape[d]}",
        )
    return _into_out(C.cross(a, b, dim=dim), out, "linalg.cross")


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: torch.diagonal with the last two dims as default."""
    return S.diagonal(tensor_arg(A, "linalg.diagonal", "A"), offset, dim1, dim2)


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """torch.linalg.vander: the powers x^0 .. x^(N-1) along a new last dim (N defaults to
    x.shape[-1]), as torch's cumulative product."""
    v = tensor_arg(x, "linalg.vander", "x")
    if v.ndim < 1:
        raise _error(RuntimeError, "linalg.vander: x must have at least one dimension.")
    n = v.shape[-1] if N is None else N
    if n < 0:
        raise _error(RuntimeError, "N must be non-negative.")
    if v.dtype is dt.bool_:
        v = v.to(dt.int64)
    if n == 0:
        return zeros(*v.shape, 0, dtype=v.dtype, device=v.device)
    ones = zeros(*v.shape, 1, dtype=v.dtype, device=v.device) + 1
    if n == 1:
        return ones
    rest = S.unsqueeze(v, -1).expand(*v.shape, n - 1)
    return S.cat([ones, rest], -1).cumprod(-1)
