"""The distributed benchmark's all_reduce job, on 2 ranks at its two smallest buffers
(benchmarks/distributed.py). Its timings mean nothing here; what is checked is that every
peer runs and lands in the JSON with a positive time, and that lazytorch's all_reduce, on a
computed and on a pending input, gave mpi4py's sum (so the benchmark times the right thing).
"""

from __future__ import annotations

import json
import math

from mpijob import HERE, run_job

from benchmarks.distributed import MARK

SCRIPT = HERE.parent.parent / "benchmarks" / "distributed.py"


def test_allreduce_job_runs_every_peer_and_agrees_with_mpi4py() -> None:
    res = run_job(2, SCRIPT, "--worker", "allreduce", "--repeats", "1", "--max-bytes", "65536")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    (line,) = [s for s in res.stdout.splitlines() if s.startswith(MARK)]  # rank 0's only
    rows = json.loads(line[len(MARK) :])
    assert [r["bytes"] for r in rows] == [4096, 65536]
    for r in rows:
        for peer in ("raw", "raw_alloc", "lt", "lt_pending", "program"):
            assert math.isfinite(r[peer]) and r[peer] > 0, (peer, r)
        assert r["max_abs_err"] == 0.0, r  # two ranks: one float32 addition, in any order
