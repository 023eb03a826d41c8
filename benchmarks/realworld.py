"""The real-script corpus (tests/realworld/) as one command: runs, matches and timings.

``python -m benchmarks.realworld`` runs every corpus script under torch (recording its
random draws) and under lazytorch installed as ``torch`` (replaying them), compares the
losses step by step (tests/realworld/README.md gives the rule) and prints one row per
script: does it run, do the losses match, and lazytorch's time over torch's for the first
step, the steady steps (median after the first three) and the whole script.

``--only mnist,vae`` picks scripts, ``--fast`` the CI slice, ``--sync`` and ``--backend``
set lazytorch's mode, ``--threads N`` the thread count of both libraries, ``--json FILE``
keeps every run's log. lazytorch's kernel cache is the usual one (warm after a first pass)
unless ``--cold`` gives each script an empty one, so that its compiles are timed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "realworld"))

from corpus import CORPUS, PairResult, run_pair, step_times


def _ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs <= 0:
        return "–"
    return f"{ours / theirs:.1f}×"


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x * 1e3:.1f}"


def row(r: PairResult) -> str:
    e = r.entry
    if not r.runs:
        runs = f"no: `{r.lazy.get('error', '')[:90]}`"
        match = "–"
    else:
        runs = "yes"
        match = (
            "yes"
            if r.matches
            else f"no: {r.loss_mismatch or r.item_mismatch or r.printed_mismatch}"
        )
    t_first, t_step = step_times(r.torch)
    l_first, l_step = step_times(r.lazy) if r.runs else (None, None)
    steps = len(r.torch.get("losses", []))
    whole = _ratio(r.lazy.get("wall_s"), r.torch.get("wall_s")) if r.runs else "–"
    return (
        f"| {e.name} | {e.source} | {runs} | {match} | {steps} | "
        f"{_ms(t_first)} / {_ms(l_first)} ({_ratio(l_first, t_first)}) | "
        f"{_ms(t_step)} / {_ms(l_step)} ({_ratio(l_step, t_step)}) | "
        f"{r.torch['wall_s']:.2f} / {r.lazy.get('wall_s', 0):.2f} ({whole}) |"
    )


HEADER = (
    "| script | source | runs? | losses match? | steps | first step ms torch / lazytorch "
    "(ratio) | steady step ms torch / lazytorch (ratio) | whole script s torch / lazytorch "
    "(ratio) |\n|---|---|---|---|---:|---:|---:|---:|"
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="comma-separated script names (default: all)")
    p.add_argument("--fast", action="store_true", help="only the CI slice")
    p.add_argument("--sync", action="store_true", help="lazytorch in sync mode")
    p.add_argument("--backend", choices=("cpp", "interpreter"), help="lazytorch's backend")
    p.add_argument("--json", metavar="FILE", help="write every run's log here")
    p.add_argument(
        "--cold",
        action="store_true",
        help="an empty kernel cache for each script's lazytorch run (compiles included)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="OMP/MKL/OpenBLAS threads for both libraries (default: each library's own)",
    )
    a = p.parse_args(argv)
    entries = CORPUS
    if a.only:
        names = set(a.only.split(","))
        unknown = names - {e.name for e in CORPUS}
        if unknown:
            p.error(f"unknown scripts: {', '.join(sorted(unknown))}")
        entries = [e for e in CORPUS if e.name in names]
    if a.fast:
        entries = [e for e in entries if e.fast]
    if a.threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(a.threads)  # inherited by both runs' processes
    env = {}
    if a.sync:
        env["LAZYTORCH_SYNC"] = "1"
    if a.backend:
        env["LAZYTORCH_BACKEND"] = a.backend
    print(HEADER, flush=True)
    logs: list[dict[str, Any]] = []
    runs = matches = 0
    for e in entries:
        with tempfile.TemporaryDirectory() as cache:
            if a.cold:
                env["LAZYTORCH_CACHE_DIR"] = cache
            r = run_pair(e, env)
        runs += r.runs
        matches += r.matches
        print(row(r), flush=True)
        logs.append(
            {
                "name": e.name,
                "torch": r.torch,
                "lazytorch": r.lazy,
                "loss_mismatch": r.loss_mismatch,
                "item_mismatch": r.item_mismatch,
                "printed_mismatch": r.printed_mismatch,
            }
        )
    print(f"\n{runs}/{len(entries)} run under lazytorch; {matches}/{len(entries)} match torch.")
    if a.json:
        Path(a.json).write_text(json.dumps(logs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
