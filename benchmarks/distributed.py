"""Distributed benchmarks: all_reduce bandwidth, DDP overhead, data-parallel throughput.

    python -m benchmarks.distributed [--repeats 5]
    python -m benchmarks --only distributed [--repeats 5]     # the same, from the suite

The driver starts its own jobs and prints markdown tables from the JSON that rank 0 of each
job prints (`--worker KIND` is that job's side):

1. **all_reduce bandwidth**, ``mpiexec -n 2``: float32 buffers of 4 KiB to 64 MiB summed
   by mpi4py's ``comm.Allreduce`` on NumPy arrays (the raw exchange, into a preallocated
   receive buffer, and into a new one as lazytorch's engine does), by
   ``lazytorch.distributed.all_reduce`` on a tensor whose value is computed (the exchange
   runs in the call) and on a pending value (``x * 1``: one program, then the exchange),
   and that program alone. Every repetition starts at a barrier; its time is the slower
   rank's; the peers take turns within each repetition (interleaved).
2. **DDP at world size 1**: the GPT-small and MLP training steps of benchmarks/training.py
   (its ``_setup`` and ``_step``) with the model wrapped in ``DistributedDataParallel``
   against the bare model, both alive in one process, their blocks of 5 steps alternating
   (2 x --repeats blocks each): without a launcher (the one-process engine) and under
   ``mpiexec -n 1`` with ``backend="mpi"`` (the MPI engine; without a backend a world of
   one needs no MPI, so it would be the first case again).
3. **Data-parallel throughput**: samples per second of the same steps with DDP on 1 rank
   (2 OpenMP threads) and 2 ranks (1 thread each, each rank on the benchmark's batch, so
   a step processes twice the samples; a barrier before each block), against the bare
   model in one process with 2 threads, and against the job's own bare model (on 2 ranks:
   each rank training its own, no exchange: the ceiling of data-parallel throughput on
   this machine, taken side by side). lazytorch.metrics splits each block's steps: the
   programs' run time, the collectives' time (the engine's exchange, including any wait
   for the other rank) and the rest (recording, autograd, cache lookups, Python).

Every figure is a median. Blocks alternate within a job, but the jobs run one after the
other, so figures from different jobs (1 rank against 2) also see whatever else the
machine ran meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MARK = "@@bench-json "
KIB = 1024
# buffer bytes -> timed repetitions at --repeats 5 (small buffers: many, so the median holds)
SIZES = {4 * KIB: 1000, 64 * KIB: 500, KIB**2: 200, 4 * KIB**2: 60, 16 * KIB**2: 20, 64 * KIB**2: 8}
MODELS = {"gpt": "GPT-small, AdamW, batch 16", "mlp": "MLP 784-1024-1024-10, SGD, batch 256"}


# -- the driver -------------------------------------------------------------------------------


def mpiexec() -> str:
    """The mpiexec of the mpich wheel next to this Python, else the one on PATH."""
    exe = Path(sys.executable)
    for d in (Path(sysconfig.get_path("scripts")), exe.parent, exe.resolve().parent):
        if (d / "mpiexec").exists():
            return str(d / "mpiexec")
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError('mpiexec not found: pip install "lazytorch[distributed]"')
    return found


def run_job(ranks: int | None, threads: int, worker: list[str], timeout: float = 900) -> Any:
    """Rank 0's JSON from ``--worker ...`` on `ranks` MPI ranks (None: no launcher)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "LAZYTORCH_BACKEND": "cpp"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for var in ("RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "benchmarks.distributed", "--worker", *worker]
    if ranks is not None:
        cmd = [mpiexec(), "-n", str(ranks), *cmd]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [s for s in r.stdout.splitlines() if s.startswith(MARK)]
    if r.returncode != 0 or not lines:
        raise RuntimeError(
            f"{' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
        )
    return json.loads(lines[-1][len(MARK) :])


def machine() -> str:
    """``Intel(R) Xeon(R) Processor, 2 cores (AVX-512)`` from lscpu."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        info = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        name = info.get("Model name", "").strip() or platform.processor()
        simd = " (AVX-512)" if "avx512f" in info.get("Flags", "") else ""
    except (OSError, subprocess.CalledProcessError):
        name, simd = platform.processor() or platform.machine(), ""
    return f"{name}, {os.cpu_count()} cores{simd}"


def fmt_size(n: int) -> str:
    return f"{n // KIB**2} MiB" if n >= KIB**2 else f"{n // KIB} KiB"


def ms(s: float) -> str:
    return f"{s * 1e3:.3f}" if s < 1e-3 else f"{s * 1e3:.2f}"


def gbs(nbytes: int, s: float) -> str:
    return f"{nbytes / s / 1e9:.2f}"


def report(repeats: int) -> None:
    """Run the jobs and print the tables (the module docstring says what is measured)."""
    import mpi4py
    from mpi4py import MPI

    print(f"# {time.strftime('%Y-%m-%d')} — distributed: {machine()}, Python "
          f"{platform.python_version()}, NumPy {np.__version__}, mpi4py {mpi4py.__version__}, "
          f"{MPI.Get_library_version().splitlines()[0].strip()}")  # fmt: skip
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"`python -m benchmarks.distributed --repeats {repeats}` — medians, ms; load average "
          f"{load} (1/5/15 min) at the start\n", flush=True)  # fmt: skip

    rows = run_job(2, 1, ["allreduce", "--repeats", str(repeats)])
    print(
        "| all_reduce, 2 ranks, float32 | reps | mpi4py Allreduce | GB/s | mpi4py, new recv "
        "buffer | lazytorch, computed input | GB/s | lazytorch / raw | lazytorch, pending "
        "x*1 | x*1 alone |"
    )
    print("|---|" + "---:|" * 9)
    for r in rows:
        if r["max_abs_err"] != 0:  # two ranks: one float32 addition, the same either way
            print(f"  WARNING: {fmt_size(r['bytes'])}: lazytorch's sum differs from mpi4py's "
                  f"by {r['max_abs_err']:.2e}")  # fmt: skip
        n = r["bytes"]
        print(
            f"| {fmt_size(n)} | {r['reps']} | {ms(r['raw'])} | {gbs(n, r['raw'])} | "
            f"{ms(r['raw_alloc'])} | {ms(r['lt'])} | {gbs(n, r['lt'])} | "
            f"{100 * r['raw'] / r['lt']:.0f}% | {ms(r['lt_pending'])} | {ms(r['program'])} |",
            flush=True,
        )
    print()

    steps = ["steps", "--repeats", str(repeats)]
    alone = run_job(None, 2, steps)
    mpi1 = run_job(1, 2, steps)
    mpi2 = run_job(2, 1, steps)
    print("| DDP at world size 1 | started by | bare model ms/step | DDP ms/step | DDP overhead |")
    print("|---|---|---:|---:|---:|")
    for which, label in MODELS.items():
        for job, how in ((alone, "no launcher (one-process engine)"),
                         (mpi1, '`mpiexec -n 1`, backend="mpi" (MPI engine)')):  # fmt: skip
            bare, ddp = job[which]["bare"]["step"], job[which]["ddp"]["step"]
            print(f"| {label} | {how} | {ms(bare)} | {ms(ddp)} | {100 * (ddp / bare - 1):+.1f}% |")
    print()

    batch = {"gpt": 16, "mlp": 256}
    print(
        "| data-parallel | ranks × threads | ms/step | samples/step | samples/s | × bare, one "
        "process | × the job's bare | programs' run | collectives | rest | programs/step "
        "| kernels/step | collectives/step | MiB exchanged/step |"
    )
    print("|---|---|" + "---:|" * 12)
    for which, label in MODELS.items():
        rate0 = batch[which] / alone[which]["bare"]["step"]
        for how, world, job, peer in (
            ("bare model, one process", 1, alone, "bare"),
            ("DDP", 1, mpi1, "ddp"),
            ("bare model on each rank, no exchange", 2, mpi2, "bare"),
            ("DDP", 2, mpi2, "ddp"),
        ):
            r = job[which][peer]
            rate = world * batch[which] / r["step"]
            own = world * batch[which] / job[which]["bare"]["step"]
            threads = "1 × 2" if world == 1 else "2 × 1"
            print(
                f"| {label}: {how} | {threads} | {ms(r['step'])} | {world * batch[which]} | "
                f"{rate:.0f} | {rate / rate0:.2f} | {rate / own:.2f} | {ms(r['run'])} | "
                f"{ms(r['collective'])} | {ms(r['rest'])} | {r['programs']:g} | "
                f"{r['kernels']:g} | {r['collectives']:g} | {r['bytes'] / KIB**2:.2f} |",
                flush=True,
            )
    print(f"\nload average {'/'.join(f'{x:.1f}' for x in os.getloadavg())} at the end\n")


# -- the workers ------------------------------------------------------------------------------


def _gather_max(comm: Any, times: list[float]) -> list[float]:
    """Per repetition, the slowest rank's time (on rank 0; others get [])."""
    every = comm.gather(times, root=0)
    return [max(ts) for ts in zip(*every)] if comm.Get_rank() == 0 else []


def worker_allreduce(repeats: int, max_bytes: int) -> list[dict[str, Any]] | None:
    """Time the all_reduce peers (module docstring, 1.) at each size up to `max_bytes`."""
    from mpi4py import MPI

    import lazytorch.distributed as dist

    dist.init_process_group()
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(comm.Get_rank())
    rows = []
    for nbytes, base in SIZES.items():
        if nbytes <= max_bytes:
            x = rng.standard_normal(nbytes // 4, dtype=np.float32)
            rows.append(_allreduce_row(comm, x, max(3, base * repeats // 5)))
    dist.destroy_process_group()
    return rows if comm.Get_rank() == 0 else None


def _allreduce_row(comm: Any, x: np.ndarray, reps: int) -> dict[str, Any]:
    """The peers' median times on `x`, taking turns within each repetition, each after a
    barrier; `max_abs_err`: lazytorch's sums (computed and pending) against mpi4py's."""
    import lazytorch as lt
    import lazytorch.distributed as dist

    recv = np.empty_like(x)
    xl = lt.tensor(x)  # copies: from_numpy shares x, which all_reduce would write

    # each peer prepares (untimed) and returns what is timed
    def raw() -> Callable[[], Any]:
        return lambda: comm.Allreduce(x, recv)

    def raw_alloc() -> Callable[[], Any]:
        return lambda: comm.Allreduce(x, np.empty_like(x))

    def computed() -> Callable[[], Any]:
        t = lt.tensor(x)
        return lambda: (dist.all_reduce(t), lt.materialize(t))

    def pending() -> Callable[[], Any]:
        t = xl * 1
        return lambda: (dist.all_reduce(t), lt.materialize(t))

    def program() -> Callable[[], Any]:
        t = xl * 1
        return lambda: lt.materialize(t)

    peers = {"raw": raw, "raw_alloc": raw_alloc, "lt": computed, "lt_pending": pending,
             "program": program}  # fmt: skip
    names = list(peers)
    times: dict[str, list[float]] = {k: [] for k in names}
    for i in range(reps + 2):  # two rounds of warm-up (the first compiles x*1)
        for k in names[i % len(names) :] + names[: i % len(names)]:
            fn = peers[k]()
            comm.Barrier()
            t0 = time.perf_counter()
            fn()
            if i >= 2:
                times[k].append(time.perf_counter() - t0)
    comm.Allreduce(x, recv)
    ours = [lt.tensor(x), xl * 1]
    for t in ours:
        dist.all_reduce(t)
    err = max(float(np.max(np.abs(t.numpy() - recv))) for t in ours)
    row: dict[str, Any] = {"bytes": x.nbytes, "reps": reps, "max_abs_err": err}
    for k in names:
        slowest = _gather_max(comm, times[k])
        row[k] = statistics.median(slowest) if slowest else None
    return row


def _blocks(
    which: str, peers: dict[str, Callable[[Any], Any] | None], rounds: int, comm: Any
) -> dict[str, dict[str, float]]:
    """Training steps of each peer (a wrapper of the model, or None: the bare model), the
    peers' blocks of steps alternating; per peer, the medians over its blocks of: seconds
    per step, and per step the programs' run time, the collectives' time, count and bytes,
    the programs and kernels run (lazytorch.metrics), and the rest (recording, autograd,
    cache lookups, Python)."""
    import lazytorch as lt
    from benchmarks.training import _setup, _step

    runs = {}
    for name, wrap in peers.items():
        model, opt, loss_fn = _setup(lt, which)
        runs[name] = (model if wrap is None else wrap(model), opt, loss_fn)
    for run, opt, loss_fn in runs.values():  # warm-up: a step's programs built or loaded
        for _ in range(3):
            loss = _step(run, opt, loss_fn)
        float(loss.detach())
    per = 5
    blocks: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for i in range(rounds):
        for name in list(runs) if i % 2 == 0 else list(reversed(runs)):
            run, opt, loss_fn = runs[name]
            if comm is not None:
                comm.Barrier()
            lt.metrics.reset()
            t0 = time.perf_counter()
            for _ in range(per):
                loss = _step(run, opt, loss_fn)
            float(loss.detach())  # the step's last program has run
            step = (time.perf_counter() - t0) / per
            # metrics has no public accessor for a timing's total (report() prints percentiles)
            sums = lt.metrics._sums
            c = lt.metrics.counters()
            run_s = sums["run"][0] / per if "run" in sums else 0.0
            coll_s = sums["collective"][0] / per if "collective" in sums else 0.0
            blocks[name].append({"step": step, "run": run_s, "collective": coll_s,
                                 "rest": step - run_s - coll_s,
                                 "collectives": c["collectives"] / per,
                                 "programs": c["materializations"] / per,
                                 "kernels": c["kernels_launched"] / per,
                                 "bytes": c["collective_bytes"] / per})  # fmt: skip
    return {
        name: {k: statistics.median(b[k] for b in bs) for k in bs[0]} for name, bs in blocks.items()
    }


def worker_steps(repeats: int) -> dict[str, Any] | None:
    """DDP against the bare model (module docstring, 2. and 3.) in this job's world."""
    import lazytorch as lt
    import lazytorch.distributed as dist

    lt.set_backend("cpp")
    launched = "PMI_SIZE" in os.environ
    # under a launcher, the MPI engine even for a world of one (which needs no MPI otherwise)
    dist.init_process_group(backend="mpi" if launched else None)
    comm = None
    if launched:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD

    def ddp(model: Any) -> Any:
        return lt.nn.parallel.DistributedDataParallel(model)

    peers = {"bare": None, "ddp": ddp}
    out: dict[str, Any] = {}
    for which in MODELS:
        res = _blocks(which, peers, 2 * repeats, comm)
        if comm is not None:  # each peer's figures on its slower rank
            every = comm.gather(res, root=0)
            if comm.Get_rank() == 0:
                res = {p: max((r[p] for r in every), key=lambda f: f["step"]) for p in peers}
        out[which] = res
    dist.destroy_process_group()
    return out if comm is None or comm.Get_rank() == 0 else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--worker", choices=["allreduce", "steps"], help="a job's side (internal)")
    ap.add_argument("--max-bytes", type=int, default=max(SIZES), help="allreduce worker")
    args = ap.parse_args(argv)
    if args.worker is None:
        report(args.repeats)
        return
    if args.worker == "allreduce":
        result: Any = worker_allreduce(args.repeats, args.max_bytes)
    else:
        result = worker_steps(args.repeats)
    if result is not None:
        print(MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
