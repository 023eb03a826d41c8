"""First-request latency of the example inference server (examples/serve), cold and warm.

    python benchmarks/serve_first_request.py [--repeats 5] [--rows 1] [--steady 20]

Setup (once, in a temporary directory): train the model briefly, run the recording pass
(``LAZYTORCH_RECORD=programs.jsonl server.py --selftest``), compile the manifest into a
fresh cache with ``lazytorch warmup --manifest`` and export it with ``lazytorch cache
export``: what a build machine does. Then, for each scenario, --repeats times, start a fresh
server process on a fresh, empty cache directory and measure:

* **startup**: from starting the process to its ``serving on`` line (Python start,
  ``import lazytorch``, the cache import and the preload, whichever apply);
* **first request**: one ``POST /predict`` of --rows rows, timed by the client (urllib, a
  new connection) from sending to having read the whole answer;
* **steady state**: the median of --steady further requests of the same size.

Servers run with a bytecode cache of their own (unless --no-bytecode-cache), as an
installed package would: see main().

Scenarios:

* ``cold``: no archive; the first request compiles its program;
* ``warm``: ``--cache-archive``; the first request loads the compiled program from disk;
* ``warm+preload``: ``--cache-archive --preload``; both programs (size 1's and the one
  over a dynamic batch size that serves 2 to 64 rows) are loaded before the server says it
  is ready.

The client uses only the standard library. Prints a Markdown table of medians and ranges
(min–max over the repeats) and the compiler invocations each server reported in /metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVE = ROOT / "examples" / "serve"
SCENARIOS: dict[str, list[str]] = {
    "cold": [],
    "warm": ["--cache-archive", "{archive}"],
    "warm+preload": ["--cache-archive", "{archive}", "--preload"],
}
_READY = re.compile(r"serving on (http://\S+)")


# Where child processes keep Python bytecode (None: as this process does). See main().
_pycache: Path | None = None


def _env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a child process: this one's, less lazytorch settings that would
    change what is measured, with its own cache directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYTORCH_")}
    if _pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(_pycache)
    env["LAZYTORCH_CACHE_DIR"] = str(cache_dir)
    env.update(extra)
    return env


def _check(cmd: Sequence[str], env: dict[str, str], timeout: float = 300) -> None:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")


def build(work: Path) -> tuple[Path, Path]:
    """Train, record, warm up, export: (checkpoint, cache archive) under `work`."""
    py = sys.executable
    ckpt, manifest, archive = work / "checkpoint.lt", work / "programs.jsonl", work / "cache.tar.gz"
    scratch = work / "scratch-cache"  # training's and the recording pass's own programs
    _check([py, str(SERVE / "train.py"), "--out", str(ckpt), "--epochs", "3"], _env(scratch))
    _check(
        [py, str(SERVE / "server.py"), "--checkpoint", str(ckpt), "--selftest"],
        _env(scratch, LAZYTORCH_RECORD=str(manifest)),
    )
    cache = work / "build-cache"
    lt = [py, "-m", "lazytorch"]
    _check([*lt, "warmup", "--manifest", str(manifest), "--cache-dir", str(cache)], _env(cache))
    _check([*lt, "cache", "export", str(archive), "--cache-dir", str(cache)], _env(cache))
    return ckpt, archive


def _post(url: str, rows: list[list[float]]) -> float:
    """Seconds for one /predict round trip, as a client sees it."""
    body = json.dumps({"inputs": rows}).encode()
    req = urllib.request.Request(
        url + "/predict", data=body, headers={"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
        if r.status != 200:
            raise RuntimeError(f"/predict answered {r.status}")
    return time.perf_counter() - t0


def _compiles(url: str) -> int:
    with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
        text = r.read().decode()
    m = re.search(r"^lazytorch_compile_invocations_total (\d+)$", text, re.M)
    return int(m.group(1)) if m else -1


def run_once(
    scenario: str, ckpt: Path, archive: Path, cache_dir: Path, rows: int, steady: int
) -> dict[str, float]:
    """Start one server, time its startup and requests, stop it."""
    args = [a.format(archive=archive) for a in SCENARIOS[scenario]]
    cmd = [sys.executable, str(SERVE / "server.py"), "--checkpoint", str(ckpt)]
    cmd += ["--port", "0", "--quiet", "--cache-dir", str(cache_dir), *args]
    rng = random.Random(0)
    batch = [[rng.random() for _ in range(64)] for _ in range(rows)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=_env(cache_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the server is ready (or dies)
        startup = time.perf_counter() - t0
        m = _READY.search(line)
        if m is None:
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise SystemExit(f"server did not start ({scenario}):\n{line}{err}")
        url = m.group(1)
        first = _post(url, batch)
        later = [_post(url, batch) for _ in range(steady)]
        compiles = _compiles(url)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    return {
        "startup": startup,
        "first": first,
        "steady": statistics.median(later) if later else float("nan"),
        "compiles": compiles,
    }


def _cell(xs: list[float]) -> str:
    """Median and range in milliseconds."""
    ms = [x * 1e3 for x in xs]
    fmt = (lambda v: f"{v:.1f}") if max(ms) >= 10 else (lambda v: f"{v:.2f}")
    return f"{fmt(statistics.median(ms))} ({fmt(min(ms))}–{fmt(max(ms))})"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="fresh servers per scenario")
    ap.add_argument("--rows", type=int, default=1, help="rows per request (1..64)")
    ap.add_argument("--steady", type=int, default=20, help="requests after the first")
    ap.add_argument("--workdir", type=Path, help="keep the build and caches here")
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="let the servers inherit PYTHONDONTWRITEBYTECODE (they then compile lazytorch's "
        "Python source at every start, unlike an installed package)",
    )
    args = ap.parse_args(argv)

    global _pycache
    work = args.workdir or Path(tempfile.mkdtemp(prefix="lazytorch-serve-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if not args.no_bytecode_cache:
        # A deployed server imports lazytorch from .pyc files written at install time. Give
        # the children a bytecode cache of their own (the setup steps fill it), so that a
        # PYTHONDONTWRITEBYTECODE in this environment does not add compiling every module
        # from source to each server's startup and first request, and nothing is written
        # into the source tree.
        _pycache = work / "pycache"
    try:
        t0 = time.perf_counter()
        ckpt, archive = build(work)
        print(f"setup (train, record, warmup, export): {time.perf_counter() - t0:.1f} s")
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, bytecode cache "
            f"{'on' if _pycache is not None else 'as inherited'}"
        )
        results: dict[str, list[dict[str, float]]] = {s: [] for s in SCENARIOS}
        for i in range(args.repeats):
            for scenario in SCENARIOS:  # interleaved, so drift affects every scenario alike
                cache_dir = work / f"run-{scenario}-{i}"
                results[scenario].append(
                    run_once(scenario, ckpt, archive, cache_dir, args.rows, args.steady)
                )
                shutil.rmtree(cache_dir, ignore_errors=True)
        print()
        print(
            f"First /predict request ({args.rows} row{'s' if args.rows != 1 else ''}) of a "
            f"fresh server, {args.repeats} runs each: median (min–max), milliseconds"
        )
        print()
        print("| scenario | startup | first request | later requests | compiles |")
        print("|---|---:|---:|---:|---:|")
        for scenario, runs in results.items():
            compiles = sorted({int(r["compiles"]) for r in runs})
            print(
                f"| {scenario} | {_cell([r['startup'] for r in runs])} "
                f"| {_cell([r['first'] for r in runs])} "
                f"| {_cell([r['steady'] for r in runs])} "
                f"| {', '.join(map(str, compiles))} |"
            )
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
