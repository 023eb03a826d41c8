"""The native bfloat16 GEMM (codegen/include/lazytorch_gemm_bf16.h), kernel by kernel.

A harness that includes the header is compiled once per module with the programs' flags,
except ``-march=x86-64-v3`` for ``-march=native``: an AVX2 machine's flags, without
AVX-512 or AMX, so the kernels must come from their function-level target attributes (the
harness checks that the macros are off) and run here through the CPU check. It calls the
header's `gemm` on a path the test names, so every path this CPU can run is checked in one
process, whatever LAZYTORCH_BF16_GEMM chose for programs (tests/codegen/test_cpp_bfloat16.py
checks that choice and the widened path, end to end).

What is checked, for every transpose combination and sizes that are not multiples of the
32x32 blocks (k odd, 1 and 0 included), strided operands, float32 and bfloat16 C:

* bfloat16 products are exact in float32, so C differs from the float64 product of the same
  bfloat16 values only by float32 summation: |C - ref| <= (k + 1)·2^-24·(|A| @ |B|);
* a bfloat16 C is the float32 C rounded once to nearest even (its bits);
* torch's bfloat16 matmul (oneDNN) agrees within the two roundings;
* a result has the same bits on 1 and 2 threads, split or not (the sum of each element runs
  over k in order, whatever block or thread computes it).

Inputs are standard normal: no subnormal bfloat16, which both instructions read as zero.
"""

from __future__ import annotations

import ctypes
import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from lazytorch.codegen.compiler import compile_shared, toolchain

AVX512, AMX = 2, 3  # lt::bf16gemm::Path
PATHS = {"avx512": AVX512, "amx": AMX}

HARNESS = r"""
#define LT_GEMM16 1
#include "lazytorch_blas.h"

extern "C" int lt_test_target_macros() {
#if defined(__AVX512F__) || defined(__AVX512BF16__) || defined(__AMX_TILE__)
    return 1;
#else
    return 0;
#endif
}
extern "C" int lt_test_available(int path) { return lt::bf16gemm::available(path); }
extern "C" void lt_test_gemm(int path, int threads, int ta, int tb, int64_t m, int64_t n,
                             int64_t k, const uint16_t* A, int64_t lda, const uint16_t* B,
                             int64_t ldb, void* C, int64_t ldc, int c_float) {
    omp_set_num_threads(threads);
    if (c_float) {
        lt::bf16gemm::gemm(path, ta, tb, m, n, k, A, lda, B, ldb, (float*)C, ldc, threads > 1);
    } else {
        lt::bf16gemm::gemm(path, ta, tb, m, n, k, A, lda, B, ldb, (lt::bf16*)C, ldc,
                           threads > 1);
    }
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> ctypes.CDLL:
    tc = toolchain()
    flags = tuple("-march=x86-64-v3" if f == "-march=native" else f for f in tc.flags)
    out = tmp_path_factory.mktemp("gemm_bf16") / "harness.so"
    compile_shared(HARNESS, out, tc=dataclasses.replace(tc, flags=flags))
    lib = ctypes.CDLL(str(out))
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.lt_test_gemm.argtypes = [ctypes.c_int] * 4 + [i64] * 3 + [p, i64, p, i64, p, i64]
    lib.lt_test_gemm.argtypes += [ctypes.c_int]
    return lib


def _path(harness: ctypes.CDLL, name: str) -> int:
    if not harness.lt_test_available(PATHS[name]):
        pytest.skip(f"this CPU (or OS, for AMX's tile state) cannot run the {name} path")
    return PATHS[name]


def _bf16(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x)).bfloat16()


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


@dataclasses.dataclass
class Case:
    """op(A) (m x k) @ op(B) (k x n), each operand stored transposed or not, with `pad`
    unused elements at the end of each stored row (lda, ldb > the row's length)."""

    m: int
    n: int
    k: int
    ta: bool = False
    tb: bool = False
    pad: int = 0
    seed: int = 0

    def operands(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored A and B (bfloat16, row-major, padded rows) and their values."""
        rng = np.random.default_rng(self.seed)
        a = rng.standard_normal((self.k, self.m) if self.ta else (self.m, self.k))
        b = rng.standard_normal((self.n, self.k) if self.tb else (self.k, self.n))
        return _bf16(a.astype(np.float32)), _bf16(b.astype(np.float32))

    def run(self, lib: ctypes.CDLL, path: int, *, threads: int = 1, c_float: bool = True):
        a, b = self.operands()
        sa, sb = (
            np.zeros((t.shape[0], t.shape[1] + self.pad), np.uint16) for t in (a, b)
        )  # the stored rows, `pad` longer than the values
        sa[:, : a.shape[1]], sb[:, : b.shape[1]] = _bits(a), _bits(b)
        c = np.full((self.m, self.n), 0xFFFF, np.float32 if c_float else np.uint16)
        lib.lt_test_gemm(
            path, threads, int(self.ta), int(self.tb), self.m, self.n, self.k,
            sa.ctypes.data, max(sa.shape[1], 1), sb.ctypes.data, max(sb.shape[1], 1),
            c.ctypes.data, max(self.n, 1), int(c_float),
        )  # fmt: skip
        return c

    def reference(self) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
        """(float64 product, float64 |A| @ |B|, torch's bfloat16 matmul)."""
        a, b = self.operands()
        oa, ob = (a.T if self.ta else a), (b.T if self.tb else b)
        a64, b64 = oa.double().numpy(), ob.double().numpy()
        return a64 @ b64, np.abs(a64) @ np.abs(b64), oa @ ob


CASES = [
    Case(37, 45, 71),  # no size a multiple of 16 or 32, k odd
    Case(1, 1, 1),
    Case(1, 70, 33),  # one row
    Case(50, 1, 64),  # one column
    Case(33, 17, 1),  # k = 1
    Case(64, 96, 128),  # whole blocks
    Case(100, 70, 257, pad=5),  # strided rows, k one past a multiple of 32
    Case(130, 200, 300, seed=1),  # several blocks each way, split over threads
]


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_products_are_float32_sums_of_exact_products(harness, path, ta, tb):
    p = _path(harness, path)
    for case in CASES:
        case = dataclasses.replace(case, ta=ta, tb=tb)
        got = case.run(harness, p).astype(np.float64)
        ref, scale, theirs = case.reference()
        bound = (case.k + 1) * 2.0**-24 * scale
        err = np.abs(got - ref)
        assert (err <= bound).all(), (case, err.max(), bound.max())
        # bfloat16 C: the float32 C rounded once, to nearest even
        rounded = case.run(harness, p, c_float=False)
        want = _bits(torch.from_numpy(got.astype(np.float32)).bfloat16())
        np.testing.assert_array_equal(rounded, want, err_msg=str(case))
        # torch (oneDNN): within one rounding of each result to bfloat16
        np.testing.assert_array_less(
            np.abs(theirs.double().numpy() - got),
            2.0**-7 * np.abs(ref) + 2 * bound + 1e-30,
            err_msg=str(case),
        )


@pytest.mark.parametrize("path", list(PATHS))
def test_empty_products(harness, path):
    """m or n zero: nothing written; k zero: C is zeros."""
    p = _path(harness, path)
    for m, n in ((0, 5), (5, 0), (0, 0)):
        assert Case(m, n, 3).run(harness, p).shape == (m, n)
    np.testing.assert_array_equal(Case(5, 3, 0).run(harness, p), np.zeros((5, 3), np.float32))
    np.testing.assert_array_equal(Case(5, 3, 0).run(harness, p, c_float=False), 0)


@pytest.mark.parametrize("path", list(PATHS))
def test_results_do_not_depend_on_threads(harness, path):
    """The same bits on one thread and split over two (deterministic mode needs nothing
    more: no cut of the product changes any element's order of summation)."""
    p = _path(harness, path)
    for case in (Case(130, 200, 300, seed=2), Case(300, 64, 129, ta=True, seed=3)):
        one = case.run(harness, p, threads=1)
        np.testing.assert_array_equal(one, case.run(harness, p, threads=2))
        np.testing.assert_array_equal(one, case.run(harness, p, threads=2))


def test_kernels_compile_without_isa_flags(harness):
    """The harness was built for an AVX2 machine (no AVX-512 or AMX macros): the kernels
    come from target attributes, and the CPU check is what decides whether they run."""
    assert harness.lt_test_target_macros() == 0
    flags = (
        set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").exists() else set()
    )
    if "avx512_bf16" in flags and "avx512bw" in flags:
        assert harness.lt_test_available(AVX512)
    if not {"amx_bf16", "amx_tile"} <= flags:
        assert not harness.lt_test_available(AMX)


def test_a_header_change_changes_the_cache_key(tmp_path, monkeypatch):
    """Programs compiled against an older lazytorch_gemm_bf16.h are not loaded from the
    disk cache: every header's text is part of the toolchain fingerprint, which keys it."""
    from lazytorch.codegen import compiler

    copy = tmp_path / "include"
    shutil.copytree(compiler.include_dir(), copy)
    monkeypatch.setattr(compiler, "include_dir", lambda: copy)
    fingerprints = []
    for edit in ("", "// a change\n"):
        with open(copy / "lazytorch_gemm_bf16.h", "a") as f:
            f.write(edit)
        compiler.toolchain.cache_clear()
        fingerprints.append(compiler.toolchain().fingerprint)
    compiler.toolchain.cache_clear()
    assert fingerprints[0] != fingerprints[1]


def test_a_bad_path_name_fails_when_the_cpp_backend_starts(monkeypatch):
    """Programs read LAZYTORCH_BF16_GEMM themselves and would take an unknown name for
    `widened`: the cpp backend checks it first, naming the variable and the choices."""
    from lazytorch.runtime.cpp_backend import CppBackend

    monkeypatch.setenv("LAZYTORCH_BF16_GEMM", "tiles")
    with pytest.raises(ValueError, match=r"LAZYTORCH_BF16_GEMM must be one of auto, amx"):
        CppBackend()
    monkeypatch.setenv("LAZYTORCH_BF16_GEMM", " avx512 ")
    CppBackend()


def test_the_avx512_micro_kernel_is_unrolled_at_the_program_flags(tmp_path):
    """avx512_block's 16 accumulators (8 rows x 2 vectors) must be registers: its loops over
    the rows are unrolled by `#pragma GCC unroll`, because -O2 (the programs' level) leaves a
    loop over an array of accumulators rolled, the array on the stack and every
    `vdpbf16ps` waiting on a store and a load: half the speed (1024^3 on an AVX512-BF16 EPYC,
    146-172 against 307-351 GFLOP/s). Compiled to assembly with the programs' own flags,
    each instantiation of the kernel holds its 16 dot products in a row."""
    import subprocess

    tc = toolchain()
    flags = [f for f in tc.flags if f not in ("-shared", "-fPIC")]
    out = tmp_path / "harness.s"
    (tmp_path / "harness.cpp").write_text(HARNESS)
    subprocess.run(
        [tc.cxx, *flags, "-S", "-o", str(out), str(tmp_path / "harness.cpp")],
        check=True,
        capture_output=True,
    )
    lines = out.read_text().splitlines()
    dots = sum("vdpbf16ps" in line for line in lines)
    # Two instantiations (float and bfloat16 C), each 16 dot products if unrolled, 2 if not.
    assert dots >= 32, f"{dots} vdpbf16ps in the harness: the micro-kernel was not unrolled"
