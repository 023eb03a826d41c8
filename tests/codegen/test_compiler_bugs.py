"""Kernels that once computed a wrong answer because of the C++ compiler, not lazytorch's
code: each runs on the cpp backend and is compared with NumPy. A flag added to work around
a compiler bug (codegen/compiler.py BASE_FLAGS) is tested here, so removing it fails."""

from __future__ import annotations

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
