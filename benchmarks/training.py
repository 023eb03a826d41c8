"""Training-step benchmarks: GPT-small, a wider GPT, an MLP and a CNN step, side by side.

    python -m benchmarks --only training [--repeats 9]
    python -m benchmarks.training --repeats 9        # the same, alone

GPT-small: vocab 65, context 64, width 128, 4 heads, 2 layers, batch 16, AdamW; GPT wider:
vocab 512, context 128, width 384, 6 heads, 4 layers, batch 8, AdamW. MLP: 784 -> 1024 ->
1024 -> 10 with ReLU, batch 256, SGD with momentum. CNN: ResNet-8-style (conv-BN-ReLU ×6,
2 residual adds) on 32×32×3, batch 32, SGD with momentum. A step is forward,
cross-entropy, backward, optimizer update and zero_grad; for lazytorch the update's
materialize() computes the whole step. Each figure is the median of --repeats blocks of
steps (ms per step), after warm-up. torch.compile compiles the model's forward (the usual
use); its first step is reported separately. The first lazytorch step is timed in a new
process: cold (empty cache directory: schedule, codegen and g++ for the two programs a
training loop needs, the second step's included) and warm (the programs on disk).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GPT = dict(vocab=65, context=64, width=128, heads=4, layers=2)
GPT_BATCH = 16
GPT_WIDE = dict(vocab=512, context=128, width=384, heads=6, layers=4)
GPT_WIDE_BATCH = 8
MLP = (784, 1024, 1024, 10)
MLP_BATCH = 256
CNN_BATCH = 32
# The workloads of issue 21's table: (key, label).
WORKLOADS = (
    ("gpt", "GPT-small, AdamW"),
    ("gpt-wide", "GPT wider (V512 T128 C384 H6 L4 B8), AdamW"),
    ("mlp", "MLP 784-1024-1024-10, SGD"),
    ("cnn", "CNN ResNet-8-style, 32×32×3, B32, SGD"),
)


def _setup(lib: Any, which: str, seed: int = 0) -> tuple[Any, Any, Any]:
    """(model, optimizer, step function) for `lib` (torch or lazytorch)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.models import cnn, gpt, mlp

    lib.manual_seed(seed)
    rng = np.random.default_rng(seed)
    if which in ("gpt", "gpt-wide"):
        cfg, batch = (GPT, GPT_BATCH) if which == "gpt" else (GPT_WIDE, GPT_WIDE_BATCH)
        model = gpt(lib, **cfg)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        idx = lib.tensor(rng.integers(0, cfg["vocab"], size=(batch, cfg["context"])))
        tgt = lib.tensor(rng.integers(0, cfg["vocab"], size=(batch, cfg["context"])))

        def loss_fn(m: Any) -> Any:
            return m(idx, tgt)[1]
    elif which == "cnn":
        model = cnn(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        x = lib.tensor(rng.normal(size=(CNN_BATCH, 3, 32, 32)).astype(np.float32))
        y = lib.tensor(rng.integers(0, 10, size=CNN_BATCH))

        def loss_fn(m: Any) -> Any:
            return lib.nn.functional.cross_entropy(m(x), y)
    else:
        model = mlp(lib, MLP)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = lib.tensor(rng.normal(size=(MLP_BATCH, MLP[0])).astype(np.float32))
        y = lib.tensor(rng.integers(0, MLP[-1], size=MLP_BATCH))

        def loss_fn(m: Any) -> Any:
            return lib.nn.functional.cross_entropy(m(x), y)

    return model, opt, loss_fn


def _autocast(lib: Any, amp: bool) -> Any:
    """The forward's context: bfloat16 autocast with `amp` (benchmarks/amp.py), else none."""
    return lib.autocast("cpu", dtype=lib.bfloat16) if amp else contextlib.nullcontext()


def _step(model: Any, opt: Any, loss_fn: Any, forward_in: Any = None) -> Any:
    with forward_in or contextlib.nullcontext():
        loss = loss_fn(model)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def time_steps(
    lib: Any,
    which: str,
    repeats: int,
    compiled: bool = False,
    amp: bool = False,
    whole_step: bool = False,
) -> dict[str, float]:
    """Median seconds per step (and torch.compile's first step); `amp`: bfloat16 autocast.

    `compiled`: the model's forward compiled (torch.compile's usual use); `whole_step`
    (lazytorch): the whole step — forward, backward, update — compiled, so the steady state
    replays its program without the step's Python (`lazytorch._compile.step`).
    """
    model, opt, loss_fn = _setup(lib, which)
    run = model
    first = None
    if compiled:
        run = lib.compile(model)
        t = time.perf_counter()
        _step(run, opt, loss_fn, _autocast(lib, amp))
        first = time.perf_counter() - t

    def one() -> Any:
        return _step(run, opt, loss_fn, _autocast(lib, amp))

    if whole_step:
        one = lib.compile(one)
    for _ in range(4):  # (a compiled step: its first step, then recorded twice)
        one()
    per = 10 if which == "mlp" else 5
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(per):
            loss = one()
        float(loss.detach())  # lazytorch computed it in the step; torch already has it
        times.append((time.perf_counter() - t) / per)
    if whole_step:
        assert one.stats["hits"] >= repeats * per, one.explain()
    return {"step": statistics.median(times), "first": first or 0.0}


def replay_host_time(which: str, steps: int = 50) -> dict[str, float]:
    """The host time of a replayed compiled step: its wall time minus its program's run
    (median over `steps`), for lazytorch's whole step compiled (`lazytorch._compile.step`)."""
    import lazytorch as lt
    from lazytorch.runtime import executor

    model, opt, loss_fn = _setup(lt, which)
    step = lt.compile(lambda: _step(model, opt, loss_fn))
    for _ in range(4):
        step()
    (plan,) = [e.step for e in step._cache.values() if e.step is not None and e.confirmed]
    exe = executor._programs.get(plan.cuts[0].key) or plan.cuts[0].exe
    cls, runs = type(exe), []
    plain = cls.run

    def timed(self: Any, inputs: Any) -> Any:
        t = time.perf_counter()
        out = plain(self, inputs)
        runs.append(time.perf_counter() - t)
        return out

    cls.run = timed
    try:
        walls = []
        for _ in range(steps):
            t = time.perf_counter()
            step()
            walls.append(time.perf_counter() - t)
    finally:
        cls.run = plain
    host = [w - r for w, r in zip(walls, runs)]
    return {"step": statistics.median(walls), "host": statistics.median(host)}


_FIRST_STEP = """
import json, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import lazytorch as lt
from benchmarks.training import _setup, _step
model, opt, loss_fn = _setup(lt, {which!r})
t1 = time.perf_counter()
_step(model, opt, loss_fn)
t2 = time.perf_counter()
_step(model, opt, loss_fn)
t3 = time.perf_counter()
c = lt.metrics.counters()
print(json.dumps({{"setup": t1 - t0, "first": t2 - t1, "second": t3 - t2,
                  "compiles": c.get("compiles", 0), "disk": c.get("cache_hits_disk", 0)}}))
"""


def first_steps(which: str, repeats: int) -> dict[str, float]:
    """First and second step in a new process: cold (empty cache) then warm (on disk)."""
    code = _FIRST_STEP.format(root=str(ROOT), which=which)
    pyc = tempfile.mkdtemp(prefix="lt-pyc-")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": pyc, "LAZYTORCH_BACKEND": "cpp"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            for sink in (cold, warm):
                r = subprocess.run(
                    [sys.executable, "-c", code],
                    env={**env, "LAZYTORCH_CACHE_DIR": d},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                sink.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert all(r["compiles"] == 2 for r in cold), cold
    assert all(r["compiles"] == 0 and r["disk"] == 2 for r in warm), warm

    def med(rows: list[dict[str, Any]], k: str) -> float:
        return statistics.median(r[k] for r in rows)

    return {
        "cold_first": med(cold, "first"),
        "cold_two": med(cold, "first") + med(cold, "second"),
        "warm_first": med(warm, "first"),
        "warm_two": med(warm, "first") + med(warm, "second"),
    }


def report(repeats: int, torch_compile: bool = True) -> None:
    import torch

    import lazytorch as lt

    lt.set_backend("cpp")
    print(
        "| training step | torch eager | torch.compile | lazytorch | lazytorch, compiled step "
        "| lt/eager | compiled step/eager | compiled step/torch.compile "
        "| torch.compile first step |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for which, label in WORKLOADS:
        eager = time_steps(torch, which, repeats)["step"]
        comp = time_steps(torch, which, repeats, compiled=True) if torch_compile else None
        ours = time_steps(lt, which, repeats)["step"]
        whole = time_steps(lt, which, repeats, whole_step=True)["step"]
        c_step = comp["step"] if comp else float("nan")
        print(
            f"| {label} | {eager * 1e3:.1f} | {c_step * 1e3:.1f} | {ours * 1e3:.1f} | "
            f"{whole * 1e3:.1f} | {ours / eager:.2f} | {whole / eager:.2f} | "
            f"{whole / c_step:.2f} | {comp['first'] if comp else float('nan'):.1f} s |",
            flush=True,
        )
    print()
    print("| compiled step, replayed | GPT-small | MLP |")
    print("|---|---:|---:|")
    host = {w: replay_host_time(w) for w in ("gpt", "mlp")}
    print(f"| step (ms) | {host['gpt']['step'] * 1e3:.1f} | {host['mlp']['step'] * 1e3:.1f} |")
    print(
        f"| host time: step minus its program (ms) | {host['gpt']['host'] * 1e3:.2f} | "
        f"{host['mlp']['host'] * 1e3:.2f} |"
    )
    print()
    print("| first lazytorch steps, new process | GPT-small | MLP |")
    print("|---|---:|---:|")
    rows = {w: first_steps(w, max(3, repeats // 3)) for w in ("gpt", "mlp")}
    for key, label in (
        ("cold_first", "cold: first step, empty cache"),
        ("cold_two", "cold: first two steps (both programs compiled)"),
        ("warm_first", "warm: first step, programs on disk"),
        ("warm_two", "warm: first two steps"),
    ):
        print(f"| {label} | {rows['gpt'][key]:.2f} s | {rows['mlp'][key]:.2f} s |")
    print()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args(argv)
    report(args.repeats, not args.no_compile)


if __name__ == "__main__":
    main()
