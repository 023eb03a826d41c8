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
import subprocess
import sys
import time
from typing import Any

_RUN = """
import json, random, statistics, sys, time
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
from torch.utils.data import DataLoader, Dataset

random.seed(0)
data = [([random.randrange(300) for _ in range(random.randint(6, 20))], random.randrange(2))
        for _ in range(320)]

class Sentences(Dataset):
    def __len__(self):
        return len(data)

    def __getitem__(self, i):
        ids, y = data[i]
        return torch.tensor(ids, dtype=torch.long), torch.tensor(y, dtype=torch.long)

def collate(batch):
    texts, labels = zip(*batch)
    padded = torch.zeros(len(texts), max(len(t) for t in texts), dtype=torch.long)
    for i, t in enumerate(texts):
        padded[i, : len(t)] = t
    return padded, torch.stack(labels)

loader = DataLoader(Sentences(), batch_size=32, collate_fn=collate)
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
        [sys.executable, "-c", _RUN, which, str(epochs)], capture_output=True, text=True, check=True
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
