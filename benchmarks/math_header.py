"""Throughput of lazytorch_math.h's float32 functions vs libm and NumPy.

On 16M float32 values (64 MiB in, 64 MiB out) this times, single-threaded:

* ``lt``    a ``#pragma omp simd`` loop calling lt::<fn> (codegen/include/lazytorch_math.h),
* ``libm``  the same loop calling glibc's float function (expf, erff, ...), which GCC cannot
            vectorize without -ffast-math (sigmoid: 1 / (1 + expf(-x))),
* ``numpy`` the NumPy ufunc with ``out=`` (sigmoid: 1 / (1 + exp(-x)) as three ufunc passes;
            erf/erfc: NumPy has none),
* ``torch`` (when importable; one thread) torch.<fn>(x, out=...), for reference,

all compiled with the CPU backend's flags (-O2 -fvect-cost-model=dynamic -march=native
-fopenmp -fno-math-errno -fno-trapping-math), and prints a markdown table of the median
time (ms) over repeated runs and the effective bandwidth (bytes read + written per second).

    python benchmarks/math_header.py [--n 16777216] [--repeats 9] [--fns exp,erf,...|all]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from lazytorch.codegen.compiler import OPT_FLAGS

HEADER_DIR = Path(__file__).resolve().parents[1] / "codegen" / "include"
FLAGS = [
    *OPT_FLAGS,
    "-march=native",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
]

# fn -> (libm expression of x / y, input range for x, input range for y or None)
FUNCS: dict[str, tuple[str, tuple[float, float], tuple[float, float] | None]] = {
    "exp": ("expf(x)", (-87.0, 88.0), None),
    "erf": ("erff(x)", (-4.0, 4.0), None),
    "tanh": ("tanhf(x)", (-10.0, 10.0), None),
    "sigmoid": ("1.0f / (1.0f + expf(-x))", (-20.0, 20.0), None),
    "log": ("logf(x)", (1e-3, 1e3), None),
    "sin": ("sinf(x)", (-100.0, 100.0), None),
    "cos": ("cosf(x)", (-100.0, 100.0), None),
    "exp2": ("exp2f(x)", (-126.0, 127.0), None),
    "expm1": ("expm1f(x)", (-20.0, 20.0), None),
    "log2": ("log2f(x)", (1e-3, 1e3), None),
    "log1p": ("log1pf(x)", (-0.9, 1e3), None),
    "erfc": ("erfcf(x)", (-4.0, 10.0), None),
    "atan": ("atanf(x)", (-100.0, 100.0), None),
    "pow": ("powf(x, y)", (0.01, 100.0), (-10.0, 10.0)),
    "atan2": ("atan2f(x, y)", (-100.0, 100.0), (-100.0, 100.0)),
}
DEFAULT = ["exp", "erf", "tanh", "sigmoid", "log", "sin"]


def _numpy_fn(fn: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None:
    def sigmoid(x, y, out):
        np.negative(x, out=out)
        np.exp(out, out=out)
        out += 1
        np.reciprocal(out, out=out)

    table = {
        "exp": lambda x, y, o: np.exp(x, out=o), "exp2": lambda x, y, o: np.exp2(x, out=o),
        "expm1": lambda x, y, o: np.expm1(x, out=o), "log": lambda x, y, o: np.log(x, out=o),
        "log2": lambda x, y, o: np.log2(x, out=o), "log1p": lambda x, y, o: np.log1p(x, out=o),
        "tanh": lambda x, y, o: np.tanh(x, out=o), "sin": lambda x, y, o: np.sin(x, out=o),
        "cos": lambda x, y, o: np.cos(x, out=o), "atan": lambda x, y, o: np.arctan(x, out=o),
        "pow": lambda x, y, o: np.power(x, y, out=o),
        "atan2": lambda x, y, o: np.arctan2(x, y, out=o), "sigmoid": sigmoid,
    }  # fmt: skip
    return table.get(fn)


def _torch_fn(fn: str):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    table = {
        "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
        "log2": torch.log2, "log1p": torch.log1p, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
        "erf": torch.erf, "erfc": torch.erfc, "sin": torch.sin, "cos": torch.cos,
        "atan": torch.atan, "pow": torch.pow, "atan2": torch.atan2,
    }  # fmt: skip
    f = table[fn]
    binary = FUNCS[fn][2] is not None

    def run(x, y, out):
        if binary:
            f(x, y, out=out)
        else:
            f(x, out=out)

    return run, torch.from_numpy


def _build(fns: list[str], workdir: Path) -> ctypes.CDLL:
    src = ['#include "lazytorch_math.h"', "#include <cmath>", "#include <cstdint>"]
    for fn in fns:
        libm, _, yr = FUNCS[fn]
        lt_call = f"lt::{fn}(x, y)" if yr else f"lt::{fn}(x)"
        for name, expr in (("lt", lt_call), ("libm", libm)):
            src += [
                f'extern "C" void {name}_{fn}(const float* xs, const float* ys, float* out, int64_t n) {{',
                "    (void)ys;",
                "#pragma omp simd",
                "    for (int64_t i = 0; i < n; ++i) {",
                "        float x = xs[i]; float y = ys[i]; (void)y;",
                f"        out[i] = {expr};",
                "    }",
                "}",
            ]
    cpp = workdir / "bench.cpp"
    cpp.write_text("\n".join(src) + "\n")
    so = workdir / "bench.so"
    subprocess.run(["g++", *FLAGS, "-shared", "-fPIC", f"-I{HEADER_DIR}", str(cpp), "-o", str(so)],
                   check=True)  # fmt: skip
    lib = ctypes.CDLL(str(so))
    for fn in fns:
        for name in ("lt", "libm"):
            f = getattr(lib, f"{name}_{fn}")
            f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            f.restype = None
    return lib


def _median_ms(run: Callable[[], None], repeats: int) -> float:
    run()  # warm-up: page in the output, load code
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--fns", default=",".join(DEFAULT), help="comma-separated, or 'all'")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    fns = list(FUNCS) if args.fns == "all" else args.fns.split(",")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        lib = _build(fns, Path(d))
        print(f"{args.n:,} float32 values, single thread, median of {args.repeats} runs; "
              f"{platform.processor() or platform.machine()}, NumPy {np.__version__}")  # fmt: skip
        cols = ["lt", "libm", "numpy"] + ([] if args.no_torch else ["torch"])
        print()
        print("| function | " + " | ".join(f"{c} ms | {c} GB/s" for c in cols) + " | lt vs libm |")
        print("|---|" + "---:|---:|" * len(cols) + "---:|")
        for fn in fns:
            _, xr, yr = FUNCS[fn]
            x = rng.uniform(*xr, args.n).astype(np.float32)
            y = rng.uniform(*yr, args.n).astype(np.float32) if yr else x
            out = np.empty_like(x)
            nbytes = x.nbytes * (3 if yr else 2)
            xp, yp, op = x.ctypes.data, y.ctypes.data, out.ctypes.data
            res: dict[str, float | None] = {}
            for name in ("lt", "libm"):
                f = getattr(lib, f"{name}_{fn}")
                res[name] = _median_ms(partial(f, xp, yp, op, args.n), args.repeats)
            npf = _numpy_fn(fn)
            res["numpy"] = _median_ms(partial(npf, x, y, out), args.repeats) if npf else None
            if not args.no_torch:
                tf = _torch_fn(fn)
                if tf is None:
                    res["torch"] = None
                else:
                    run, from_numpy = tf
                    tx, ty, to = from_numpy(x), from_numpy(y), from_numpy(out)
                    res["torch"] = _median_ms(partial(run, tx, ty, to), args.repeats)
            cells = []
            for c in cols:
                ms = res[c]
                cells.append("—" if ms is None else f"{ms:.1f} | {nbytes / ms / 1e6:.1f}")
                if ms is None:
                    cells[-1] = "— | —"
            speedup = res["libm"] / res["lt"]
            print(f"| {fn} | " + " | ".join(cells) + f" | {speedup:.1f}× |", flush=True)


if __name__ == "__main__":
    main()
