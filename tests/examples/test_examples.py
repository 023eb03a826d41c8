"""The example scripts run end to end (short settings) and train."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(*args: str) -> str:
    r = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, check=True
    )
    return r.stdout


def test_train_mlp_learns_like_torch():
    ours = _run(str(EXAMPLES / "train_mlp.py"), "--epochs", "5")
    theirs = _run(str(EXAMPLES / "train_mlp.py"), "--epochs", "5", "--torch")
    acc = [
        float(re.search(r"final test accuracy ([0-9.]+)", out).group(1)) for out in (ours, theirs)
    ]
    assert acc[0] > 0.8, ours
    assert abs(acc[0] - acc[1]) < 0.05, (ours, theirs)


def test_train_char_gpt_prints_loss_and_a_sample():
    out = _run(str(EXAMPLES / "train_char_gpt.py"), "--steps", "3", "--sample", "20")
    losses = [float(x) for x in re.findall(r"loss ([0-9.]+)", out)]
    assert len(losses) == 2 and all(0 < v < 10 for v in losses), out
    sample = out.split("--- sample ---\n", 1)[1]
    assert len(sample.rstrip("\n")) == 64 + 20, out


def test_train_char_gpt_compiled_step_trains_the_same():
    """--compile replays the whole step from its fourth call: the same losses."""
    args = ("--steps", "7", "--sample", "0")
    plain = _run(str(EXAMPLES / "train_char_gpt.py"), *args)
    compiled = _run(str(EXAMPLES / "train_char_gpt.py"), *args, "--compile")
    losses = [re.findall(r"loss ([0-9.]+)", out) for out in (plain, compiled)]
    assert len(losses[0]) == 2 and losses[0] == losses[1], (plain, compiled)


def test_train_ddp_on_two_ranks_trains_like_one_process():
    """Same global batch (64 / ranks per rank), same shuffle: the same training."""
    import os

    import pytest

    pytest.importorskip("mpi4py")
    one = _run(str(EXAMPLES / "train_ddp.py"), "--epochs", "5")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    two = subprocess.run(
        [
            *(sys.executable, "-m", "lazytorch", "run", "--nproc-per-node", "2"),
            str(EXAMPLES / "train_ddp.py"),
            "--epochs",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    ).stdout
    assert "on 2 rank(s)" in two and "on 1 rank(s)" in one
    got = [
        re.search(r"loss ([0-9.]+)  test accuracy ([0-9.]+)", out).groups() for out in (one, two)
    ]
    assert float(got[0][1]) > 0.8, one
    assert abs(float(got[0][0]) - float(got[1][0])) < 1e-3, (one, two)
    assert abs(float(got[0][1]) - float(got[1][1])) < 0.01, (one, two)
