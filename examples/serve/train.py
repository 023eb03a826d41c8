"""Train the served model briefly and save a checkpoint for server.py.

    python train.py                                  # -> build/checkpoint.lt next to this file
    python train.py --out /tmp/serve/checkpoint.lt --epochs 3
    python train.py --steps 5                        # a few steps only (tests, smoke runs)

The data is scikit-learn's handwritten digits (8x8 images scaled to [0, 1], 10 classes) when
scikit-learn is installed (``pip install -e ".[examples]"``), else a generated stand-in of
the same shape, as in examples/train_mlp.py. The checkpoint is written with
`lazytorch.save`: a zip of JSON and .npy files that loading never executes.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from model import CLASSES, FEATURES, MAX_BATCH, build_model

import lazytorch as torch

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "build" / "checkpoint.lt"


def load_data(seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(inputs (n, 64) float32, labels (n,) int64, a description of the source)."""
    try:
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data.astype(np.float32) / 16.0, d.target.astype(np.int64), "sklearn digits"
    except ImportError:
        rng = np.random.default_rng(seed)
        protos = rng.uniform(0, 1, size=(CLASSES, FEATURES)) > 0.6
        y = rng.integers(0, CLASSES, size=1797)
        x = protos[y] * 0.6 + rng.normal(0, 0.8, size=(1797, FEATURES))
        return x.astype(np.float32), y.astype(np.int64), "generated digits (no scikit-learn)"


def train(epochs: int, steps: int | None, seed: int) -> tuple[torch.nn.Module, float, str]:
    """Train for `epochs` (at most `steps` optimizer steps); (model, test accuracy, source)."""
    torch.manual_seed(seed)
    x, y, source = load_data(seed)
    n_test = len(x) // 5
    x_train, y_train = torch.tensor(x[n_test:]), torch.tensor(y[n_test:])
    x_test, y_test = torch.tensor(x[:n_test]), torch.tensor(y[:n_test])
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x_train, y_train),
        batch_size=64,
        shuffle=True,
        # full batches only: one training-step program instead of a second for the remainder
        drop_last=True,
        generator=torch.Generator().manual_seed(seed),
    )
    model = build_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    done = 0
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            batches += 1
            done += 1
            if steps is not None and done >= steps:
                break
        print(f"epoch {epoch + 1:3d}  loss {total / max(batches, 1):.4f}")
        if steps is not None and done >= steps:
            break
    model.eval()
    with torch.no_grad():
        acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    return model, acc, source


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="checkpoint file to write")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    t0 = time.perf_counter()
    model, acc, source = train(args.epochs, args.steps, args.seed)
    os.makedirs(args.out.parent, exist_ok=True)
    torch.save(
        {
            "state_dict": model.state_dict(),
            "features": FEATURES,
            "classes": CLASSES,
            "max_batch": MAX_BATCH,
            "test_accuracy": acc,
            "data": source,
        },
        args.out,
    )
    print(
        f"trained on {source} in {time.perf_counter() - t0:.1f} s, "
        f"test accuracy {acc:.3f}; saved {args.out}"
    )


if __name__ == "__main__":
    main()
