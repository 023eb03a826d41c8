"""The GEMM library under the cpp backend: OpenBLAS against Intel MKL, and both against torch.

Two tables, on the float32 shapes of the training benchmarks (benchmarks/training.py):

1. one thread, each library called directly: scipy-openblas32 through NumPy (its BLAS
   pool limited to one thread), MKL's ``cblas_sgemm`` through ctypes (where the ``mkl`` wheel
   is installed), ``torch.mm`` with one thread;
2. lazytorch's own matmul program (its row/column blocks on every core, on whichever library
   ``LAZYTORCH_BLAS`` picks) against ``torch.mm`` on as many threads.

Run it once per library to compare the second table::

    LAZYTORCH_BLAS=openblas python -m benchmarks.gemm_libraries
    LAZYTORCH_BLAS=mkl python -m benchmarks.gemm_libraries

Medians of repeated calls (the peers alternating in the second table, with a pause before
each, as benchmarks/training.py pauses between peers); torch is the test-only oracle,
imported here as a peer. The last row is a few microseconds of arithmetic: lazytorch's
per-call overhead (a cache hit, ~25 us) sets its ratio there.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.metadata
import os
import statistics
from typing import Any

import numpy as np

from benchmarks.__main__ import median_s

SHAPES = [
    ("GPT wider qkv", 1024, 384, 1152),
    ("GPT wider attention proj", 1024, 384, 384),
    ("GPT wider MLP up", 1024, 384, 1536),
    ("GPT wider MLP down", 1024, 1536, 384),
    ("GPT wider weight gradient", 384, 1024, 1536),
    ("MLP 784->1024, batch 256", 256, 784, 1024),
    ("MLP 1024->1024, batch 256", 256, 1024, 1024),
    ("attention, one head", 128, 64, 128),
]


def _median_ms(fn: Any, calls: int) -> float:
    return median_s(fn, calls, warmup=3) * 1e3  # (with the pause between peers)


def _mkl() -> Any:
    """MKL's runtime library, sequential, or None without the mkl wheel."""
    try:
        from lazytorch.codegen.compiler import mkl_library

        lib = ctypes.CDLL(str(mkl_library()), mode=ctypes.RTLD_GLOBAL)
    except Exception:  # no wheel, or a library that does not load: the column is left out
        return None
    lib.MKL_Set_Threading_Layer(ctypes.c_int(1))  # MKL_THREADING_SEQUENTIAL
    return lib


def _one_thread_row(mkl: Any, m: int, k: int, n: int, calls: int) -> tuple[float, ...]:
    """(OpenBLAS, MKL, torch) milliseconds of one m x k x n product on one thread."""
    import threadpoolctl
    import torch

    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    with threadpoolctl.threadpool_limits(1):
        openblas = _median_ms(lambda: np.matmul(a, b, out=c), calls)
    theirs = _median_ms(lambda: torch.mm(ta, tb), calls)
    intel = float("nan")
    if mkl is not None:
        ptr = ctypes.POINTER(ctypes.c_float)
        ap, bp, cp = a.ctypes.data_as(ptr), b.ctypes.data_as(ptr), c.ctypes.data_as(ptr)
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        args = (101, 111, 111, m, n, k, one, ap, k, bp, n, zero, cp, n)  # row-major, no T
        intel = _median_ms(lambda: mkl.cblas_sgemm(*args), calls)
    return openblas, intel, theirs


def one_thread(calls: int) -> None:
    import torch

    torch.set_num_threads(1)
    mkl = _mkl()
    print("\n| m x k x n | where | OpenBLAS ms | MKL ms | torch ms | OpenBLAS / MKL |")
    print("|---|---|---:|---:|---:|---:|")
    for name, m, k, n in SHAPES:
        ob, mk, tt = _one_thread_row(mkl, m, k, n, calls)
        print(f"| {m}x{k}x{n} | {name} | {ob:.3f} | {mk:.3f} | {tt:.3f} | {ob / mk:.2f} |")


def _all_threads_row(m: int, k: int, n: int, calls: int) -> tuple[float, float]:
    """(lazytorch, torch) milliseconds of one m x k x n product on every core."""
    import torch

    import lazytorch as lt

    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    la, lb = lt.tensor(a), lt.tensor(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    lt.materialize(la @ lb)  # compiled before timing
    rounds = [
        (
            _median_ms(lambda: lt.materialize(la @ lb), calls),
            _median_ms(lambda: torch.mm(ta, tb), calls),
        )
        for _ in range(3)
    ]  # alternating peers, the median of each
    return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)


def all_threads(calls: int) -> None:
    import torch

    from lazytorch.codegen.compiler import blas_choice

    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    print(f"\nlazytorch matmul on {blas_choice()} vs torch.mm, {threads} threads")
    print("| m x k x n | where | lazytorch ms | torch ms | lazytorch / torch |")
    print("|---|---|---:|---:|---:|")
    for name, m, k, n in SHAPES:
        ours, theirs = _all_threads_row(m, k, n, calls)
        print(f"| {m}x{k}x{n} | {name} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=21, help="timed calls per median")
    args = ap.parse_args(argv)
    try:
        mkl_version = importlib.metadata.version("mkl")
    except importlib.metadata.PackageNotFoundError:
        mkl_version = "not installed"
    print(f"mkl wheel: {mkl_version}")
    one_thread(args.calls)
    all_threads(args.calls)


if __name__ == "__main__":
    main()
