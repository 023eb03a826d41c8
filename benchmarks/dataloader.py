"""A DataLoader whose dataset and collate_fn build small tensors per sample, against torch.

The pattern of Shawn1993/cnn-text-classification-pytorch's mydatasets.py: each sample is
``torch.tensor(token_ids)`` and a label, the collate pads the batch's sentences into one
tensor row by row (``padded[i, :len(t)] = t``). One epoch is 10 batches of 32 sentences of
6-20 tokens; the figure is the median epoch time over --epochs epochs after one warm-up
epoch, for torch, for lazytorch, and for lazytorch with its node-by-node path for the
loader's small cuts switched off (`lazytorch.runtime.eager`, every cut through the
executor as before that path). Each library runs in its own process.

    python -m benchmarks.dataloader --epochs 9
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def sentences(lib: Any, n: int = 320, seed: int = 0) -> Any:
    """A dataset of `n` token-id sentences (6-20 tokens from 300) with a label, each sample
    made with ``lib.tensor`` (`lib` is torch, or lazytorch installed as torch)."""
    rng = random.Random(seed)
    data = [
        ([rng.randrange(300) for _ in range(rng.randint(6, 20))], rng.randrange(2))
        for _ in range(n)
    ]

    class Sentences(lib.utils.data.Dataset):  # type: ignore[name-defined,misc]
        def __len__(self) -> int:
            return len(data)

        def __getitem__(self, i: int) -> Any:
            ids, y = data[i]
            return lib.tensor(ids, dtype=lib.long), lib.tensor(y, dtype=lib.long)

    return Sentences()


def pad_collate(lib: Any) -> Any:
    """A collate_fn padding the batch's sentences into one tensor, row by row."""

    def collate(batch: Any) -> Any:
        texts, labels = zip(*batch)
        padded = lib.zeros(len(texts), max(len(t) for t in texts), dtype=lib.long)
        for i, t in enumerate(texts):
            padded[i, : len(t)] = t
        return padded, lib.stack(labels)

    return collate


_RUN = """
import json, statistics, sys, time
which, epochs = sys.argv[1], int(sys.argv[2])
if which == "torch":
    import torch
else:
    import lazytorch
    lazytorch.install_as_torch()
    import torch
    if which == "lazytorch-executor":
        from lazytorch.runtime import eager
        eager.MAX_NODES = -1
from benchmarks.dataloader import pad_collate, sentences

loader = torch.utils.data.DataLoader(sentences(torch), batch_size=32, collate_fn=pad_collate(torch))
times, check = [], 0
for epoch in range(epochs + 1):
    t0 = time.perf_counter()
    total = 0
    for x, y in loader:
        total += int(x.sum()) + int(y.sum())
    if epoch:
        times.append(time.perf_counter() - t0)
    check = total
print(json.dumps({"ms": statistics.median(times) * 1e3, "check": check}))
"""

PEERS = ("torch", "lazytorch", "lazytorch-executor")


def run(which: str, epochs: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, which, str(epochs)],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(Path(__file__).resolve().parent.parent),  # `benchmarks` importable
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=9)
    args = p.parse_args(argv)
    results = {}
    for which in PEERS:
        time.sleep(1.0)  # torch's OpenMP threads spin a while after it stops
        results[which] = run(which, args.epochs)
    checks = {r["check"] for r in results.values()}
    assert len(checks) == 1, f"the libraries' batches differ: {results}"
    base = results["torch"]["ms"]
    print("| loader | ms per epoch (10 batches) | / torch |")
    print("|---|---:|---:|")
    for which in PEERS:
        ms = results[which]["ms"]
        print(f"| {which} | {ms:.1f} | {ms / base:.1f}x |")


if __name__ == "__main__":
    main()
