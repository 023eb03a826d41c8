"""DistributedDataParallel training against one process on the concatenated batch.

``mpiexec -n N python ddp.py MODE OUTDIR``; rank r writes OUTDIR/rank{r}.json.
Every rank trains with DDP on its shard of each step's batch, and also trains a copy of the
same model alone on the whole batch (the reference); the report holds the largest
difference between the two at the end, a hash of the final parameters' bytes (equal on
every rank, and from run to run), and the programs built after step 2.

Modes: ``parity`` (an MLP and a small GPT; float64 SGD and AdamW, float32 SGD),
``no_sync`` (k micro-batches accumulated, the last synchronized), ``unused``
(find_unused_parameters), ``mismatch`` (rank 1 builds another model: must raise).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import lazytorch as lt
import lazytorch.distributed as dist
from benchmarks import models

STEPS = 5


def params_hash(model: Any) -> str:
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()


def max_diff(a: Any, b: Any) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a.parameters(), b.parameters()))


def make(kind: str, dtype: Any, seed: int) -> Any:
    lt.manual_seed(seed)
    if kind == "mlp":
        m = models.mlp(lt, (8, 16, 16, 4))
    else:
        m = models.gpt(lt, vocab=11, context=8, width=16, heads=2, layers=1)
    return m.to(dtype)


def batch(kind: str, step: int, n: int, dtype: Any) -> tuple[Any, Any]:
    rng = np.random.default_rng(100 + step)
    if kind == "mlp":
        x = lt.tensor(rng.standard_normal((n, 8))).to(dtype)
        y = lt.tensor(rng.standard_normal((n, 4))).to(dtype)
    else:
        x = lt.tensor(rng.integers(0, 11, (n, 8)))
        y = lt.tensor(rng.integers(0, 11, (n, 8)))
    return x, y


def loss_of(kind: str, model: Any, x: Any, y: Any) -> Any:
    if kind == "mlp":
        return ((model(x) - y) ** 2).mean()
    return model(x, y)[1]


def optimizer(name: str, params: Any) -> Any:
    if name == "sgd":
        return lt.optim.SGD(params, lr=0.05, momentum=0.9)
    return lt.optim.AdamW(params, lr=0.01, weight_decay=0.1)


def train(kind: str, dtype: Any, opt_name: str, r: int, w: int) -> dict[str, Any]:
    per = 3
    model = make(kind, dtype, seed=r)  # a different start on each rank: DDP broadcasts rank 0's
    ddp = lt.nn.parallel.DistributedDataParallel(model)
    ref = make(kind, dtype, seed=0)
    # The rounding floor: one process summing the same shards' gradients. AdamW divides by
    # sqrt(v), so a near-zero gradient's rounding reaches the parameters as lr/|g| times it
    # (GPT float64: ~6e-13 here, against ~1e-16 with SGD).
    acc = make(kind, dtype, seed=0)
    opt, ref_opt = optimizer(opt_name, ddp.parameters()), optimizer(opt_name, ref.parameters())
    acc_opt = optimizer(opt_name, acc.parameters())
    start = max_diff(model, ref)
    built = 0
    for step in range(STEPS):
        x, y = batch(kind, step, per * w, dtype)
        opt.zero_grad()
        loss_of(kind, ddp, x[r * per : (r + 1) * per], y[r * per : (r + 1) * per]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_of(kind, ref, x, y).backward()
        ref_opt.step()
        acc_opt.zero_grad()
        for s in range(w):
            (
                loss_of(kind, acc, x[s * per : (s + 1) * per], y[s * per : (s + 1) * per]) / w
            ).backward()
        acc_opt.step()
        lt.materialize()
        if step == 1:
            built = lt.metrics.counters()["programs_built"]
    new_programs = lt.metrics.counters()["programs_built"] - built
    return {
        "start_diff": start,
        "diff": max_diff(model, ref),
        "floor": max_diff(acc, ref),
        "hash": params_hash(model),
        "new_programs_after_step_2": new_programs,
    }


def no_sync(r: int, w: int, k: int = 3) -> dict[str, Any]:
    per = 2
    model, ref = make("mlp", lt.float64, 0), make("mlp", lt.float64, 0)
    ddp = lt.nn.parallel.DistributedDataParallel(model)
    opt, ref_opt = optimizer("sgd", ddp.parameters()), optimizer("sgd", ref.parameters())
    for step in range(2):
        opt.zero_grad()
        ref_opt.zero_grad()
        for i in range(k):
            x, y = batch("mlp", step * k + i, per * w, lt.float64)
            ctx = ddp.no_sync() if i < k - 1 else _nothing()
            with ctx:
                loss_of(
                    "mlp", ddp, x[r * per : (r + 1) * per], y[r * per : (r + 1) * per]
                ).backward()
            loss_of("mlp", ref, x, y).backward()
        opt.step()
        ref_opt.step()
    return {"diff": max_diff(model, ref), "hash": params_hash(model)}


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def unused(r: int, w: int) -> dict[str, Any]:
    class Net(lt.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = lt.nn.Linear(4, 2).double()
            self.b = lt.nn.Linear(4, 2).double()  # used on rank 0 only
            self.never = lt.nn.Linear(4, 2).double()  # used by no rank

        def forward(self, x: Any, use_b: bool) -> Any:
            out = self.a(x)
            return out + self.b(x) if use_b else out

    lt.manual_seed(0)
    net = Net()
    ddp = lt.nn.parallel.DistributedDataParallel(net, find_unused_parameters=True)
    x = lt.tensor(np.random.default_rng(r).standard_normal((3, 4)))
    ddp(x, use_b=(r == 0)).sum().backward()
    # the reference: rank 0's and the others' gradients, averaged by hand
    lt.manual_seed(0)
    ref = Net()
    grads_a, grads_b = [], []
    for k in range(w):
        ref.zero_grad()
        xk = lt.tensor(np.random.default_rng(k).standard_normal((3, 4)))
        ref(xk, use_b=(k == 0)).sum().backward()
        grads_a.append(ref.a.weight.grad.numpy().copy())
        grads_b.append(ref.b.weight.grad.numpy().copy() if k == 0 else np.zeros((2, 4)))
    want_a, want_b = np.mean(grads_a, 0), np.mean(grads_b, 0)
    try:
        strict = lt.nn.parallel.DistributedDataParallel(Net())
        strict(x, use_b=False).sum().backward()
        strict_error = ""
    except RuntimeError as e:
        strict_error = str(e)
    return {
        "diff_a": float(np.abs(net.a.weight.grad.numpy() - want_a).max()),
        "diff_b": float(np.abs(net.b.weight.grad.numpy() - want_b).max()),
        "never_grad_is_none": net.never.weight.grad is None,
        "strict_error": strict_error,
    }


def mismatch(r: int, w: int) -> dict[str, Any]:
    model = lt.nn.Linear(4, 3 if r == 1 else 2)
    lt.nn.parallel.DistributedDataParallel(model)
    return {}


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    dist.init_process_group()
    r, w = dist.get_rank(), dist.get_world_size()
    if mode == "parity":  # configs: kind-dtype-optimizer, e.g. mlp-float64-sgd (all: argv[3:])
        configs = sys.argv[3:] or [
            f"{k}-{d}"
            for k in ("mlp", "gpt")
            for d in ("float64-sgd", "float64-adamw", "float32-sgd")
        ]
        result = {}
        for config in configs:
            kind, dname, opt = config.split("-")
            result[config] = train(kind, getattr(lt, dname), opt, r, w)
    else:
        result = {"no_sync": no_sync, "unused": unused, "mismatch": mismatch}[mode](r, w)
    (out / f"rank{r}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
