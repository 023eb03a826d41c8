"""16-bit GEMM on the cpp backend against float32: GFLOP/s of lazytorch's matmul.

bfloat16 products run on AMX tiles or AVX512-BF16 where the CPU has them; float16 (and
bfloat16 elsewhere, or with LAZYTORCH_BF16_GEMM=widened) widens A and B to float32 and calls
sgemm, rounding C once (or OpenBLAS's sbgemm where the linked library has it). The last line
says which paths ran.
Each round times every dtype once, alternating, so a load change on the machine hits all
of them alike; the figure is the median over the rounds. torch's matmul (its own thread
count, MKL/oneDNN) is timed in the same rounds for reference.

    python -m benchmarks.gemm16 [--sizes 512,1024] [--rounds 15]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

DTYPES = ("float32", "bfloat16", "float16")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="512,1024")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    os.environ["LAZYTORCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="lt-gemm16-")
    import lazytorch as lt

    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a test dependency
        torch = None
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, {args.rounds} rounds, medians")
    print("| m=k=n | dtype | lazytorch GFLOP/s | vs float32 | torch GFLOP/s |")
    print("|---:|---|---:|---:|---:|")
    with lt.backend("cpp"):
        for n in (int(s) for s in args.sizes.split(",")):
            rng = np.random.default_rng(0)
            a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
            ours = {d: [lt.tensor(v.astype(getattr(lt, d).np)) for v in (a, b)] for d in DTYPES}
            theirs = {
                d: [torch.from_numpy(v).to(getattr(torch, d)) for v in (a, b)]
                for d in DTYPES
                if torch is not None
            }
            times: dict[tuple[str, str], list[float]] = {}
            for r in range(args.rounds + 1):  # round 0 compiles and warms up
                for d in DTYPES:
                    for who, (x, y), run in (
                        ("lt", ours[d], lambda x, y: (x @ y).numpy()),
                        ("torch", theirs.get(d, (None, None)), lambda x, y: x @ y),
                    ):
                        if x is None:
                            continue
                        t0 = time.perf_counter()
                        run(x, y)
                        if r:
                            times.setdefault((who, d), []).append(time.perf_counter() - t0)
            flop = 2 * n**3
            gf = {k: flop / statistics.median(v) / 1e9 for k, v in times.items()}
            for d in DTYPES:
                tgf = f"{gf[('torch', d)]:.1f}" if ("torch", d) in gf else "—"
                rel = gf[("lt", d)] / gf[("lt", "float32")]
                print(f"| {n} | {d} | {gf[('lt', d)]:.1f} | {rel:.2f} | {tgf} |", flush=True)
    ran = _paths(Path(os.environ["LAZYTORCH_CACHE_DIR"]))
    print("\n16-bit products run: " + ", ".join(f"{n} {path}" for path, n in ran.items()))


PATHS = ("widened to float32 + sgemm", "sbgemm", "AVX512-BF16", "AMX")  # lt_gemm16_calls


def _paths(cache: Path) -> dict[str, int]:
    """16-bit products run, over every compiled program, by path."""
    from lazytorch.runtime.disk_cache import DiskCache

    ran = dict.fromkeys(PATHS, 0)
    for entry in DiskCache(cache).entries():
        lib = ctypes.CDLL(str(entry.file("program.so")))
        if hasattr(lib, "lt_gemm16_calls"):
            calls = (ctypes.c_int64 * len(PATHS)).in_dll(lib, "lt_gemm16_calls")
            for path, n in zip(PATHS, calls):
                ran[path] += n
    return ran


if __name__ == "__main__":
    main()
