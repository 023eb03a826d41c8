"""torch.distributed.nn: torch's collectives that carry gradients (``all_reduce`` and the
rest, differentiable). Not provided yet: this module exists so that scripts importing it
(``from torch.distributed import nn as distributed_nn``, used only when several processes
run) import; each of its names raises `MissingTorchAPI` at its use, naming the API.
lazytorch.distributed's collectives (``all_reduce``, ``all_gather``...) work on values.

>>> import lazytorch.distributed.nn as dnn
>>> dnn.all_reduce
Traceback (most recent call last):
    ...
AttributeError: module 'lazytorch.distributed.nn' has no attribute 'all_reduce'
"""

from lazytorch._as_torch import module_getattr

__getattr__ = module_getattr(__name__)
