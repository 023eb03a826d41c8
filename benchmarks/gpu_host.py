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
    ap.add_argument(
        "--train", action="store_true", help="only gpu.py's GPT training step, split and profiled"
    )
    args = ap.parse_args(argv)
    dev = args.device
    sync = lt.cuda.synchronize if dev == "cuda" else (lambda: None)
    if args.train:
        train(dev, sync)
        return 0
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


def train(dev: str, sync: Callable[[], None], steps: int = 20) -> None:
    """benchmarks/gpu.py's GPT training step (AdamW) split into its phases, each timed per
    step over `steps` steps after warm-up, then a cProfile of whole steps: where the host
    time of a step that runs 79 kernels goes."""
    from benchmarks.models import gpt
    from benchmarks.training import GPT, GPT_BATCH

    lt.manual_seed(0)
    model = gpt(lt, **GPT)
    model.to(dev)
    opt = lt.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx, tgt = (
        lt.tensor(rng.integers(0, GPT["vocab"], size=(GPT_BATCH, GPT["context"]))).to(dev)
        for _ in range(2)
    )
    phases = {"forward": 0.0, "backward": 0.0, "opt.step": 0.0, "loss read + sync": 0.0}

    def step(clock: bool) -> None:
        t0 = time.perf_counter()
        with lt.device(dev):
            loss = model(idx, tgt)[1]
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        float(loss.detach())
        sync()
        t4 = time.perf_counter()
        if clock:
            for name, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                phases[name] += dt

    for _ in range(3):
        step(False)
    before = lt.metrics.counters()
    for _ in range(steps):
        step(True)
    after = lt.metrics.counters()
    print(f"\n| GPT step on {dev}, ms per step ({steps} steps) | ms |\n|---|---:|")
    for name, total in phases.items():
        print(f"| {name} | {total / steps * 1e3:.2f} |")
    print(f"| whole step | {sum(phases.values()) / steps * 1e3:.2f} |")
    moved = {
        k: (after[k] - before.get(k, 0)) / steps for k in after if after[k] != before.get(k, 0)
    }
    print("counters per step:", {k: round(v, 1) for k, v in moved.items()})
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step(False)
    prof.disable()

    # the same step compiled as a whole (`lazytorch._compile.step`): replayed from its
    # fourth call, so its steady time has no recording in it
    def plain() -> object:  # the step without its read-back (a read stops the capture)
        with lt.device(dev):
            loss = model(idx, tgt)[1]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    compiled = lt.compile(plain)
    for _ in range(4):
        float(compiled().detach())
    t0 = time.perf_counter()
    for _ in range(steps):
        float(compiled().detach())
        sync()
    per = (time.perf_counter() - t0) / steps
    print(f"\ncompiled step, replayed: {per * 1e3:.2f} ms per step (synchronized each step)")
    print(compiled.explain())
    print(f"\ncProfile of {steps} GPT steps (tottime, top 35):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(35)
    print("by cumulative time (top 40):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("cumtime").print_stats(40)


if __name__ == "__main__":
    sys.exit(main())
