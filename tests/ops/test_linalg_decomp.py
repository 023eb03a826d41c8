"""Decompositions and solvers (lazytorch.ops.decomp: host operations) against torch.

Values and gradients on random well-conditioned float64 and float32 inputs, batched and not.
Singular and eigen vectors are unique up to sign (NumPy's LAPACK and torch's may choose
differently), so those ops are compared through gauge-invariant quantities: the
reconstruction, projectors, |U^T U_torch|, squared vectors, and losses built from them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises, to_lt, to_torch

TOL32 = {"atol": 1e-4, "rtol": 1e-4}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def well(*shape: int, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    """Well-conditioned square matrices: I * n + noise."""
    n = shape[-1]
    a = _rng(seed).uniform(-1, 1, size=shape) + n * np.eye(n)
    return a.astype(dtype)


def spd(*shape: int, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    a = _rng(seed).uniform(-1, 1, size=shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def rect(*shape: int, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(-1, 1, size=shape).astype(dtype)


def raises_like(fn, *inputs) -> Exception:
    """torch and lazytorch both raise: the same type (torch.linalg.LinAlgError is
    lazytorch.linalg.LinAlgError's counterpart) and a message starting with torch's."""
    with pytest.raises(Exception) as theirs:
        fn(torch, *[to_torch(x) for x in inputs])
    with pytest.raises(Exception) as ours:
        out = fn(lt, *[to_lt(x) for x in inputs])
        lt.materialize(*[o for o in (out if isinstance(out, tuple) else (out,))])
    want = (
        lt.linalg.LinAlgError
        if isinstance(theirs.value, torch.linalg.LinAlgError)
        else type(theirs.value)
    )
    assert isinstance(ours.value, want), (type(ours.value), ours.value, theirs.value)
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0]), (ours.value, theirs.value)
    return ours.value


def tol(dtype: str) -> dict:
    return TOL32 if dtype == "float32" else {}


DTYPES = ["float64", "float32"]
SHAPES = [(4, 4), (2, 3, 4, 4)]


# -- inv, det, slogdet, logdet -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_inverse_and_determinants(dtype: str, shape: tuple) -> None:
    a = well(*shape, dtype=dtype)
    kw = tol(dtype)
    check(lambda t, x: t.linalg.inv(x), a, **kw)
    check(lambda t, x: t.inverse(x), a, **kw)
    check(lambda t, x: x.inverse(), a, **kw)
    check(lambda t, x: t.linalg.inv_ex(x), a, **kw)
    check(lambda t, x: t.linalg.det(x), a, **kw)
    check(lambda t, x: x.det(), a, **kw)
    check(lambda t, x: t.linalg.slogdet(x), a, **kw)
    check(lambda t, x: t.slogdet(-x), a, **kw)
    check(lambda t, x: t.logdet(x), a, **kw)


@pytest.mark.parametrize("shape", SHAPES)
def test_inverse_and_determinant_gradients(shape: tuple) -> None:
    a = well(*shape)
    check_grad(lambda t, x: t.linalg.inv(x), a, second_order=True)
    check_grad(lambda t, x: t.linalg.det(x), a, second_order=True)
    check_grad(lambda t, x: t.linalg.slogdet(x).logabsdet, a)
    check_grad(lambda t, x: t.logdet(x), a)
    check_grad(lambda t, x: x.inverse().sum(-1) * x.det().unsqueeze(-1), a)


def test_empty_batches() -> None:
    check(lambda t, x: t.linalg.inv(x), np.zeros((0, 3, 3)))
    check(lambda t, x: t.linalg.inv(x), np.zeros((0, 0)))
    check(lambda t, x: t.linalg.det(x), np.zeros((0, 0)))
    check(lambda t, x: t.linalg.det(x), np.zeros((2, 0, 0)))
    check(lambda t, x: t.linalg.svdvals(x), np.zeros((0, 3, 2)))
    check(lambda t, x: t.linalg.cholesky(x), np.zeros((0, 3, 3)))


def test_singular_matrices() -> None:
    sing = np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 1]])
    batch = np.stack([np.eye(3), sing])
    e = raises_like(lambda t, x: t.linalg.inv(x), sing)
    assert isinstance(e, lt.linalg.LinAlgError) and isinstance(e, RuntimeError)
    msg = (
        "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
        "because the input matrix is singular."
    )
    assert str(e).startswith(msg)
    e = raises_like(lambda t, x: t.linalg.inv(x), batch)
    assert str(e).startswith("linalg.inv: (Batch element 1): The diagonal element 2 is zero")
    e = raises_like(lambda t, x: t.linalg.solve(x, t.ones(2, 3, dtype=x.dtype)), batch)
    assert str(e).startswith(
        "torch.linalg.solve: (Batch element 1): The solver failed because the input matrix "
        "is singular."
    )
    e = raises_like(lambda t, x: t.matrix_power(x, -1), np.array([[1.0, 2], [2, 4]]))
    assert "The diagonal element 2 is zero" in str(e)
    out = lt.linalg.inv_ex(lt.tensor(batch))
    assert out.info.tolist() == [0, 2] and out.info.dtype is lt.int32
    np.testing.assert_allclose(out.inverse[0].numpy(), np.eye(3))
    # determinants of singular matrices: no error
    check(lambda t, x: t.linalg.det(x), batch)
    check(lambda t, x: t.linalg.slogdet(x), batch)
    check(lambda t, x: t.logdet(x), np.stack([sing, -np.eye(3)]))


def test_det_gradient_at_singular_matrices_is_torchs() -> None:
    """torch's det gradient at an exactly singular matrix is zero (not the cofactor matrix);
    the other elements of a batch keep theirs. (Not matched: torch's double backward there,
    which is not zero.) The matrices are singular for any LU: a zero column or row. One
    whose rows are multiples of each other is singular only in exact arithmetic: MKL's LU
    (torch on an Intel CPU) leaves a 1e-16 pivot there (det -6.7e-16) and a cofactor
    gradient, OpenBLAS's an exact zero."""
    a = np.array([[1.0, 0.0, 3.0], [2.0, 0.0, 6.0], [1.0, 0.0, 1.0]])
    batch = np.stack([a, well(3, 3), np.diag([1.0, 0.0, 1.0])])
    check_grad(lambda t, x: t.linalg.det(x), batch)
    check_grad(lambda t, x: t.linalg.det(x), a)
    check_grad(lambda t, x: t.linalg.det(x), np.array([[1.0, 2.0], [0.0, 0.0]]))


@pytest.mark.parametrize(
    "fn,name",
    [
        (lambda t, x: t.linalg.inv(x), "inv"),
        (lambda t, x: t.linalg.det(x), "det"),
        (lambda t, x: t.linalg.slogdet(x), "slogdet"),
        (lambda t, x: t.logdet(x), "logdet"),
        (lambda t, x: t.linalg.cholesky(x), "cholesky"),
        (lambda t, x: t.linalg.qr(x), "qr"),
        (lambda t, x: t.linalg.svd(x), "svd"),
        (lambda t, x: t.linalg.svdvals(x), "svdvals"),
        (lambda t, x: t.linalg.eigh(x), "eigh"),
        (lambda t, x: t.linalg.eigvalsh(x), "eigvalsh"),
        (lambda t, x: t.linalg.pinv(x), "pinv"),
        (lambda t, x: t.linalg.matrix_rank(x), "matrix_rank"),
        (lambda t, x: t.svd(x), "torch.svd"),
        (lambda t, x: t.cholesky(x), "torch.cholesky"),
    ],
)
@pytest.mark.parametrize("bad", ["int64", "float16", "1d", "nonsquare"])
def test_input_errors(fn, name: str, bad: str) -> None:
    a = {
        "int64": np.ones((2, 2), dtype=np.int64),
        "float16": np.ones((2, 2), dtype=np.float16),
        "1d": np.ones(3, dtype=np.float32),
        "nonsquare": np.ones((2, 3), dtype=np.float32),
    }[bad]
    try:
        fn(torch, torch.from_numpy(a))
    except Exception:
        raises_like(fn, a)
    else:  # (qr, svd, pinv, matrix_rank of a non-square matrix: the values are tested below)
        fn(lt, lt.tensor(a))


# -- solve, solve_triangular, cholesky_solve -------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve(dtype: str) -> None:
    kw = tol(dtype)
    a, b = well(2, 3, 4, 4, dtype=dtype), rect(2, 3, 4, 2, dtype=dtype, seed=1)
    check(lambda t, x, y: t.linalg.solve(x, y), a, b, **kw)
    check(lambda t, x, y: t.linalg.solve(x, y), a[0, 0], rect(4, dtype=dtype), **kw)  # vector
    check(
        lambda t, x, y: t.linalg.solve(x, y), a, rect(2, 3, 4, dtype=dtype), **kw
    )  # batch of vectors
    check(lambda t, x, y: t.linalg.solve(x, y), a, rect(4, dtype=dtype), **kw)  # broadcast vector
    check(lambda t, x, y: t.linalg.solve(x, y), a[0], rect(4, 2, dtype=dtype), **kw)  # broadcast B
    check(lambda t, x, y: t.linalg.solve(x, y, left=False), a, rect(2, 3, 2, 4, dtype=dtype), **kw)


def test_solve_gradients_and_errors() -> None:
    a, b = well(2, 4, 4), rect(2, 4, 3, seed=1)
    check_grad(lambda t, x, y: t.linalg.solve(x, y), a, b, second_order=True)
    check_grad(lambda t, x, y: t.linalg.solve(x, y), a[0], rect(4, seed=2))
    check_grad(lambda t, x, y: t.linalg.solve(x, y), a, rect(4, 3, seed=3))  # broadcast B
    check_grad(lambda t, x, y: t.linalg.solve(x, y, left=False), a, rect(2, 3, 4, seed=4))
    e = check_raises(lambda t, x, y: t.linalg.solve(x, y), np.eye(3), np.ones(4))
    assert "Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)" in str(e)
    check_raises(lambda t, x, y: t.linalg.solve(x, y), np.eye(3), np.ones(3, dtype=np.float32))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(upper: bool, left: bool, unitriangular: bool) -> None:
    a = well(2, 4, 4)
    b = rect(2, 4, 3, seed=1) if left else rect(2, 3, 4, seed=1)

    def fn(t, x, y):
        return t.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unitriangular)

    check(fn, a, b)
    check_grad(fn, a, b)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_triangular_solve(upper: bool, transpose: bool, unitriangular: bool) -> None:
    # torch's deprecated form: (b, A), returning (solution, cloned_coefficient)
    a, b = well(2, 4, 4), rect(2, 4, 3, seed=1)

    def fn(t, x, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's deprecation warning)
            r = t.triangular_solve(y, x, upper, transpose, unitriangular)
        return r.solution, r.cloned_coefficient

    check(fn, a, b)
    check_grad(lambda t, x, y: fn(t, x, y)[0], a, b)
    check(lambda t, x, y: y.triangular_solve(x, upper=upper).solution, a, b)


def test_cholesky_solve() -> None:
    low = np.linalg.cholesky(spd(2, 4, 4))
    b = rect(2, 4, 3, seed=1)
    check(lambda t, x, y: t.cholesky_solve(y, x), low, b)
    check(lambda t, x, y: t.cholesky_solve(y, x.mT, upper=True), low, b)
    check(lambda t, x, y: y.cholesky_solve(x), low, b)
    check_grad(lambda t, x, y: t.cholesky_solve(y, x), low, b)


# -- cholesky ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_cholesky(dtype: str, shape: tuple) -> None:
    a = spd(*shape, dtype=dtype)
    kw = tol(dtype)
    check(lambda t, x: t.linalg.cholesky(x), a, **kw)
    check(lambda t, x: t.linalg.cholesky(x, upper=True), a, **kw)
    check(lambda t, x: t.linalg.cholesky_ex(x), a, **kw)
    check(lambda t, x: t.cholesky(x, upper=True), a, **kw)
    check(lambda t, x: x.cholesky(), a, **kw)


def test_cholesky_gradients_and_errors() -> None:
    a = spd(2, 4, 4)
    check_grad(lambda t, x: t.linalg.cholesky(x), a, second_order=True)
    check_grad(lambda t, x: t.linalg.cholesky(x, upper=True), a)
    check_grad(lambda t, x: t.cholesky(x, upper=True), a)
    npd = np.array([[1.0, 2], [2, 1]])
    e = raises_like(lambda t, x: t.linalg.cholesky(x), npd)
    assert isinstance(e, lt.linalg.LinAlgError)
    assert str(e).startswith(
        "linalg.cholesky: The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 2 is not positive-definite)."
    )
    e = raises_like(lambda t, x: t.linalg.cholesky(x), np.stack([np.eye(2), npd]))
    assert str(e).startswith("linalg.cholesky: (Batch element 1): The factorization")
    e = raises_like(lambda t, x: t.linalg.cholesky(x), -np.eye(3))
    assert "the leading minor of order 1 is not" in str(e)
    info = lt.linalg.cholesky_ex(lt.tensor(np.stack([np.eye(2), npd]))).info
    assert info.tolist() == [0, 2] and info.dtype is lt.int32


# -- QR -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 3, 5, 4)])
def test_qr(dtype: str, shape: tuple) -> None:
    a = rect(*shape, dtype=dtype)
    kw = tol(dtype)
    for mode in ("reduced", "complete", "r"):
        # Householder QR: LAPACK's geqrf on both sides, the same signs
        check(lambda t, x, mode=mode: t.linalg.qr(x, mode=mode), a, **kw)
    check(lambda t, x: t.qr(x), a, **kw)
    check(lambda t, x: x.qr(some=False), a, **kw)
    check(lambda t, x: (lambda q, r: q @ r)(*t.linalg.qr(x)), a, **kw)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 5, 4)])
def test_qr_gradients(shape: tuple) -> None:
    a = rect(*shape)
    check_grad(lambda t, x: t.linalg.qr(x), a, second_order=True)
    check_grad(lambda t, x: t.linalg.qr(x).R, a)
    check_grad(lambda t, x: t.linalg.qr(x).Q, a)


def test_qr_errors() -> None:
    e = check_raises(lambda t, x: t.linalg.qr(x, mode="bad"), np.eye(2))
    assert "qr received unrecognized mode 'bad'" in str(e)
    x = lt.tensor(rect(3, 2), requires_grad=True)
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        lt.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        lt.linalg.qr(x, mode="complete").Q.sum().backward()


# -- SVD ----------------------------------------------------------------------------------------------------
def _svd_invariants(t, x, full_matrices=False):
    u, s, vh = t.linalg.svd(x, full_matrices=full_matrices)
    k = s.shape[-1]
    us = u[..., :, :k] * s.unsqueeze(-2)
    return (us @ vh[..., :k, :], s, u @ u.mT, vh.mT @ vh)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 3, 5, 4)])
def test_svd(dtype: str, shape: tuple) -> None:
    a = rect(*shape, dtype=dtype)
    kw = tol(dtype)
    check(_svd_invariants, a, **kw)
    check(lambda t, x: _svd_invariants(t, x, True), a, **kw)
    check(lambda t, x: t.linalg.svdvals(x), a, **kw)
    check(lambda t, x: t.svd(x, compute_uv=False), a, **kw)
    # the old API: V (not Vh), reduced unless some=False
    check(
        lambda t, x: (lambda u, s, v: (u.shape, v.shape, u * s.unsqueeze(-2) @ v.mT))(*t.svd(x)),
        a,
        **kw,
    )
    check(lambda t, x: (lambda u, s, v: (u.shape, v.shape, s))(*x.svd(some=False)), a, **kw)
    # the singular vectors equal torch's up to sign: |U^T U_torch| = I
    u = lt.linalg.svd(lt.tensor(a), full_matrices=False).U.numpy()
    ut = torch.linalg.svd(torch.from_numpy(a), full_matrices=False).U.numpy()
    k = builtins_min(shape[-2:])
    prod = np.abs(np.swapaxes(u, -1, -2) @ ut)
    np.testing.assert_allclose(prod, np.broadcast_to(np.eye(k), prod.shape), atol=1e-3)


def builtins_min(shape: tuple) -> int:
    return min(shape)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 5, 4)])
def test_svd_gradients(shape: tuple) -> None:
    a = rect(*shape)
    check_grad(lambda t, x: t.linalg.svdvals(x), a, second_order=True)
    check_grad(_svd_invariants, a)

    def gauge_invariant(t, x):  # squared singular vectors weigh the singular values
        u, s, vh = t.linalg.svd(x, full_matrices=False)
        return (
            (u**2 * s.unsqueeze(-2)).sum(-1),
            (vh**2).sum(-2) * 1.5,
            (u[..., :1] * vh[..., :1, :]),
        )

    check_grad(gauge_invariant, a)
    check_grad(lambda t, x: (lambda u, s, v: u @ v.mT)(*t.svd(x)), a)


# -- eigh ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype: str, shape: tuple, uplo: str) -> None:
    a = rect(*shape, dtype=dtype)  # not symmetric: UPLO picks the triangle read
    kw = tol(dtype)

    def invariants(t, x):
        w, v = t.linalg.eigh(x, UPLO=uplo)
        return w, (v * w.unsqueeze(-2)) @ v.mT, v**2

    check(invariants, a, **kw)
    check(lambda t, x: t.linalg.eigvalsh(x, UPLO=uplo), a, **kw)


@pytest.mark.parametrize("shape", SHAPES)
def test_eigh_gradients(shape: tuple) -> None:
    a = spd(*shape)  # distinct eigenvalues
    check_grad(lambda t, x: t.linalg.eigvalsh(x), a, second_order=True)
    check_grad(lambda t, x: (lambda w, v: (w, v**2))(*t.linalg.eigh(x)), a)
    check_grad(lambda t, x: (lambda w, v: v[..., :2] @ v[..., :2].mT)(*t.linalg.eigh(x, "U")), a)


# -- pinv, lstsq, matrix_rank --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 3, 5, 4)])
def test_pinv(dtype: str, shape: tuple) -> None:
    a = rect(*shape, dtype=dtype)
    kw = tol(dtype)
    check(lambda t, x: t.linalg.pinv(x), a, **kw)
    check(lambda t, x: t.pinverse(x), a, **kw)
    check(lambda t, x: x.pinverse(rcond=0.5), a, **kw)
    check(lambda t, x: t.linalg.pinv(x, atol=0.4), a, **kw)
    check(lambda t, x: t.linalg.matrix_rank(x), a)
    check(lambda t, x: t.linalg.matrix_rank(x, atol=0.5, rtol=0.1), a)


def test_pinv_hermitian_rank_deficient_and_gradients() -> None:
    a = spd(2, 4, 4)
    check(lambda t, x: t.linalg.pinv(x, hermitian=True), a)
    check(lambda t, x: t.linalg.matrix_rank(x, hermitian=True), a)
    low_rank = rect(5, 2) @ rect(2, 4, seed=1)
    check(lambda t, x: t.linalg.pinv(x), low_rank, atol=1e-8)
    check(lambda t, x: t.linalg.matrix_rank(x), low_rank)
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        check_grad(lambda t, x: t.linalg.pinv(x), rect(*shape), second_order=True)
    check_grad(lambda t, x: t.pinverse(x), rect(3, 5))


@pytest.mark.parametrize("driver", [None, "gelsd", "gels", "gelss"])
def test_lstsq(driver) -> None:
    a, b = rect(2, 6, 3), rect(2, 6, 2, seed=1)
    check(lambda t, x, y: t.linalg.lstsq(x, y, driver=driver), a, b)
    check(lambda t, x, y: t.linalg.lstsq(x, y, driver=driver).solution, a[0], b[0, :, 0])
    check_grad(lambda t, x, y: t.linalg.lstsq(x, y, driver=driver).solution, a, b)


# -- matrix_power, multi_dot, chain_matmul ----------------------------------------------------------------
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 5, 6])
def test_matrix_power(n: int) -> None:
    a = well(2, 3, 3) / 3
    check(lambda t, x: t.linalg.matrix_power(x, n), a)
    check(lambda t, x: x.matrix_power(n), a[0].astype(np.float32), **TOL32)
    check_grad(lambda t, x: t.matrix_power(x, n), a)
    if n >= 0:
        check(lambda t, x: t.matrix_power(x, n), np.arange(9).reshape(3, 3))


def test_multi_dot_and_chain_matmul() -> None:
    ms = [rect(2, 5), rect(5, 3, seed=1), rect(3, 7, seed=2), rect(7, 2, seed=3)]
    check(lambda t, *m: t.linalg.multi_dot(m), *ms)
    check(lambda t, *m: t.chain_matmul(*m), *ms)
    check(lambda t, *m: t.linalg.multi_dot(m), rect(5), ms[1], ms[2], rect(7, seed=4))
    check(lambda t, *m: t.linalg.multi_dot(m), rect(5), ms[1])
    check_grad(lambda t, *m: t.linalg.multi_dot(m), *ms)
    e = check_raises(lambda t, x: t.linalg.multi_dot([x]), ms[0])
    assert "expected at least 2 tensors but got 1" in str(e)
    e = check_raises(lambda t, x, y: t.linalg.multi_dot([x, y]), rect(2, 2, 2), rect(2, 2))
    assert "the first tensor must be 1D or 2D but got 3D" in str(e)
    check_raises(lambda t, x, y: t.linalg.multi_dot([x, y]), ms[0], ms[0])


# -- vector helpers ---------------------------------------------------------------------------------------
def test_cross_vecdot_diagonal_vander() -> None:
    x, y = rect(4, 3), rect(4, 3, seed=1)
    check(lambda t, a, b: t.linalg.cross(a, b), x, y)
    check(lambda t, a, b: t.linalg.cross(a.mT, b.mT, dim=0), x, y)
    check(lambda t, a, b: t.linalg.vecdot(a, b), x, y)
    check(lambda t, a, b: t.linalg.vecdot(a, b, dim=0), x, y)
    check(lambda t, a: t.linalg.diagonal(a), rect(2, 3, 4))
    check(lambda t, a: t.linalg.diagonal(a, offset=1, dim1=0, dim2=2), rect(2, 3, 4))
    check(lambda t, a: t.linalg.vander(a), rect(2, 4))
    check(lambda t, a: t.linalg.vander(a, N=6), np.arange(4))
    check_grad(lambda t, a, b: t.linalg.cross(a, b) + t.linalg.vecdot(a, b).unsqueeze(-1), x, y)
    check_grad(lambda t, a: t.linalg.vander(a, N=3), rect(2, 4))


def test_host_operation_is_a_counted_cut() -> None:
    x = lt.tensor(well(3, 3)) * 2  # pending
    before = lt.metrics.counters().get("implicit_materializations", None)
    with lt.strict_mode():
        with pytest.raises(lt.ImplicitMaterializationError):
            lt.linalg.inv(x)
    lt.materialize(x)
    with lt.strict_mode():
        lt.linalg.inv(x)  # computed already: nothing to cut
    del before


# -- matrix_exp ---------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.0, 0.1, 1.0, 3.0, 40.0])
def test_matrix_exp(scale: float) -> None:
    a = rect(2, 4, 4) * scale  # scale 40: 1-norms near 100, seven squarings
    check(lambda t, x: t.matrix_exp(x), a)
    check(lambda t, x: t.linalg.matrix_exp(x), a[0])
    check(lambda t, x: x.matrix_exp(), a.astype(np.float32), atol=1e-4, rtol=1e-4)
    if scale <= 3.0:
        check_grad(lambda t, x: t.matrix_exp(x), a)


def test_matrix_exp_edges() -> None:
    check(lambda t, x: t.matrix_exp(x), rect(1, 1))
    check(lambda t, x: t.matrix_exp(x), np.zeros((0, 3, 3)))
    check(lambda t, x: t.matrix_exp(x), np.zeros((2, 0, 0)))
    skew = rect(3, 3)
    skew = skew - skew.T  # exp of a skew-symmetric matrix is orthogonal
    q = lt.matrix_exp(lt.tensor(skew))
    np.testing.assert_allclose((q.T @ q).numpy(), np.eye(3), atol=1e-12)
    check_grad(lambda t, x: t.matrix_exp(x), rect(2, 3, 3) / 2, second_order=True)
    check_raises(lambda t, x: t.matrix_exp(x), np.ones((2, 2), dtype=np.int64))
    check_raises(lambda t, x: t.matrix_exp(x), rect(2, 3))
    check_raises(lambda t, x: t.matrix_exp(x), rect(3))
