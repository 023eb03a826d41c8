"""64 inference calls with batch sizes 1..64: total time including compiles (issue 5).

    python benchmarks/dynamic_batch.py [--repeats 5] [--hidden 256]

Each configuration runs --repeats times, each time in a fresh process on a fresh, empty
compile cache (so every compile it needs is paid). Inside the process, after imports and
the model's weights are made, it times:

* **total**: one call per batch size 1..64, in a fixed shuffled order, each call
  computing ``softmax(relu(x @ w1 + b1) @ w2)`` and reading the result back as NumPy —
  compiles included;
* **steady**: the median time of a call after that (a second pass over the same sizes,
  everything compiled).

Configurations: ``lazytorch`` (automatic dynamic shapes, the default),
``lazytorch static`` (``LAZYTORCH_DYNAMIC=0``: every size compiles), ``torch eager``,
``torch.compile`` (default options: automatic dynamic after the second size) and
``numpy`` (the same math in NumPy). Prints a Markdown table of medians and ranges, and the
programs or graphs each configuration compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = ["lazytorch", "lazytorch static", "torch eager", "torch.compile", "numpy"]


def _sizes() -> list[int]:
    sizes = list(range(1, 65))
    random.Random(0).shuffle(sizes)
    return sizes


def child(config: str, hidden: int) -> dict[str, float]:
    import numpy as np

    rng = np.random.default_rng(0)
    w1n = (rng.standard_normal((784, hidden)) / 28).astype(np.float32)
    b1n = rng.standard_normal(hidden).astype(np.float32)
    w2n = (rng.standard_normal((hidden, 10)) / 16).astype(np.float32)
    xs = {n: rng.standard_normal((n, 784)).astype(np.float32) for n in range(1, 65)}
    compiled = 0.0
    if config.startswith("lazytorch"):
        import lazytorch as lt

        w1, b1, w2 = lt.from_numpy(w1n), lt.from_numpy(b1n), lt.from_numpy(w2n)

        def call(x):
            return lt.softmax(lt.relu(lt.from_numpy(x) @ w1 + b1) @ w2, -1).numpy()

        def count() -> float:
            return float(lt.metrics.counters().get("compiles", 0))

    elif config.startswith("torch"):
        import torch

        tw1, tb1, tw2 = (torch.from_numpy(a) for a in (w1n, b1n, w2n))

        def model(x):
            return torch.softmax(torch.relu(x @ tw1 + tb1) @ tw2, -1)

        if config == "torch.compile":
            import torch._dynamo

            model = torch.compile(model)

        def call(x):
            with torch.no_grad():
                return model(torch.from_numpy(x)).numpy()

        def count() -> float:
            if config != "torch.compile":
                return 0.0
            from torch._dynamo.utils import counters

            return float(counters["stats"]["unique_graphs"])

    else:

        def call(x):
            h = np.maximum(x @ w1n + b1n, 0) @ w2n
            e = np.exp(h - h.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

        def count() -> float:
            return 0.0

    sizes = _sizes()
    t0 = time.perf_counter()
    for n in sizes:
        call(xs[n])
    total = time.perf_counter() - t0
    compiled = count()
    steady = []
    for n in sizes:
        t = time.perf_counter()
        call(xs[n])
        steady.append(time.perf_counter() - t)
    return {"total": total, "steady": statistics.median(steady), "compiled": compiled}


def run(config: str, hidden: int) -> dict[str, float]:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="lt-dyn-bench-") as tmp:
        env["LAZYTORCH_CACHE_DIR"] = os.path.join(tmp, "lazytorch")
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        if config == "lazytorch static":
            env["LAZYTORCH_DYNAMIC"] = "0"
        out = subprocess.run(
            [sys.executable, __file__, "--child", config, "--hidden", str(hidden)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--only", nargs="*", default=None, help="configurations to run")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.hidden)))
        return
    configs = args.only or CONFIGS
    results: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
    for r in range(args.repeats):
        for c in configs:  # interleaved: drift on a noisy machine hits every config alike
            results[c].append(run(c, args.hidden))
            print(f"repeat {r + 1}/{args.repeats} {c}: {results[c][-1]}", file=sys.stderr)
    print(
        f"\n{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}; "
        f"MLP 784-{args.hidden}-10, batch sizes 1..64 shuffled, {args.repeats} fresh processes each\n"
    )
    print("| configuration | total, 64 calls (s) | range (s) | compiled | steady call (ms) |")
    print("|---|---:|---:|---:|---:|")
    for c in configs:
        rs = results[c]
        tot = [x["total"] for x in rs]
        print(
            f"| {c} | {statistics.median(tot):.3f} | {min(tot):.3f}–{max(tot):.3f} | "
            f"{statistics.median(x['compiled'] for x in rs):.0f} | "
            f"{1e3 * statistics.median(x['steady'] for x in rs):.3f} |"
        )


if __name__ == "__main__":
    main()
