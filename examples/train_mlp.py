"""Train an MLP classifier: the same script runs on lazytorch or, with --torch, on PyTorch.

    python examples/train_mlp.py            # lazytorch
    python examples/train_mlp.py --torch    # the same script on torch, for comparison

The data is scikit-learn's handwritten digits (8x8 images, 10 classes) when scikit-learn is
installed (``pip install -e ".[examples]"``), else a generated stand-in of the same shape:
ten noisy prototype images. Apart from the import, this is an ordinary PyTorch script; the
whole training step (forward, backward, SGD update) runs as one compiled program at
``opt.step()``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def load_data(seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    try:
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data.astype(np.float32) / 16.0, d.target.astype(np.int64), "sklearn digits"
    except ImportError:
        rng = np.random.default_rng(seed)
        protos = rng.uniform(0, 1, size=(10, 64)) > 0.6
        y = rng.integers(0, 10, size=1797)
        x = protos[y] * 0.6 + rng.normal(0, 0.8, size=(1797, 64))
        return x.astype(np.float32), y.astype(np.int64), "generated digits (no scikit-learn)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch", action="store_true", help="run on PyTorch instead")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.torch:
        import torch
    else:
        import lazytorch as torch
    torch.manual_seed(args.seed)

    x, y, source = load_data(args.seed)
    n_test = len(x) // 5
    x_train, y_train = torch.tensor(x[n_test:]), torch.tensor(y[n_test:])
    x_test, y_test = torch.tensor(x[:n_test]), torch.tensor(y[:n_test])
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x_train, y_train),
        batch_size=64,
        shuffle=True,
        drop_last=True,
        generator=torch.Generator().manual_seed(args.seed),
    )

    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            model.eval()
            with torch.no_grad():
                acc = (model(x_test).argmax(1) == y_test).float().mean().item()
            print(f"epoch {epoch + 1:3d}  loss {total / len(loader):.4f}  test accuracy {acc:.3f}")
    lib = "torch" if args.torch else "lazytorch"
    print(f"{lib} on {source}: {time.perf_counter() - t0:.1f} s, final test accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
