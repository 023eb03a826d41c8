"""LU and Householder factorizations and the solvers built on them, as in torch.

``linalg.lu_factor`` is a host operation like the other decompositions
(`lazytorch.ops.decomp`): it materializes its input and runs partial-pivoting LU (LAPACK
getrf's choice of pivot: the first entry of largest magnitude) on the host, and its gradient
is torch's (``linalg_lu_backward``), recorded with ordinary ops. Everything else here is a
composition of ops that carry gradients already: unpacking (``lu_unpack``: tril/triu and a
permutation matrix), solving (``lu_solve``: two triangular solves), ``cholesky_inverse``,
``tensorinv``/``tensorsolve``, and Householder products (``householder_product``,
``ormqr``: one reflector at a time). ``geqrf`` is NumPy's LAPACK geqrf (``qr(mode="raw")``).

``svd_lowrank`` and ``pca_lowrank`` are torch's randomized algorithms over ``linalg.qr`` and
``linalg.svd``, with lazytorch's random numbers.

The functions torch removed (``torch.solve``, ``lstsq``, ``symeig``, ``eig``,
``matrix_rank``) raise torch's RuntimeError, which says what replaces them.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ops import decomp as D
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.creation import eye, tensor, zeros
from lazytorch.ops.linalg import matmul
from lazytorch.ops.random import randn
from lazytorch.ops.reduction import _into_out
from lazytorch.tensor import Tensor

__all__: list[str] = []

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
lu_with_info_result = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
geqrf_result = namedtuple("geqrf", ["a", "tau"])

_mT = D._mT


# -- the host factorization ----------------------------------------------------------------------
def _getrf(m: Any) -> tuple[Any, Any, int]:
    """(LU, 1-based pivots, info) of one (m, n) matrix, as LAPACK getrf."""
    a = np.array(m, copy=True)
    rows, cols = a.shape
    k = min(rows, cols)
    piv = np.zeros(k, dtype=np.int32)
    info = 0
    for j in range(k):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv[j] = p + 1
        if a[p, j] != 0:
            if p != j:
                a[[j, p]] = a[[p, j]]
            a[j + 1 :, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1 :, j + 1 :] -= np.outer(a[j + 1 :, j], a[j, j + 1 :])
    return a, piv, info


def _check_lu_input(x: Tensor, op: str) -> None:
    if x.ndim < 2:
        raise D._error(
            RuntimeError,
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"[{', '.join(map(str, x.shape))}] instead",
        )
    if x.dtype not in (dt.float32, dt.float64):
        raise D._error(
            NotImplementedError, f"\"lu_cpu\" not implemented for '{x.dtype.legacy_name}'"
        )


def _permutation(pivots: Any, m: int, dtype: Any) -> Any:
    """The (batched) permutation matrices P with A = P L U, from getrf's pivots."""
    flat = pivots.reshape(-1, pivots.shape[-1])
    out = np.zeros((flat.shape[0], m, m), dtype=dtype)
    for b, piv in enumerate(flat):
        perm = np.arange(m)
        for i, p in enumerate(piv):
            p = int(p) - 1
            perm[i], perm[p] = perm[p], perm[i]
        out[b, perm, np.arange(m)] = 1  # P^T A = A[perm]: P[perm[i], i] = 1
    return out.reshape(*pivots.shape[:-1], m, m)


def _lu_backward(
    g_l: Tensor | None, g_u: Tensor | None, p: Tensor, low: Tensor, up: Tensor
) -> Tensor:
    """torch's gradient of A = P L U with respect to A, given those of L and U."""
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    gl = None if g_l is None else S.tril(g_l, -1)
    gu = None if g_u is None else S.triu(g_u)
    if m <= n:
        # gA = P L^{-H} [ ((L^H gL - gU U^H) o tril(-1)) U1^{-H} + gU1 , gU2 ]
        inner = matmul(_mT(low), gl) if gl is not None else None
        if gu is not None:
            t = matmul(gu, _mT(up))
            inner = -t if inner is None else inner - t
        u1 = up if n == k else up[..., :, :k]
        ga = D.solve_triangular(_mT(u1), S.tril(inner, -1), upper=False, left=False)
        if gu is not None:
            ga = ga + gu[..., :, :k]
            if n > k:
                ga = S.cat([ga, gu[..., :, k:]], -1)
        elif n > k:
            ga = S.cat([ga, zeros(*up.shape[:-1], n - k, dtype=up.dtype, device=up.device)], -1)
        ga = D.solve_triangular(_mT(low[..., :k, :]), ga, upper=True, unitriangular=True)
    else:
        # gA = P [ gL1 + L1^{-H} ((gU U^H - L^H gL) o triu) ; gL2 ] U^{-H}
        inner = matmul(gu, _mT(up)) if gu is not None else None
        if gl is not None:
            t = matmul(_mT(low), gl)
            inner = -t if inner is None else inner - t
        l1 = low[..., :k, :]
        ga = D.solve_triangular(_mT(l1), S.triu(inner), upper=True, unitriangular=True)
        if gl is not None:
            ga = S.cat([ga + gl[..., :k, :], gl[..., k:, :]], -2)
        else:
            ga = S.cat(
                [ga, zeros(*low.shape[:-2], m - k, k, dtype=low.dtype, device=low.device)], -2
            )
        ga = D.solve_triangular(_mT(up), ga, upper=False, left=False)
    return matmul(p, ga)


def _factor(x: Tensor, op: str) -> tuple[Tensor, Tensor, Any, Any]:
    """(LU, pivots tensor, host pivots, host info) of `x`, LU attached to the graph."""
    a = D._host(x, op)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape(-1, m, n)
    lu = np.empty_like(flat)
    piv = np.zeros((flat.shape[0], k), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for b in range(flat.shape[0]):
        lu[b], piv[b], info[b] = _getrf(flat[b])
    lu = lu.reshape(a.shape)
    piv = piv.reshape(*a.shape[:-2], k)
    info = info.reshape(a.shape[:-2])
    lu_t = D._out(lu, x)
    if D._needs_grad(x):
        p = D._out(_permutation(piv, m, a.dtype), x)
        low, up = _unpack_lu(lu_t)

        def rule(needs: Any, g: Tensor | None) -> tuple[Tensor | None]:
            if g is None:
                return (None,)
            return (_lu_backward(g[..., :, :k], g[..., :k, :], p, low, up),)

        lu_t = D._attach("LinalgLuFactorEx", (x,), lu_t, rule)
    return lu_t, tensor(piv, dtype=dt.int32, device=x.device), piv, info


def _unpack_lu(lu: Tensor) -> tuple[Tensor, Tensor]:
    """(L, U) of a packed LU: L unit lower (m, k), U upper (k, n)."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    low = S.tril(lu[..., :, :k], -1) + eye(m, k, dtype=lu.dtype, device=lu.device)
    up = S.triu(lu[..., :k, :])
    return low, up


def _raise_zero_pivot(x: Tensor, info: Any, op: str) -> None:
    k, i = D._first_failure(info)
    if k >= 0:
        raise D._error(
            RuntimeError,
            f"{op}: {D._batch_prefix(x, k)}U[{i},{i}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
        )


def _no_pivot(pivot: bool, op: str) -> None:
    if not pivot:
        raise D._error(RuntimeError, f"{op}: LU without pivoting is not implemented on the CPU")


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """torch.linalg.lu_factor: ``(LU, pivots)``, the partial-pivoting LU of each matrix
    packed in one (L's unit diagonal implied) and getrf's 1-based row swaps. Raises for a
    zero pivot (a singular matrix), as torch. A host operation.

    >>> import lazytorch
    >>> lazytorch.linalg.lu_factor(lazytorch.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=lazytorch.int32)
    """
    D._no_tuple_out(out, "linalg.lu_factor")
    x = tensor_arg(A, "linalg.lu_factor", "A")
    _check_lu_input(x, "linalg.lu_factor")
    _no_pivot(pivot, "linalg.lu_factor")
    lu, piv, _, info = _factor(x, "linalg.lu_factor")
    _raise_zero_pivot(x, info, "torch.linalg.lu_factor")
    return lu_factor_result(lu, piv)


def lu_factor_ex(
    A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: Any = None
) -> Any:
    """torch.linalg.lu_factor_ex: ``(LU, pivots, info)``; info > 0 is the (1-based) first
    zero pivot, and raises only with `check_errors`."""
    D._no_tuple_out(out, "linalg.lu_factor_ex")
    x = tensor_arg(A, "linalg.lu_factor_ex", "A")
    _check_lu_input(x, "linalg.lu_factor_ex")
    _no_pivot(pivot, "linalg.lu_factor_ex")
    lu, piv, _, info = _factor(x, "linalg.lu_factor_ex")
    if check_errors:
        _raise_zero_pivot(x, info, "torch.linalg.lu_factor_ex")
    return lu_factor_ex_result(lu, piv, tensor(info, dtype=dt.int32, device=x.device))


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """torch.linalg.lu: ``(P, L, U)`` with A = P L U (L unit lower, U upper)."""
    D._no_tuple_out(out, "linalg.lu")
    x = tensor_arg(A, "linalg.lu", "A")
    _check_lu_input(x, "linalg.lu")
    _no_pivot(pivot, "linalg.lu")
    with D.grad_mode_off():
        lu_t, _, piv, _ = _factor(x, "linalg.lu")
        low, up = _unpack_lu(lu_t)
    m = x.shape[-2]
    p = D._out(_permutation(piv, m, lu_t.dtype.np), x)
    if D._needs_grad(x):

        def rule(needs: Any, gp: Any, gl: Any, gu: Any) -> tuple[Tensor | None]:
            if gl is None and gu is None:
                return (None,)
            return (_lu_backward(gl, gu, p, low, up),)

        p, low, up = D._attach("LinalgLuBackward", (x,), (p, low, up), rule, nondiff=(0,))
    return lu_result(p, low, up)


@public(torch="lu", method="lu")
def torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """Deprecated torch.lu: ``(LU, pivots)`` of `linalg.lu_factor_ex` (never raises for a
    singular matrix, as torch's), with ``infos`` too when `get_infos`."""
    D._no_tuple_out(out, "lu")
    r = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return lu_with_info_result(*r)
    return (r.LU, r.pivots)


@public()
def lu_unpack(
    LU_data: Tensor,
    LU_pivots: Tensor,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
    *,
    out: Any = None,
) -> Any:
    """``(P, L, U)`` from a packed LU and its pivots (`lu_factor`'s). Differentiable in
    `LU_data`. What is not unpacked is an empty tensor, as torch's.

    >>> import lazytorch
    >>> A = lazytorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> P, L, U = lazytorch.lu_unpack(*lazytorch.linalg.lu_factor(A))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    D._no_tuple_out(out, "lu_unpack")
    lu_t = tensor_arg(LU_data, "lu_unpack", "LU_data")
    if not isinstance(LU_pivots, Tensor) or LU_pivots.dtype is not dt.int32:
        raise D._error(
            RuntimeError,
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.",
        )
    empty = zeros(0, dtype=lu_t.dtype, device=lu_t.device)
    low, up = _unpack_lu(lu_t) if unpack_data else (empty, empty)
    p = empty
    if unpack_pivots:
        piv = D._host(LU_pivots, "lu_unpack")
        p = D._out(_permutation(piv, lu_t.shape[-2], lu_t.dtype.np), lu_t)
    return lu_unpack_result(p, low, up)


def _lu_solve(lu_t: Tensor, piv: Tensor, b: Tensor, left: bool, adjoint: bool, op: str) -> Tensor:
    n = lu_t.shape[-1]
    if lu_t.shape[-2] != n:
        raise D._error(
            RuntimeError,
            f"{op}: Expected LU to be square, but got {lu_t.shape[-2]}x{n}",
        )
    if b.ndim < 2:
        raise D._error(RuntimeError, f"{op}: The input tensor B must have at least 2 dimensions.")
    if b.dtype is not lu_t.dtype:
        raise D._error(
            RuntimeError,
            f"{op}: Expected LU and B to have the same dtype, but found LU of type "
            f"{lu_t.dtype.legacy_name} and B of type {b.dtype.legacy_name} instead",
        )
    rows = b.shape[-2] if left else b.shape[-1]
    if rows != n:
        raise D._error(
            RuntimeError,
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})",
        )
    p = lu_unpack(lu_t, piv, unpack_data=False).P
    low, up = _unpack_lu(lu_t)
    # A = P L U. adjoint: A^T = U^T L^T P^T. left=False: X A = B <=> A^T X^T = B^T.
    if not left:
        b = _mT(b)
        adjoint = not adjoint
    if not adjoint:  # X = U^{-1} L^{-1} P^T B
        y = D.solve_triangular(low, matmul(_mT(p), b), upper=False, unitriangular=True)
        x = D.solve_triangular(up, y, upper=True)
    else:  # X = P L^{-T} U^{-T} B
        y = D.solve_triangular(_mT(up), b, upper=False)
        x = matmul(p, D.solve_triangular(_mT(low), y, upper=True, unitriangular=True))
    return x if left else _mT(x)


def lu_solve(
    LU: Tensor,
    pivots: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
    out: Any = None,
) -> Tensor:
    """torch.linalg.lu_solve: X with A X = B from A's `lu_factor` (``adjoint``: A^T X = B;
    ``left=False``: X A = B). Differentiable in `LU` and `B`."""
    op = "linalg.lu_solve"
    lu_t, b = tensor_arg(LU, op, "LU"), tensor_arg(B, op, "B")
    return _into_out(_lu_solve(lu_t, pivots, b, left, adjoint, op), out, op)


@public(torch="lu_solve", method="lu_solve")
def torch_lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Any = None) -> Tensor:
    """Deprecated torch.lu_solve(b, LU_data, LU_pivots): ``linalg.lu_solve(LU, pivots, b)``."""
    op = "lu_solve"
    b, lu_t = tensor_arg(input, op), tensor_arg(LU_data, op, "LU_data")
    return _into_out(_lu_solve(lu_t, LU_pivots, b, True, False, "linalg.lu_solve"), out, op)


# -- other solvers -------------------------------------------------------------------------------
@public(method=True)
def cholesky_inverse(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The inverse of A = L L^T from its Cholesky factor L (``upper``: A = U^T U).

    >>> import lazytorch
    >>> lazytorch.cholesky_inverse(lazytorch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    op = "cholesky_inverse"
    f = tensor_arg(input, op)
    D._check_matrix(f, op, low="cholesky_inverse", integer="cholesky_inverse")
    n = f.shape[-1]
    ident = eye(n, dtype=f.dtype, device=f.device).expand(*f.shape[:-2], n, n)
    return _into_out(D.cholesky_solve(ident, f, upper), out, op)


def solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: Any = None
) -> Any:
    """torch.linalg.solve_ex: ``(result, info)``; info > 0 marks a singular matrix (the
    result is then NaN here; torch's holds whatever LAPACK left), raised only with
    `check_errors`."""
    D._no_tuple_out(out, "linalg.solve_ex")
    op = "linalg.solve"
    a = tensor_arg(A, "linalg.solve_ex", "A")
    D._check_matrix(a, op)
    with D.grad_mode_off():
        info = D._singular_info(D._host(a.detach(), "linalg.solve_ex"))
    if info.any() and not check_errors:
        ident = eye(a.shape[-1], dtype=a.dtype, device=a.device).expand(*a.shape)
        x = D.solve(ident, B, left=left) * float("nan")
    else:
        x = D.solve(a, B, left=left)
    return solve_ex_result(x, tensor(info.astype(np.int32), dtype=dt.int32, device=a.device))


def tensorinv(input: Tensor, ind: int = 2, *, out: Any = None) -> Tensor:
    """torch.linalg.tensorinv: the inverse of `A` read as a matrix of its first `ind` dims
    by the rest, shaped ``A.shape[ind:] + A.shape[:ind]``."""
    op = "linalg.tensorinv"
    x = tensor_arg(input, op)
    if ind <= 0:
        raise D._error(
            RuntimeError, f"Expected a strictly positive integer for 'ind', but got {ind}"
        )
    rows = 1
    for d in x.shape[:ind]:
        rows *= d
    cols = 1
    for d in x.shape[ind:]:
        cols *= d
    if rows != cols:
        raise D._error(
            RuntimeError,
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}",
        )
    inv = D.inv(S.reshape(x, (rows, cols)))
    return _into_out(S.reshape(inv, (*x.shape[ind:], *x.shape[:ind])), out, op)


def tensorsolve(input: Tensor, other: Tensor, dims: Any = None, *, out: Any = None) -> Tensor:
    """torch.linalg.tensorsolve: X with ``tensordot(A, X, X.ndim) == B`` (`dims`: dims of
    `A` moved to the end first)."""
    op = "linalg.tensorsolve"
    a, b = tensor_arg(input, op), tensor_arg(other, op, "other")
    if dims is not None:
        dims = [d % a.ndim for d in dims]
        keep = [d for d in range(a.ndim) if d not in dims]
        a = a.permute(*keep, *dims)
    rest = tuple(a.shape[b.ndim :])
    rows = 1
    for d in a.shape[: b.ndim]:
        rows *= d
    cols = 1
    for d in rest:
        cols *= d
    if rows != cols:
        raise D._error(
            RuntimeError,
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}",
        )
    x = D.solve(S.reshape(a, (rows, cols)), S.reshape(b, (rows,)))
    return _into_out(S.reshape(x, rest), out, op)


# -- Householder ---------------------------------------------------------------------------------
def _reflectors(a: Tensor, tau: Tensor, op: str) -> list[tuple[Tensor, Tensor]]:
    """The (v, tau) of each Householder reflector stored below a's diagonal."""
    m = a.shape[-2]
    out = []
    for i in range(tau.shape[-1]):
        head = zeros(*a.shape[:-2], i, dtype=a.dtype, device=a.device)
        one = eye(1, dtype=a.dtype, device=a.device).reshape(1).expand(*a.shape[:-2], 1)
        v = S.cat([head, one, a[..., i + 1 : m, i]], -1)
        out.append((v, tau[..., i]))
    return out


def _apply(h: tuple[Tensor, Tensor], c: Tensor, left: bool) -> Tensor:
    """H c (left) or c H, H = I - tau v v^T."""
    v, t = h
    t = t[..., None, None]
    if left:
        return c - t * matmul(v[..., :, None], matmul(v[..., None, :], c))
    return c - t * matmul(matmul(c, v[..., :, None]), v[..., None, :])


def _check_householder(a: Tensor, tau: Tensor, op: str) -> None:
    if a.ndim < 2:
        raise D._error(RuntimeError, f"{op}: input must have at least 2 dimensions.")
    if tau.ndim != a.ndim - 1:
        raise D._error(
            RuntimeError,
            f"{op}: input.dim() - tau.dim() must be equal to 1 but got {a.ndim - tau.ndim}",
        )
    if a.dtype is not tau.dtype:
        raise D._error(
            RuntimeError,
            f"{op}: tau dtype {tau.dtype.legacy_name} does not match input dtype "
            f"{a.dtype.legacy_name}",
        )


def householder_product(input: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:
    """torch.linalg.householder_product: the first n columns of H_1 ... H_k, the
    reflectors H_i = I - tau_i v_i v_i^T stored below `A`'s diagonal (`geqrf`'s output).
    Differentiable in `A` and `tau`."""
    op = "torch.linalg.householder_product"
    a, t = tensor_arg(input, op), tensor_arg(tau, op, "tau")
    _check_householder(a, t, op)
    m, n = a.shape[-2], a.shape[-1]
    if m < n:
        raise D._error(
            RuntimeError,
            f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]",
        )
    if n < t.shape[-1]:
        raise D._error(
            RuntimeError,
            f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]",
        )
    q = eye(m, n, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], m, n)
    for h in reversed(_reflectors(a, t, op)):
        q = _apply(h, q, True)
    return _into_out(q, out, "linalg.householder_product")


@public(method=True)
def orgqr(input: Tensor, input2: Tensor, *, out: Any = None) -> Tensor:
    """torch.orgqr: `linalg.householder_product`."""
    return householder_product(input, input2, out=out)


@public(method=True)
def ormqr(
    input: Tensor,
    input2: Tensor,
    input3: Tensor,
    left: bool = True,
    transpose: bool = False,
    *,
    out: Any = None,
) -> Tensor:
    """`input3` multiplied by Q = H_1 ... H_k (the reflectors of `input`, `input2`: `geqrf`'s
    output): Q C (``left``) or C Q, Q^T for ``transpose``. Differentiable."""
    op = "torch.ormqr"
    a, t = tensor_arg(input, op), tensor_arg(input2, op, "input2")
    c = tensor_arg(input3, op, "input3")
    _check_householder(a, t, op)
    if c.dtype is not a.dtype:
        raise D._error(
            RuntimeError,
            f"{op}: Expected input and other tensors to be of the same dtype, but got "
            f"{a.dtype.legacy_name} and {c.dtype.legacy_name}",
        )
    rows = c.shape[-2] if left else c.shape[-1]
    if t.shape[-1] != min(rows, a.shape[-1]):
        raise D._error(
            RuntimeError,
            f"{op}: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
            "input.shape[-1])",
        )
    if rows != a.shape[-2]:
        raise D._error(
            RuntimeError,
            f"{op}: input.shape[-2] must be equal to other.shape[{-2 if left else -1}]",
        )
    hs = _reflectors(a, t, op)
    # Q C = H1 (H2 (... Hk C)); Q^T C = Hk (... (H1 C)); C Q = ((C H1) H2) ...; C Q^T reversed
    order = hs if left == transpose else list(reversed(hs))
    for h in order:
        c = _apply(h, c, left)
    return _into_out(c, out, "ormqr")


@public(method=True)
def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """``(a, tau)``: LAPACK geqrf's QR of each matrix, R on and above the diagonal and the
    Householder reflectors below it (`householder_product` rebuilds Q). A host operation;
    not differentiable, as torch's."""
    D._no_tuple_out(out, "geqrf")
    x = tensor_arg(input, "geqrf")
    D._check_matrix(x, "geqrf", square=False, low="geqrf_cpu", integer="geqrf_cpu")
    a = D._host(x, "geqrf")
    m, n = a.shape[-2:]
    flat = a.reshape(-1, m, n)
    outs = np.empty_like(flat)
    taus = np.zeros((flat.shape[0], min(m, n)), dtype=a.dtype)
    for b in range(flat.shape[0]):
        h, tau = np.linalg.qr(flat[b], mode="raw")
        outs[b] = h.T
        taus[b] = tau
    return geqrf_result(
        D._out(outs.reshape(a.shape), x), D._out(taus.reshape(*a.shape[:-2], min(m, n)), x)
    )


# -- removed APIs --------------------------------------------------------------------------------
_REMOVED = "This function was deprecated since version 1.9 and is now removed."


@public()
def solve(input: Tensor, A: Tensor, *, out: Any = None) -> Any:
    """Removed from torch (1.9): raises torch's RuntimeError naming `linalg.solve`."""
    raise _removed_solve()


@public(torch=False, method="solve")
def _solve_method(self: Tensor, other: Tensor) -> Any:
    raise _removed_solve()


def _removed_solve() -> RuntimeError:
    return RuntimeError(
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)"
    )


@public()
def lstsq(input: Tensor, A: Tensor, *, out: Any = None) -> Any:
    """Removed from torch (1.9): raises torch's RuntimeError naming `linalg.lstsq`."""
    raise _removed_lstsq()


@public(torch=False, method="lstsq")
def _lstsq_method(self: Tensor, other: Tensor) -> Any:
    raise _removed_lstsq()


def _removed_lstsq() -> RuntimeError:
    return RuntimeError(
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
        "solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
        "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
        "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
        "with:\nX = torch.linalg.lstsq(A, B).solution"
    )


@public()
def symeig(
    input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out: Any = None
) -> Any:
    """Removed from torch (1.9): raises torch's RuntimeError naming `linalg.eigh`."""
    raise _removed_symeig()


@public(torch=False, method="symeig")
def _symeig_method(self: Tensor, eigenvectors: bool = False) -> Any:
    raise _removed_symeig()


def _removed_symeig() -> RuntimeError:
    return RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
        "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
        "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


@public()
def eig(self: Tensor, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> Any:
    """Removed from torch (1.9): raises torch's RuntimeError naming `linalg.eig`."""
    raise _removed_eig()


@public(torch=False, method="eig")
def _eig_method(self: Tensor, eigenvectors: bool = False) -> Any:
    raise _removed_eig()


def _removed_eig() -> RuntimeError:
    return RuntimeError(
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)"
    )


@public()
def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Any:
    """Removed from torch (1.9): raises torch's RuntimeError naming `linalg.matrix_rank`."""
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The "
        "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    )


# -- randomized low-rank SVD and PCA (torch._lowrank's algorithms) -------------------------------
def _approximate_basis(a: Tensor, q: int, niter: int, m: Tensor | None) -> Tensor:
    """An orthonormal basis of (about) `a - m`'s range, of `q` columns (Halko et al.)."""
    r = randn(a.shape[-1], q, dtype=a.dtype, device=a.device)

    def times(x: Tensor, y: Tensor, mm: Tensor | None) -> Tensor:
        out = matmul(x, y)
        return out if mm is None else out - matmul(mm, y)

    basis = D.linalg_qr(times(a, r, m)).Q
    for _ in range(niter):
        basis = D.linalg_qr(times(_mT(a), basis, None if m is None else _mT(m))).Q
        basis = D.linalg_qr(times(a, basis, m)).Q
    return basis


def _svd_lowrank(a: Tensor, q: int | None, niter: int | None, m: Tensor | None) -> Any:
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    rows, cols = a.shape[-2:]
    if m is not None:
        m = m.broadcast_to(tuple(a.shape))
    if rows < cols:
        a = _mT(a)
        m = None if m is None else _mT(m)
    basis = _approximate_basis(a, q, niter, m)
    b = matmul(_mT(basis), a)
    if m is not None:
        b = b - matmul(_mT(basis), m)
    u, s, vh = D.linalg_svd(b, full_matrices=False)
    v = _mT(vh)
    u = matmul(basis, u)
    if rows < cols:
        u, v = v, u
    return u, s, v


@public()
def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """An approximate rank-`q` SVD ``(U, S, V)`` of `A` (of ``A - M`` when given), by
    torch's randomized algorithm (Halko et al. 2009, `niter` subspace iterations). The random
    projection is lazytorch's (not torch's numbers), so U and V may differ from torch's by
    sign and, where `A`'s rank exceeds `q`, by the approximation; differentiable."""
    a = tensor_arg(A, "svd_lowrank", "A")
    if not a.dtype.is_floating_point:
        a = a.float()
    return _svd_lowrank(a, q, niter, M)


@public()
def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """The principal components of `A`'s rows: ``(U, S, V)`` of the (centered, with
    `center`) data by `svd_lowrank`, q = min(6, m, n) by default."""
    a = tensor_arg(A, "pca_lowrank", "A")
    rows, cols = a.shape[-2:]
    if q is None:
        q = min(6, rows, cols)
    elif not 0 <= q <= min(rows, cols):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(rows, cols)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if a.is_sparse:
        a = a.to_dense()
    if not a.dtype.is_floating_point:
        a = a.float()
    if not center:
        return _svd_lowrank(a, q, niter, None)  # type: ignore[no-any-return]
    return _svd_lowrank(a - a.mean(dim=(-2,), keepdim=True), q, niter, None)  # type: ignore[no-any-return]
