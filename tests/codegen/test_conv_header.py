"""lazytorch_conv.h built on its own, for each vector width: the direct convolution and its
weight gradient against a float64 NumPy definition.

The programs lazytorch compiles use ``-march=native`` only, so the AVX2 (x86-64-v3) and
SSE2 (x86-64) builds of the header are checked here; each build runs on this CPU. Beside
the values: results identical at one and two threads (every output one thread's fixed-order
sum), nothing written past the output, and an inf in an input column that no output reads
kept out of the weight gradient (its lanes are zeroed, never multiplied by zero).
"""

from __future__ import annotations

import ctypes
import dataclasses
import platform

import numpy as np
import pytest

from lazytorch.codegen.compiler import compile_shared, toolchain

HARNESS = r"""
#include "lazytorch_conv.h"

extern "C" void lt_test_conv(int wgrad, int dbl, int threads, const void* x, const void* w,
                             void* out, const int64_t* s) {
    omp_set_num_threads(threads);
    if (wgrad && dbl)
        lt::conv2d_wgrad((const double*)x, (const double*)w, (double*)out, s[0], s[1], s[2],
                         s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13],
                         s[14]);
    else if (wgrad)
        lt::conv2d_wgrad((const float*)x, (const float*)w, (float*)out, s[0], s[1], s[2], s[3],
                         s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14]);
    else if (dbl)
        lt::conv2d((const double*)x, (const double*)w, (double*)out, s[0], s[1], s[2], s[3],
                   s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14]);
    else
        lt::conv2d((const float*)x, (const float*)w, (float*)out, s[0], s[1], s[2], s[3], s[4],
                   s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14]);
}
"""

X86 = platform.machine() in ("x86_64", "AMD64")
MARCHES = ["native", "x86-64-v3", "x86-64"] if X86 else ["native"]


@pytest.fixture(scope="module", params=MARCHES)
def harness(request, tmp_path_factory) -> ctypes.CDLL:
    tc = toolchain()
    march = f"-march={request.param}"
    flags = tuple(march if f == "-march=native" else f for f in tc.flags)
    if request.param != "native":
        flags = tuple(f for f in flags if not f.startswith("-mprefer-vector-width"))
    out = tmp_path_factory.mktemp("conv") / f"harness_{request.param}.so"
    compile_shared(HARNESS, out, tc=dataclasses.replace(tc, flags=flags))
    lib = ctypes.CDLL(str(out))
    p = ctypes.c_void_p
    lib.lt_test_conv.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, p, p, p, p]
    return lib


def _out_size(size: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _columns(x: np.ndarray, geo: tuple[int, ...]) -> np.ndarray:
    """(N, Ho, Wo, C, kH, kW) windows of the zero-padded x, in float64."""
    n, c, h, w, _o, kh, kw, sh, sw, pt, pb, pl, pr, dh, dw = geo
    ho, wo = _out_size(h, kh, sh, pt, pb, dh), _out_size(w, kw, sw, pl, pr, dw)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    cols = np.empty((n, ho, wo, c, kh, kw))
    for i in range(kh):
        for j in range(kw):
            win = xp[
                :,
                :,
                i * dh : i * dh + sh * (ho - 1) + 1 : sh,
                j * dw : j * dw + sw * (wo - 1) + 1 : sw,
            ]
            cols[..., i, j] = win.transpose(0, 2, 3, 1)
    return cols


def _run(lib, wgrad: bool, x: np.ndarray, other: np.ndarray, out_shape, geo, threads: int):
    guard = 5
    out = np.full(int(np.prod(out_shape)) + guard, 777, dtype=x.dtype)
    sizes = np.array(geo, dtype=np.int64)
    lib.lt_test_conv(
        int(wgrad), int(x.dtype == np.float64), threads, x.ctypes.data, other.ctypes.data,
        out.ctypes.data, sizes.ctypes.data,
    )  # fmt: skip
    assert (out[-guard:] == 777).all(), "wrote past the output"
    return out[:-guard].reshape(out_shape)


GEOMETRIES = [
    # N, C, H, W, O, kH, kW, sH, sW, top, bottom, left, right, dH, dW
    (2, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
    (3, 5, 17, 19, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1),
    (2, 2, 11, 13, 3, 2, 5, 2, 3, 0, 2, 1, 0, 2, 1),
    (2, 3, 20, 70, 17, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2),
    (1, 2, 9, 9, 2, 9, 9, 1, 1, 4, 4, 4, 4, 1, 1),
    (2, 16, 16, 16, 32, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1),
    (1, 3, 8, 9, 5, 3, 3, 3, 3, 1, 0, 1, 0, 1, 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: "x".join(map(str, g)))
def test_convolution_and_weight_gradient_against_the_definition(harness, geo, dtype):
    n, c, h, w, o, kh, kw, sh, sw, pt, pb, pl, pr, dh, dw = geo
    ho, wo = _out_size(h, kh, sh, pt, pb, dh), _out_size(w, kw, sw, pl, pr, dw)
    rng = np.random.default_rng(sum(geo))
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((o, c, kh, kw)).astype(dtype)
    dy = rng.standard_normal((n, o, ho, wo)).astype(dtype)
    cols = _columns(x, geo)
    want_y = np.einsum("nyxcij,ocij->noyx", cols, wt.astype(np.float64))
    want_dw = np.einsum("nyxcij,noyx->ocij", cols, dy.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for wgrad, other, shape, want in (
        (False, wt, (n, o, ho, wo), want_y),
        (True, dy, (o, c, kh, kw), want_dw),
    ):
        one = _run(harness, wgrad, x, other, shape, geo, threads=1)
        two = _run(harness, wgrad, x, other, shape, geo, threads=2)
        assert one.tobytes() == two.tobytes(), "the result depends on the thread count"
        scale = np.abs(want).max()
        np.testing.assert_allclose(one, want, rtol=tol, atol=tol * scale)


def test_an_inf_no_output_reads_stays_out_of_the_weight_gradient(harness):
    geo = (1, 3, 8, 9, 5, 3, 3, 3, 3, 1, 0, 1, 0, 1, 1)  # column 8 is read by no output
    n, c, h, w, o = geo[:5]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    x[..., 8] = np.inf
    dy = rng.standard_normal((n, o, 3, 3)).astype(np.float32)
    got = _run(harness, True, x, dy, (o, c, 3, 3), geo, threads=2)
    assert np.isfinite(got).all()
    x[..., 8] = 0
    want = np.einsum("nyxcij,noyx->ocij", _columns(x, geo), dy.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
