"""Recording cost per op: lazytorch (no execution) vs torch eager, side by side.

Each case applies one op 10,000 times to tiny tensors and reports the median time per op
over repeated runs. lazytorch only *records* here (nothing is materialized inside the timed
region, and the auto-cut threshold is raised so no cut happens); torch eager computes each
op — on tiny tensors that is essentially its dispatch overhead (~1 µs), the bar the
architecture sets for us (goal: <= 3 µs per op).

    python benchmarks/trace_overhead.py [--ops 10000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

# name -> (op, shape of x, shape of y)
CASES: dict[str, tuple[Callable[[Any, Any, Any], Any], tuple[int, ...], tuple[int, ...]]] = {
    "add (tensor + tensor)": (lambda x, y, lib: x + y, (4,), (4,)),
    "mul (tensor * scalar)": (lambda x, y, lib: x * 1.5, (4,), (4,)),
    "exp (unary)": (lambda x, y, lib: lib.exp(x), (4,), (4,)),
    "add (broadcast)": (lambda x, y, lib: x + y, (2, 4), (4,)),
    "reshape (view)": (lambda x, y, lib: x.reshape(2, 2), (4,), (4,)),
    "sum(dim=0)": (lambda x, y, lib: x.sum(0), (2, 4), (4,)),
    "relu": (lambda x, y, lib: lib.relu(x), (4,), (4,)),
    "x[0] (indexing)": (lambda x, y, lib: x[0], (2, 4), (4,)),
}


def _time_chain(op: Callable[..., Any], lib: Any, n: int, x: Any, y: Any) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            op(x, y, lib)
        return (time.perf_counter() - t0) / n
    finally:
        gc.enable()


def measure(n: int, repeats: int) -> list[dict[str, Any]]:
    import torch

    import lazytorch as lt

    lt.set_max_pending_nodes(10 * n * 8)  # never auto-cut inside a timed chain
    rows = []
    for name, (op, xs, ys) in CASES.items():
        lt_times, torch_times = [], []
        for _ in range(repeats):
            x, y = lt.ones(xs) + 0, lt.ones(ys) + 0  # pending (not leaf) inputs
            lt_times.append(_time_chain(op, lt, n, x, y))
            lt.materialize()  # drop the recorded graph between repeats
            torch_times.append(_time_chain(op, torch, n, torch.ones(xs), torch.ones(ys)))
        lt_us = statistics.median(lt_times) * 1e6
        torch_us = statistics.median(torch_times) * 1e6
        rows.append(
            {"case": name, "lazytorch_us": lt_us, "torch_us": torch_us, "ratio": lt_us / torch_us}
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    rows = measure(args.ops, args.repeats)
    print(f"recording cost per op, median of {args.repeats} runs x {args.ops} ops")
    print(f"| {'op':<24} | lazytorch record (µs) | torch eager (µs) | ratio |")
    print(f"|{'-' * 26}|----------------------:|-----------------:|------:|")
    for r in rows:
        print(
            f"| {r['case']:<24} | {r['lazytorch_us']:>21.2f} | {r['torch_us']:>16.2f} | {r['ratio']:>5.2f} |"
        )
    mean_lt = statistics.mean(r["lazytorch_us"] for r in rows)
    print(f"mean over cases: lazytorch {mean_lt:.2f} µs/op (goal <= 3 µs)")


if __name__ == "__main__":
    main()
