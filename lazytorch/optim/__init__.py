"""Optimizers and lr schedulers with torch's names, semantics and update formulas.

``optimizer.step()`` is the training step's graph cut: the update is recorded as lazy
in-place ops under ``no_grad``, and the step ends with ``lazytorch.materialize()``, so the
forward, the backward and the update compute as one compiled program. Learning rates, betas
and the step count are Python numbers, which are program inputs: a schedule, or a changing
step count, reuses the compiled program.

>>> import lazytorch
>>> w = lazytorch.tensor([3.0, -1.0], requires_grad=True)
>>> opt = lazytorch.optim.SGD([w], lr=0.25)
>>> for _ in range(2):
...     opt.zero_grad()
...     loss = (w * w).sum()
...     loss.backward()
...     opt.step()                # forward, backward and update: one program
>>> w.detach()
tensor([ 0.7500, -0.2500])
"""

from lazytorch.optim import lr_scheduler, swa_utils
from lazytorch.optim.adadelta import Adadelta
from lazytorch.optim.adafactor import Adafactor
from lazytorch.optim.adagrad import Adagrad
from lazytorch.optim.adam import Adam, AdamW
from lazytorch.optim.adamax import Adamax
from lazytorch.optim.asgd import ASGD
from lazytorch.optim.lbfgs import LBFGS
from lazytorch.optim.nadam import NAdam
from lazytorch.optim.optimizer import Optimizer
from lazytorch.optim.radam import RAdam
from lazytorch.optim.rmsprop import RMSprop
from lazytorch.optim.rprop import Rprop
from lazytorch.optim.sgd import SGD
from lazytorch.optim.sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
]


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
