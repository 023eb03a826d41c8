"""``lazytorch.amp``: automatic mixed precision, torch's names (``autocast``, ``GradScaler``).

* `autocast` (also ``lazytorch.autocast``, ``lazytorch.cpu.amp.autocast``,
  ``lazytorch.cuda.amp.autocast``): inside it, the ops torch's autocast lists follow
  torch's policy for the device type of their tensors — on the CPU (bfloat16 by default, or
  float16) matmul/mm/bmm/baddbmm/addmm, ``F.linear``, conv and conv_transpose and
  ``F.scaled_dot_product_attention`` run in the low dtype; the losses, ``prod``, ``cdist``,
  ``trace``, ``quantile``, the 3-d pools and ``grid_sample`` in float32; ``cat``/``stack``/
  ``index_copy`` promote to the widest input. On cuda (float16 by default) the lists are
  torch's CUDA ones: also softmax, log_softmax, layer_norm/group_norm/rms_norm, sums,
  cumsum, norms and the ``exp``/``log``/``pow`` family in float32. The casts are recorded
  ops, cast once at the public surface per user call; see `lazytorch.ops.autocast` for the
  contract and `lazytorch.ops.autocast_policy` for the tables (with the listed ops lazytorch
  lacks).
* `GradScaler` (also ``lazytorch.cuda.amp.GradScaler``): loss scaling with torch's rules
  and state (`lazytorch.amp.grad_scaler`).
* ``custom_fwd``/``custom_bwd`` for custom autograd Functions, ``is_autocast_available``.

Not supported yet: the cast cache (``cache_enabled`` is accepted; common-subexpression
elimination merges repeated casts instead). docs/amp.md is the user's guide.

>>> import lazytorch
>>> w = lazytorch.nn.Parameter(lazytorch.ones(3, 2))
>>> with lazytorch.autocast("cpu", dtype=lazytorch.float16):
...     y = lazytorch.ones(4, 3) @ w
...     loss = lazytorch.nn.functional.mse_loss(y, lazytorch.zeros(4, 2))
>>> y.dtype, loss.dtype
(lazytorch.float16, lazytorch.float32)
>>> loss.backward()
>>> w.grad.dtype
lazytorch.float32
"""

from __future__ import annotations

from lazytorch.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from lazytorch.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
