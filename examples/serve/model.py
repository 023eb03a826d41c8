"""The served model: a 64-128-10 MLP digit classifier, served over a dynamic batch size.

    from model import load, predict
    load("build/checkpoint.lt")            # once, at startup
    probs = predict(rows)                  # rows: (n, 64) floats, 1 <= n <= 64 -> (n, 10)

`predict` runs the exact batch, with no padding: its input is marked dynamic in dim 0
(``lazytorch.mark_dynamic(x, 0, max=MAX_BATCH)``), so the forward pass is compiled once
over a symbolic batch size and that one program serves every batch of 2 to 64 rows. A
batch of 1 row has a program of its own: sizes 0 and 1 stay specialized (as in PyTorch),
so size 1 is never an instance of the dynamic program. Two programs cover every batch size
from 1 to 64, and both can be compiled ahead of time and shipped in a cache archive
(docs/serving.md); `WARM_SIZES` holds one batch size for each.

Why mark the input, when lazytorch makes a size symbolic by itself once a second size is
seen at the same line: with the mark, the first program compiled for a batch of 2 or more
rows is already the one over the symbolic size, whichever batches came before it. So a
recording pass (``server.py --selftest``) needs only 2 batches, one per program, in any
order, and never records a program for one exact batch size that no later request would
use. ``max=MAX_BATCH`` becomes a guard of the program (a larger batch would compile
another program, not fail; `predict` refuses more than 64 rows before that).
``LAZYTORCH_LOG=recompiles`` shows what became dynamic.

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
    "CLASSES",
    "FEATURES",
    "MAX_BATCH",
    "WARM_SIZES",
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
MAX_BATCH = 64
"""The most rows `predict` takes; also the upper bound of the dynamic program's batch size."""
WARM_SIZES: tuple[int, ...] = (1, 2)
"""One batch size per program: 1 (specialized) and 2 (the program for every size 2..64)."""

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

    The checkpoint holds ``{"state_dict": ..., "max_batch": 64, ...}`` (see train.py).
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


def _run(x: np.ndarray) -> np.ndarray:
    """Probabilities for the rows of float32 array `x` (the exact batch, no padding)."""
    n = x.shape[0]
    model = get_model()
    with lazytorch.no_grad():  # inference: no autograd graph, and a smaller program
        inp = lazytorch.from_numpy(x)
        if n >= 2:
            # One program over a symbolic batch size serves 2..MAX_BATCH, compiled (or
            # loaded) by the first batch already. A batch of 1 is specialized: size 1 gets
            # its own program, marked or not, so it is not marked.
            lazytorch.mark_dynamic(inp, 0, max=MAX_BATCH)
        probs = lazytorch.softmax(model(inp), dim=1)
        # .numpy() is the materialization: the one compiled program runs here.
        return probs.numpy()


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
    return _run(arr)


def predict_batch(x: lazytorch.Tensor) -> lazytorch.Tensor:
    """`predict` on a lazytorch tensor of shape (n, FEATURES): a warm-up entry point.

    ``lazytorch warmup model:predict_batch --input "float32[1..64,64]"`` calls it once per
    batch size and compiles the 2 programs `predict` runs (the input's values are read
    first: `predict` takes NumPy rows, as the server's requests are).
    """
    return lazytorch.from_numpy(predict(x.numpy()))


def warm(sizes: Sequence[int] = WARM_SIZES) -> dict[int, Any]:
    """Run one zero batch of each size in `sizes`; returns each size's output (for checks).

    The default, `WARM_SIZES`, runs both programs (size 1's and the dynamic one for 2..64).
    Used by the server's ``--preload`` (load both programs before the first request) and
    ``--selftest`` (a recording pass for ``LAZYTORCH_RECORD``).
    """
    return {n: predict(np.zeros((n, FEATURES), dtype=np.float32)) for n in sizes}
