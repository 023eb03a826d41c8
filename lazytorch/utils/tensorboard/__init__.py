"""``torch.utils.tensorboard``: `SummaryWriter`, writing TensorBoard event files.

The files are written by TensorBoard's own ``EventFileWriter`` from TensorBoard's protocol
buffers, so TensorBoard (and ``EventAccumulator``) reads them as it reads torch's. Like
torch's module this one needs the ``tensorboard`` package: without it, importing
``lazytorch.utils.tensorboard`` (or ``torch.utils.tensorboard`` under ``lazytorch run
--as-torch``) raises ``ModuleNotFoundError: No module named 'tensorboard'``, as torch's does.

Values may be lazytorch tensors (read back at the call: a logged loss is a
materialization point), NumPy arrays or Python numbers. See docs/nn.md ("TensorBoard").

>>> from lazytorch.utils.tensorboard import SummaryWriter  # doctest: +SKIP
>>> with SummaryWriter("runs/exp1") as writer:  # doctest: +SKIP
...     writer.add_scalar("loss", 0.5, global_step=0)
"""

from __future__ import annotations

import tensorboard
from tensorboard.summary.writer.record_writer import RecordWriter


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


if not hasattr(tensorboard, "__version__") or _version_tuple(tensorboard.__version__) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from lazytorch.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
