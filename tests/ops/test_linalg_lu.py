"""LU and Householder factorizations and their solvers (lazytorch.ops.lu) against torch:
values, gradients, errors, and torch's errors for the APIs it removed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import check, check_grad, check_raises

# Host operations and compositions of ops tested on cpp elsewhere: the matrix runs these on
# the interpreter (each case would compile its own programs), test_on_cpp once on cpp.
pytestmark = pytest.mark.backends("interpreter")

TOL32 = {"atol": 1e-4, "rtol": 1e-4}


def mat(*shape: int, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(dtype)


def spd(*shape: int, seed: int = 0) -> np.ndarray:
    a = mat(*shape, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


SHAPES = [(4, 4), (2, 3, 3), (3, 5), (5, 3), (2, 1, 2, 4), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lu_factor_and_lu(shape: tuple, dtype: str) -> None:
    a = mat(*shape, dtype=dtype)
    kw = TOL32 if dtype == "float32" else {}
    check(lambda t, x: t.linalg.lu_factor(x), a, **kw)
    check(lambda t, x: t.linalg.lu_factor_ex(x), a, **kw)
    check(lambda t, x: t.linalg.lu(x), a, **kw)
    check(lambda t, x: t.lu(x), a, **kw)
    check(lambda t, x: x.lu(get_infos=True), a, **kw)
    check(lambda t, x: t.lu_unpack(*t.linalg.lu_factor(x)), a, **kw)
    check(lambda t, x: t.lu_unpack(*t.linalg.lu_factor(x), unpack_data=False), a, **kw)
    check(lambda t, x: t.lu_unpack(*t.linalg.lu_factor(x), unpack_pivots=False), a, **kw)
    if dtype == "float64":
        check_grad(lambda t, x: t.linalg.lu_factor(x).LU, a)
        check_grad(lambda t, x: t.linalg.lu(x)[1:], a)
        check_grad(lambda t, x: t.linalg.lu(x).U, a)
        check_grad(lambda t, x: t.linalg.lu(x).L, a)
        check_grad(lambda t, x: t.lu_unpack(*t.linalg.lu_factor(x))[1:], a)


def test_lu_singular_and_errors() -> None:
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    check(lambda t, x: t.linalg.lu_factor_ex(x), s)
    check(lambda t, x: t.lu(x, get_infos=True), s)
    check(lambda t, x: t.linalg.lu(x), s)
    check_raises(lambda t, x: t.linalg.lu_factor(x), s, match="U\\[2,2\\] is zero")
    check_raises(lambda t, x: t.linalg.lu_factor_ex(x, check_errors=True), s)
    check_raises(lambda t, x: t.linalg.lu_factor(x, pivot=False), mat(3, 3))
    check_raises(lambda t, x: t.linalg.lu_factor(x), mat(3))
    check_raises(lambda t, x: t.linalg.lu_factor(x.long()), mat(3, 3))
    check_raises(lambda t, x: t.lu_unpack(x, t.tensor([1, 2])), mat(2, 2))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(left: bool, adjoint: bool) -> None:
    a = mat(2, 4, 4, seed=1) + 3 * np.eye(4)
    b = mat(2, 4, 3, seed=2) if left else mat(2, 3, 4, seed=2)

    def fn(t, a, b):
        lu_, piv = t.linalg.lu_factor(a)
        return t.linalg.lu_solve(lu_, piv, b, left=left, adjoint=adjoint)

    check(fn, a, b)
    check_grad(fn, a, b)
    bb = mat(4, 3, seed=3) if left else mat(3, 4, seed=3)
    check(fn, a, bb)  # B broadcast over A's batch


def test_deprecated_lu_solve_and_errors() -> None:
    a, b = mat(3, 3, seed=1) + 3 * np.eye(3), mat(3, 2, seed=2)
    check(lambda t, a, b: t.lu_solve(b, *t.linalg.lu_factor(a)), a, b)
    check(lambda t, a, b: b.lu_solve(*t.lu(a)), a, b)
    check_grad(lambda t, a, b: t.lu_solve(b, *t.linalg.lu_factor(a)), a, b)
    check_raises(lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b.T), a, b)
    check_raises(lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b.float()), a, b)


def test_cholesky_inverse() -> None:
    a = spd(2, 4, 4)
    check(lambda t, x: t.cholesky_inverse(t.linalg.cholesky(x)), a)
    check(lambda t, x: t.linalg.cholesky(x).mT.cholesky_inverse(upper=True), a)
    check_grad(lambda t, x: t.cholesky_inverse(t.linalg.cholesky(x)), a)
    low = np.tril(mat(3, 3, seed=4)) + 2 * np.eye(3)
    check_grad(lambda t, x: t.cholesky_inverse(x), low)
    check_grad(lambda t, x: t.cholesky_inverse(x, True), low.T.copy())
    check(lambda t, x: t.cholesky_inverse(x.float()), low, **TOL32)
    check_raises(lambda t, x: t.cholesky_inverse(x.long()), low)
    check_raises(lambda t, x: t.cholesky_inverse(x[0]), low)


def test_solve_ex() -> None:
    a, b = mat(2, 3, 3, seed=1) + 2 * np.eye(3), mat(2, 3, 2, seed=2)
    check(lambda t, a, b: t.linalg.solve_ex(a, b), a, b)
    check(lambda t, a, b: t.linalg.solve_ex(a, b[..., 0]), a, b)
    check(lambda t, a, b: t.linalg.solve_ex(a, b.mT, left=False), a, b)
    check_grad(lambda t, a, b: t.linalg.solve_ex(a, b).result, a, b)
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    check(lambda t, a: t.linalg.solve_ex(a, t.ones(2, dtype=t.float64)).info, s)
    check_raises(lambda t, a: t.linalg.solve_ex(a, t.ones(2, 1), check_errors=True), s)
    check_raises(lambda t, a: t.linalg.solve_ex(a.long(), a), s)


def test_tensorinv_tensorsolve() -> None:
    a = mat(4, 6, 8, 3, seed=5)
    check(lambda t, x: t.linalg.tensorinv(x, ind=2), a)
    check_grad(lambda t, x: t.linalg.tensorinv(x, ind=2), a)
    check(lambda t, x: t.linalg.tensorinv(x.reshape(24, 4, 6), ind=1), a)
    check_raises(lambda t, x: t.linalg.tensorinv(x, ind=1), a)
    check_raises(lambda t, x: t.linalg.tensorinv(x, ind=0), a)
    b = mat(4, 6, seed=6)
    a2 = mat(4, 6, 2, 12, seed=7)
    check(lambda t, x, y: t.linalg.tensorsolve(x, y), a2, b)
    check_grad(lambda t, x, y: t.linalg.tensorsolve(x, y), a2, b)
    check(lambda t, x, y: t.linalg.tensorsolve(x.permute(2, 0, 3, 1), y, dims=(0, 2)), a2, b)
    check(lambda t, x, y: t.linalg.tensorsolve(x, y.T), a2, b)  # only the sizes' products count
    check_raises(lambda t, x, y: t.linalg.tensorsolve(x[:, :, :1], y), a2, b)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 6, 2)])
def test_householder(shape: tuple) -> None:
    a = mat(*shape, seed=8)
    check(lambda t, x: t.geqrf(x), a)
    check(lambda t, x: t.linalg.householder_product(*t.geqrf(x)), a)
    check(lambda t, x: x.orgqr(t.geqrf(x)[1]), a)
    tau = np.random.default_rng(9).uniform(0.5, 1.5, size=(*shape[:-2], shape[-1] - 1))
    check(lambda t, x, tau: t.linalg.householder_product(x, tau), a, tau)
    check_grad(lambda t, x, tau: t.linalg.householder_product(x, tau), a, tau)
    m, n = shape[-2:]
    tau = np.random.default_rng(9).uniform(0.5, 1.5, size=(*shape[:-2], n))
    for left in (True, False):
        for tr in (False, True):
            c = mat(*shape[:-2], m, n, seed=10) if left else mat(*shape[:-2], n, m, seed=10)
            check(lambda t, x, tau, c, lf=left, tr=tr: t.ormqr(x, tau, c, lf, tr), a, tau, c)
            check_grad(lambda t, x, tau, c, lf=left, tr=tr: x.ormqr(tau, c, lf, tr), a, tau, c)
            check(lambda t, x, c, lf=left, tr=tr: t.ormqr(*t.geqrf(x), c, lf, tr), a, c)


def test_householder_errors() -> None:
    a = mat(3, 5)
    check_raises(lambda t, x: t.linalg.householder_product(x, t.ones(2, dtype=t.float64)), a)
    check_raises(lambda t, x: t.linalg.householder_product(x.T, t.ones(4, dtype=t.float64)), a)
    check_raises(lambda t, x: t.linalg.householder_product(x.T, t.ones(2)), a)
    check_raises(lambda t, x: t.geqrf(x.long()), a)
    check_raises(lambda t, x: t.ormqr(x.T, t.ones(2, dtype=t.float64), t.ones(5, 3)), a)
    check_raises(lambda t, x: t.ormqr(x.T, t.ones(3, dtype=t.float64), t.ones(4, 3)), a)


def test_removed_apis_raise_torchs_error() -> None:
    a = mat(2, 2)
    for name in ("solve", "lstsq", "symeig", "eig", "matrix_rank"):
        args = (a, a) if name in ("solve", "lstsq") else (a,)
        err = check_raises(lambda t, *xs, n=name: getattr(t, n)(*xs), *args)
        want = None
        try:
            getattr(torch, name)(*[torch.from_numpy(x) for x in args])
        except RuntimeError as e:
            want = str(e)
        assert str(err) == want
    for name in ("solve", "lstsq", "symeig", "eig"):
        with pytest.raises(RuntimeError, match="removed"):
            getattr(lt.tensor(a), name)(*((lt.tensor(a),) if name in ("solve", "lstsq") else ()))


@pytest.mark.backends("interpreter", "cpp")
def test_on_cpp() -> None:
    a, b = mat(3, 3, seed=1) + 3 * np.eye(3), mat(3, 2, seed=2)
    check(lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b), a, b)
    check(lambda t, x: t.linalg.householder_product(*t.geqrf(x)), a)


# -- svd_lowrank, pca_lowrank: random projections (lazytorch's numbers): compared through what
# does not depend on them for a matrix of rank <= q --------------------------------------------
def low_rank(m: int, n: int, r: int, seed: int = 11) -> np.ndarray:
    return mat(m, r, seed=seed) @ mat(r, n, seed=seed + 1)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (2, 7, 6)])
def test_svd_lowrank(shape: tuple) -> None:
    a = low_rank(shape[-2], shape[-1], 3)
    if len(shape) == 3:
        a = np.stack([a, 2 * a])
    ta = torch.from_numpy(a)
    want = torch.svd_lowrank(ta, q=4)
    u, s, v = lt.svd_lowrank(lt.tensor(a), q=4)
    assert tuple(u.shape) == tuple(want[0].shape) and tuple(v.shape) == tuple(want[2].shape)
    np.testing.assert_allclose(s.numpy(), want[1].numpy(), atol=1e-8)
    rec = u.numpy() @ (s.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2))
    np.testing.assert_allclose(rec, a, atol=1e-8)
    m = mat(*shape[-2:], seed=3)
    _, s2, _ = lt.svd_lowrank(lt.tensor(a + m), q=4, M=lt.tensor(m))
    np.testing.assert_allclose(s2.numpy(), want[1].numpy(), atol=1e-8)


def test_pca_lowrank() -> None:
    a = low_rank(10, 6, 2) + 5.0
    ta = torch.from_numpy(a)
    for center in (True, False):
        want = torch.pca_lowrank(ta, q=3, center=center)
        u, s, v = lt.pca_lowrank(lt.tensor(a), q=3, center=center)
        np.testing.assert_allclose(s.numpy()[:2], want[1].numpy()[:2], atol=1e-8)
        assert tuple(u.shape) == (10, 3) and tuple(v.shape) == (6, 3)
    u, s, v = lt.pca_lowrank(lt.tensor(a))
    assert tuple(s.shape) == tuple(torch.pca_lowrank(ta)[1].shape)
    for kw in ({"q": 7}, {"niter": -1}):
        with pytest.raises(ValueError):
            torch.pca_lowrank(ta, **kw)
        with pytest.raises(ValueError):
            lt.pca_lowrank(lt.tensor(a), **kw)
    x = lt.tensor(a, requires_grad=True)
    lt.pca_lowrank(x, q=2)[1].sum().backward()  # differentiable (torch's is too)
    assert x.grad is not None and tuple(x.grad.shape) == a.shape
