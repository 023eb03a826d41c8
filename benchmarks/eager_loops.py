"""Eager-style loops (issue 19, item 5): lazytorch against torch on the tutorials whose
programs change or grow step by step.

* ``polynomial_tensor`` — "Learning PyTorch with Examples", plain tensor ops and
  ``.item()`` every step; goal: whole script within 3x of torch.
* ``dynamic_net`` — the model that picks a random depth each step (a new graph among
  three, SGD with momentum); goal: per step <= 2x torch from the start.
* ``polynomial_nn`` / ``polynomial_optim`` / ``polynomial_custom_function`` — the same
  tutorial with nn, optim and an autograd.Function.

Each script is the corpus copy (tests/realworld/scripts, unchanged code) with its step
count set back to the tutorial's (``--steps``), run in a fresh process per library and
per repetition: ``torch`` is the real torch; ``lazytorch`` is lazytorch installed as torch
(tiered: first-seen programs on the interpreter, compiled in the background);
``lazytorch (compile first)`` is ``LAZYTORCH_TIERED=0``. Each process starts with an
empty compile cache (a first run on a machine). Times exclude ``import torch`` (torch's
import alone takes 1-4 s here, lazytorch's 0.2 s); per-step times are taken at each
``optimizer.step()`` call. Medians of ``--repeat`` runs.

    python -m benchmarks.eager_loops [--repeat 3] [--only dynamic_net]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "realworld" / "scripts"
# (script, the corpus's step loop, the tutorial's step count)
CASES = {
    "polynomial_tensor": ("polynomial_tensor.py", "range(300)", 2000),
    "dynamic_net": ("dynamic_net.py", "range(300)", 3000),
    "polynomial_nn": ("polynomial_nn.py", "range(200)", 2000),
    "polynomial_optim": ("polynomial_optim.py", "range(300)", 2000),
    "polynomial_custom_function": ("polynomial_custom_function.py", "range(300)", 2000),
}

_RUNNER = r"""
import json, runpy, sys, time
lib, path, loop, steps = sys.argv[1:5]
if lib == "lazytorch":
    import lazytorch
    lazytorch.install_as_torch()
import torch
marks = []
Opt = torch.optim.Optimizer
real_step = {}
for cls in (torch.optim.SGD, torch.optim.Adam, torch.optim.RMSprop):
    def wrap(step):
        def timed(self, *a, **k):
            out = step(self, *a, **k)
            marks.append(time.perf_counter())
            return out
        return timed
    cls.step = wrap(cls.step)
src = open(path).read()
assert loop in src, loop
src = src.replace(loop, f"range({steps})", 1)
code = compile(src, path, "exec")
t0 = time.perf_counter()
exec(code, {"__name__": "__main__", "__file__": path})
t1 = time.perf_counter()
steps_s = [b - a for a, b in zip([t0] + marks[:-1], marks)]
print(json.dumps({"total_s": t1 - t0, "steps_s": steps_s}))
"""


def run_once(lib: str, case: str, env_extra: dict[str, str]) -> dict:
    script, loop, steps = CASES[case]
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYTORCH_")}
        env.update({"LAZYTORCH_CACHE_DIR": cache, **env_extra})
        r = subprocess.run(
            [sys.executable, "-c", _RUNNER, lib, str(SCRIPTS / script), loop, str(steps)],
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr else "failed"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0]["error"]}
    out = {"total_s": statistics.median(r["total_s"] for r in ok)}
    if ok[0]["steps_s"]:
        out["first_step_ms"] = statistics.median(r["steps_s"][0] for r in ok) * 1e3
        out["step_ms"] = statistics.median(statistics.median(r["steps_s"][1:]) for r in ok) * 1e3
        out["mean_step_ms"] = statistics.median(statistics.mean(r["steps_s"]) for r in ok) * 1e3
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=sorted(CASES), action="append")
    args = ap.parse_args()
    cpu = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    print(
        f"{cpu}, {os.cpu_count()} CPUs, median of {args.repeat} runs, fresh process and cache each"
    )
    print(
        "| script | steps | torch s | lazytorch s (ratio) | compile-first s (ratio) | "
        "step ms torch / lazytorch (ratio) | mean step ms torch / lazytorch | first step ms torch / lazytorch |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for case in args.only or list(CASES):
        res = {}
        for label, lib, env in (
            ("torch", "torch", {}),
            ("lazy", "lazytorch", {}),
            ("first", "lazytorch", {"LAZYTORCH_TIERED": "0"}),
        ):
            res[label] = summarize([run_once(lib, case, env) for _ in range(args.repeat)])
        t, lz, fc = res["torch"], res["lazy"], res["first"]
        if "error" in lz or "error" in t or "error" in fc:
            print(f"| {case} | error: {lz.get('error') or t.get('error') or fc.get('error')} |")
            continue
        row = (
            f"| {case} | {CASES[case][2]} | {t['total_s']:.2f} | {lz['total_s']:.2f} "
            f"({lz['total_s'] / t['total_s']:.1f}x) | {fc['total_s']:.2f} "
            f"({fc['total_s'] / t['total_s']:.1f}x) |"
        )
        if "step_ms" in t:
            row += (
                f" {t['step_ms']:.3f} / {lz['step_ms']:.3f} ({lz['step_ms'] / t['step_ms']:.1f}x) |"
                f" {t['mean_step_ms']:.3f} / {lz['mean_step_ms']:.3f} |"
                f" {t['first_step_ms']:.1f} / {lz['first_step_ms']:.1f} |"
            )
        else:
            row += " - | - | - |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
