"""Where a lazytorch call's host time goes on the cuda device (a profile, not a benchmark).

    python -m benchmarks.gpu_host [--device cuda] [--calls 300]

benchmarks/gpu.py showed synchronized lazytorch calls taking 80-170 us longer than their
kernels. This times one op recorded, materialized and synchronized per call on a tiny input
(the kernel's own time negligible), beside the same without synchronization and beside
torch eager, then profiles the calls with cProfile and prints the functions that cost most.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import lazytorch as lt


def per_call(fn: Callable[[], object], calls: int, sync: Callable[[], None]) -> float:
    """Median microseconds per call over blocks of 20 calls, one sync per block."""
    for _ in range(20):
        fn()
    sync()
    blocks = []
    for _ in range(max(1, calls // 20)):
        t = time.perf_counter()
        for _ in range(20):
            fn()
        sync()
        blocks.append((time.perf_counter() - t) / 20 * 1e6)
    return statistics.median(blocks)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--big", action="store_true", help="also the 8192x4096 calls of gpu.py")
    args = ap.parse_args(argv)
    dev = args.device
    sync = lt.cuda.synchronize if dev == "cuda" else (lambda: None)
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    x = lt.tensor(a, device=dev)
    w = lt.tensor(a, device=dev)

    def softmax_sync() -> None:
        lt.materialize(x.softmax(1))
        sync()

    def softmax_nosync() -> None:
        lt.materialize(x.softmax(1))

    def record_only() -> None:
        x.softmax(1)

    def chain3() -> None:  # three ops, one fused kernel, Python scalars in it
        lt.materialize(((x * 2 + 1).relu() * w).sum(1))
        sync()

    rows = [
        ("record softmax (no materialize)", per_call(record_only, args.calls, lambda: None)),
        ("softmax + materialize", per_call(softmax_nosync, args.calls, lambda: None)),
        ("softmax + materialize + synchronize", per_call(softmax_sync, args.calls, sync)),
        ("4 ops + sum, one kernel, + synchronize", per_call(chain3, args.calls, sync)),
    ]
    try:
        import torch

        tdev = "cuda" if dev == "cuda" and torch.cuda.is_available() else "cpu"
        tx = torch.from_numpy(a).to(tdev)
        tsync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
        rows.append(
            (
                "torch softmax + synchronize",
                per_call(lambda: (tx.softmax(1), tsync()), args.calls, tsync),
            )
        )
    except ImportError:
        pass
    print("| 64x64 float32, per call | us |\n|---|---:|")
    for name, us in rows:
        print(f"| {name} | {us:.1f} |")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        softmax_sync()
    prof.disable()
    print(f"\ncProfile of {args.calls} synchronized softmax calls (tottime, top 30):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(30)
    print("by cumulative time (top 25):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("cumtime").print_stats(25)
    if args.big:
        big(dev, sync)
    return 0


def big(dev: str, sync: Callable[[], None]) -> None:
    """benchmarks/gpu.py's 8192x4096 softmax and layer_norm calls split into recording, the
    call without synchronizing, and the synchronized call (whose kernel alone
    benchmarks.gpu_sweep times at ~70 us), then a profile of the layer_norm calls."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8192, 4096)).astype(np.float32)
    wb = rng.standard_normal((2, 4096)).astype(np.float32)
    x = lt.tensor(a, device=dev)
    w, b = lt.tensor(wb[0], device=dev), lt.tensor(wb[1], device=dev)
    F = lt.nn.functional

    def ln() -> object:
        return F.layer_norm(x, (4096,), w, b)

    def sm() -> object:
        return x.softmax(1)

    rows = []
    for name, fn in (("softmax", sm), ("layer_norm", ln)):
        rows += [
            (f"{name}: record", per_call(fn, 100, lambda: None)),
            (f"{name}: + materialize", per_call(lambda f=fn: lt.materialize(f()), 100, sync)),
            (
                f"{name}: + materialize + synchronize",
                per_call(lambda f=fn: (lt.materialize(f()), sync()), 100, sync),
            ),
        ]
    print("\n| 8192x4096 float32, per call | us |\n|---|---:|")
    for name, us in rows:
        print(f"| {name} | {us:.1f} |")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(100):
        lt.materialize(ln())
        sync()
    prof.disable()
    print("\ncProfile of 100 synchronized 8192x4096 layer_norm calls (tottime, top 30):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    sys.exit(main())
