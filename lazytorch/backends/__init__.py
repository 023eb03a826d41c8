"""``lazytorch.backends``: the switches scripts set on torch's backends at start-up.

Each flag exists under torch's name and keeps the value a script sets; the ones that mean
something here act, the others are documented as having no effect:

* ``backends.cuda.matmul.allow_tf32`` is ``set_float32_matmul_precision("high")`` (True)
  or ``("highest")`` (False), exactly torch's relation between the two; the Triton matmul
  uses TF32 under "high".
* ``backends.cudnn.*`` (``benchmark``, ``deterministic``, ``enabled``, ``allow_tf32``):
  no effect, lazytorch does not use cuDNN; ``cudnn.is_available()`` is False.
* ``backends.cuda`` scaled-dot-product switches (``enable_flash_sdp``, ``sdp_kernel``...):
  recorded, no effect; attention is one decomposition that the scheduler fuses.
* ``backends.mps.is_available()`` and ``backends.mkldnn.is_available()`` are False,
  ``backends.openmp.is_available()`` True (kernels run under OpenMP).

>>> import lazytorch
>>> lazytorch.backends.cuda.matmul.allow_tf32 = True
>>> lazytorch.get_float32_matmul_precision()
'high'
>>> lazytorch.backends.cuda.matmul.allow_tf32 = False
>>> lazytorch.get_float32_matmul_precision()
'highest'
>>> lazytorch.backends.cudnn.benchmark = True  # accepted; lazytorch does not use cuDNN
"""

from __future__ import annotations

from lazytorch.backends import cuda, cudnn, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp"]
