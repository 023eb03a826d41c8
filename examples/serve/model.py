"""The served model: a 64-128-10 MLP digit classifier, and batch-size bucketing for serving.

    from model import load, predict
    load("build/checkpoint.lt")            # once, at startup
    probs = predict(rows)                  # rows: (n, 64) floats, 1 <= n <= 64 -> (n, 10)

Why buckets: lazytorch compiles one program per exact input shape today, so a server fed
every batch size from 1 to 64 would compile (or load) 64 programs. `predict` pads each
batch with zero rows up to the next size in `BUCKETS` and drops the padding's rows from the
result, so 7 programs cover every batch size, and all 7 can be compiled ahead of time and
shipped in a cache archive (docs/serving.md). This is what torch_xla users do by hand; once
lazytorch supports dynamic shapes, one program will serve every size and the padding can go.

The padding happens in NumPy, outside the lazy graph, on purpose: a pad recorded as a
lazytorch op would make the batch's real size part of the program, and there would be one
program per size again.

`predict_batch` is the same computation on a lazytorch tensor, as an entry point for
``lazytorch warmup model:predict_batch --input "float32[1..64,64]"`` (run from this
directory; it uses the checkpoint named by ``SERVE_CHECKPOINT`` if set, else the untrained
model, which compiles the same programs: weights are program inputs, not constants).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

import lazytorch
from lazytorch import nn

__all__ = [
    "BUCKETS",
    "CLASSES",
    "FEATURES",
    "bucket_for",
    "build_model",
    "get_model",
    "load",
    "predict",
    "predict_batch",
    "warm",
]

FEATURES = 64
HIDDEN = 128
CLASSES = 10
BUCKETS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
"""Batch sizes a program is compiled for; a request is padded up to the smallest that fits."""
MAX_BATCH = BUCKETS[-1]

_model: nn.Module | None = None


def build_model() -> nn.Sequential:
    """The untrained network (weights from lazytorch's current random seed)."""
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, CLASSES),
    )


def load(checkpoint: str | os.PathLike[str]) -> nn.Module:
    """Load a checkpoint written by train.py, make it the model `predict` uses, return it.

    The checkpoint holds ``{"state_dict": ..., "buckets": [...], ...}`` (see train.py).
    """
    global _model
    state = lazytorch.load(checkpoint)
    model = build_model()
    model.load_state_dict(state["state_dict"])
    model.eval()
    _model = model
    return model


def get_model() -> nn.Module:
    """The model `predict` uses: the loaded one, else one loaded from ``SERVE_CHECKPOINT``,
    else an untrained one (enough to compile the programs: they do not depend on weights).
    """
    global _model
    if _model is None:
        path = os.environ.get("SERVE_CHECKPOINT")
        if path:
            return load(path)
        model = build_model()
        # Compute the random initial weights now: left lazy, their initialization would
        # become part of every predict program, and those programs would not be the ones a
        # loaded checkpoint (whose weights are plain values) runs.
        lazytorch.materialize(*model.parameters())
        model.eval()
        _model = model
    return _model


def bucket_for(n: int) -> int:
    """The smallest bucket that holds `n` rows (ValueError outside 1..MAX_BATCH)."""
    if not 1 <= n <= MAX_BATCH:
        raise ValueError(f"batch size must be 1..{MAX_BATCH}, got {n}")
    return next(b for b in BUCKETS if n <= b)


def _run_padded(x: np.ndarray) -> np.ndarray:
    """Probabilities for the rows of float32 array `x`, through the bucket-sized program."""
    n = x.shape[0]
    padded = np.zeros((bucket_for(n), FEATURES), dtype=np.float32)
    padded[:n] = x
    model = get_model()
    with lazytorch.no_grad():  # inference: no autograd graph, and a smaller program
        probs = lazytorch.softmax(model(lazytorch.from_numpy(padded)), dim=1)
        # .numpy() is the materialization: the one compiled program runs here. Softmax is
        # per row, so the zero rows of padding do not change the real rows' results.
        out = probs.numpy()
    return out[:n]


def predict(x: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Class probabilities, shape (n, CLASSES), for `x` of shape (n, FEATURES), 1 <= n <= 64.

    ValueError names what is wrong with an input of another shape or a non-finite value.
    """
    arr = np.asarray(x, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != FEATURES:
        raise ValueError(f"expected rows of {FEATURES} numbers, got shape {list(arr.shape)}")
    if not 1 <= arr.shape[0] <= MAX_BATCH:
        raise ValueError(f"expected 1..{MAX_BATCH} rows, got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ValueError("inputs must be finite numbers (no NaN or infinity)")
    return _run_padded(arr)


def predict_batch(x: lazytorch.Tensor) -> lazytorch.Tensor:
    """`predict` on a lazytorch tensor of shape (n, FEATURES): a warm-up entry point.

    ``lazytorch warmup model:predict_batch --input "float32[1..64,64]"`` calls it once per
    batch size and compiles the 7 bucket programs (the input's values are read first, since
    padding is done in NumPy; see the module docstring).
    """
    return lazytorch.from_numpy(predict(x.numpy()))


def warm(sizes: Sequence[int] = BUCKETS) -> dict[int, Any]:
    """Run one zero batch of each size in `sizes`; returns each size's output (for checks).

    Used by the server's ``--preload`` (load every bucket's program before the first
    request) and ``--selftest`` (a recording pass for ``LAZYTORCH_RECORD``).
    """
    return {n: predict(np.zeros((n, FEATURES), dtype=np.float32)) for n in sizes}
