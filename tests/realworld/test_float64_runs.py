"""Corpus scripts whose float32 runs amplify rounding, run again in float64.

An entry with ``chaotic_after`` compares only its first losses in float32 (README.md,
"Chaotic scripts"). Here the same script runs with ``torch.set_default_dtype(torch.float64)``
first (a copy of its folder, in a temporary directory), under torch and under lazytorch with
torch's draws (`corpus.run_pair`), and every loss and ``item()`` value must match under the
float64 rule, which checks the gradients the float32 comparison cannot.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import SCRIPTS, Entry, run_pair

# (folder under scripts/, or None for a script alone in scripts/; the script; its arguments)
FLOAT64_RUNS = [
    ("siamese_triplet", "experiments_mnist.py", ""),
    ("antixk_vae", "run.py", "-c configs/vae.yaml"),
    ("antixk_vae", "run.py", "-c configs/bbvae.yaml"),
    (None, "yunjey_deep_residual_network.py", ""),
]


@pytest.mark.slow
@pytest.mark.parametrize("folder, script, args", FLOAT64_RUNS)
def test_float64_run_matches_torch(
    folder: str | None, script: str, args: str, tmp_path: Path
) -> None:
    if folder is None:
        path = tmp_path / script
        shutil.copy(SCRIPTS / script, path)
    else:
        shutil.copytree(SCRIPTS / folder, tmp_path / folder)
        path = tmp_path / folder / script
    path.write_text("import torch\ntorch.set_default_dtype(torch.float64)\n" + path.read_text())
    name = folder or Path(script).stem
    r = run_pair(Entry(f"{name}_float64", str(path), name, args=args, dtype="float64"))
    assert r.runs, r.lazy.get("error")
    assert r.torch["losses"], "no loss logged"
    assert r.loss_mismatch is None, r.loss_mismatch
    assert r.item_mismatch is None, r.item_mismatch
