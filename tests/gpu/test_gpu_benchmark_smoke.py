"""The GPU benchmark's harness, run on the CPU at tiny sizes (benchmarks/gpu.py --smoke).

Its figures mean nothing here; what is checked is that every case runs end to end on both
libraries, agrees with torch, and lands in the JSON with finite numbers, so the command is
ready for the day it runs on a GPU.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchmarks.gpu import CASES

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_benchmark_smoke_on_cpu(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    cmd = [sys.executable, "-m", "benchmarks.gpu", "--device", "cpu", "--smoke"]
    cmd += ["--repeats", "2", "--json", str(out)]
    env = {**os.environ, "LAZYTORCH_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "| case | lazytorch | torch eager | torch.compile |" in r.stdout

    report = json.loads(out.read_text())
    assert report["smoke"] is True and report["repeats"] == 2
    rows = report["cases"]
    assert set(rows) == set(CASES)
    for name, row in rows.items():
        assert row["supported"], row  # every case has a lowering (bfloat16 included)
        assert row["error"] == "" and row["check_ok"] is True, row
        assert row["result"] in ("PASS", "MISS"), row
        for key in ("lt_s", "eager_s", "ref_s", "speed_vs_ref", "speed_vs_eager", "max_err"):
            assert isinstance(row[key], float) and math.isfinite(row[key]), (name, key, row)
        for key in ("lt_s", "eager_s", "ref_s"):
            assert row[key] > 0, (name, key)
        # torch.compile is timed, or says why not (off, over the CPU budget, failed)
        assert row["compile_s"] is not None or row["compile_note"], row
        if row["compile_s"] is not None:
            assert math.isfinite(row["compile_s"]) and row["compile_s"] > 0
        if row["kind"] != "training":
            assert math.isfinite(row["work"]) and row["work"] > 0
            assert math.isfinite(row["speed_vs_ref_b2b"])
