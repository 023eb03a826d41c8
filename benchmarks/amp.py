"""Mixed-precision benchmarks: training steps under bfloat16 autocast, their peak memory, and
the bfloat16 GEMM, side by side in one run.

    python -m benchmarks.amp [--repeats 7] [--no-compile]
    python -m benchmarks.amp --rounds 7 [--which mlp] [--float32]   # step ratios, see below

Steps: benchmarks/training.py's GPT-small (AdamW) and MLP (SGD) steps with the forward and
the loss under ``autocast("cpu", dtype=bfloat16)`` (parameters, gradients and optimizer
state stay float32, as torch's autocast keeps them), for torch eager, torch.compile (of the
model, as training.py) and lazytorch; the float32 step of each beside it. Peak memory: the
growth of the process's maximum resident set over 8 steps after setup, in a new process per
(library, precision), so each starts from the same baseline (lazytorch's planned arena is
printed beside it). GEMM: GFLOP/s of an n×n×n product in bfloat16 and in float32.

``--rounds N`` measures only the step ratios (bf16, or ``--float32``), for a machine whose speed drifts (a shared
VM moves torch eager's own step by 2× between minutes): each round starts every peer in a
new process, one after another in an order rotated each round, and takes the ratios within
the round; the table gives each ratio's median and range over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def time_steps(
    lib: Any, which: str, repeats: int, amp: bool, compiled: bool = False, whole: bool = False
) -> float:
    """Median ms per training step (benchmarks/training.py's, under autocast with `amp`;
    `whole`: lazytorch's whole step compiled)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.training import time_steps as steps

    return steps(lib, which, repeats, compiled=compiled, amp=amp, whole_step=whole)["step"] * 1e3


_PEAK = """
import json, os, sys
sys.path.insert(0, {root!r})
import {lib} as lib
from benchmarks.training import _autocast, _setup, _step
if {lib!r} == "lazytorch":
    lib.set_backend("cpp")
def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
model, opt, loss_fn = _setup(lib, {which!r})
def step():
    return float(_step(model, opt, loss_fn, _autocast(lib, {amp})).detach())
if {lib!r} == "lazytorch":
    lib.materialize(*model.parameters())
base = rss_kib()  # the model; (lazytorch: its programs come from the warmed disk cache)
for _ in range(8):
    step()
with open("/proc/self/status") as f:  # VmHWM: this process's own peak (ru_maxrss would
    peak = int(next(l for l in f if l.startswith("VmHWM")).split()[1])  # keep the parent's)
print(json.dumps({{"growth_kib": peak - base, "peak_kib": peak}}))
"""


def peak_growth(lib: str, which: str, amp: bool) -> dict[str, int]:
    """Peak RSS (VmHWM) over 8 steps minus the RSS after setup, in a new process. lazytorch runs
    twice in one cache directory and the second run counts: its programs load from disk
    instead of being generated (the compiler's memory is not the step's)."""
    import tempfile

    code = _PEAK.format(root=str(ROOT), lib=lib, which=which, amp=amp)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "LAZYTORCH_CACHE_DIR": cache, "LAZYTORCH_TIERED": "0"}
        for _ in range(2 if lib == "lazytorch" else 1):
            r = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            )
    return json.loads(r.stdout.strip().splitlines()[-1])


def planned_arena(which: str, amp: bool) -> int:
    """lazytorch's planned peak of temporaries (bytes) over the step's programs."""
    import lazytorch as lt
    from benchmarks.training import _autocast, _setup

    model, _opt, loss_fn = _setup(lt, which)
    with _autocast(lt, amp):
        loss = loss_fn(model)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    sched = lt.debug.schedule(loss, *grads)
    return int(sched.arena_bytes)


def gemm_gflops(lib: Any, n: int, dtype: str, repeats: int) -> float:
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((n, n)).astype(np.float32)).to(getattr(lib, dtype))
    b = lib.tensor(rng.standard_normal((n, n)).astype(np.float32)).to(getattr(lib, dtype))
    if lib.__name__ == "lazytorch":
        lib.materialize(a, b)

        def run() -> None:
            lib.materialize(a @ b)
    else:

        def run() -> None:
            a @ b

    run()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times) / 1e9


def report(repeats: int, torch_compile: bool = True) -> None:
    import torch

    import lazytorch as lt

    lt.set_backend("cpp")
    print("| peak memory growth over 8 steps (MiB) | torch f32 | torch bf16 | ratio "
          "| lazytorch f32 | lazytorch bf16 | ratio | lt planned arena f32 → bf16 |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for which, label in (("gpt", "GPT-small"), ("mlp", "MLP")):
        t32, t16 = (peak_growth("torch", which, a)["growth_kib"] / 1024 for a in (False, True))
        l32, l16 = (peak_growth("lazytorch", which, a)["growth_kib"] / 1024 for a in (False, True))
        a32, a16 = (planned_arena(which, a) / 2**20 for a in (False, True))
        print(
            f"| {label} | {t32:.1f} | {t16:.1f} | {t16 / max(t32, 1e-9):.2f} | {l32:.1f} | "
            f"{l16:.1f} | {l16 / max(l32, 1e-9):.2f} | {a32:.1f} → {a16:.1f} MiB "
            f"({a16 / max(a32, 1e-9):.2f}) |"
        )
    print()
    print(
        "| step (ms) | torch eager | torch.compile | lazytorch | lazytorch, compiled step "
        "| lt/eager | compiled step/eager | compiled step/torch.compile |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for which, label in (("gpt", "GPT-small, AdamW"), ("mlp", "MLP 784-1024-1024-10, SGD")):
        for amp in (False, True):
            eager = time_steps(torch, which, repeats, amp)
            comp = time_steps(torch, which, repeats, amp, compiled=True) if torch_compile else None
            ours = time_steps(lt, which, repeats, amp)
            whole = time_steps(lt, which, repeats, amp, whole=True)
            tag = "bf16 autocast" if amp else "float32"
            c = f"{comp:.1f}" if comp else "—"
            rc = f"{whole / comp:.2f}" if comp else "—"
            print(
                f"| {label}, {tag} | {eager:.1f} | {c} | {ours:.1f} | {whole:.1f} | "
                f"{ours / eager:.2f} | {whole / eager:.2f} | {rc} |"
            )
    print()
    print("| GEMM n³ (GFLOP/s) | torch f32 | torch bf16 | lazytorch f32 | lazytorch bf16 |")
    print("|---|---:|---:|---:|---:|")
    for n in (512, 1024):
        row = [
            gemm_gflops(lib, n, d, repeats) for lib in (torch, lt) for d in ("float32", "bfloat16")
        ]
        print(f"| {n} | " + " | ".join(f"{v:.0f}" for v in row) + " |")
    print()


_ROUND = """
import json, sys
sys.path.insert(0, {root!r})
import {lib} as lib
from benchmarks.training import time_steps
if {lib!r} == "lazytorch":
    lib.set_backend("cpp")
r = time_steps(lib, {which!r}, {repeats}, amp={amp}, compiled={compiled}, whole_step={whole})
print(json.dumps(r["step"] * 1e3))
"""

# (label, library, torch.compile of the model, lazytorch's whole step compiled)
PEERS = (
    ("torch eager", "torch", False, False),
    ("torch.compile", "torch", True, False),
    ("lazytorch", "lazytorch", False, False),
    ("lazytorch, compiled step", "lazytorch", False, True),
)


def rounds(
    which: str, n: int, repeats: int, torch_compile: bool = True, amp: bool = True
) -> dict[str, list[float]]:
    """ms per step (bf16 autocast with `amp`, else float32) of each peer in `PEERS`, one new process per peer and round,
    the peers' order rotated each round (see the module doc)."""
    peers = [p for p in PEERS if torch_compile or p[0] != "torch.compile"]
    out: dict[str, list[float]] = {p[0]: [] for p in peers}
    for r in range(n):
        for label, lib, compiled, whole in peers[r % len(peers) :] + peers[: r % len(peers)]:
            code = _ROUND.format(
                root=str(ROOT), lib=lib, which=which, repeats=repeats, compiled=compiled,
                whole=whole, amp=amp,
            )  # fmt: skip
            res = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            out[label].append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(f"  round {r + 1}/{n}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in out.items()),
              file=sys.stderr)  # fmt: skip
    return out


def report_rounds(
    n: int, repeats: int, which: list[str], torch_compile: bool = True, amp: bool = True
) -> None:
    labels = {"gpt": "GPT-small, AdamW", "mlp": "MLP 784-1024-1024-10, SGD"}
    kind = "bf16 autocast" if amp else "float32"
    print(f"{kind} step, {n} rounds of new processes (ms: median [min–max]; ratios "
          "taken within each round)")  # fmt: skip
    print()
    print("| step | peer | ms | / torch eager | / torch.compile |")
    print("|---|---|---:|---:|---:|")
    for w in which:
        ms = rounds(w, n, repeats, torch_compile, amp)
        eager = ms["torch eager"]
        for label, times in ms.items():

            def ratio(base: list[float], t: list[float] = times) -> str:
                rs = sorted(a / b for a, b in zip(t, base))
                return f"{statistics.median(rs):.2f} [{rs[0]:.2f}–{rs[-1]:.2f}]"

            comp = ratio(ms["torch.compile"]) if "torch.compile" in ms else "—"
            print(
                f"| {labels[w]} | {label} | {statistics.median(times):.2f} "
                f"[{min(times):.2f}–{max(times):.2f}] | {ratio(eager)} | {comp} |"
            )
    print()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--rounds", type=int, default=0, help="step ratios over N rounds of processes")
    ap.add_argument("--which", choices=("gpt", "mlp"), action="append")
    ap.add_argument("--float32", action="store_true", help="with --rounds: the float32 steps")
    args = ap.parse_args(argv)
    if args.rounds:
        report_rounds(
            args.rounds,
            args.repeats,
            args.which or ["gpt", "mlp"],
            not args.no_compile,
            not args.float32,
        )
    else:
        report(args.repeats, not args.no_compile)


if __name__ == "__main__":
    main()
