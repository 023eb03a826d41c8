"""einsum of complex tensors against torch: values in lazy and sync mode, gradients through
real inputs (as a Fourier neural operator's spectral weights take them), torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lazytorch as lt

RNG = np.random.default_rng(11)


def cplx(*shape, dtype=np.float32):
    return RNG.standard_normal((*shape, 2)).astype(dtype)  # (re, im) pairs


def _complex(lib, pair):
    return lib.view_as_complex(pair)


def _as_numpy(z):
    r = lt.view_as_real(z) if isinstance(z, lt.ops.complex.ComplexTensor) else torch.view_as_real(z)
    r = r.detach().numpy()
    return r[..., 0] + 1j * r[..., 1]


CASES = {
    "spectral-conv": ("bixy,ioxy->boxy", (2, 3, 4, 5), (3, 6, 4, 5)),
    "matmul": ("ij,jk->ik", (3, 4), (4, 5)),
    "three-operands": ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    "trace": ("ii->", (3, 3)),
    "diagonal": ("ii->i", (4, 4)),
    "attention-scores": ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    "inner": ("i,i->", (5,), (5,)),
    "outer": ("i,j->ij", (3,), (2,)),
    "ellipsis-sum": ("...ij->...j", (2, 3, 4)),
    "batch-transpose": ("bij->bji", (2, 3, 4)),
}


@pytest.mark.parametrize("sync", [False, True], ids=["lazy", "sync"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["complex64", "complex128"])
@pytest.mark.parametrize("case", CASES)
def test_complex_einsum_is_torchs(case, dtype, sync):
    eq, *shapes = CASES[case]
    pairs = [cplx(*s, dtype=dtype) for s in shapes]
    want = torch.einsum(eq, *[_complex(torch, torch.tensor(p)) for p in pairs])
    with lt.sync_mode(sync):
        got = lt.einsum(eq, *[_complex(lt, lt.tensor(p)) for p in pairs])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    tol = 2e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_as_numpy(got), _as_numpy(want), rtol=tol, atol=tol * 2)


def test_a_spectral_convolution_trains_as_in_torch():
    # FNO's core: mixing Fourier modes with complex weights, whose real and imaginary parts
    # are the parameters; three SGD steps, the losses and weights as torch's
    x0, w0 = cplx(2, 3, 4, 5), cplx(3, 6, 4, 5)

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        x = _complex(lib, lib.tensor(x0))
        losses = []
        for _ in range(3):
            out = lib.einsum("bixy,ioxy->boxy", x, _complex(lib, w))
            loss = (out.abs() ** 2).mean()
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
            losses.append(float(loss))
        return losses, w.detach().numpy()

    (want_l, want_w), (got_l, got_w) = run(torch), run(lt)
    np.testing.assert_allclose(got_l, want_l, rtol=1e-5)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lib", [torch, lt], ids=["torch", "lazytorch"])
def test_complex_einsum_refuses_mixed_dtypes(lib):
    z = _complex(lib, lib.tensor(cplx(2, 2)))
    with pytest.raises(RuntimeError, match="expected scalar type ComplexFloat but found Float"):
        lib.einsum("ij,jk->ik", z, lib.ones(2, 2))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found ComplexFloat"):
        lib.einsum("ij,jk->ik", lib.ones(2, 2), z)
