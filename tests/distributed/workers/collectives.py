"""Every collective on lazy tensors, views and each dtype, against NumPy, on every rank.

Run on N ranks (``mpiexec -n N python collectives.py OUTDIR``): rank r writes
OUTDIR/rank{r}.json mapping each case to None (equal) or what differed. Inputs are small
integers in every dtype, so every reduction is exact and compared bit for bit; one case
uses random float32 values and a tolerance (MPI may sum in another order than NumPy).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import lazytorch as lt
import lazytorch.distributed as dist

DTYPES = {
    "float32": lt.float32,
    "float64": lt.float64,
    "float16": lt.float16,
    "bfloat16": lt.bfloat16,
    "int64": lt.int64,
    "int32": lt.int32,
    "bool": lt.bool,
}
SHAPES = {"scalar": (), "empty": (0, 3), "one": (1,), "matrix": (3, 4)}


def base(rank: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Rank `rank`'s input: small integers (exact in every dtype), different per rank."""
    n = int(np.prod(shape)) if shape else 1
    v = (np.arange(n) * 3 + rank * 5) % 7 - (2 if dtype not in ("bool",) else 0)
    if dtype == "bool":
        return (v.reshape(shape) % 2 == 0) if shape else np.bool_(v[0] % 2 == 0)
    if dtype in ("float16", "bfloat16"):
        return v.reshape(shape).astype(np.float32)
    return v.reshape(shape).astype(dtype)


def lazy(a: np.ndarray, dtype: str) -> lt.Tensor:
    return lt.tensor(np.asarray(a)).to(DTYPES[dtype])


def as_np(t: lt.Tensor) -> np.ndarray:
    if t.dtype in (lt.float16, lt.bfloat16):
        return t.float().numpy()
    return t.numpy()


CASES: dict[str, Callable[[int, int], tuple[Any, Any]]] = {}


def case(name: str) -> Callable[[Callable[[int, int], tuple[Any, Any]]], Any]:
    def deco(fn: Callable[[int, int], tuple[Any, Any]]) -> Any:
        CASES[name] = fn
        return fn

    return deco


def _reduce(arrays: list[np.ndarray], op: str, dtype: str) -> np.ndarray:
    if dtype == "bool":
        stack = np.stack(arrays)
        return stack.any(0) if op in ("sum", "max") else stack.all(0)
    stack = np.stack(arrays).astype(np.float64 if dtype not in ("int64", "int32") else dtype)
    out = {
        "sum": stack.sum(0),
        "max": stack.max(0),
        "min": stack.min(0),
        "product": stack.prod(0),
        "avg": stack.sum(0) / len(arrays),
    }[op]
    if op == "avg" and dtype in ("int64", "int32"):
        out = np.trunc(stack.sum(0) / len(arrays))
    return out.astype(np.float32 if dtype in ("float16", "bfloat16") else dtype)


for dname in DTYPES:
    for sname, shape in SHAPES.items():
        for op in ("sum", "avg", "max", "min", "product"):
            if dname == "bool" and op == "avg":
                continue

            def _all_reduce(r: int, w: int, d=dname, s=shape, o=op) -> tuple[Any, Any]:
                t = lazy(base(r, s, d), d) * 1  # a pending value, not a computed buffer
                if d == "bool":
                    t = lazy(base(r, s, d), d) | False
                dist.all_reduce(t, op=getattr(dist.ReduceOp, o.upper()))
                return as_np(t), _reduce([base(k, s, d) for k in range(w)], o, d)

            case(f"all_reduce-{op}-{dname}-{sname}")(_all_reduce)

    def _broadcast(r: int, w: int, d=dname) -> tuple[Any, Any]:
        t = lazy(base(r, (3, 4), d), d)
        dist.broadcast(t, src=w - 1)
        return as_np(t), base(w - 1, (3, 4), d)

    case(f"broadcast-{dname}")(_broadcast)

    def _all_gather(r: int, w: int, d=dname) -> tuple[Any, Any]:
        outs = [lt.zeros(2, 3, dtype=DTYPES[d]) for _ in range(w)]
        dist.all_gather(outs, lazy(base(r, (2, 3), d), d))
        return np.stack([as_np(o) for o in outs]), np.stack([base(k, (2, 3), d) for k in range(w)])

    case(f"all_gather-{dname}")(_all_gather)


@case("all_reduce-float32-random")
def _random(r: int, w: int) -> tuple[Any, Any]:
    arrays = [np.random.default_rng(k).standard_normal((5, 7)).astype(np.float32) for k in range(w)]
    t = lt.tensor(arrays[r]) + 0
    dist.all_reduce(t)
    return t.numpy(), ("close", np.sum(np.stack(arrays), 0, dtype=np.float64).astype(np.float32))


@case("all_reduce-transposed-view")
def _view(r: int, w: int) -> tuple[Any, Any]:
    # a non-contiguous view: the write goes back into its base, the rest of the base kept
    base_t = lt.tensor(base(r, (4, 3), "float32"))
    v = base_t.t()
    dist.all_reduce(v)
    want = sum(base(k, (4, 3), "float32") for k in range(w))
    return base_t.numpy(), want


@case("all_reduce-strided-slice")
def _slice(r: int, w: int) -> tuple[Any, Any]:
    x = lt.tensor(base(r, (6, 4), "float64"))
    dist.all_reduce(x[::2, 1:], op=dist.ReduceOp.MAX)
    want = base(r, (6, 4), "float64").copy()
    want[::2, 1:] = np.max([base(k, (6, 4), "float64")[::2, 1:] for k in range(w)], 0)
    return x.numpy(), want


@case("all_reduce-chain-reads-previous")
def _chain(r: int, w: int) -> tuple[Any, Any]:
    # the second collective reads the first's result: two batches, in order
    x = lt.tensor(base(r, (5,), "float64")) * 2
    dist.all_reduce(x)
    y = x + r
    dist.all_reduce(y)
    s = sum(base(k, (5,), "float64") * 2 for k in range(w))
    return y.numpy(), s * w + sum(range(w))


@case("all_reduce-async-work")
def _async(r: int, w: int) -> tuple[Any, Any]:
    x = lt.tensor(base(r, (4,), "float32")) + 1
    work = dist.all_reduce(x, async_op=True)
    done_before = work.is_completed()
    assert work.wait() is True and work.is_completed() and not done_before
    return x.numpy(), sum(base(k, (4,), "float32") + 1 for k in range(w))


@case("engine-leaves-the-input-buffer-alone")
def _no_alias(r: int, w: int) -> tuple[Any, Any]:
    # `before` reads a's value from before the collective; an engine that reduced into the
    # input's own buffer (MPI_IN_PLACE) would change what it computes
    a = lt.tensor(base(r, (3, 4), "float32")) * 1
    a.numpy()
    before = a.sum(0)
    copies = [a * 1 for _ in range(2)]
    for op, t in zip(("all_reduce", "broadcast"), (a, copies[0])):
        getattr(dist, op)(t, **({"src": 0} if op == "broadcast" else {}))
    outs = [lt.zeros(3, 4) for _ in range(w)]
    dist.all_gather(outs, copies[1])
    got = np.concatenate([before.numpy(), copies[1].numpy().ravel()])
    mine = base(r, (3, 4), "float32")
    return got, np.concatenate([mine.sum(0), mine.ravel()])


@case("all_gather_into_tensor-concatenated")
def _agit(r: int, w: int) -> tuple[Any, Any]:
    out = lt.zeros(2 * w, 3)
    dist.all_gather_into_tensor(out, lt.tensor(base(r, (2, 3), "float32")) * 1)
    return out.numpy(), np.concatenate([base(k, (2, 3), "float32") for k in range(w)])


@case("all_gather_into_tensor-stacked")
def _agit2(r: int, w: int) -> tuple[Any, Any]:
    out = lt.zeros(w, 2, 3, dtype=lt.int64)
    dist.all_gather_into_tensor(out, lt.tensor(base(r, (2, 3), "int64")))
    return out.numpy(), np.stack([base(k, (2, 3), "int64") for k in range(w)])


for op in ("sum", "avg", "max", "min", "product"):

    def _rs(r: int, w: int, o=op) -> tuple[Any, Any]:
        out = lt.zeros(2, 3, dtype=lt.float64)
        x = lt.tensor(base(r, (2 * w, 3), "float64")) * 1
        dist.reduce_scatter_tensor(out, x, op=getattr(dist.ReduceOp, o.upper()))
        full = _reduce([base(k, (2 * w, 3), "float64") for k in range(w)], o, "float64")
        return out.numpy(), full[2 * r : 2 * r + 2]

    case(f"reduce_scatter_tensor-{op}")(_rs)


@case("reduce_scatter_tensor-bfloat16-stacked")
def _rs_bf16(r: int, w: int) -> tuple[Any, Any]:
    out = lt.zeros(3, dtype=lt.bfloat16)
    dist.reduce_scatter_tensor(out, lt.tensor(base(r, (w, 3), "float32")).bfloat16())
    return as_np(out), np.sum([base(k, (w, 3), "float32") for k in range(w)], 0)[r]


@case("gather")
def _gather(r: int, w: int) -> tuple[Any, Any]:
    dst = w - 1
    outs = [lt.zeros(3) for _ in range(w)] if r == dst else None
    dist.gather(lt.tensor(base(r, (3,), "float32")) * 1, outs, dst=dst)
    if r != dst:
        return np.zeros(1), np.zeros(1)
    return np.stack([o.numpy() for o in outs]), np.stack(
        [base(k, (3,), "float32") for k in range(w)]
    )


@case("scatter")
def _scatter(r: int, w: int) -> tuple[Any, Any]:
    t = lt.zeros(2, 2, dtype=lt.int64)
    parts = [lt.tensor(base(k, (2, 2), "int64")) for k in range(w)] if r == 0 else None
    dist.scatter(t, parts, src=0)
    return t.numpy(), base(r, (2, 2), "int64")


@case("new_group-even-ranks")
def _group(r: int, w: int) -> tuple[Any, Any]:
    evens = list(range(0, w, 2))
    g = dist.new_group(evens)
    x = lt.tensor(base(r, (3,), "float64"))
    if r in evens:
        dist.all_reduce(x, group=g)
        assert dist.get_rank(g) == evens.index(r) and dist.get_world_size(g) == len(evens)
        return x.numpy(), sum(base(k, (3,), "float64") for k in evens)
    assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    return x.numpy(), base(r, (3,), "float64")


@case("program-keys-equal-across-ranks")
def _keys(r: int, w: int) -> tuple[Any, Any]:
    # the same computation on rank-dependent values: every rank builds the same programs,
    # whose canonical text is what the disk cache's key hashes (the in-memory keys hash
    # objects by identity, which differs between processes): no rank, group or sequence
    # number in any of them
    import hashlib

    from lazytorch.runtime import executor

    executor.clear_cache()
    m = lt.tensor(base(r, (4, 4), "float32"))
    h = (m @ m).relu()
    dist.all_reduce(h)
    out = (h * 2 + r).sum()
    dist.broadcast(out, src=0)
    out.numpy()
    keys = sorted(
        hashlib.sha256(exe.program.canonical_text().encode()).hexdigest()
        for exe in executor._programs.values()
    )
    everyone: list[Any] = [None] * w
    dist.all_gather_object(everyone, keys)
    same = [len(k) >= 2 and k == everyone[0] for k in everyone]
    return np.array(same), np.ones(w, dtype=bool)


@case("object-collectives")
def _objects(r: int, w: int) -> tuple[Any, Any]:
    got: list[Any] = [None] * w
    dist.all_gather_object(got, {"rank": r})
    objs = [f"from {r}", r] if r == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    return np.array([g["rank"] for g in got] + [objs[1]]), np.array([*range(w), 0])


def main() -> None:
    out = Path(sys.argv[1])
    dist.init_process_group()
    r, w = dist.get_rank(), dist.get_world_size()
    results: dict[str, Any] = {}
    for name, fn in CASES.items():
        try:
            got, want = fn(r, w)
            if isinstance(want, tuple) and want[0] == "close":
                ok = np.allclose(got, want[1], rtol=1e-6, atol=1e-6)
            else:
                want = np.asarray(want)
                ok = (
                    got.shape == want.shape
                    and got.dtype == want.dtype
                    and np.array_equal(got, want)
                )
            results[name] = None if ok else f"got {got!r}, want {want!r}"
        except Exception:
            results[name] = traceback.format_exc()
    dist.barrier()
    c = lt.metrics.counters()
    # every case but the group one (on odd ranks) runs at least one collective
    counted = c["collectives"] >= len(CASES) - 1 and c["collective_bytes"] > 0
    results["collectives counted"] = None if counted else f"metrics count {c['collectives']}"
    (out / f"rank{r}.json").write_text(json.dumps(results))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
