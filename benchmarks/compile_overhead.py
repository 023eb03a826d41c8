"""What `lazytorch.compile` saves: recording a model's graph by running its Python vs
replaying the graph a compiled function traced once.

Two models on plain tensors (weights passed as arguments), float32:

* ``mlp``  — 3 layers of ``relu(x @ w + b)``, batch 32, width 256;
* ``gpt``  — one GPT-like block: layer_norm, causal self-attention (masked_fill, softmax),
  layer_norm, GELU MLP; batch 4, sequence 32, width 128, 4 heads.

For each: the time to produce the lazy outputs (nothing computed) by calling the Python
function vs the compiled one (a replay: the signature is warm), and the time end to end —
call, then materialize the output (program-cache hit, kernels run). Every figure is the
median of --repeats timings of --calls calls each (time.perf_counter).

    python benchmarks/compile_overhead.py [--repeats 15] [--calls 200]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any


def mlp_case(lt: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any, w3: Any, b3: Any) -> Any:
        h = (x @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        return (h @ w3 + b3).relu()

    width = 256
    args = [lt.randn(32, width)]
    for _ in range(3):
        args += [lt.randn(width, width) / width**0.5, lt.randn(width)]
    lt.materialize(*args)
    return mlp, tuple(args)


def gpt_case(lt: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    import lazytorch.nn.functional as F

    batch, seq, width, heads = 4, 32, 128, 4

    def block(x: Any, mask: Any, ln1: Any, wqkv: Any, wo: Any, ln2: Any, w1: Any, w2: Any) -> Any:
        b, t, c = x.shape
        h = F.layer_norm(x, (c,), ln1[0], ln1[1])
        q, k, v = (h @ wqkv).split(c, dim=2)
        q = q.view(b, t, heads, c // heads).transpose(1, 2)
        k = k.view(b, t, heads, c // heads).transpose(1, 2)
        v = v.view(b, t, heads, c // heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (c // heads) ** 0.5)
        att = att.masked_fill(mask[:t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + y @ wo
        h = F.layer_norm(x, (c,), ln2[0], ln2[1])
        return x + F.gelu(h @ w1) @ w2

    def w(*shape: int) -> Any:
        return lt.randn(*shape) / shape[0] ** 0.5

    args = (
        lt.randn(batch, seq, width),
        lt.tril(lt.ones(seq, seq)),
        (lt.ones(width), lt.zeros(width)),
        w(width, 3 * width),
        w(width, width),
        (lt.ones(width), lt.zeros(width)),
        w(width, 4 * width),
        w(4 * width, width),
    )
    flat = [a for arg in args for a in (arg if isinstance(arg, tuple) else (arg,))]
    lt.materialize(*flat)
    return block, args


def _time_us(run: Callable[[], Any], calls: int) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(calls):
            run()
        return (time.perf_counter() - t0) / calls * 1e6
    finally:
        gc.enable()


def _medians_us(runs: dict[str, Callable[[], Any]], calls: int, repeats: int) -> dict[str, float]:
    """Median time per call of each run; the runs alternate, so load on a shared machine
    weighs on all of them alike."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for k, run in runs.items():
            times[k].append(_time_us(run, calls))
    return {k: statistics.median(v) for k, v in times.items()}


def measure_case(lt: Any, name: str, make: Any, calls: int, repeats: int) -> dict[str, Any]:
    import numpy as np

    fn, args = make(lt)
    compiled = lt.compile(fn)
    ref = fn(*args).numpy()
    compiled(*args)  # the trace
    assert np.allclose(compiled(*args).numpy(), ref, atol=1e-5), name  # a replay
    row: dict[str, Any] = {"case": name, "nodes": compiled.graphs[0].num_nodes}
    record = {"python_record_us": lambda: fn(*args), "compiled_record_us": lambda: compiled(*args)}
    row.update(_medians_us(record, calls, repeats))
    lt.runtime.forget_live()  # the recorded graphs are garbage: materialize() skips them
    e2e = {
        "python_e2e_us": lambda: fn(*args).numpy(),
        "compiled_e2e_us": lambda: compiled(*args).numpy(),
    }
    row.update(_medians_us(e2e, calls, repeats))
    assert compiled.stats["traces"] == 1 and compiled.stats["fallbacks"] == 0
    return row


def measure(calls: int, repeats: int) -> list[dict[str, Any]]:
    import lazytorch as lt

    lt.manual_seed(0)
    lt.set_max_pending_nodes(10_000_000)  # never auto-cut inside a timed loop
    cases = (("mlp", mlp_case), ("gpt block", gpt_case))
    return [measure_case(lt, name, make, calls, repeats) for name, make in cases]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    import lazytorch as lt

    rows = measure(args.calls, args.repeats)
    print(
        f"lazytorch.compile overhead, median of {args.repeats} x {args.calls} calls, "
        f"backend {lt.get_backend()}"
    )
    print("| case      | nodes | record: python (µs) | record: replay (µs) | speedup "
          "| end to end: python (µs) | end to end: compiled (µs) | speedup |")  # fmt: skip
    print("|-----------|------:|--------------------:|--------------------:|--------:"
          "|------------------------:|--------------------------:|--------:|")  # fmt: skip
    for r in rows:
        print(
            f"| {r['case']:<9} | {r['nodes']:>5} | {r['python_record_us']:>19.1f} "
            f"| {r['compiled_record_us']:>19.1f} "
            f"| {r['python_record_us'] / r['compiled_record_us']:>6.1f}x "
            f"| {r['python_e2e_us']:>23.1f} | {r['compiled_e2e_us']:>25.1f} "
            f"| {r['python_e2e_us'] / r['compiled_e2e_us']:>6.1f}x |"
        )


if __name__ == "__main__":
    main()
