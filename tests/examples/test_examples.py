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
