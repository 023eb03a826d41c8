"""The four cliffs of issue 24, each with its fix switched off ("before") and on ("after").

Each "before" runs today's code with only that fix undone in-process, so the two columns
differ by the fix alone:

1. **index reads** — `x[i].item()` for new indices `i` of a computed tensor; before, the
   host read of views (`lazytorch.runtime.host_views`) is off, so each index compiles.
2. **per-sample collate** — a makemore-style dataset whose sample length varies per word,
   30 SGD steps; before is ``DataLoader(lazy_batches=True)``, the old behaviour.
3. **chained roll** — 13 rolls of a (32, 16) context window, each followed by
   ``idx[:, 0] = 27`` and an embedding; the C++ source size; before, values stored to bound
   recomputation may be fused with readers at other indices again (no compile is timed:
   the before source takes g++ minutes).
4. **live registry** — a random-depth polynomial model (the "dynamic net" tutorial shape),
   2,000 SGD steps; registry entries and ms per step at the start and the end; before,
   the registry keeps one entry per registration.

    python -m benchmarks.cliffs            # prints a markdown table
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import numpy as np

import lazytorch as lt
import lazytorch.runtime as rt


@contextlib.contextmanager
def patched(obj: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def index_reads(before: bool) -> dict[str, Any]:
    x = lt.from_numpy(np.arange(100_000, dtype=np.float32))
    x2 = lt.from_numpy(np.arange(100_000, dtype=np.float32).reshape(400, 250))
    lt.materialize(x, x2)
    n = 5 if before else 2_000
    lt.metrics.reset()
    import torch

    from lazytorch.ops import indexing

    xt = torch.arange(100_000, dtype=torch.float32)

    xt2 = xt.reshape(400, 250)

    def ours(two: bool) -> float:
        # before: neither the read at the cut (read_on_host) nor the read when indexed
        off = patched(rt, "read_on_host", lambda node: False) if before else nullcontext()
        early = patched(indexing, "_host_buffer", lambda n: None) if before else nullcontext()
        with off, early:
            t = time.perf_counter()
            if two:
                for i in range(n):
                    x2[i % 400, i % 250].item()
            else:
                for i in range(n):
                    x[i * 7 + 3].item()
            return (time.perf_counter() - t) / n

    def theirs(two: bool) -> float:
        t = time.perf_counter()
        if two:
            for i in range(2_000):
                xt2[i % 400, i % 250].item()
        else:
            for i in range(2_000):
                xt[i * 7 + 3].item()
        return (time.perf_counter() - t) / 2_000

    # rounds alternate between the two, and each takes its median (a noisy 2-core machine)
    rounds = 1 if before else 7
    out: dict[str, Any] = {}
    for two, what in ((False, "x[i].item()"), (True, "x[i, j].item()")):
        runs = [(ours(two), theirs(two)) for _ in range(rounds)]
        per = sorted(r[0] for r in runs)[rounds // 2]
        torch_per = sorted(r[1] for r in runs)[rounds // 2]
        out[what] = f"{per * 1e6:,.1f} µs (torch {torch_per * 1e6:.1f} µs, {per / torch_per:,.1f}×)"
    c = lt.metrics.counters()
    out["compiles"] = f"{c['compiles']} in {2 * n * rounds} reads"
    return out


class Words(lt.utils.data.Dataset):
    """makemore's per-word sample: a length that varies per word sets the slices (also
    used by tests/realworld/test_cliffs.py)."""

    def __init__(self, n: int, max_len: int = 15) -> None:
        rng = np.random.default_rng(0)
        self.words = [rng.integers(1, 27, rng.integers(2, max_len)).tolist() for _ in range(n)]
        self.max_len = max_len

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i: int) -> Any:
        ix = lt.tensor(self.words[i], dtype=lt.long)
        x = lt.zeros(self.max_len + 1, dtype=lt.long)
        y = lt.zeros(self.max_len, dtype=lt.long)
        x[1 : 1 + len(ix)] = ix
        y[: len(ix)] = ix
        y[len(ix) + 1 :] = -1
        return x, y


def collate(before: bool) -> dict[str, Any]:
    lt.manual_seed(0)
    loader = lt.utils.data.DataLoader(
        Words(2_000), batch_size=32, shuffle=True, lazy_batches=before
    )
    emb, lin = lt.nn.Embedding(27, 16), lt.nn.Linear(16, 27)
    opt = lt.optim.AdamW([*emb.parameters(), *lin.parameters()], lr=1e-2)
    lt.metrics.reset()
    t = time.perf_counter()
    for step, (x, y) in enumerate(loader):
        logits = lin(emb(x[:, :-1]))
        loss = lt.nn.functional.cross_entropy(logits.view(-1, 27), y.view(-1), ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
        if step == 29:
            break
    total = time.perf_counter() - t
    return {"30 steps": f"{total:.2f} s", "compiles": lt.metrics.counters()["compiles"]}


def roll(before: bool) -> dict[str, Any]:
    sched = sys.modules["lazytorch.scheduler.schedule"]
    ctx = (
        patched(sched._Scheduler, "moved_reads", lambda self, vid: set())
        if before
        else nullcontext()
    )
    lt.manual_seed(0)
    idx = lt.randint(0, 27, (32, 16))
    emb = lt.nn.Embedding(28, 8)
    embs = []
    for _ in range(13):
        embs.append(emb(idx))
        idx = lt.roll(idx, 1, 1)
        idx[:, 0] = 27
    x = lt.cat(embs, -1)
    with ctx:
        t = time.perf_counter()
        src = lt.debug.source(x)
        gen = time.perf_counter() - t
    out = {"C++ lines": f"{len(src.splitlines()):,}", "C++ bytes": f"{len(src):,}"}
    out["generate"] = f"{gen:.2f} s"
    if not before:
        t = time.perf_counter()
        x.sum().item()
        out["compile+run"] = f"{time.perf_counter() - t:.2f} s"
    return out


def _old_prune() -> None:
    alive = []
    for r in rt._live:
        t = r()
        if t is not None and t._node.buffer is None:
            alive.append(r)
    rt._live[:] = alive


def registry(before: bool, steps: int = 2_000) -> dict[str, Any]:
    random.seed(0)
    lt.manual_seed(0)
    x = lt.linspace(-3.14159, 3.14159, 2_000)
    y = lt.sin(x)
    a, b, c, d, e = (lt.nn.Parameter(lt.randn(())) for _ in range(5))
    params = [a, b, c, d, e]
    opt = lt.optim.SGD(params, lr=1e-8, momentum=0.9)
    ctx = patched(rt, "_prune", _old_prune) if before else nullcontext()
    times, sizes = [], []
    with ctx:
        for t in range(steps):
            t0 = time.perf_counter()
            pred = a + b * x + c * x**2 + d * x**3
            for exp in range(4, random.randint(4, 6)):
                pred = pred + e * x**exp
            loss = (pred - y).pow(2).sum()
            if t % 100 == 99:
                loss.item()
            opt.zero_grad()
            loss.backward()
            opt.step()
            times.append(time.perf_counter() - t0)
            sizes.append(len(rt._live))
    first, last = np.median(times[100:300]), np.median(times[-200:])
    return {
        "registry, step 100 → 2000": f"{sizes[100]:,} → {sizes[-1]:,}",
        "ms/step, steps 100-300 → last 200": f"{first * 1e3:.2f} → {last * 1e3:.2f}",
    }


CASES = {"index": index_reads, "collate": collate, "roll": roll, "registry": registry}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=sorted(CASES), action="append")
    args = p.parse_args(argv)
    print(f"lazytorch {lt.__version__}, {os.cpu_count()} CPUs")
    for name in args.only or CASES:
        for before in (True, False):
            lt.runtime.clear_cache()
            res = CASES[name](before)
            cells = ", ".join(f"{k}: {v}" for k, v in res.items())
            print(f"| {name} | {'before' if before else 'after'} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
