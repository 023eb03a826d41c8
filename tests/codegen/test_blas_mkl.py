"""``LAZYTORCH_BLAS=mkl``: the cpp backend's float32/float64 GEMMs through Intel MKL (the
``mkl`` wheel, ``pip install 'lazytorch[mkl]'``) instead of OpenBLAS.

Products must be what they are under OpenBLAS (torch's values within float rounding; the
same bits at 1 and 2 threads in deterministic mode), the program must really call MKL (its
library is mapped into the process after the cut), the choice must key the compile cache,
and without the wheel the first compile names the fix.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap

import pytest

try:
    importlib.metadata.distribution("mkl")
    HAVE_MKL = True
except importlib.metadata.PackageNotFoundError:
    HAVE_MKL = False

needs_mkl = pytest.mark.skipif(not HAVE_MKL, reason="the mkl wheel is not installed")

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import lazytorch as lt
    import torch

    rng = np.random.default_rng(0)
    out = {}
    for dtype in ("float32", "float64"):
        a = rng.standard_normal((300, 200)).astype(dtype)
        b = rng.standard_normal((200, 170)).astype(dtype)
        bias = rng.standard_normal(170).astype(dtype)
        x, w, c = lt.tensor(a), lt.tensor(b), lt.tensor(bias)
        got = (x @ w).relu() + c  # a GEMM with a pointwise epilogue
        ref = (torch.tensor(a) @ torch.tensor(b)).relu() + torch.tensor(bias)
        gb = lt.tensor(a, requires_grad=True)
        (gb @ w).sum().backward()  # the gradient's product: dY @ W^T
        gref = torch.tensor(a, requires_grad=True)
        (gref @ torch.tensor(b)).sum().backward()
        out[dtype] = [
            float(np.abs(got.numpy() - ref.numpy()).max()),
            float(np.abs(gb.grad.numpy() - gref.grad.numpy()).max()),
            got.numpy().tobytes().hex()[:4096],
        ]
    maps = open("/proc/self/maps").read()
    out["mkl_loaded"] = "libmkl_rt" in maps
    print(json.dumps(out))
    """
)


def _run(env_extra: dict[str, str], tmp_path) -> dict:
    env = {
        **os.environ,
        "LAZYTORCH_TIERED": "0",
        "LAZYTORCH_BACKEND": "cpp",
        "LAZYTORCH_CACHE_DIR": str(tmp_path / "cache"),
        **env_extra,
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_mkl
def test_mkl_products_match_torch_and_mkl_is_what_runs(tmp_path):
    got = _run({"LAZYTORCH_BLAS": "mkl"}, tmp_path)
    assert got["mkl_loaded"]
    assert got["float32"][0] < 1e-4 and got["float32"][1] < 1e-4
    assert got["float64"][0] < 1e-10 and got["float64"][1] < 1e-10


@needs_mkl
def test_mkl_products_are_the_same_bits_at_one_and_two_threads(tmp_path):
    """Deterministic mode's fixed blocks and MKL's strict reproducibility mode: the bits
    depend on the inputs only."""
    runs = [
        _run(
            {
                "LAZYTORCH_BLAS": "mkl",
                "LAZYTORCH_DETERMINISTIC": "1",
                "OMP_NUM_THREADS": threads,
            },
            tmp_path / threads,
        )
        for threads in ("1", "2")
    ]
    assert runs[0]["float32"][2] == runs[1]["float32"][2]
    assert runs[0]["float64"][2] == runs[1]["float64"][2]


def test_openblas_chosen_explicitly_leaves_mkl_unloaded(tmp_path):
    got = _run({"LAZYTORCH_BLAS": "openblas"}, tmp_path)
    assert not got["mkl_loaded"]
    assert got["float32"][0] < 1e-4


def test_the_blas_choice_keys_the_compile_cache(monkeypatch):
    from lazytorch.codegen import compiler

    monkeypatch.setattr(compiler, "mkl_library", lambda: compiler.blas_library())
    prints = []
    for choice in ("openblas", "mkl"):
        monkeypatch.setenv("LAZYTORCH_BLAS", choice)
        compiler.toolchain.cache_clear()
        tc = compiler.toolchain()
        prints.append(tc.fingerprint)
        assert ("-DLT_BLAS_MKL" in tc.flags) == (choice == "mkl")
    compiler.toolchain.cache_clear()
    assert prints[0] != prints[1]


def test_auto_takes_mkl_where_installed_and_mkl_without_the_wheel_names_the_fix(monkeypatch):
    from lazytorch.codegen import compiler

    monkeypatch.delenv("LAZYTORCH_BLAS", raising=False)
    assert compiler.blas_choice() == ("mkl" if HAVE_MKL else "openblas")

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    compiler._mkl_wheel_library.cache_clear()  # (the wheel is looked up once per process)
    try:
        assert compiler.blas_choice() == "openblas"
        with pytest.raises(compiler.CompilerMissing, match=r"pip install 'lazytorch\[mkl\]'"):
            compiler.mkl_library()
    finally:
        compiler._mkl_wheel_library.cache_clear()
