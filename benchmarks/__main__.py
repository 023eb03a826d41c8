"""CPU benchmarks, side by side in one process: bandwidth floor, NumPy, torch, lazytorch.

    python -m benchmarks [--repeats 9] [--cases chain,softmax,...] [--no-compile] [--quick]

Cases (float32):
  chain      gelu(x*a + b) * sigmoid(x) + 1 over three 16M vectors
  softmax    softmax over the rows of 4096x4096
  layer_norm layer_norm of 8192x1024 with weight and bias
  mlp        MLP inference 256x784 -> 1024 -> 1024 -> 10 with gelu
  sum        sum of 64M floats
then GEMM against numpy.matmul, conv2d against torch eager, the cost of a cache hit for a
20-kernel program, the compile cost: cold (empty cache) and warm start (a new process
loading from the disk cache), and training steps (benchmarks/training.py: a GPT-small and
an MLP step against torch eager and torch.compile, first steps cold and warm). With
``--only distributed`` (not in the default list: it starts MPI jobs), benchmarks/distributed.py:
all_reduce bandwidth against mpi4py, DDP overhead and data-parallel throughput.

Every figure is the median of --repeats runs of the whole operation, inputs prepared
outside the timed region. lazytorch's time includes recording the ops and the cache lookup
(what a user pays per call); torch.compile's excludes its first (compiling) call, which is
reported separately. The floor is a hand-written C kernel moving the same bytes
(benchmarks/floors.c). Each peer uses every core (torch's default thread count; NumPy's
elementwise ops are single-threaded by design, its BLAS is not).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


# -- timing ------------------------------------------------------------------------------------


def median_s(fn: Callable[[], Any], repeats: int, warmup: int = 1, number: int = 1) -> float:
    """Median over `repeats` timings of `number` back-to-back calls, per call (seconds).

    Starts with a pause: the previous peer's worker threads (NumPy's OpenBLAS spins its
    threads for ~0.1 s after a GEMM, OpenMP runtimes for a while after a parallel region)
    would otherwise still be busy on the two cores while this peer is timed.
    """
    time.sleep(0.3)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def fmt_ms(s: float | None) -> str:
    return "—" if s is None else f"{s * 1e3:.2f}"


def ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None else f"{a / b:.2f}"


# -- floors --------------------------------------------------------------------------------------


def load_floors() -> Any:
    out = Path(tempfile.mkdtemp(prefix="lt-floors-")) / "floors.so"
    cc = os.environ.get("CC", "gcc")
    cmd = [
        cc,
        "-O3",
        "-march=native",
        "-fopenmp",
        "-shared",
        "-fPIC",
        str(HERE / "floors.c"),
        "-o",
        str(out),
    ]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(str(out))
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.floor_triad3.argtypes = [p, p, p, p, i64]
    lib.floor_scale.argtypes = [p, p, i64]
    lib.floor_sum.argtypes = [p, i64]
    lib.floor_sum.restype = ctypes.c_double
    return lib


def ptr(a: np.ndarray) -> int:
    return a.ctypes.data


# -- cases ---------------------------------------------------------------------------------------


def _erf_np(v: np.ndarray) -> np.ndarray:
    # NumPy has no erf: Abramowitz & Stegun 7.1.26 (abs error < 1.5e-7), in float32 ops
    a = np.abs(v)
    t = 1 / (1 + np.float32(0.3275911) * a)
    p = t * (np.float32(0.254829592) + t * (np.float32(-0.284496736) + t * (np.float32(1.421413741)
        + t * (np.float32(-1.453152027) + t * np.float32(1.061405429)))))  # fmt: skip
    return np.copysign(1 - p * np.exp(-a * a), v)


def _gelu_np(v: np.ndarray) -> np.ndarray:
    return 0.5 * v * (1.0 + _erf_np(v * np.float32(0.7071067811865476)))


def chain(t: Any, x: Any, a: Any, b: Any) -> Any:
    return t.nn.functional.gelu(x * a + b) * t.sigmoid(x) + 1


def chain_np(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _gelu_np(x * a + b) * (1 / (1 + np.exp(-x))) + 1


def softmax(t: Any, x: Any) -> Any:
    return t.softmax(x, 1)


def softmax_np(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def layer_norm(t: Any, x: Any, w: Any, b: Any) -> Any:
    return t.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def layer_norm_np(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = x.mean(1, keepdims=True)
    v = ((x - m) ** 2).mean(1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * w + b


def mlp(t: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any, w3: Any, b3: Any) -> Any:
    F = t.nn.functional
    h = F.gelu(F.linear(x, w1, b1))
    h = F.gelu(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)


def mlp_np(x, w1, b1, w2, b2, w3, b3):
    h = _gelu_np(x @ w1.T + b1)
    h = _gelu_np(h @ w2.T + b2)
    return h @ w3.T + b3


def total(t: Any, x: Any) -> Any:
    return x.sum()


def total_np(x: np.ndarray) -> Any:
    return x.sum()


def make_inputs(case: str, rng: np.random.Generator, quick: bool) -> list[np.ndarray]:
    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32)

    s = 8 if quick else 1
    if case == "chain":
        n = 16 * 2**20 // s
        return [r(n), r(n), r(n)]
    if case == "softmax":
        return [r(4096 // s, 4096)]
    if case == "layer_norm":
        return [r(8192 // s, 1024), r(1024), r(1024)]
    if case == "mlp":
        return [r(256, 784), r(1024, 784) * 0.03, r(1024), r(1024, 1024) * 0.03, r(1024),
                r(10, 1024) * 0.03, r(10)]  # fmt: skip
    if case == "sum":
        return [r(64 * 2**20 // s)]
    raise ValueError(case)


CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], str]] = {
    "chain": (chain, chain_np, "gelu(x*a+b)*sigmoid(x)+1, 3x16M f32"),
    "softmax": (softmax, softmax_np, "softmax(dim=1), 4096x4096 f32"),
    "layer_norm": (layer_norm, layer_norm_np, "layer_norm 8192x1024 f32, weight+bias"),
    "mlp": (mlp, mlp_np, "MLP 256x784->1024->1024->10, gelu"),
    "sum": (total, total_np, "sum of 64M f32"),
}


def floor_fn(case: str, lib: Any, ins: list[np.ndarray]) -> Callable[[], Any] | None:
    if case == "chain":
        out = np.empty_like(ins[0])
        return lambda: lib.floor_triad3(ptr(ins[0]), ptr(ins[1]), ptr(ins[2]), ptr(out), out.size)
    if case in ("softmax", "layer_norm"):
        out = np.empty_like(ins[0])
        return lambda: lib.floor_scale(ptr(ins[0]), ptr(out), out.size)
    if case == "sum":
        return lambda: lib.floor_sum(ptr(ins[0]), ins[0].size)
    return None  # mlp is compute-bound: GEMM, not bandwidth


def run_case(case: str, args: argparse.Namespace, floors: Any, torch: Any) -> dict[str, Any]:
    import lazytorch as lt

    fn, np_fn, _ = CASES[case]
    ins = make_inputs(case, np.random.default_rng(0), args.quick)
    row: dict[str, Any] = {"case": case}
    f = floor_fn(case, floors, ins)
    row["floor"] = median_s(f, args.repeats) if f else None
    row["numpy"] = median_s(lambda: np_fn(*ins), args.repeats)

    lt_ins = [lt.from_numpy(a) for a in ins]

    def run_lt() -> Any:
        y = fn(lt, *lt_ins)
        lt.materialize(y)
        return y

    lt.metrics.reset()
    t0 = time.perf_counter()
    got = run_lt()
    row["lt_first"] = time.perf_counter() - t0  # compile or disk-cache load, plus one run
    row["lt_compiles"] = lt.metrics.counters()["compiles"]
    row["lt"] = median_s(run_lt, args.repeats, warmup=0)
    row["lt_kernels"] = lt.metrics.counters()["kernels_launched"] // (args.repeats + 1)
    if torch is not None:
        t_ins = [torch.from_numpy(a) for a in ins]
        with torch.no_grad():
            want = fn(torch, *t_ins)
            row["torch"] = median_s(lambda: fn(torch, *t_ins), args.repeats)
            if not args.no_compile:
                cfn = torch.compile(fn)
                t0 = time.perf_counter()
                cfn(torch, *t_ins)
                row["compile_first"] = time.perf_counter() - t0
                row["torch_compile"] = median_s(lambda: cfn(torch, *t_ins), args.repeats)
        err = float(np.max(np.abs(got.numpy().astype(np.float64) - want.numpy())))
        scale = float(np.max(np.abs(want.numpy()))) or 1.0
        row["max_rel_err"] = err / scale
    return row


# -- GEMM, conv2d, cache-hit overhead, compile/warm start --------------------------------------


def gemm_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    import lazytorch as lt

    rows = []
    shapes = [(8, 8, 8), (64, 64, 64), (1024, 128, 384), (2048, 2048, 2048)]
    for m, k, n in shapes:
        rng = np.random.default_rng(1)
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        la, lb = lt.from_numpy(a), lt.from_numpy(b)
        # small products are cheap: more repeats, so the median is not one of the first
        # calls after the threads of the previous peer went to sleep
        reps = max(31, args.repeats) if m < 2048 else max(3, args.repeats // 2)
        number = max(1, int(2e8 // (2 * m * k * n + 2e5)))  # tiny products: time a batch
        t_np = median_s(lambda a=a, b=b: a @ b, reps, number=number)

        def run(la: Any = la, lb: Any = lb) -> None:
            lt.materialize(la @ lb)

        t_lt = median_s(run, reps, number=number)
        flop = 2 * m * k * n
        rows.append({"shape": f"{m}x{k}x{n}", "numpy": t_np, "lt": t_lt,
                     "np_gflops": flop / t_np / 1e9, "lt_gflops": flop / t_lt / 1e9})  # fmt: skip
    return rows


def conv_row(args: argparse.Namespace, torch: Any) -> dict[str, Any] | None:
    if torch is None:
        return None
    import lazytorch as lt

    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 32, 32, 32), dtype=np.float32)
    w = rng.standard_normal((64, 32, 3, 3), dtype=np.float32) * 0.05
    b = rng.standard_normal(64, dtype=np.float32)
    lx, lw, lb = lt.from_numpy(x), lt.from_numpy(w), lt.from_numpy(b)
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)

    def run_lt() -> Any:
        y = lt.relu(lt.nn.functional.conv2d(lx, lw, lb, padding=1))
        lt.materialize(y)
        return y

    with torch.no_grad():
        t_torch = median_s(
            lambda: torch.relu(torch.nn.functional.conv2d(tx, tw, tb, padding=1)), args.repeats
        )
        want = torch.relu(torch.nn.functional.conv2d(tx, tw, tb, padding=1)).numpy()
    t_lt = median_s(run_lt, args.repeats)
    err = float(np.max(np.abs(run_lt().numpy() - want)))
    return {
        "layer": "relu(conv2d) 16x32x32x32, 64 3x3 filters, pad 1",
        "torch": t_torch,
        "lt": t_lt,
        "max_abs_err": err,
    }


def twenty_kernels(t: Any, x: Any) -> Any:
    # each reduction along a different axis than its producer's starts a new kernel
    for _ in range(10):
        x = t.softmax(x, 0)
        x = t.softmax(x, 1)
    return x


def cache_hit_row(args: argparse.Namespace) -> dict[str, Any]:
    """What a cache hit costs for a 20-kernel program on 4x4 data (kernels do ~nothing).

    `materialize` is the whole call on a hit: the graph walk, the cache lookup, the call
    into the compiled program and attaching its results. The freeing of the recorded graph
    (which a materialization triggers, as the graph's nodes become garbage) is timed apart
    as `teardown`: it is the other half of recording's cost, paid whenever a graph dies.
    `native_run` is the bare native call (entry point, output allocation), so
    materialize - native_run is what lazytorch adds on a hit.
    """
    import lazytorch as lt
    from lazytorch.runtime import executor

    x = lt.from_numpy(np.random.default_rng(3).standard_normal((4, 4), dtype=np.float32))
    y = twenty_kernels(lt, x)
    nk = len(lt.debug.schedule(y).kernels)
    lt.runtime.clear_cache()
    lt.materialize(y)
    (exe,) = executor._programs.values()
    record, mat, teardown, execute = [], [], [], []
    for _ in range(max(args.repeats, 200)):
        t0 = time.perf_counter()
        y = twenty_kernels(lt, x)
        t1 = time.perf_counter()
        keep = y._node.inputs  # the graph stays alive until `del keep`
        t2 = time.perf_counter()
        lt.materialize(y)
        t3 = time.perf_counter()
        del keep
        t4 = time.perf_counter()
        record.append(t1 - t0)
        mat.append(t3 - t2)
        teardown.append(t4 - t3)
    ins = [x._node.buffer]
    native = exe.native
    for _ in range(max(args.repeats, 200)):
        t0 = time.perf_counter()
        native.run(ins, [], [], exe.out_specs, exe.arena)
        execute.append(time.perf_counter() - t0)
    return {"kernels": nk, "record": statistics.median(record), "materialize": statistics.median(mat),
            "teardown": statistics.median(teardown), "native_run": statistics.median(execute)}  # fmt: skip


_STARTUP = textwrap.dedent(
    """
    import json, time
    t0 = time.perf_counter()
    import numpy as np
    import lazytorch as lt
    t1 = time.perf_counter()
    n = 16 * 2**20
    rng = np.random.default_rng(0)
    x, a, b = (lt.from_numpy(rng.standard_normal(n, dtype=np.float32)) for _ in range(3))
    t2 = time.perf_counter()
    y = lt.nn.functional.gelu(x * a + b) * lt.sigmoid(x) + 1
    lt.materialize(y)
    t3 = time.perf_counter()
    y = lt.nn.functional.gelu(x * a + b) * lt.sigmoid(x) + 1
    lt.materialize(y)
    t4 = time.perf_counter()
    c = lt.metrics.counters()
    print(json.dumps({"import": t1 - t0, "first": t3 - t2, "second": t4 - t3,
                      "compiles": c["compiles"], "disk": c["cache_hits_disk"],
                      "compile_seconds": c["compile_seconds"]}))
    """
)


def startup_rows(repeats: int) -> dict[str, Any]:
    """Cold: empty cache dir. Warm: a new process finding the program on disk.

    Python modules are loaded from bytecode, as an installed package's are after its first
    import (a private PYTHONPYCACHEPREFIX, written by one untimed run first): with
    PYTHONDONTWRITEBYTECODE set, every process would compile lazytorch's sources again.
    """
    cold, warm = [], []
    pyc = tempfile.mkdtemp(prefix="lt-pyc-")
    base = {**os.environ, "PYTHONPYCACHEPREFIX": pyc, "LAZYTORCH_BACKEND": "cpp"}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-c", _STARTUP], env={**base, "LAZYTORCH_CACHE_DIR": d},
                       capture_output=True, check=True)  # fmt: skip
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            env = {**base, "LAZYTORCH_CACHE_DIR": d}
            for sink in (cold, warm):
                r = subprocess.run(
                    [sys.executable, "-c", _STARTUP],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                sink.append(json.loads(r.stdout))

    def med(rows: list[dict[str, Any]], k: str) -> float:
        return statistics.median(r[k] for r in rows)

    assert all(r["compiles"] == 1 for r in cold) and all(
        r["disk"] == 1 and r["compiles"] == 0 for r in warm
    )
    return {
        "cold_first": med(cold, "first"), "cold_gxx": med(cold, "compile_seconds"),
        "steady": med(cold, "second"), "warm_first": med(warm, "first"), "import": med(warm, "import"),
    }  # fmt: skip


# -- report ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1/8 of the sizes (smoke run)")
    ap.add_argument("--only", default="cases,gemm,conv,cache,startup,training")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))

    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("torch is not installed: torch columns are left empty")
    import lazytorch as lt

    lt.set_backend("cpp")
    floors = load_floors()
    print(f"# {time.strftime('%Y-%m-%d')} — {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ""))  # fmt: skip
    print(
        f"`python -m benchmarks {' '.join(argv if argv is not None else sys.argv[1:])}` — medians of {args.repeats} runs, ms\n"
    )

    if "cases" in only:
        print(
            "| case | floor | NumPy | torch eager | torch.compile | lazytorch | lt/floor | lt/NumPy | lt/eager | lt/compile | kernels | first call (compile) | torch.compile first call |"
        )
        print("|---|" + "---:|" * 12)
        for case in args.cases.split(","):
            r = run_case(case, args, floors, torch)
            print(
                f"| {CASES[case][2]} | {fmt_ms(r['floor'])} | {fmt_ms(r['numpy'])} | {fmt_ms(r.get('torch'))} | "
                f"{fmt_ms(r.get('torch_compile'))} | {fmt_ms(r['lt'])} | {ratio(r['lt'], r['floor'])} | "
                f"{ratio(r['lt'], r['numpy'])} | {ratio(r['lt'], r.get('torch'))} | {ratio(r['lt'], r.get('torch_compile'))} | "
                f"{r['lt_kernels']} | {fmt_ms(r['lt_first'])} | {fmt_ms(r.get('compile_first'))} |",
                flush=True,
            )
            if r.get("max_rel_err", 0) > 1e-4:
                print(f"  WARNING: {case}: max relative error vs torch {r['max_rel_err']:.2e}")
        print()
    if "gemm" in only:
        print(
            "| GEMM (m×k×n, f32) | numpy.matmul ms | lazytorch ms | NumPy GFLOP/s | lazytorch GFLOP/s | lt/NumPy throughput |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for r in gemm_rows(args):
            print(f"| {r['shape']} | {fmt_ms(r['numpy'])} | {fmt_ms(r['lt'])} | {r['np_gflops']:.1f} | "
                  f"{r['lt_gflops']:.1f} | {r['lt_gflops'] / r['np_gflops']:.2f} |", flush=True)  # fmt: skip
        print()
    if "conv" in only and torch is not None:
        r = conv_row(args, torch)
        print("| conv layer | torch eager ms | lazytorch ms | lt/eager | max abs err |")
        print("|---|---:|---:|---:|---:|")
        print(
            f"| {r['layer']} | {fmt_ms(r['torch'])} | {fmt_ms(r['lt'])} | {ratio(r['lt'], r['torch'])} | {r['max_abs_err']:.1e} |\n"
        )
    if "cache" in only:
        r = cache_hit_row(args)
        print(f"cache hit, {r['kernels']}-kernel program on 4x4 data: record {r['record'] * 1e6:.0f} µs, "
              f"materialize {r['materialize'] * 1e6:.1f} µs, of which the native run {r['native_run'] * 1e6:.1f} µs "
              f"-> overhead {(r['materialize'] - r['native_run']) * 1e6:.1f} µs (goal <= 30 µs); "
              f"freeing the recorded graph afterwards {r['teardown'] * 1e6:.1f} µs\n")  # fmt: skip
    if "startup" in only:
        r = startup_rows(max(3, args.repeats // 3))
        print("| chain case, new process | ms |")
        print("|---|---:|")
        print(f"| import lazytorch | {fmt_ms(r['import'])} |")
        print(
            f"| cold: first call, empty cache (schedule + codegen + g++ + run) | {fmt_ms(r['cold_first'])} |"
        )
        print(f"| of which g++ | {fmt_ms(r['cold_gxx'])} |")
        print(
            f"| warm start: first call, program on disk (load + run) | {fmt_ms(r['warm_first'])} |"
        )
        print(f"| steady state: second call (run) | {fmt_ms(r['steady'])} |")
        print()
    if "training" in only and torch is not None:
        from benchmarks.training import report

        report(args.repeats, torch_compile=not args.no_compile)
    if "distributed" in only:  # opt-in: it starts MPI jobs (benchmarks/distributed.py)
        from benchmarks.distributed import report as distributed_report

        distributed_report(args.repeats)


if __name__ == "__main__":
    main()
