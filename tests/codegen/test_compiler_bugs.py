"""Kernels that once computed a wrong answer because of the C++ compiler, not lazytorch's
code: each runs on the cpp backend and is compared with NumPy. A flag added to work around
a compiler bug (codegen/compiler.py BASE_FLAGS) is tested here, so removing it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import lazytorch as lt


@pytest.mark.parametrize("n", [3, 4, 5, 8])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_value_and_its_masked_transpose_in_one_kernel(n, dtype):
    # g++ 12.2 -O3 -march=native (AVX-512) SLP-vectorized the unrolled 4x4 kernel of
    # g + tril(g, -1).T wrongly: element [2, 3] read g[2, 2] instead of g[3, 2] (the
    # gradient of linalg.cholesky is built this way). Fixed by -fno-tree-slp-vectorize.
    a = np.arange(n * n, dtype=dtype).reshape(n, n)
    b = np.random.default_rng(n).standard_normal((n, n)).astype(dtype)
    with lt.backend("cpp"):
        x, y = lt.tensor(a), lt.tensor(b)
        g = (x + y).tril()
        got = (g + g.tril(-1).T).numpy()
        h = (x * y).triu(1)
        got2 = (h - h.triu(2).T * 0.5).numpy()
    g = np.tril(a + b)
    np.testing.assert_array_equal(got, g + np.tril(g, -1).T)
    h = np.triu(a * b, 1)
    np.testing.assert_array_equal(got2, h - np.triu(h, 2).T * np.dtype(dtype).type(0.5))


_BOOL_MIN_PROGRAM = """
import lazytorch as lt
x = lt.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
with lt.backend("cpp"):
    p = x / x.sum(-1, keepdim=True)
    ok = ((p >= 0).all(-1) & ((p.sum(-1) - 1).abs() < 1e-6)).all()
    print(bool(ok), p.numpy().astype("float64").round(6).tolist())
"""


def test_a_bool_min_reduction_at_O2_does_not_fault(tmp_path):
    # g++ 12.2 -O2 with AVX-512 put the kernel's 16-lane bool accumulator in the red zone
    # of a frame it had left 8 mod 16 and stored it with the aligned vmovdqa: SIGSEGV in
    # the user's process (OneHotCategorical's simplex check builds this program). Fixed by
    # the assembler's -muse-unaligned-vector-move (compiler._assembler_flags). A child
    # process, since the failure is a crash. -O2 (the default level) is also named in
    # LAZYTORCH_CXXFLAGS, so the test keeps its level if the default changes.
    from lazytorch.codegen import compiler

    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None or not compiler._accepted(cxx, compiler.UNALIGNED_MOVES, None, assemble=True):
        pytest.skip("this toolchain's assembler has no -muse-unaligned-vector-move")
    env = {
        **os.environ,
        "LAZYTORCH_CACHE_DIR": str(tmp_path),
        "LAZYTORCH_CXXFLAGS": "-O2",
        "LAZYTORCH_TIERED": "0",
    }
    run = subprocess.run(
        [sys.executable, "-c", _BOOL_MIN_PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.split("\n")[0] == "True [[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]]"
