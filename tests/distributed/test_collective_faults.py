"""A collective that hangs, and ranks that issue different collectives, end the job with a
message naming the rank, the collective and its sequence number, within a time bound."""

from __future__ import annotations

import time

from mpijob import run_job


def _run(mode, env=None):
    t0 = time.monotonic()
    res = run_job(2, "faults.py", mode, timeout=60, env=env)
    return res, time.monotonic() - t0


def test_a_hanging_peer_trips_the_collective_timeout():
    res, seconds = _run("hang")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "unreachable" not in out
    assert (
        "rank 0: all_reduce #2 (op='sum') on group 0 of f32[3] did not complete within 2 s" in out
    )
    assert seconds < 20, f"the job took {seconds:.1f} s to end (timeout 2 s)"


def test_the_default_timeout_comes_from_the_environment():
    res, seconds = _run("hang-env", {"LAZYTORCH_DISTRIBUTED_TIMEOUT": "1.5"})
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "all_reduce #2" in out and "did not complete within 1.5 s" in out
    assert seconds < 20


def test_debug_mode_names_both_sides_of_a_collective_mismatch():
    res, seconds = _run(
        "mismatch", {"LAZYTORCH_DISTRIBUTED_DEBUG": "1", "LAZYTORCH_DISTRIBUTED_TIMEOUT": "20"}
    )
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "unreachable" not in out
    assert "ranks issued different collectives" in out
    assert "all_reduce #2 (op='sum') on group 0 of f32[3]" in out
    assert "broadcast #2 (src=0) on group 0 of f32[3]" in out
    assert seconds < 15


def test_sync_batchnorm_on_two_ranks_refuses_rather_than_use_per_rank_statistics():
    res, _ = _run("syncbn")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "unreachable" not in out
    assert "SyncBatchNorm: synchronizing batch statistics across 2 ranks is not supported" in out
