"""`import lazytorch` wall time in fresh processes, next to NumPy, sympy and torch.

Two conditions, median of repeated runs each:

* warm — bytecode already compiled (what an installed package sees after its first import);
* cold — no bytecode cache at all (every module compiled from source on import).

Each run uses a private ``PYTHONPYCACHEPREFIX`` so the repository is not written to and
one condition cannot warm the other.

    python benchmarks/import_time.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

MODULES = ["lazytorch", "numpy", "sympy", "torch"]
CODE = "import time; t = time.perf_counter(); import {m}; print(time.perf_counter() - t)"


def one(module: str, env: dict[str, str]) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CODE.format(m=module)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def measure(module: str, repeats: int, warm: bool) -> float:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        if warm:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            one(module, env)  # compile and cache once
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        return statistics.median(one(module, env) for _ in range(repeats))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    print(f"import time, median of {args.repeats} fresh processes (seconds)")
    print("| module | warm bytecode | no bytecode |")
    print("|---|---:|---:|")
    for m in MODULES:
        try:
            warm = measure(m, args.repeats, True)
            cold = measure(m, max(3, args.repeats // 3), False)
        except subprocess.CalledProcessError:
            print(f"| {m} | not installed | |")
            continue
        print(f"| {m} | {warm:.3f} | {cold:.3f} |")
    print("goal: import lazytorch <= 0.1 s")


if __name__ == "__main__":
    main()
